"""The response cache in front of everything else: a hit answered before routing, before Starlette makes a
Request and before Strawberry's view is entered (DESIGN.md, data flow of a read, step 1).

Every GraphQL request over HTTP (GET or POST to /graphql) is read here, once (app/http/graphql_request.py); the
view (app/http/graphql_view.py) is handed what was read, and never reads the body again. A hit's cost is what
any route of this stack pays, plus one Redis round trip: read the body, hash the request, run the hit
script (cache/response/responses.py), send the stored bytes. Everything a hit does not need is left to the view:

- a request the front does not look up (a batch, GraphiQL's page, a persisted query being registered, a
  document that names a mutation or a subscription) or one refused while being read: the view answers;
- a miss: the view computes and stores the answer. It is told the key was already looked up, so a miss
  costs one round trip, not two;
- an answer being computed in this worker (a write made the stored one stale, and a reader is computing it
  again): waited for here, as the view would (app/http/single_flight.py), with the invalidation clock read
  instead of the hit script, and sent as a hit is. On a page commented on every few milliseconds, most of
  the page's readers find it so, and each went through the view;
- a stored answer kept private (`p`): such an entry under the public key is a guest's (an answer shaped
  by its reader, or with a field declared private). A signed-in reader goes on to the view, which checks
  the session and looks under the reader's own key.

A public entry is served to signed-in readers as well: an answer is stored under the public key only
when computing it never read the viewer and no field of it is private (app/http/read_path.py `_compute`),
so it is the same for every reader. That is why no session is checked on this path; a hit of a shout
notes its read, counted later with the other hits' reads (app/http/hit_reads.py), the sessions checked then.

A hash-only persisted query (`extensions.persistedQuery.sha256Hash`, POST or GET) is looked up by that
hash, which is what the response key is made of (cache/response/responses.py `request_key`), with no second round
trip for the document; a CDN may cache its GET too.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Protocol

from starlette.types import ASGIApp, Receive, Scope, Send

from ambient import LOG_CONTEXT
from app.http.caching import cache_control, is_current
from app.http.graphql_request import GraphQLRequest, ReadingRules, read
from app.http.guards import Refused
from app.http.hit_reads import HitRead, hit_reads_of
from app.http.negotiation import media_type, stored_body
from app.http.single_flight import SingleFlight, flight_clock
from app.http.write_gate import Readers
from cache.response.responses import Hit, Kept, LookUp, ResponseCache
from schema.context import guest_of
from telemetry import metrics, tracing

log = logging.getLogger(__name__)

PATH = "/graphql"


class View(Protocol):
    """What the front hands a request on to (app/http/graphql_view.py `DiscoursGraphQL`)."""

    rules: ReadingRules
    readers: Readers  # the reads being answered, a hit among them (app/http/write_gate.py)
    flights: SingleFlight[Hit, Kept]  # the answers being computed in this worker (app/http/read_path.py)

    async def serve(self, scope: Scope, receive: Receive, send: Send, request: GraphQLRequest | Refused, *,
                    looked: LookUp | None = None, began: float | None = None, joined: int = 0) -> None: ...


def responses_of(app: Any) -> ResponseCache:
    """The app's one ResponseCache (app/main.py `attach_shared`)."""
    responses: ResponseCache = app.state.responses
    return responses


def worth_looking_up(request: GraphQLRequest) -> bool:
    """Whether a request's answer may be stored under its public key: one operation, its document sent or
    named by a hash alone (a registration goes to the view, which keeps the document), and no word that
    makes it a write or a stream (a query that merely names such a word goes to the view, which answers
    it as ever)."""
    single = request.single
    if single is None or request.public_key is None:
        return False
    if single.persisted_hash is not None:
        return single.document is None
    document = single.document or ""
    return "mutation" not in document and "subscription" not in document


