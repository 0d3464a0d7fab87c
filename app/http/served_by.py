"""`X-Worker: <pid>` on every HTTP response (EXPOSE_WORKER=true): which worker process answered. Tests
that run several workers use it to show a read was served by another process than the write before it."""

from __future__ import annotations

import os

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class WorkerHeader:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.header = (b"x-worker", str(os.getpid()).encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def marked(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), self.header]
            await send(message)

        await self.app(scope, receive, marked)
