"""Limits on one request, each refused before anything executes, with the status and `extensions.code`
that name it (issue 9). Defaults are the settings' (config/settings.py)."""

from __future__ import annotations

import asyncio
import gc
import os
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from schema.engine.limits import Limits, query_cost
from schema.engine.seam import graphql_schema
from schema.schema import build_schema
from tests.helpers import Api

GRAPHQL_RESPONSE = "application/graphql-response+json"


def nested(levels: int) -> str:
    """get_shout { version_of { version_of { ... { id } } } }: `levels` fields deep, each one object."""
    return '{ get_shout(slug: "x") { ' + "version_of { " * (levels - 1) + "id" + " }" * levels + " }"


def aliases(n: int) -> str:
    return "{ " + " ".join(f"a{i}: get_topics_all {{ id slug }}" for i in range(n)) + " }"


COSTLY = "{ load_shouts_by(options: {limit: 100}) { authors { communities { created_by { communities { id } } } } } }"

# (what, document, expected code); each asked with the classic JSON media type (200) and with
# application/graphql-response+json (400, no `data`), as GraphQL over HTTP says.
REFUSED = [
    ("syntax", "{ get_topics_all { id ", "GRAPHQL_PARSE_FAILED"),
    ("unknown field", "{ get_topics_all { nope } }", "GRAPHQL_VALIDATION_FAILED"),
    ("depth 12", nested(12), "QUERY_TOO_DEEP"),
    ("31 aliases", aliases(31), "TOO_MANY_ALIASES"),
    ("2,001 tokens", "{ get_topics_all { " + "id " * 2001 + "} }", "TOO_MANY_TOKENS"),
    ("10,000 aliases", aliases(10_000), "TOO_MANY_TOKENS"),
    ("cost through nesting", COSTLY, "QUERY_TOO_COSTLY"),
    ("parser stack", "{" * 1000 + "}" * 1000, "GRAPHQL_PARSE_FAILED"),
]


@pytest.mark.parametrize("what, document, code", REFUSED, ids=[r[0] for r in REFUSED])
@pytest.mark.parametrize("accept, status", [("application/json", 200), (GRAPHQL_RESPONSE, 400)])
async def test_a_document_over_a_limit_is_refused_before_execution(
        client: httpx.AsyncClient, sql_counter: Any, what: str, document: str, code: str, accept: str,
        status: int) -> None:
    sql_counter.reset()
    response = await client.post("/graphql", json={"query": document}, headers={"accept": accept})
    assert response.status_code == status, response.text
    body = response.json()
    assert body.get("data") is None
    assert {e["extensions"]["code"] for e in body["errors"]} == {code}, body["errors"][:2]
    assert sql_counter.count == 0


async def test_the_limits_let_what_clients_send_through(api: Api) -> None:
    at_the_limit = await api.raw(nested(10))
    assert "errors" not in at_the_limit, at_the_limit
    thirty = await api.raw(aliases(30))
    assert "errors" not in thirty and len(thirty["data"]) == 30


async def test_cost_reads_limits_from_variables(api: Api) -> None:
    document = ("query($n: Int!) { load_shouts_by(options: {limit: $n}) "
                "{ authors { communities { created_by { communities { id } } } } } }")
    small = await api.raw(document, {"n": 2})
    assert "errors" not in small, small
    large = await api.raw(document, {"n": 100})
    assert large["errors"][0]["extensions"]["code"] == "QUERY_TOO_COSTLY"
    assert large["errors"][0]["extensions"]["cost"] > large["errors"][0]["extensions"]["limit"]


