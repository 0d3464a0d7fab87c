"""A request as the view's steps and Strawberry's hooks hand it along: a Starlette `Request` carrying what was
asked (`Asked`, frozen: read once and never changed) and what the steps learn while answering it (`Answer`,
each field written by one step, named beside it).

Strawberry calls the view's hooks (`get_context`, `parse_http_body`, `process_result`, ...) with the
request it was given, or an adapter wrapping it (`ExchangeAdapter`), and nothing else of this request:
an `Exchange` is how a hook finds what an earlier step decided, without a context variable or a key in
the ASGI scope."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope

from app.http.graphql_request import GraphQLRequest
from cache.response.responses import LookUp
from schema.engine.seam import StarletteRequestAdapter

if TYPE_CHECKING:
    from cache.response.rendered import ToKeep
    from schema.context import Context
    from schema.engine.cache_control import Policy

NOT_LOOKED_UP = LookUp(hit=None)


@dataclass(frozen=True, slots=True)
class Asked:
    """What a request asks, known before any step answers it."""

    graphql: GraphQLRequest  # its operations, read once; a persisted query's document found
    began: float  # when it began, before any look-up of its answer (app/http/single_flight.py `now`)
    # What was found under the public key before the view: by the front (app/http/response_front.py), nothing
    # it could serve; for a refresh (app/http/write_refresh.py), an answer a write made stale.
    looked_before: LookUp | None = None
    # Computations of the same answer the front waited for already, none of which could give it
    # (app/http/single_flight.py `SingleFlight.answer_of`).
    flights_joined: int = 0
    # A write computes this answer again after its answer (cache/refresh.py): a read of no one's.
    refreshing: bool = False


@dataclass(slots=True)
class Answer:
    """What the steps learn while answering a request; the comment names each field's one writer."""

    # The look-up under the request's key: what it found stale and the clock it read (the read path,
    # app/http/read_path.py, or the front's before it).
    looked: LookUp = NOT_LOOKED_UP
    policy: Policy | None = None  # the document's cache policy, once looked up (app/http/documents.py)
    context: Context | None = None  # made once, by the first step that needs it (the view's `context_of`)
    sub_response: Response | None = None  # Strawberry's, for status and headers (the view's `get_sub_response`)
    errors: bool = False  # execution reported errors (the view's `process_result`)
    rendered_missed: str | None = None  # a rendered answer's key looked up, absent (app/http/documents.py)
    # Rendered answers kept with the response, and values left to store (the read path's `stored_after`).
    handed: list[ToKeep] | None = None
    # How long the answer may be kept and whether for one viewer only, when the response cache decided it
    # (the read path: a hit carries its own, a computed answer is judged by its document and its reads).
    max_age: int | None = None
    private: bool = False
    # Work left for after the answer has gone out: the computed answer's store (the read path).
    after_answer: Callable[[], Awaitable[None]] | None = None


class Exchange(Request):
    def __init__(self, scope: Scope, receive: Receive, asked: Asked) -> None:
        super().__init__(scope, receive)
        self.asked = asked
        self.answer = Answer(looked=asked.looked_before or NOT_LOOKED_UP)


class ExchangeAdapter(StarletteRequestAdapter):
    """Strawberry's request adapter, keeping the exchange it wraps for the view's hooks."""

    def __init__(self, request: Exchange) -> None:
        super().__init__(request)
        self.exchange = request
