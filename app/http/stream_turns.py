"""A subscription over server-sent events takes its start's turn (schema/engine/stream_starts.py) before the rest
of its start runs: reading the request and the view's steps are most of it, and for a burst of them would
otherwise all run at once, in one turn of the loop. Its stream runs within the same turn, given back once
it is subscribed. The body is received before the turn is taken: a client sending it slowly holds no turn.
A WebSocket's subscriptions take theirs in the schema's stream alone: they arrive as messages on a socket
already open."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from app.http.graphql_request import body_of
from app.http.graphql_view import DiscoursGraphQL
from app.http.response_front import PATH
from schema.engine.stream_starts import StreamStarts


class StreamsInTurn:
    def __init__(self, app: ASGIApp, *, starts: StreamStarts, view: DiscoursGraphQL) -> None:
        self.app = app
        self.starts = starts
        self.view = view

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == PATH and self._streamed(scope):
            _, receive = await body_of(scope, receive)
            async with self.starts.turn():
                await self.app(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _streamed(self, scope: Scope) -> bool:
        """Whether the request asks for its answer as a stream (app/http/documents.py `Documents.streamed`)."""
        for name, value in scope["headers"]:
            if name == b"accept":
                return self.view.documents.streamed(value.decode("latin-1"))
        return False