async def test_a_document_is_validated_once_per_worker(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """Validation depends on the text alone: the second request with the same document (other variables)
    skips it, and still gets the checks that depend on the variables."""
    import schema.engine.limits

    validations: list[object] = []
    real = schema.engine.limits.validate_document
    monkeypatch.setattr(schema.engine.limits, "validate_document", lambda *a: validations.append(a) or real(*a))
    document = "query($n: Int!) { load_shouts_by(options: {limit: $n}) { id authors { id } } } # once"
    assert "errors" not in await api.raw(document, {"n": 3})
    assert "errors" not in await api.raw(document, {"n": 5})
    assert (await api.raw(document, {"n": "\x00"}))["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert len(validations) == 1
    invalid = "{ get_topics_all { nope } } # once"
    for _ in range(2):
        assert (await api.raw(invalid))["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
    assert len(validations) == 2


def test_cost_multiplies_list_sizes_through_nesting() -> None:
    from graphql import parse

    schema = graphql_schema(build_schema())
    limits = Limits(tokens=2000, depth=10, aliases=30, cost=20_000, page_size=100, list_size=20,
                    parsed_documents=8, batch=10)

    def cost(document: str, variables: dict[str, Any] | None = None) -> int:
        return query_cost(schema, parse(document), None, variables or {}, limits)

    assert cost("{ get_topic(slug: \"x\") { id slug } }") == 1  # an object; scalars are free
    assert cost("{ load_shouts_by(options: {limit: 5}) { id } }") == 5
    assert cost("{ load_shouts_by(options: {limit: 5}) { id authors { id } } }") == 5 * (1 + 20)
    assert cost("{ load_shouts_by(options: {limit: 5000}) { id } }") == 100  # clamped like the resolvers
    assert cost("query($l: Int) { load_reactions_by(by: {}, limit: $l) { id } }", {"l": 7}) == 7
    assert cost("{ get_topics_all { id } }") == 20  # no `limit` argument: list_size
    assert cost("{ ...F } fragment F on Query { get_topics_all { id } }") == 20


async def test_ten_thousand_aliases_are_refused_early_and_leave_memory_flat(
        client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """Refused by the parser at its token limit: nothing is validated (graphql-core's validation is what a
    hostile document makes slow), and memory does not grow with repeated refusals (the process's current
    resident size, not its high-water mark, which earlier tests may have set)."""
    import schema.engine.limits

    validated: list[Any] = []
    monkeypatch.setattr(schema.engine.limits, "validate_document", lambda *args: validated.append(args) or [])
    document = aliases(10_000)  # about 400 KB
    await client.post("/graphql", json={"query": document})  # warm the path
    gc.collect()
    resident_before = _resident_bytes()
    for _ in range(20):
        response = await client.post("/graphql", json={"query": document})
        assert response.json()["errors"][0]["extensions"]["code"] == "TOO_MANY_TOKENS"
    gc.collect()
    grown = _resident_bytes() - resident_before
    assert validated == [], "a document over the token limit reached validation"
    assert grown < 20_000_000, f"resident memory grew {grown // 1024} KB over 20 refusals"


def _resident_bytes() -> int:
    """This process's resident memory now (Linux: /proc/self/statm, in pages)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# (what, request arguments, status, code): refusals of the HTTP layer, before GraphQL parses anything.
HTTP_REFUSED: list[tuple[str, dict[str, Any], int, str]] = [
    ("body over 1 MiB", {"method": "POST", "json": {"query": "{ __typename }", "pad": "x" * 1_100_000}},
     413, "REQUEST_TOO_LARGE"),
    ("a JSON string", {"method": "POST", "content": b'"hello"', "headers": {"content-type": "application/json"}},
     400, "BAD_REQUEST"),
    ("a JSON null", {"method": "POST", "content": b"null", "headers": {"content-type": "application/json"}},
     400, "BAD_REQUEST"),
    ("invalid UTF-8", {"method": "POST", "content": b'{"query": "{ \xff }"}',
                       "headers": {"content-type": "application/json"}}, 400, None),
    ("variables 100,000 deep", {"method": "POST", "content": b'{"query": "{ __typename }", "variables": {"a": '
                                + b"[" * 100_000 + b"]" * 100_000 + b"}}",
                                "headers": {"content-type": "application/json"}}, 400, None),
    ("variables 40 deep", {"method": "POST", "content": b'{"query": "{ __typename }", "variables": {"a": '
                           + b"[" * 40 + b"]" * 40 + b"}}", "headers": {"content-type": "application/json"}},
     400, "BAD_REQUEST"),
    ("11 operations in a batch", {"method": "POST", "json": [{"query": "{ __typename }"}] * 11},
     400, "TOO_MANY_OPERATIONS"),
    ("an empty batch", {"method": "POST", "json": []}, 400, "BAD_REQUEST"),
    ("text/plain", {"method": "POST", "content": b"{ __typename }", "headers": {"content-type": "text/plain"}},
     415, "UNSUPPORTED_MEDIA_TYPE"),
    ("a form", {"method": "POST", "data": {"query": "{ __typename }"}}, 415, "UNSUPPORTED_MEDIA_TYPE"),
    ("a mutation over GET", {"method": "GET", "params": {"query": "mutation { logout { success } }"}},
     405, "METHOD_NOT_ALLOWED"),
    ("Query.logout over GET", {"method": "GET", "params": {"query": "{ logout { success } }"}},
     405, "METHOD_NOT_ALLOWED"),
    ("logout in a fragment over GET", {"method": "GET", "params": {
        "query": "{ ...L } fragment L on Query { logout { success } }"}}, 405, "METHOD_NOT_ALLOWED"),
]


@pytest.mark.parametrize("what, request_args, status, code", HTTP_REFUSED, ids=[r[0] for r in HTTP_REFUSED])
async def test_http_refusals(client: httpx.AsyncClient, what: str, request_args: dict[str, Any], status: int,
                             code: str | None) -> None:
    args = dict(request_args)
    response = await client.request(args.pop("method"), "/graphql", **args)
    assert response.status_code == status, response.text[:300]
    if status == 405:
        assert response.headers["allow"] == "POST"
    if code is not None:
        assert response.json()["errors"][0]["extensions"]["code"] == code


async def test_a_chunked_body_over_the_limit_is_refused(client: httpx.AsyncClient) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"query": "{ __typename }", "pad": "'
        for _ in range(20):
            yield b"x" * 100_000
        yield b'"}'

    response = await client.post("/graphql", content=chunks(), headers={"content-type": "application/json"})
    assert response.status_code == 413
    assert response.json()["errors"][0]["extensions"]["code"] == "REQUEST_TOO_LARGE"

    async def small() -> AsyncIterator[bytes]:
        yield b'{"query": "{ __typename }"}'

    response = await client.post("/graphql", content=small(), headers={"content-type": "application/json"})
    assert response.json() == {"data": {"__typename": "Query"}}


async def test_a_batch_within_the_limit_runs_every_operation(client: httpx.AsyncClient) -> None:
    response = await client.post("/graphql", json=[{"query": "{ __typename }"}, {"query": "{ get_topics_all { id } }"}])
    assert response.status_code == 200
    first, second = response.json()
    assert first == {"data": {"__typename": "Query"}} and second["data"]["get_topics_all"]


async def test_queries_still_run_over_get(client: httpx.AsyncClient) -> None:
    response = await client.get("/graphql", params={"query": "{ get_topics_all { id } }"})
    assert response.status_code == 200 and response.json()["data"]["get_topics_all"]


async def test_a_request_over_the_timeout_is_stopped_and_its_query_cancelled(
        engine: Any, deps: Any, settings: Any) -> None:
    """A table locked by another transaction holds the read; past the timeout the client gets 503 TIMEOUT
    and PostgreSQL no longer runs the query (cancelled, not finished for nobody)."""
    from sqlalchemy import text

    from app.main import create_app

    app = create_app(settings.model_copy(update={"request_timeout": 0.5}), deps=deps)
    waiting = text("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                   "AND datname = current_database()")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        async with engine.connect() as locker, engine.connect() as observer:
            await locker.execute(text("LOCK TABLE shout IN ACCESS EXCLUSIVE MODE"))
            started = time.perf_counter()
            response = await client.post("/graphql", json={"query": "{ load_shouts_by(options: {limit: 3}) { id } }"})
            elapsed = time.perf_counter() - started
            assert response.status_code == 503, response.text
            assert response.json()["errors"][0]["extensions"]["code"] == "TIMEOUT"
            assert response.headers["retry-after"] == "1"
            assert elapsed >= 0.5  # not before the timeout (the code above says it was the timeout that ended it)
            for _ in range(50):  # the cancel request reaches the server within moments
                if (await observer.execute(waiting)).scalar() == 0:
                    break
                await asyncio.sleep(0.05)
            assert (await observer.execute(waiting)).scalar() == 0
            await locker.rollback()
        after = await client.post("/graphql", json={"query": "{ load_shouts_by(options: {limit: 3}) { id } }"})
        assert after.status_code == 200 and len(after.json()["data"]["load_shouts_by"]) == 3


async def test_a_write_cancelled_once_its_commit_began_is_committed_and_invalidated(
        api: Api, deps: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The request's timeout cancels a mutation while its invalidation is on the way to Redis: the write
    and its invalidation still complete, so the next read is not stale."""
    import uuid

    from orm.topic import Topic
    from resolvers.writes import transaction
    from triggers.sink import CacheSink

    before = await api("{ get_topics_all { slug } }")  # cached now
    reached, release = asyncio.Event(), asyncio.Event()
    original = CacheSink.apply

    async def slow_apply(self: CacheSink, *args: Any, **kwargs: Any) -> None:
        reached.set()
        await release.wait()
        await original(self, *args, **kwargs)

    monkeypatch.setattr(CacheSink, "apply", slow_apply)
    slug = f"cancelled-{uuid.uuid4().hex[:8]}"

    async def write() -> None:
        async with transaction(deps) as session:
            session.add(Topic(slug=slug, title=slug))

    task = asyncio.create_task(write())
    await asyncio.wait_for(reached.wait(), 5)
    task.cancel()
    for _ in range(5):  # loop turns, not time: the cancellation is thrown into the task at its next step
        await asyncio.sleep(0)
    assert task.cancelling() == 1 and not task.done()  # cancelled, and still waiting for its invalidation
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    after = await api("{ get_topics_all { slug } }")
    assert {t["slug"] for t in after} == {t["slug"] for t in before} | {slug}
