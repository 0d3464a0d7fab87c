"""Slow clients bounded: a request's headers and its body each have a deadline.

uvicorn has a keep-alive timeout (an idle connection between requests) and a cap of connections
(`limit_concurrency`), which `discours serve` sets from the settings, but no deadline for reading a
request: a client sending a header byte a second, or a body a byte a second, held its connection (and,
for the body, a task) for as long as it liked. `ReadDeadlines` is uvicorn's httptools protocol with a
timer on what is still being read:

- a request's headers, from the connection's (or the next request's) first byte: past
  `HEADER_READ_TIMEOUT` the client gets a 408 and the connection is closed;
- its body, from the end of its headers: past `BODY_READ_TIMEOUT`, the same (the connection closed
  without a 408 if the app had begun answering).

A timer is set only while a read is unfinished when the bytes at hand are parsed: a request that comes
in one read (nearly all) sets none, but the connection's first. Nothing is timed once a request is read:
a WebSocket's messages (its connection is another protocol's from its upgrade) and an event stream's
events are not requests being read.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

# How a worker's protocol learns the settings: uvicorn builds it from the class alone, in each worker
# process, and `discours serve` sets these for its workers (seconds; 0 turns a deadline off).
HEADER_TIMEOUT_ENV = "HEADER_READ_TIMEOUT"
BODY_TIMEOUT_ENV = "BODY_READ_TIMEOUT"


def _timed_out(what: bytes) -> bytes:
    text = b"The request's " + what + b" came too slowly"
    return (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
            b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(text), text))


_SLOW_HEADERS, _SLOW_BODY = _timed_out(b"headers"), _timed_out(b"body")


class ReadDeadlines(HttpToolsProtocol):
    header_timeout: float | None = None  # read from the environment by the first connection of a process
    body_timeout: float | None = None
    _timer: asyncio.TimerHandle | None = None
    _in_headers = False
    _in_body = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if ReadDeadlines.header_timeout is None:
            ReadDeadlines.header_timeout = float(os.environ.get(HEADER_TIMEOUT_ENV) or 10.0)
        if ReadDeadlines.body_timeout is None:
            ReadDeadlines.body_timeout = float(os.environ.get(BODY_TIMEOUT_ENV) or 30.0)

    def _arm(self, seconds: float | None) -> None:
        if self._timer is None and seconds:
            self._timer = self.loop.call_later(seconds, self._expired)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self) -> None:
        self._timer = None
        if self.transport.is_closing() or self.transport.get_protocol() is not self:
            return
        if self._in_headers or not self._in_body:  # a connection that sent nothing yet is reading headers
            self.transport.write(_SLOW_HEADERS)
        elif not self.cycle.response_started:
            self.transport.write(_SLOW_BODY)
        self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm(self.header_timeout)  # until its first request's headers are in

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._in_headers:
            self._arm(self.header_timeout)
        elif self._in_body:
            self._arm(self.body_timeout)

    def on_message_begin(self) -> None:
        self._in_headers = True
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._disarm()
        self._in_headers = False
        self._in_body = not (self.parser.should_upgrade() and self._should_upgrade())
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._disarm()
        self._in_body = False
        super().on_message_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)
