"""Error reports (issue 73): with a DSN set, a failure of ours reaches a Sentry-protocol ingest endpoint (a
small HTTP server the test starts, as GlitchTip or Sentry would receive it) with the operation's name and
none of the request's secrets; a client's error sends nothing; without a DSN nothing is sent at all."""

from __future__ import annotations

import gzip
import json
import threading
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

import resolvers.auth
import resolvers.topic_reads
from telemetry import error_reports
from tests.helpers import PASSWORD, Api

SECRET_EMAIL = "leaky.person@example.org"
SECRET_TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJsZWFrIn0.c2lnbmF0dXJlLW9mLWxlYWs"
COOKIE_VALUE = "cookie-value-that-must-not-leave"
# (each a constant up here: an event carries the source lines around its frames, the test's own among them)
LINK_TOKEN, FORM_TOKEN = "link-token-secret", "form-token-secret"


class Ingest:
    """Sentry's envelope endpoint (`POST /api/<project>/envelope/`): the events it was sent, decoded."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        received = self.bodies

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                encoding = self.headers.get("content-encoding", "")
                if encoding == "gzip":
                    body = gzip.decompress(body)
                elif encoding == "deflate":
                    body = zlib.decompress(body)
                elif encoding == "br":
                    import brotli  # type: ignore[import-not-found]

                    body = brotli.decompress(body)
                received.append(body)
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.dsn = f"http://publickey@127.0.0.1:{self.server.server_address[1]}/1"

    def events(self) -> list[dict[str, Any]]:
        found = []
        for body in self.bodies:
            lines = body.split(b"\n")
            for header, payload in zip(lines[1::2], lines[2::2], strict=False):
                if json.loads(header).get("type") == "event":
                    found.append(json.loads(payload))
        return found

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def ingest() -> Iterator[Ingest]:
    endpoint = Ingest()
    assert error_reports.start(endpoint.dsn, environment="development")
    try:
        yield endpoint
    finally:
        error_reports.stop()
        endpoint.close()


@pytest.fixture
def failing_topics(monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError(f"the topics broke for {SECRET_EMAIL} holding Bearer {SECRET_TOKEN} "
                           f"(https://x.test/confirm?token=abc123)")

    monkeypatch.setattr(resolvers.topic_reads, "get_topics_all", broken)


async def test_a_failure_is_reported_with_its_operation_and_no_secrets(
        ingest: Ingest, failing_topics: None, client: httpx.AsyncClient, api: Api) -> None:
    user = await api.user(email=SECRET_EMAIL.replace("leaky", "leaky" + str(id(ingest))))
    response = await client.post(
        "/graphql?token=query-string-secret",
        json={"query": "query TopicsPage { get_topics_all { slug } }",
              "operationName": "TopicsPage", "variables": {"password": PASSWORD}},
        headers={"authorization": f"Bearer {user.token}", "cookie": f"session_token={COOKIE_VALUE}",
                 "x-email": SECRET_EMAIL})
    assert response.json()["errors"][0]["extensions"]["code"] == "INTERNAL_SERVER_ERROR"
    error_reports.stop()  # sends what is queued
    events = ingest.events()
    assert len(events) == 1, ingest.bodies
    event = events[0]
    assert event["tags"]["graphql.operation"] == "TopicsPage"
    assert event["exception"]["values"][-1]["type"] == "RuntimeError"
    assert "the topics broke for [email] holding Bearer [token]" in event["exception"]["values"][-1]["value"]
    sent = b"".join(ingest.bodies).decode()
    for secret in (SECRET_EMAIL, SECRET_TOKEN, user.token, COOKIE_VALUE, PASSWORD, "abc123", "query-string-secret",
                   "@example.org"):
        assert secret not in sent, f"{secret!r} was sent: {sent[max(0, sent.find(secret) - 300):sent.find(secret) + 100]}"


async def test_client_errors_are_not_reported(ingest: Ingest, client: httpx.AsyncClient) -> None:
    for document in ("{ me { author { slug } } }",  # UNAUTHENTICATED
                     "{ get_shout(shout_id: \"x\") { id } }",  # a variable of the wrong type: validation
                     "{ nothing_here }",
                     'mutation { login(email: "nobody@example.org", password: "wrong") { success } }'):
        answer = (await client.post("/graphql", json={"query": document})).json()
        assert answer.get("errors") or answer["data"], answer
    error_reports.stop()
    assert ingest.events() == []


async def test_control_the_ingest_sees_what_is_sent(ingest: Ingest) -> None:
    """The endpoint and the decoding see an event when one is sent (the test above can fail)."""
    error_reports.report_failure(RuntimeError("forced"), "Forced")
    error_reports.stop()
    assert [e["tags"]["graphql.operation"] for e in ingest.events()] == ["Forced"]


def test_nothing_starts_without_a_dsn() -> None:
    assert error_reports.start(None, environment="development") is False
    import sentry_sdk

    assert not error_reports.STARTED and not sentry_sdk.get_client().is_active()


@pytest.mark.parametrize("value, scrubbed", [
    ({"headers": {"Authorization": "Bearer x", "Cookie": "a=b", "Accept": "*/*"}},
     {"headers": {"Authorization": "[Filtered]", "Cookie": "[Filtered]", "Accept": "*/*"}}),
    ({"headers": [["X-Session", "s"], ["Accept", "*/*"]]}, {"headers": [["X-Session", "[Filtered]"], ["Accept", "*/*"]]}),
    ({"message": "mail to a.b+c@mail.example.ru failed"}, {"message": "mail to [email] failed"}),
    ({"url": "http://h/reset?token=abc&lang=ru"}, {"url": "http://h/reset?token=[Filtered]&lang=ru"}),
    ({"vars": {"password": "p", "user_email": "e", "count": 3}},
     {"vars": {"password": "[Filtered]", "user_email": "[Filtered]", "count": 3}}),
])
def test_scrub_removes_secrets_wherever_they_are(value: Any, scrubbed: Any) -> None:
    assert error_reports.scrub(value) == scrubbed


async def test_an_unhandled_error_of_a_page_is_reported_without_its_form(ingest: Ingest, app: Any,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(*_args: Any) -> Any:
        raise LookupError("the confirmation broke")

    monkeypatch.setattr(resolvers.auth, "confirm_email", broken)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        response = await http.post(f"/confirm?token={LINK_TOKEN}", data={"token": FORM_TOKEN},
                                   headers={"cookie": f"session_token={COOKIE_VALUE}"})
    assert response.status_code == 500
    error_reports.stop()
    [event] = ingest.events()
    assert event["exception"]["values"][-1]["type"] == "LookupError"
    sent = b"".join(ingest.bodies).decode()
    for secret in (LINK_TOKEN, FORM_TOKEN, COOKIE_VALUE):
        assert secret not in sent, f"{secret!r} was sent: {sent[max(0, sent.find(secret) - 300):sent.find(secret) + 100]}"
