"""A request as the view's steps and Strawberry's hooks hand it along: a Starlette `Request` that carries
its GraphQL parameters, read once (`graphql`, app/http/graphql_request.py), and what the steps learn while
answering it (whether execution had errors, how long the answer may be kept and for whom, the context).

Strawberry calls the view's hooks (`get_context`, `parse_http_body`, `process_result`, ...) with the
request it was given, or an adapter wrapping it (`ExchangeAdapter`), and nothing else of this request:
an `Exchange` is how a hook finds what an earlier step decided, without a context variable or a key in
the ASGI scope."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope

from app.http.graphql_request import GraphQLRequest
from app.http.single_flight import now
from schema.engine.seam import StarletteRequestAdapter

if TYPE_CHECKING:
    from cache.response.rendered import ToKeep
    from schema.context import Context
    from schema.engine.cache_control import Policy


class Exchange(Request):
    def __init__(self, scope: Scope, receive: Receive, graphql: GraphQLRequest, *, looked_up: bool = False,
                 stale: bool = False, clock: bytes | None = None, moved: tuple[str, ...] = (),
                 began: float | None = None, refreshing: bool = False) -> None:
        super().__init__(scope, receive)
        self.graphql = graphql
        # when the request began, before any look-up of its answer (app/http/single_flight.py `now`)
        self.began = now() if began is None else began
        self.looked_up = looked_up  # the front looked the public key up already and found nothing to serve
        self.stale = stale  # what a look-up found under the request's key was a response a write made stale
        self.clock = clock  # the invalidation clock that look-up read (cache/response/responses.py `LookUp`)
        self.moved = moved  # when stale: the tags whose moves made it so (noted for writes to refresh it)
        # A write computes this answer again before it is answered (cache/refresh.py): nothing is looked up.
        self.refreshing = refreshing
        # Work left for after the answer has gone out (the computed answer's store: app/http/single_flight.py).
        self.after_answer: Callable[[], Awaitable[None]] | None = None
        self.context: Context | None = None  # made once, by the first step that needs it
        self.sub_response: Response | None = None  # Strawberry's, for status and headers set while executing
        self.errors = False  # execution reported errors
        self.policy: Policy | None = None  # the document's cache policy, once looked up
        self.rendered_missed: str | None = None  # a rendered answer's key looked up before executing, absent
        self.handed: list[ToKeep] | None = None  # rendered answers kept with the response (engine/rendered)
        # How long the answer may be kept and whether for one viewer only (schema/engine/cache_control.py); None
        # until known (a hit carries its own, an answer computed is judged by its document and its reads).
        self.max_age: int | None = None
        self.private = False


class ExchangeAdapter(StarletteRequestAdapter):
    """Strawberry's request adapter, keeping the exchange it wraps for the view's hooks."""

    def __init__(self, request: Exchange) -> None:
        super().__init__(request)
        self.exchange = request
