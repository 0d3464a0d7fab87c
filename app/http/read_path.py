"""A read through the response cache: looked up under the request's key, or computed once for every identical
request waiting meanwhile (app/http/single_flight.py), and kept after the answer has gone out when its policy and
its reads allow (schema/engine/cache_control.py, cache/response/responses.py).

The key is the public one for a guest, and for a signed-in reader when every field is public; the reader's
own when one is private; none when the answer is not kept (a mutation, an undeclared field, a stream). What
an execution computed on the way (values left to store, rendered answers) goes out after the answer, with the
response's store when it is kept."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from starlette.responses import Response

from app.http.caching import marked
from app.http.documents import Documents
from app.http.exchange import Exchange
from app.http.negotiation import media_type, stored_body
from app.http.response_front import note_hit_reads, responses_of
from app.http.single_flight import Computed, Flight, SingleFlight, flight_clock
from app.http.write_gate import Readers
from app.http.write_refresh import noted_for_refresh
from cache import response_capture
from cache.fills import RidingFills
from cache.redis.coalesce import at_once
from cache.response.rendered import ToKeep, queue_kept
from cache.response.responses import Hit, Kept, ResponseCache, etag_of, followed
from resolvers.errors import Busy
from schema.context import Context


class Executes(Protocol):
    """The view (app/http/graphql_view.py): how a request is executed, with the context it is executed in."""

    async def execute(self, exchange: Exchange, left: RidingFills | None = None) -> Any: ...

    def context_of(self, exchange: Exchange) -> Context: ...


class ReadPath:
    """`ttl`: how long a response is kept (RESPONSE_CACHE_TTL, 0: none is); `refreshed_per_write`: whether
    answers are noted for writes to refresh (cache/refresh.py)."""

    def __init__(self, documents: Documents, view: Executes, *, ttl: int, refreshed_per_write: int) -> None:
        self.documents = documents
        self.view = view
        self.ttl = ttl
        self.refreshed_per_write = refreshed_per_write
        # The reads being answered now, counted here and by the response front: a write's share yields to them.
        self.readers = Readers()
        self.single_flight: SingleFlight[Hit, Kept] = SingleFlight()

    async def answer(self, exchange: Exchange, key: str | None) -> Any:
        self.readers.count += 1
        try:
            if key is None:
                return marked(await self._executed_unkept(exchange), "BYPASS")
            return await self._read(exchange, key)
        finally:
            self.readers.count -= 1

    async def key(self, exchange: Exchange) -> str | None:
        """Where this request's answer is kept (see the module's docstring); a guest's key is the public one,
        looked up before anything is parsed. A stream's is none: a subscription over SSE would pay a look-up,
        a claim and its release for nothing."""
        graphql = exchange.asked.graphql
        if self.ttl <= 0 or graphql.public_key is None or self.documents.streamed(graphql.accept):
            return None
        if not graphql.signed_in:
            return graphql.public_key
        policy = self.documents.policy(exchange)
        if not policy.cacheable:
            return None
        if not policy.private:
            return graphql.public_key
        try:
            session = await self.view.context_of(exchange).session(shapes_answer=False)
        except Busy:
            return None  # the session cannot be checked: execution answers (SERVICE_UNAVAILABLE)
        return graphql.response_key(scope=f"user:{session.user_id}") if session else graphql.public_key

    async def _read(self, exchange: Exchange, key: str) -> Any:
        asked, answer = exchange.asked, exchange.answer
        responses = responses_of(exchange.app)
        hit = None
        # The front (app/http/response_front.py) looked the public key up already and found nothing it could serve.
        if not (asked.looked_before is not None and key == asked.graphql.public_key):
            answer.looked = await responses.look_up(key)
            hit = answer.looked.hit
        if hit is None:  # the computations the front waited for already count against the bound
            hit, _ = await self.single_flight.answer_of(key, answer.looked.clock, asked.began,
                                                        lambda kept: responses.hit_of(kept, key),
                                                        joined=asked.flights_joined)
        if hit is not None:
            return self._answer_hit(exchange, hit, responses)
        # The identical requests arriving meanwhile wait for this computation: its Redis commands go out at the
        # next turn of the loop instead of after two quiet ones (cache/redis/coalesce.py); under load a miss's
        # turns are its wall time, and its waiters'.
        with at_once():
            return await self.single_flight.lead(
                key, lambda flight: self._compute(exchange, key, responses, flight))

    async def _executed_unkept(self, exchange: Exchange) -> Any:
        """A read whose answer is not kept (the response cache off, a field no answer is kept for): executed,
        and what it computed (values, rendered answers) stored after the answer has gone out, not before it."""
        left, also = stored_after(exchange)
        response = await self.view.execute(exchange, left)
        if exchange.answer.handed or left.fills or left.unlocks:  # a warm read computed nothing: no pipeline
            exchange.answer.after_answer = lambda: responses_of(exchange.app).not_kept(also=also)
        return response

    @staticmethod
    def _answer_hit(exchange: Exchange, hit: Hit, responses: ResponseCache) -> Response:
        graphql = exchange.asked.graphql
        exchange.answer.max_age, exchange.answer.private = hit.max_age, hit.private
        body, encoding = stored_body(hit, graphql.accept_encoding, responses.plain)
        response = Response(body, media_type=media_type(graphql.accept),
                            headers={"vary": "accept-encoding", "etag": hit.etag, **encoding})
        if hit.views:  # a read of a shout served from the response cache still counts (app/http/hit_reads.py)
            note_hit_reads(exchange.scope, hit.views, token=graphql.token)
        return marked(response, "HIT")

    async def _compute(self, exchange: Exchange, key: str, responses: ResponseCache, flight: Flight[Hit, Kept]) -> Any:
        """Execute, unless another worker computes the same answer (`ResponseCache.claim`): then its answer,
        once kept. If its policy and its reads allow, give the answer to the identical requests waiting
        meanwhile (`flight`) and keep it once it has gone out (`Answer.after_answer`)."""
        answer = exchange.answer
        claim = await responses.claim(key, clock=flight_clock)
        if claim.hit is not None:
            flight.found(claim.hit, claim.looked)
            self.single_flight.end(flight, None)
            return self._answer_hit(exchange, claim.hit, responses)
        capture, token = response_capture.begin()
        # The rendered answers and values computed are kept with the response, in its round trip, after the answer.
        left, also = stored_after(exchange)
        try:
            response = await self.view.execute(exchange, left)
        except BaseException:
            if claim.ours:
                await responses.abandon(key)
            raise
        finally:
            response_capture.end(token)
        claimed = key if claim.ours else None
        if not hasattr(response, "body"):  # a stream (a subscription over SSE): nothing to store
            self.single_flight.end(flight, None)
            await responses.not_kept(also=also, unshared=claimed)
            return response
        body = response.body
        policy = self.documents.policy(exchange)
        # A public answer that read the viewer after all (an argument such as `reacted` makes it the
        # viewer's) is not kept for everyone; a private one is kept under its viewer's key.
        shared = policy.cacheable and (policy.private or not capture.read_viewer)
        # Cache-Control says the same: an answer shaped by the viewer (a guest's too) is private.
        answer.max_age, answer.private = policy.max_age, policy.private or capture.read_viewer
        storable = response.status_code == 200 and isinstance(body, bytes) and not answer.errors and shared
        if not storable:  # what is to be kept goes out after the answer, as for one that is kept
            self.single_flight.end(flight, None)
            answer.after_answer = lambda: responses.not_kept(also=also, unshared=claimed)
            return marked(response, "BYPASS")
        response.headers["etag"] = response.headers.get("etag") or etag_of(body)  # a rendered one has it
        to_keep = responses.prepare(key, body, capture, response.headers["etag"], max_age=policy.max_age,
                                    private=answer.private)
        clock = answer.looked.clock
        flight.publish(Computed(to_keep.hit, clock) if to_keep is not None and clock is not None else None)
        noted = noted_for_refresh(exchange, key, ttl=self.ttl) if self.refreshed_per_write else None
        # The rendered answers and the values left to store go out with the response's store, whatever becomes
        # of it, and the answer's note for writes to refresh it; the claim is released after it.
        answer.after_answer = lambda: self.single_flight.keep(flight, lambda: responses.keep(
            to_keep, also=also if noted is None else followed(also, noted), claimed=claimed))
        return marked(response, "MISS")


def stored_after(exchange: Exchange) -> tuple[RidingFills, Callable[[Any], None]]:
    """What an execution computed, to store after its answer: the values left to store (`RidingFills`, given
    to the execution) and the rendered answers (handed over on the answer record); with the function queueing
    both's commands in the pipeline that stores them."""
    handed: list[ToKeep] = []
    exchange.answer.handed = handed
    cache = exchange.app.state.deps.cache
    left = RidingFills(cache)

    def also(pipe: Any) -> None:
        queue_kept(pipe, cache, handed)
        cache.queue_left(pipe, left)

    return left, also
