"""The GraphQL HTTP view: Strawberry's ASGI app, composing the steps of answering one request.

A request reaches `serve` read once (app/http/graphql_request.py: by the front, app/http/response_front.py, or by
`__call__` when nothing is in front), wrapped in an `Exchange` (app/http/exchange.py) that Strawberry's hooks
are handed. `run` then, within the request's time limit and counted in the metrics:

1. finds a persisted query's document (app/http/persisted_queries.py) and refuses a state change over GET
   (app/http/guards.py);
2. answers from the response cache under the request's key (the public one, or the viewer's own for a
   private answer), or computes the answer once for every identical request waiting meanwhile
   (app/http/single_flight.py) and keeps it if its policy and its reads allow (schema/engine/cache_control.py);
3. gives the answer its HTTP caching headers, or a 304 (app/http/caching.py), and GraphQL over HTTP's
   media type (app/http/negotiation.py).

Subscriptions go over WebSocket (`graphql-transport-ws`, legacy `graphql-ws`) and over HTTP as server-sent
events (`graphql-sse`, `Accept: text/event-stream`). Strawberry keeps a WebSocket's connection_init
payload on `Context.connection_params`, where `Context.session` looks for a token first. GraphiQL is served
from the server's own copies of its scripts (app/http/graphiql.py), working offline.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

import orjson
from graphql import GraphQLError
from starlette.responses import PlainTextResponse, Response
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocketDisconnect
from strawberry import UNSET
from strawberry.asgi import GraphQL
from strawberry.http import GraphQLHTTPResponse, GraphQLRequestData
from strawberry.types import ExecutionResult

from ambient import REFRESHING
from app.http import persisted_queries
from app.http.caching import marked, with_http_caching
from app.http.exchange import Exchange, ExchangeAdapter
from app.http.graphiql import offline_page
from app.http.graphql_request import GraphQLRequest, ReadingRules, read
from app.http.guards import BAD_REQUEST, TIMEOUT, Refused, refuse_state_change_over_get
from app.http.negotiation import media_type, stored_body, wants_graphql_response
from app.http.response_front import note_hit_reads, responses_of
from app.http.single_flight import FLIGHTS_JOINED, Computed, Flight, SingleFlight, now
from app.http.subscription_messages import CheckedLegacyWS, CheckedTransportWS
from app.http.write_gate import Readers, WriteGate
from app.http.write_refresh import noted_for_refresh, refresh
from cache import response_capture
from cache.fills import RidingFills
from cache.redis.coalesce import at_once
from cache.refresh import Refreshing
from cache.response.persisted import PersistedQueries
from cache.response.rendered import ToKeep, queue_kept
from cache.response.responses import Claim, Hit, Kept, ResponseCache, etag_of, followed
from resolvers.deps import Deps
from resolvers.errors import Busy
from schema.context import Context, Loaders
from schema.engine.cache_control import Policy, PolicyCache
from schema.engine.rendered import RenderedAnswers, WholeAnswer, answer_without_executing
from schema.engine.safety import changes_state
from schema.engine.seam import (
    ASGIWebSocketAdapter,
    HTTPException,
    WebSocketDisconnected,
    graphql_schema,
    stream_protocol,
)
from schema.schema import DiscoursSchema
from telemetry import metrics

log = logging.getLogger(__name__)


class TextFrames(ASGIWebSocketAdapter):
    """WebSocket messages as text frames: browsers' and the reference graphql-ws client read no binary
    ones, and the view's orjson encoder gives bytes (Strawberry would send those as binary frames)."""

    async def send_json(self, message: Mapping[str, object]) -> None:
        try:
            encoded = self.view.encode_json(message)
            await self.ws.send_text(encoded.decode() if isinstance(encoded, bytes) else encoded)
        except WebSocketDisconnect as exc:
            raise WebSocketDisconnected from exc


