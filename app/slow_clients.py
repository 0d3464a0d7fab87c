"""Slow clients bounded: a request's headers and its body each have a deadline.

uvicorn has a keep-alive timeout (an idle connection between requests) and a cap of connections
(`limit_concurrency`), which `discours serve` sets from the settings, but no deadline for reading a
request: a client sending a header byte a second, or a body a byte a second, held its connection (and,
for the body, a task) for as long as it liked. Here:

- `HeaderDeadline`, uvicorn's httptools protocol with a timer from the connection's (or the next
  request's) first byte until its headers are complete: past `HEADER_READ_TIMEOUT` the client gets a 408
  and the connection is closed;
- `BodyDeadline`, an ASGI middleware: a request's whole body must arrive within `BODY_READ_TIMEOUT`,
  or the client gets a 408 (and `connection: close`).

Neither touches what comes after: a WebSocket's messages and an event stream's events are not requests
being read, so no read timeout cuts them.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

HEADER_TIMEOUT_ENV = "HEADER_READ_TIMEOUT"  # how a worker's protocol learns the setting (see `HeaderDeadline`)
_SLOW_HEADERS = b"The request's headers came too slowly"
_TIMED_OUT = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
              b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(_SLOW_HEADERS), _SLOW_HEADERS))


class HeaderDeadline(HttpToolsProtocol):
    """uvicorn builds its protocol from the class alone, in each worker process, so the deadline comes from
    the environment `discours serve` sets for its workers (`HEADER_READ_TIMEOUT`, seconds; 0 turns it off)."""

    header_timeout: float | None = None
    _header_timer: asyncio.TimerHandle | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if HeaderDeadline.header_timeout is None:
            HeaderDeadline.header_timeout = float(os.environ.get(HEADER_TIMEOUT_ENV) or 10.0)

    def _arm(self) -> None:
        if self._header_timer is None and self.header_timeout:
            self._header_timer = self.loop.call_later(self.header_timeout, self._expired)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _expired(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.write(_TIMED_OUT)
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        # a keep-alive connection's next request: its headers are on the clock from their first byte
        if self.cycle is not None and self.cycle.response_complete:
            self._arm()
        super().data_received(data)

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


class BodyDeadline:
    """408 for a request whose body has not all arrived within `timeout` seconds: the body is read here,
    under the deadline, and handed to the app as it came; what the app reads after it (the wait for a
    disconnect, an event stream's) has no deadline. Inside the body size limit, which refuses a body too
    large before anything is read or buffered."""

    def __init__(self, app: ASGIApp, timeout: float) -> None:
        self.app, self.timeout = app, timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.timeout <= 0:
            await self.app(scope, receive, send)
            return
        body: list[Message] = []
        try:
            async with asyncio.timeout(self.timeout):
                while True:
                    message = await receive()
                    body.append(message)
                    if message["type"] != "http.request" or not message.get("more_body", False):
                        break
        except TimeoutError:
            await send({"type": "http.response.start", "status": 408, "headers": [
                (b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")]})
            await send({"type": "http.response.body", "body": b"The request's body came too slowly"})
            return

        async def replayed() -> Message:
            return body.pop(0) if body else await receive()

        await self.app(scope, replayed, send)