class ResponseCacheFront:
    """See the module's docstring. `view` answers what the front does not; `ttl` is the response cache's
    (RESPONSE_CACHE_TTL, 0: nothing is looked up)."""

    def __init__(self, app: ASGIApp, *, view: View, ttl: int) -> None:
        self.app = app
        self.view = view
        self.ttl = ttl

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != PATH or scope["method"] not in ("GET", "POST"):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        try:
            request, receive = await read(scope, receive, self.view.rules)
        except Refused as refused:
            await self.view.serve(scope, receive, send, refused)
            return
        if (logged := LOG_CONTEXT.get()) is not None:  # the request's log records name its operation
            logged.operation = (request.operation_name or "")[:64] or None
        if self.ttl <= 0 or not worth_looking_up(request):
            await self.view.serve(scope, receive, send, request)
            return
        responses = responses_of(scope["app"])
        readers = self.view.readers
        readers.count += 1
        began = flight_clock()  # before the look-up: a computation begun after it answers this request too
        key = request.public_key or ""
        looked: LookUp | None = None
        joined = 0
        try:
            with tracing.quiet():  # a hit is its request's one span (telemetry/tracing.py)
                hit, flights = None, self.view.flights
                if flights.joined(key) is not None:
                    hit, joined = await self._computed(key, responses, began)
                if hit is None:
                    looked = await responses.look_up(key)
                    hit = looked.hit
                    if hit is None and flights.joined(key) is not None:  # begun during the look-up
                        hit, joined = await self._computed(key, responses, began, looked, joined)
            if hit is None or (hit.private and request.signed_in):
                hit = None  # the view answers it, counted there
            else:
                if tracing.TRACER is not None:  # written before the answer: the request's span ends with it
                    tracing.annotate({"graphql.operation.name": metrics.operation_label(request.operation_name),
                                      "discours.response_cache": "hit"})
                await _send_hit(send, hit, request, responses)
        finally:
            readers.count -= 1
        if hit is None:
            await self.view.serve(scope, receive, send, request, looked=looked, began=began, joined=joined)
            return
        operation = metrics.operation_label(request.operation_name)
        metrics.child(metrics.REQUESTS, operation, "hit").inc()
        metrics.child(metrics.REQUEST_SECONDS, operation, "hit").observe(time.perf_counter() - started)
        if hit.views:  # a read of a shout answered from the cache still counts, with the others (app/http/hit_reads.py)
            note_hit_reads(scope, hit.views, token=request.token)

    async def _computed(self, key: str, responses: ResponseCache, began: float, looked: LookUp | None = None,
                        joined: int = 0) -> tuple[Hit | None, int]:
        """The answer being computed in this worker, for a request begun at `began`, and how many computations
        it has waited for (`joined` before this call; app/http/single_flight.py): by the clock its look-up read
        (`looked`), or, before any, by the invalidation clock read now instead of the hit script: a computation
        under way means a write made the stored answer stale, which the script would find again. The answer
        goes out from here, as a hit does, not through the view."""
        clock = looked.clock if looked is not None else await responses.clock()
        return await self.view.flights.answer_of(key, clock, began, lambda kept: responses.hit_of(kept, key),
                                                 joined=joined)


async def _send_hit(send: Send, hit: Hit, request: GraphQLRequest, responses: ResponseCache) -> None:
    """The stored answer as it is, or 304 when the client's copy is current; the headers the view gives
    an answer (app/http/caching.py)."""
    common = [(b"etag", hit.etag.encode()), (b"cache-control", cache_control(hit.max_age, hit.private).encode()),
              (b"vary", b"accept-encoding"), (b"x-cache", b"HIT")]
    if is_current(hit.etag, request.if_none_match):
        await send({"type": "http.response.start", "status": 304, "headers": common})
        await send({"type": "http.response.body", "body": b""})
        return
    body, encoding = stored_body(hit, request.accept_encoding, responses.plain)
    content_type = media_type(request.accept).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-length", str(len(body)).encode()), (b"content-type", content_type),
                            *((k.encode(), v.encode()) for k, v in encoding.items()), *common]})
    await send({"type": "http.response.body", "body": body})


def note_hit_reads(scope: Scope, shout_ids: list[int], *, token: str | None) -> None:
    """The shouts a stored answer shows were read again, by this reader: counted with the other hits'
    reads (app/http/hit_reads.py), the session `token` checked then."""
    hit_reads_of(scope["app"]).add(HitRead(tuple(shout_ids), guest_of(scope), token))
