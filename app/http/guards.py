"""Refusals at the HTTP level, before anything is parsed as GraphQL: a body over the size limit (413), a
content type the server does not read (415), a state change over GET (405), a malformed or too deeply
nested JSON body, too many operations in a batch (400). Each answers with a GraphQL-shaped error whose
`extensions.code` names the reason, so a client handles it like any other error."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from graphql import GraphQLError
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from schema.engine.safety import changes_state
from schema.engine.seam import graphql_schema
from schema.schema import DiscoursSchema

BAD_REQUEST = "BAD_REQUEST"
TOO_LARGE = "REQUEST_TOO_LARGE"
UNSUPPORTED_MEDIA_TYPE = "UNSUPPORTED_MEDIA_TYPE"
METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
TOO_MANY_OPERATIONS = "TOO_MANY_OPERATIONS"
TIMEOUT = "TIMEOUT"
SERVICE_UNAVAILABLE = "SERVICE_UNAVAILABLE"  # as resolvers/errors.py `Busy` answers it
# Apollo's automatic persisted queries: the codes its clients act on
PERSISTED_QUERY_NOT_FOUND = "PERSISTED_QUERY_NOT_FOUND"
PERSISTED_QUERY_NOT_SUPPORTED = "PERSISTED_QUERY_NOT_SUPPORTED"


class Refused(Exception):
    """A request answered without executing it."""

    def __init__(self, status: int, code: str, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, dict(headers or {})

    def response(self, media_type: str = "application/json") -> Response:
        body = orjson.dumps({"errors": [{"message": self.message, "extensions": {"code": self.code}}]})
        return Response(body, status_code=self.status, headers=self.headers, media_type=media_type)


def refuse_state_change_over_get(schema: DiscoursSchema, method: str, document: str | None,
                                 operation_name: str | None) -> None:
    """405 for an operation that changes state sent over GET: a link on another site must not sign a
    user out or write anything with the user's cookie (schema/engine/safety.py says which do)."""
    if method != "GET" or not document:
        return
    try:
        parsed = schema.parse(document)
    except GraphQLError:
        return  # execution answers the syntax error
    if changes_state(graphql_schema(schema), parsed, operation_name):
        raise Refused(405, METHOD_NOT_ALLOWED, "This operation changes state: send it with POST", {"Allow": "POST"})


def json_depth(value: Any) -> int:
    """How deeply lists and objects nest in a decoded JSON value (iterative: any depth is safe to measure)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


class BodySizeLimit:
    """413 for an HTTP request body over `max_bytes`: at once by its Content-Length, or, for a chunked
    body, as soon as the bytes received pass the limit (what was read is buffered and handed on)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        length = headers.get(b"content-length")
        if length is not None:
            if not length.isdigit():
                await Refused(400, BAD_REQUEST, "Content-Length is not a number").response()(scope, receive, send)
            elif int(length) > self.max_bytes:
                await self._too_large(scope, receive, send)
            else:  # the server holds the body to its declared length
                await self.app(scope, receive, send)
            return
        if b"chunked" not in headers.get(b"transfer-encoding", b""):
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.max_bytes:
                await self._too_large(scope, receive, send)
                return
            if not message.get("more_body"):
                break

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = Refused(413, TOO_LARGE, f"The request body is larger than {self.max_bytes} bytes")
        await refused.response()(scope, receive, send)