class DiscoursGraphQL(GraphQL[Context, None]):
    """See the module's docstring."""

    websocket_adapter_class = TextFrames  # type: ignore[assignment]
    graphql_transport_ws_handler_class = CheckedTransportWS
    graphql_ws_handler_class = CheckedLegacyWS
    request_adapter_class = ExchangeAdapter  # type: ignore[assignment]

    schema: DiscoursSchema

    def __init__(self, schema: DiscoursSchema, *args: Any, response_cache_ttl: int = 60, rendered_answer_ttl: int = 60,
                 request_timeout: float = 15.0, max_json_depth: int = 32, persisted_query_ttl: int = 86_400,
                 session_cookie: str = "session_token", writes_in_flight: int = 0, write_wait: float = 10.0,
                 writes_waiting: int = 64, write_share: float = 1.0, refreshed_per_write: int = 0,
                 refresh_grace_ms: int = 1000, **kwargs: Any) -> None:
        super().__init__(schema, *args, **kwargs)
        # The reads being answered now, counted here and by the response front: a write's share yields to them.
        self.readers = Readers()
        self.writes = WriteGate(writes_in_flight, write_wait, writes_waiting, write_share, self.readers)
        # Hot responses a write computes again before its answer, their readers served under a grace meanwhile
        # (cache/refresh.py): at most `refreshed_per_write` a write (0: none), graces of `refresh_grace_ms`.
        self.refreshed_per_write = refreshed_per_write
        self.refresh_grace_ms = refresh_grace_ms
        self.response_cache_ttl = response_cache_ttl
        self.rendered_answer_ttl = rendered_answer_ttl
        self.policies = PolicyCache(schema)
        # A document's text always names the same operations: worked out once per document, as it is parsed.
        self._document_changes_state = lru_cache(maxsize=self.policies.size)(self._work_out_changes_state)
        self.single_flight: SingleFlight[Hit, Kept] = SingleFlight()
        self.persisted_query_ttl = persisted_query_ttl
        self.request_timeout = request_timeout
        batching = schema.config.batching_config
        self.rules = ReadingRules(max_json_depth=max_json_depth,
                                  max_batch=batching["max_operations"] if batching else 0,
                                  session_cookie=session_cookie)

    @property
    def graphql_ide_html(self) -> str:
        return offline_page()

    # --- entry ----------------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Through the router, with nothing in front: the request is read here."""
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        request: GraphQLRequest | Refused
        try:
            request, receive = await read(scope, receive, self.rules)
        except Refused as refused:
            request = refused
        await self.serve(scope, receive, send, request)

    async def serve(self, scope: Scope, receive: Receive, send: Send, request: GraphQLRequest | Refused, *,
                    looked_up: bool = False, stale: bool = False, clock: bytes | None = None,
                    moved: tuple[str, ...] = (), began: float | None = None, refreshing: bool = False) -> None:
        """Answer a request read already (or refused while being read). `looked_up`: its public key was
        looked up already (the request began at `began`, before it), and held no answer for it (`stale`: an
        answer a write made stale, by the moves of `moved`; `clock`: the invalidation clock the look-up read).
        `refreshing`: a write computes the answer again (`_refresh`). A computed answer is kept after it has
        gone out."""
        if isinstance(request, Refused):
            _count("refused", None, time.perf_counter())
            accept = dict(scope["headers"]).get(b"accept", b"").decode("latin-1")
            await request.response(media_type(accept))(scope, receive, send)
            return
        exchange = Exchange(scope, receive, request, looked_up=looked_up, stale=stale, clock=clock, moved=moved,
                            began=began, refreshing=refreshing)
        try:
            try:
                response = await self.run(exchange)
            except HTTPException as exc:  # Strawberry's: a plain-text status, as its own view answers it
                response = PlainTextResponse(exc.reason, status_code=exc.status_code)
            await response(scope, receive, send)
        finally:
            if exchange.after_answer is not None:
                await exchange.after_answer()

    async def run(self, request: Any, context: Any = UNSET, root_value: Any = UNSET) -> Any:
        """An HTTP request is answered within `request_timeout`: past it, its work (database queries and
        Redis calls included) is cancelled and the client gets a 503 with code TIMEOUT. A write's commit
        under way is not cancelled (resolvers/writes.py)."""
        if not isinstance(request, Exchange):  # a WebSocket lives as long as its subscriptions
            return await super().run(request, context, root_value)
        started = time.perf_counter()
        outcome = "refused"
        try:
            async with asyncio.timeout(self.request_timeout):
                await self._prepare(request)
                response = await self._answer(request, root_value)
                response = with_http_caching(request, response, changes_state=lambda: self._changes_state(request),
                                             policy=lambda: self._policy(request))
            outcome = _outcome_of(response, request)
            return response
        except Refused as refused:
            return refused.response(media_type(request.graphql.accept))
        except TimeoutError:
            outcome = "timeout"
            log.warning("%s request stopped after %.1fs", request.method, self.request_timeout)
            timeout = Refused(503, TIMEOUT, f"The request took longer than {self.request_timeout:g}s and was "
                              "stopped; try again, or ask for less", {"Retry-After": "1"})
            return timeout.response(media_type(request.graphql.accept))
        finally:
            if not request.refreshing:  # a write's work, not a read (`_refresh` counts it)
                _count(outcome, request.graphql.operation_name, started)

    async def _prepare(self, exchange: Exchange) -> None:
        """The document a persisted query's hash names; a state change over GET refused."""
        deps: Deps = exchange.app.state.deps
        store = PersistedQueries(deps.cache, ttl=self.persisted_query_ttl)
        exchange.graphql = graphql = await persisted_queries.resolved(exchange.graphql, store)
        single = graphql.single
        if single is not None:
            refuse_state_change_over_get(self.schema, graphql.method, single.document, single.operation_name)

    # --- the response cache ---------------------------------------------------------------------------

    async def _answer(self, exchange: Exchange, root_value: Any) -> Any:
        key = await self._response_key(exchange)
        if key is None and self._changes_state(exchange):
            return await self._write(exchange, root_value)
        self.readers.count += 1
        try:
            return await self._read(exchange, root_value, key)
        finally:
            self.readers.count -= 1

    async def _read(self, exchange: Exchange, root_value: Any, key: str | None) -> Any:
        if key is None:
            return marked(await self._executed_unkept(exchange, root_value), "BYPASS")
        responses = responses_of(exchange.app)
        # The front (app/http/response_front.py) looked the public key up already and found nothing it could serve.
        hit = None
        if not (exchange.looked_up and key == exchange.graphql.public_key) and not exchange.refreshing:
            looked = await responses.look_up(key)
            hit, exchange.stale, exchange.clock, exchange.moved = looked.hit, looked.stale, looked.clock, looked.moved
        for _ in range(0 if exchange.refreshing else FLIGHTS_JOINED):
            if hit is not None or (flight := self.single_flight.joined(key)) is None:
                break
            hit = await self._waited_for(flight, exchange, responses, key)
        if hit is not None:
            return self._answer_hit(exchange, hit, responses)
        # The identical requests arriving meanwhile wait for this computation: its Redis commands go out at the
        # next turn of the loop instead of after two quiet ones (cache/redis/coalesce.py). Under load each turn runs
        # the hits ready meanwhile, so a miss's turns are its wall time, and its waiters' (the read p99 under
        # writes): a `load_reactions_by` recomputed after a comment took 69 turns instead of 81.
        with at_once():
            return await self.single_flight.lead(
                key, lambda flight: self._compute(exchange, root_value, key, responses, flight))

    @staticmethod
    async def _waited_for(flight: Flight[Hit, Kept], exchange: Exchange, responses: ResponseCache,
                          key: str) -> Hit | None:
        """The answer of an identical computation under way, once computed, when this request may have it
        (app/http/single_flight.py): as computed, when the computation began after this request or no
        invalidation came between the two look-ups; else as the store kept it, current then (after this
        request began), or as a look-up finds it. None: the next computation is joined, or this one leads."""
        hit = await flight.answer_for(exchange.clock, exchange.began)
        if hit is None and (kept := await flight.kept_meanwhile()) is not None:
            hit = kept.hit if kept.hit is not None else await responses.get(key)
        return hit

    async def _execute(self, exchange: Exchange, root_value: Any, left: RidingFills | None = None) -> Any:
        """Strawberry's run: parse (cached), validate with the limits, execute; the answer in the media type
        the client asked for. A query of one rendered field whose answer is current is sent as it is, with
        nothing executed (schema/engine/rendered.py `answer_without_executing`). `left`: keeps the values computed
        that are still to be stored when execution ends, for the caller to send (cache/store.py `queue_left`)."""
        with at_once():  # when it answers, the request's only command: sent at the next turn, as a hit's is
            rendered = await self._rendered_whole(exchange)
        if rendered is not None:
            return Response(rendered.body, media_type=media_type(exchange.graphql.accept),
                            headers={"etag": rendered.etag})
        # The values computed on the way are stored with the request's next read, not each on its own
        # (cache/store.py `RidingFills`); what is left, as execution ends, or handed to `left`.
        async with exchange.app.state.deps.cache.fills_ride_along(left):
            response = await super().run(exchange, root_value=root_value)
        if wants_graphql_response(exchange.graphql.accept) and isinstance(response, Response) \
                and hasattr(response, "body"):
            response.headers["content-type"] = media_type(exchange.graphql.accept)
        return response

    async def _executed_unkept(self, exchange: Exchange, root_value: Any) -> Any:
        """A read whose answer is not kept (the response cache off, a field no answer is kept for): executed,
        and what it computed (values, rendered answers) stored after the answer has gone out. A cold
        `load_reactions_by(20)` stored 53 values (its authors' and shouts' 52 KB among them) before its answer,
        a sixth of its wall time."""
        left, also = self._stored_after(exchange)
        response = await self._execute(exchange, root_value, left)
        if exchange.handed or left.fills or left.unlocks:  # a warm read computed nothing: no pipeline after it
            exchange.after_answer = lambda: responses_of(exchange.app).not_kept(also=also)
        return response

    @staticmethod
    def _stored_after(exchange: Exchange) -> tuple[RidingFills, Callable[[Any], None]]:
        """What an execution computed, to store after its answer: the values left to store (`RidingFills`, given
        to `_execute`) and the rendered answers (handed over on `exchange`); with the function queueing both's
        commands in the pipeline that stores them."""
        handed: list[ToKeep] = []
        exchange.handed = handed
        cache = exchange.app.state.deps.cache
        left = RidingFills(cache)

        def also(pipe: Any) -> None:
            queue_kept(pipe, cache, handed)
            cache.queue_left(pipe, left)

        return left, also

    def _answer_hit(self, exchange: Exchange, hit: Hit, responses: ResponseCache) -> Response:
        exchange.max_age, exchange.private = hit.max_age, hit.private
        body, encoding = stored_body(hit, exchange.graphql.accept_encoding, responses.plain)
        response = Response(body, media_type=media_type(exchange.graphql.accept),
                            headers={"vary": "accept-encoding", "etag": hit.etag, **encoding})
        if hit.views:  # a read of a shout served from the response cache still counts (app/http/hit_reads.py)
            note_hit_reads(exchange.scope, hit.views, token=exchange.graphql.token)
        return marked(response, "HIT")  # type: ignore[no-any-return]

    async def _compute(self, exchange: Exchange, root_value: Any, key: str, responses: ResponseCache,
                       flight: Flight[Hit, Kept]) -> Any:
        """Execute, unless another worker computes the same answer (`ResponseCache.claim`): then its answer,
        once kept. If its policy and its reads allow, give the answer to the identical requests waiting
        meanwhile (`flight`) and keep it once it has gone out (`Exchange.after_answer`)."""
        # A write's refresh computes whatever the others do: a look-up would find the answer it replaces.
        claim = Claim(ours=False) if exchange.refreshing else await responses.claim(key, clock=now)
        if claim.hit is not None:
            flight.found(claim.hit, claim.looked)
            self.single_flight.end(flight, None)
            return self._answer_hit(exchange, claim.hit, responses)
        capture, token = response_capture.begin()
        # The rendered answers and values computed are kept with the response, in its round trip, after the answer.
        left, also = self._stored_after(exchange)
        try:
            response = await self._execute(exchange, root_value, left)
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
        answer = response.body
        policy = self._policy(exchange)
        # A public answer that read the viewer after all (an argument such as `reacted` makes it the
        # viewer's) is not kept for everyone; a private one is kept under its viewer's key.
        shared = policy.cacheable and (policy.private or not capture.read_viewer)
        # Cache-Control says the same: an answer shaped by the viewer (a guest's too) is private.
        exchange.max_age, exchange.private = policy.max_age, policy.private or capture.read_viewer
        storable = response.status_code == 200 and isinstance(answer, bytes) and not exchange.errors and shared
        if not storable:  # what is to be kept goes out after the answer, as for one that is kept
            self.single_flight.end(flight, None)
            exchange.after_answer = lambda: responses.not_kept(also=also, unshared=claimed)
            return marked(response, "BYPASS")
        response.headers["etag"] = response.headers.get("etag") or etag_of(answer)  # a rendered one has it
        to_keep = responses.prepare(key, answer, capture, response.headers["etag"], max_age=policy.max_age,
                                    private=exchange.private)
        clock = exchange.clock
        flight.publish(Computed(to_keep.hit, clock) if to_keep is not None and clock is not None else None)
        noted = noted_for_refresh(exchange, key, ttl=self.response_cache_ttl) if self.refreshed_per_write else None
        # The rendered answers and the values left to store go out with the response's store, whatever becomes
        # of it, and the answer's note for writes to refresh it; the claim is released after it.
        exchange.after_answer = lambda: self.single_flight.keep(flight, lambda: responses.keep(
            to_keep, also=also if noted is None else followed(also, noted), claimed=claimed))
        return marked(response, "MISS")

    # --- writes -------------------------------------------------------------------------------------------

    async def _write(self, exchange: Exchange, root_value: Any) -> Any:
        """A state-changing request, in its turn (app/http/write_gate.py). Its invalidations leave graces, and the hot
        responses they made stale are computed again before it is answered (cache/refresh.py); its graces are
        gone before its answer, whatever happened, or else waited out."""
        refreshing = Refreshing(self.refreshed_per_write, self.refresh_grace_ms) if self.refreshed_per_write else None
        token = REFRESHING.set(refreshing)
        try:
            try:
                async with self.writes.turn():
                    response = marked(await self._execute(exchange, root_value), "BYPASS")
            finally:
                REFRESHING.reset(token)
            if refreshing is not None and refreshing.requests:
                await refresh(self.serve, exchange.scope["app"], refreshing)
            return response
        finally:
            if refreshing is not None:
                refreshing.open = False  # what the write started and invalidates later sets no grace
                if refreshing.graces:
                    await exchange.app.state.deps.cache.end_graces(refreshing)
                for then in refreshing.then:
                    await then()

    async def _response_key(self, exchange: Exchange) -> str | None:
        """Where this request's answer is kept: a guest's under the public key (looked up before anything
        is parsed); a signed-in reader's under the public key when every field is public, under the
        reader's own when one is private; None when it is not kept (a mutation, an undeclared field, a
        stream: a subscription over SSE would pay a look-up, a claim and its release for nothing)."""
        graphql = exchange.graphql
        if self.response_cache_ttl <= 0 or graphql.public_key is None or self.streamed(graphql.accept):
            return None
        if not graphql.signed_in:
            return graphql.public_key
        policy = self._policy(exchange)
        if not policy.cacheable:
            return None
        if not policy.private:
            return graphql.public_key
        try:
            session = await self._context_of(exchange).session(shapes_answer=False)
        except Busy:
            return None  # the session cannot be checked: execution answers (SERVICE_UNAVAILABLE)
        return graphql.response_key(scope=f"user:{session.user_id}") if session else graphql.public_key

    def streamed(self, accept: str) -> bool:
        """Whether a request with this Accept header is answered as a stream (server-sent events, multipart),
        as Strawberry reads the header."""
        return stream_protocol(self, {"accept": accept}) != "http"

    def _policy(self, exchange: Exchange) -> Policy:
        if exchange.policy is None:
            single = exchange.graphql.single
            exchange.policy = self.policies.get(single.document or "" if single is not None else "")
        return exchange.policy

    def _changes_state(self, exchange: Exchange) -> bool:
        """Whether the request ran a mutation (or a state-changing query); True when it cannot tell."""
        single = exchange.graphql.single
        if single is None or not single.document:
            return True
        return self._document_changes_state(single.document, single.operation_name)

    def _work_out_changes_state(self, document: str, operation_name: str | None) -> bool:
        try:
            return changes_state(graphql_schema(self.schema), self.schema.parse(document), operation_name)
        except GraphQLError:
            return True

    async def _rendered_whole(self, exchange: Exchange) -> WholeAnswer | None:
        """The whole answer from a rendered root field's, when the request may have it: a single query
        whose every field is public, answered as JSON (not a stream), under the limits."""
        single = exchange.graphql.single
        checks = self.schema.checks
        if single is None or not single.document or checks is None \
                or self.streamed(exchange.graphql.accept):
            return None
        answers = self._rendered_answers(exchange, exchange.app.state.deps)
        if answers is None:
            return None
        # A response a write made stale was stored with its rendered field, under the same reads: that one is
        # stale too, and not read (the round trip was a tenth of a miss's wall time under load).
        key, whole = await answer_without_executing(
            graphql_schema(self.schema), checks, answers, single.document, single.operation_name, single.variables,
            look=not exchange.stale)
        if whole is None:
            exchange.rendered_missed = key  # execution does not read it again
        return whole

    # --- Strawberry's hooks ---------------------------------------------------------------------------

    def should_render_graphql_ide(self, request: Any) -> bool:
        return isinstance(request, ExchangeAdapter) and request.exchange.graphql.asks_for_page

    async def parse_http_body(self, request: Any) -> GraphQLRequestData | list[GraphQLRequestData]:
        """The request's operations as read once (app/http/graphql_request.py): nothing is decoded again."""
        graphql: GraphQLRequest = request.exchange.graphql
        protocol = stream_protocol(self, request.headers)
        if graphql.batch and protocol != "http":
            raise Refused(400, BAD_REQUEST, "A batch is answered as JSON, not streamed")
        found = [GraphQLRequestData(query=op.document, variables=op.variables, operation_name=op.operation_name,
                                    extensions=op.extensions, protocol=protocol) for op in graphql.operations]
        if not found:  # a GET with no query that is not a browser's
            found = [GraphQLRequestData(query=None, variables=None, operation_name=None, extensions=None,
                                        protocol=protocol)]
        return found if graphql.batch else found[0]

    def decode_json(self, data: str | bytes) -> object:
        """orjson (WebSocket messages: one that is not JSON closes its connection, as the protocols say)."""
        return orjson.loads(data)

    def encode_json(self, data: object) -> bytes:  # type: ignore[override]
        return orjson.dumps(data)

    async def get_sub_response(self, request: Any) -> Response:
        sub_response = await super().get_sub_response(request)
        if isinstance(request, Exchange):
            request.sub_response = sub_response
        return sub_response

    async def process_result(self, request: Any, result: ExecutionResult) -> GraphQLHTTPResponse:
        data = await super().process_result(request, result)
        if not isinstance(request, Exchange):
            return data
        if result.errors:
            request.errors = True
        if wants_graphql_response(request.graphql.accept) and request.sub_response is not None:
            errors = result.errors or []
            if result.data is None and errors and all(e.path is None for e in errors):  # never executed
                request.sub_response.status_code = 400
                data.pop("data", None)
        return data

    async def get_context(self, request: Any, response: Any) -> Context:
        if isinstance(request, Exchange):
            context = self._context_of(request)
            context.response = response
            return context
        deps: Deps = request.app.state.deps
        return Context(deps=deps, loaders=Loaders.create(deps), request=request, response=response)

    def _context_of(self, exchange: Exchange) -> Context:
        """The request's context: made once, by the first step that needs it (the private answer's key
        needs the session before execution, which then reuses it)."""
        if exchange.context is None:
            deps: Deps = exchange.app.state.deps
            exchange.context = Context(deps=deps, loaders=Loaders.create(deps), request=exchange,
                                       rendered=self._rendered_answers(exchange, deps),
                                       counts_reads=not exchange.refreshing)
        return exchange.context

    def _rendered_answers(self, exchange: Exchange, deps: Deps) -> RenderedAnswers | None:
        """Whether root fields may be answered from rendered JSON: in a single query whose every field is
        public (schema/engine/rendered.py)."""
        if self.rendered_answer_ttl <= 0 or exchange.graphql.single is None:
            return None
        policy = self._policy(exchange)
        if not policy.cacheable or policy.private:
            return None
        return RenderedAnswers(deps.cache, self.rendered_answer_ttl, missed=exchange.rendered_missed,
                               handed=exchange.handed)


def _count(outcome: str, operation: str | None, started: float) -> None:
    label = metrics.operation_label(operation)
    metrics.child(metrics.REQUESTS, label, outcome).inc()
    metrics.child(metrics.REQUEST_SECONDS, label, outcome).observe(time.perf_counter() - started)


def _outcome_of(response: Any, exchange: Exchange) -> str:
    """hit (the response cache's bytes), error (GraphQL errors), refused (an HTTP error) or ok."""
    if not isinstance(response, Response):
        return "ok"
    if response.headers.get("x-cache") == "HIT":
        return "hit"
    if exchange.errors:
        return "error"
    return "refused" if response.status_code >= 400 else "ok"
