"""Each HTTP request and WebSocket gets an id for its log records (app/logs.py's JSON lines): the client's
or the proxy's `X-Request-ID` when it is a short plain token, else one made here."""

from __future__ import annotations

import re
import uuid

from starlette.types import ASGIApp, Receive, Scope, Send

from ambient import LOG_CONTEXT, LogContext

HEADER = b"x-request-id"
# What a given id may be: a bounded token, so a client cannot write what it likes into the logs.
GIVEN = re.compile(rb"^[A-Za-z0-9._:-]{1,64}$")


class RequestIds:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        given = next((value for name, value in scope["headers"] if name == HEADER), b"")
        request_id = given.decode() if GIVEN.match(given) else uuid.uuid4().hex[:16]
        token = LOG_CONTEXT.set(LogContext(request_id))
        try:
            await self.app(scope, receive, send)
        finally:
            LOG_CONTEXT.reset(token)
