"""Graceful restarts behind a load balancer.

On SIGTERM a worker does not stop at once: a load balancer would still send it requests (its last health
check passed) and they would fail. Instead:

1. `/readyz` answers 503 `draining` at once, while the worker goes on serving every request for
   SHUTDOWN_DRAIN_SECONDS: the time for the load balancer's checks to see it and send new requests
   elsewhere (set it above the balancer's check interval times its fall count);
2. then uvicorn closes the listener, lets requests in flight finish (up to SHUTDOWN_TIMEOUT seconds), and
   closes WebSockets with code 1012 (Service Restart: a client reconnects, and reaches another server);
3. the lifespan's shutdown writes counted views down, lets the delayed-queue batch under way finish and
   acknowledge (nothing this worker took stays leased; what is queued is left to the others), stops the
   loops and closes the clients; the process exits 0.

A second SIGTERM, or SIGINT (Ctrl-C), stops at once, as uvicorn does. With `--workers N`, uvicorn's
supervisor passes SIGTERM to each worker, and each drains like this.

uvicorn has no drain of its own, and its supervisor makes each worker's server itself, so the drain is
installed from the lifespan, in the worker: it takes over the SIGTERM handler uvicorn installed, which is
its server's `handle_exit`, and ends the drain by setting that server's `should_exit` (uvicorn's own way to
stop a server; a signal passed on to `handle_exit` would be raised again at exit, killing the process by
SIGTERM instead of exiting 0). `tests/schema/test_seams.py` has a canary for that handler.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
import time
from types import FrameType
from typing import Any

import uvicorn

log = logging.getLogger(__name__)


class Draining:
    """Whether this process has been told to stop: /readyz reads it (one per process, as signals are)."""

    def __init__(self) -> None:
        self.since: float | None = None

    @property
    def active(self) -> bool:
        return self.since is not None

    def begin(self) -> None:
        if self.since is None:
            self.since = time.monotonic()


DRAINING = Draining()


def uvicorn_server_of(handler: Any) -> uvicorn.Server | None:
    """The uvicorn server whose SIGTERM handler `handler` is, if it is one (uvicorn's `capture_signals`
    installs the bound `Server.handle_exit`)."""
    server = getattr(handler, "__self__", None)
    return server if isinstance(server, uvicorn.Server) else None


def drain_on_sigterm(drain_seconds: float) -> bool:
    """Make this worker's first SIGTERM a drain (see the module's docstring). Called by the lifespan at
    start; False, and nothing changed, when uvicorn does not handle this process's signals (a test's
    server, another ASGI server). `drain_seconds` 0: no drain, yet the same exit (0, not by the signal)."""
    if threading.current_thread() is not threading.main_thread():
        return False
    server = uvicorn_server_of(signal.getsignal(signal.SIGTERM))
    if server is None:
        return False
    loop = asyncio.get_running_loop()

    def stop() -> None:
        server.should_exit = True  # uvicorn closes the listener and finishes what is in flight

    def on_sigterm(sig: int, frame: FrameType | None) -> None:
        if DRAINING.active:  # a second SIGTERM: now
            server.handle_exit(sig, frame)
            return
        DRAINING.begin()
        log.info("SIGTERM: /readyz answers 503; serving %.1f s more, then finishing requests in flight",
                 drain_seconds)
        loop.call_soon_threadsafe(loop.call_later, max(drain_seconds, 0.0), stop)

    signal.signal(signal.SIGTERM, on_sigterm)
    return True
