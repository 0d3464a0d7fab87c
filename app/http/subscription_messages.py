"""WebSocket messages checked before Strawberry's protocol handlers see them.

Strawberry's handlers index a message as the protocol's shape: a message that is a JSON array, a number,
or a `subscribe` whose payload is null or a string, raised `TypeError` inside the ASGI app (a traceback,
the socket dropped without a close frame), and a payload whose `query` was not a string failed in the
operation's task after the subscription was registered. Here each message is held to its protocol first:

- graphql-transport-ws (https://github.com/enisdenjo/graphql-ws/blob/master/PROTOCOL.md): a message that
  is not an object of a known type with the fields that type requires closes the socket with 4400 and
  the reason, as the protocol says of an invalid message;
- the legacy graphql-ws (subscriptions-transport-ws): a `start` that is not whole gets an `error` message
  for its id, and a message that is not an object a `connection_error`; the socket stays open, as that
  protocol's servers do.

A subscription therefore reaches the library whole, or not at all. Messages go out as text frames
(`TextFrames`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.websockets import WebSocketDisconnect

from schema.context import Context
from schema.engine.seam import ASGIWebSocketAdapter, LegacyWSHandler, TransportWSHandler, WebSocketDisconnected

INVALID_MESSAGE = 4400  # graphql-transport-ws: "Invalid message received"

_OPTIONAL_OBJECT = (dict, type(None))
_OPTIONAL_TEXT = (str, type(None))


def _operation_problem(payload: Any) -> str | None:
    """What is wrong with a subscribe/start payload, or None: `query` a string; `variables` and
    `extensions` objects and `operationName` a string, where present."""
    if not isinstance(payload, dict):
        return "the payload must be an object"
    if not isinstance(payload.get("query"), str):
        return "payload.query must be a string"
    if not isinstance(payload.get("variables"), _OPTIONAL_OBJECT):
        return "payload.variables must be an object"
    if not isinstance(payload.get("extensions"), _OPTIONAL_OBJECT):
        return "payload.extensions must be an object"
    if not isinstance(payload.get("operationName"), _OPTIONAL_TEXT):
        return "payload.operationName must be a string"
    return None


def transport_ws_problem(message: Any) -> str | None:
    """What is wrong with a graphql-transport-ws message, or None."""
    if not isinstance(message, dict):
        return "a message must be a JSON object"
    kind = message.get("type")
    if not isinstance(kind, str):
        return "a message must have a string `type`"
    if kind in ("connection_init", "ping", "pong"):
        return None if isinstance(message.get("payload"), _OPTIONAL_OBJECT) else "the payload must be an object"
    if kind in ("subscribe", "complete"):
        if not isinstance(message.get("id"), str) or not message["id"]:
            return f"a {kind} message must have a non-empty string `id`"
        return _operation_problem(message.get("payload")) if kind == "subscribe" else None
    return None  # an unknown type: the library closes with 4400 and names it


def legacy_ws_problem(message: Any) -> str | None:
    """What is wrong with a legacy graphql-ws message, or None."""
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        return "a message must be a JSON object with a string `type`"
    kind = message["type"]
    if kind in ("start", "stop") and not isinstance(message.get("id"), str):
        return f"a {kind} message must have a string `id`"
    if kind == "start":
        return _operation_problem(message.get("payload"))
    if kind == "connection_init" and not isinstance(message.get("payload"), _OPTIONAL_OBJECT):
        return "the payload must be an object"
    return None


class CheckedTransportWS(TransportWSHandler[Context, None]):
    async def handle_message(self, message: Any) -> None:
        if (problem := transport_ws_problem(message)) is not None:
            await self.websocket.close(code=INVALID_MESSAGE, reason=problem)
            return
        if message["type"] == "connection_init" and message.get("payload") is None:
            message = {**message, "payload": {}}  # the protocol allows a null payload
        await super().handle_message(message)


class CheckedLegacyWS(LegacyWSHandler[Context, None]):
    async def handle_message(self, message: Any) -> None:
        if (problem := legacy_ws_problem(message)) is not None:
            operation = message.get("id") if isinstance(message, dict) else None
            if isinstance(operation, str):
                await self.send_message({"type": "error", "id": operation, "payload": {"message": problem}})
            else:
                await self.send_message({"type": "connection_error", "payload": {"message": problem}})
            return
        await super().handle_message(message)


class TextFrames(ASGIWebSocketAdapter):
    """WebSocket messages as text frames: browsers' and the reference graphql-ws client read no binary
    ones, and the view's orjson encoder gives bytes (Strawberry would send those as binary frames)."""

    async def send_json(self, message: Mapping[str, object]) -> None:
        try:
            encoded = self.view.encode_json(message)
            await self.ws.send_text(encoded.decode() if isinstance(encoded, bytes) else encoded)
        except WebSocketDisconnect as exc:
            raise WebSocketDisconnected from exc
