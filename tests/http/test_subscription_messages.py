"""Malformed subscription messages, over a real uvicorn: each gets its protocol's close code or error
message, and the log has no error (no traceback) for any of them."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import pytest
import websockets

from tests.live import LEGACY_WS, GqlWs, serve

VALID = "subscription { topic_shouts(slug: \"culture\") { id } }"

# After connection_init: messages that are not what graphql-transport-ws allows.
MALFORMED = {
    "subscribe, null payload": {"id": "1", "type": "subscribe", "payload": None},
    "subscribe, string payload": {"id": "1", "type": "subscribe", "payload": "{ __typename }"},
    "subscribe, numeric query": {"id": "1", "type": "subscribe", "payload": {"query": 5}},
    "subscribe, string variables": {"id": "1", "type": "subscribe", "payload": {"query": VALID, "variables": "x"}},
    "subscribe, list extensions": {"id": "1", "type": "subscribe", "payload": {"query": VALID, "extensions": []}},
    "subscribe, numeric operationName": {"id": "1", "type": "subscribe",
                                         "payload": {"query": VALID, "operationName": 1}},
    "subscribe, numeric id": {"id": 1, "type": "subscribe", "payload": {"query": VALID}},
    "subscribe, no id": {"type": "subscribe", "payload": {"query": VALID}},
    "complete, no id": {"type": "complete"},
    "numeric type": {"type": 5},
    "no type": {"id": "1"},
    "ping, string payload": {"type": "ping", "payload": "x"},
    "a JSON array": [1, 2],
    "a JSON number": 5,
    "a JSON string": "subscribe",
    "JSON null": None,
}


@pytest.fixture
async def server(app: Any) -> Any:
    async with serve(app) as base:
        yield base


def _errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [f"{r.name}: {r.getMessage()}" for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize("what", list(MALFORMED))
async def test_a_malformed_message_closes_with_4400(server: str, what: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    async with GqlWs.connect(server) as ws:
        assert (await ws.init())["type"] == "connection_ack"
        await ws.ws.send(json.dumps(MALFORMED[what]))
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await ws.receive()
    assert closed.value.rcvd is not None, "closed without a close frame"
    assert closed.value.rcvd.code == 4400
    assert not _errors(caplog)


@pytest.mark.parametrize("message", [[1], 5, {"type": "connection_init", "payload": "token"}])
async def test_a_malformed_first_message_closes_with_4400(server: str, message: Any,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    async with GqlWs.connect(server) as ws:
        await ws.ws.send(json.dumps(message))
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await ws.receive()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4400
    assert not _errors(caplog)


async def test_a_null_init_payload_is_accepted(server: str) -> None:
    """The protocol allows `payload: null` on connection_init."""
    async with GqlWs.connect(server) as ws:
        await ws.send({"type": "connection_init", "payload": None})
        assert (await ws.receive())["type"] == "connection_ack"


async def test_a_valid_subscription_is_still_answered_after_the_checks(server: str) -> None:
    """Control: the checks let a whole message through (here one that fails validation, answered as an
    `error` for its id, the socket kept)."""
    async with GqlWs.connect(server) as ws:
        await ws.init()
        await ws.subscribe("1", "subscription { topic_shouts(slug: \"culture\") { nope } }")
        message = await ws.next_message()
        assert message["type"] == "error" and message["id"] == "1"
        await ws.send({"type": "ping"})
        assert (await ws.receive())["type"] == "pong"


@pytest.mark.parametrize(("message", "expected"), [
    ({"id": "1", "type": "start", "payload": None}, {"type": "error", "id": "1"}),
    ({"id": "1", "type": "start", "payload": {"query": 5}}, {"type": "error", "id": "1"}),
    ({"type": "start", "payload": {"query": VALID}}, {"type": "connection_error"}),
    ([1, 2], {"type": "connection_error"}),
    (7, {"type": "connection_error"}),
])
async def test_the_legacy_protocol_answers_a_malformed_message_with_an_error(
        server: str, message: Any, expected: dict[str, Any], caplog: pytest.LogCaptureFixture) -> None:
    async with GqlWs.connect(server, protocol=LEGACY_WS) as ws:
        assert (await ws.init())["type"] == "connection_ack"
        await ws.ws.send(json.dumps(message))
        answer = await ws.next_message()
        assert {k: answer.get(k) for k in expected} == expected
        assert answer["payload"]["message"]
        # the socket stays open, and serves a whole start
        await ws.send({"id": "2", "type": "start", "payload": {"query": "subscription { topic_shouts(slug: "
                                                                        "\"culture\") { nope } }"}})
        assert (await ws.next_message())["id"] == "2"
    assert not _errors(caplog)


@pytest.mark.parametrize("body", [
    {"query": 5}, {"query": VALID, "variables": "x"}, {"query": VALID, "operationName": 3}, [1, 2], 5,
])
async def test_a_malformed_event_stream_request_is_a_400(server: str, body: Any,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    async with httpx.AsyncClient(base_url=server, timeout=10) as http:
        response = await http.post("/graphql", content=json.dumps(body),
                                   headers={"accept": "text/event-stream", "content-type": "application/json"})
    assert response.status_code == 400, response.text
    assert not _errors(caplog)


async def test_a_document_that_does_not_parse_is_refused_in_the_stream(server: str,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    """Over SSE as over WebSocket: the refusal (PARSE_FAILED) as the stream's answer, and the stream ends."""
    async with httpx.AsyncClient(base_url=server, timeout=10) as http:
        response = await http.post("/graphql", json={"query": "subscription {"},
                                   headers={"accept": "text/event-stream"})
    events = [line.split(":", 1)[1].strip() for line in response.text.splitlines() if line.startswith("event:")]
    data = [json.loads(line.split(":", 1)[1]) for line in response.text.splitlines() if line.startswith("data:")
            and line.split(":", 1)[1].strip()]
    assert events == ["next", "complete"], response.text
    assert data[0]["errors"][0]["extensions"]["code"] == "GRAPHQL_PARSE_FAILED"
    async with GqlWs.connect(server) as ws:
        await ws.init()
        await ws.subscribe("1", "subscription {")
        message = await ws.next_message()
        assert message["type"] == "error" and message["id"] == "1"
        assert message["payload"][0]["extensions"]["code"] == "GRAPHQL_PARSE_FAILED"
        await ws.subscribe("1", VALID)  # the id is free again: nothing of the refused one stayed registered
        await ws.send({"type": "ping"})
        assert (await ws.receive())["type"] == "pong"
    assert not _errors(caplog)
