"""The GraphQL HTTP view: Strawberry's ASGI app, composing the steps of answering one request.

A request reaches `serve` read once (app/http/graphql_request.py: by the front, app/http/response_front.py, or by
`__call__` when nothing is in front), with what the front's look-up found. Within the request's time limit and
counted in the metrics, `serve`:

1. finds a persisted query's document (app/http/persisted_queries.py) and refuses a state change over GET
   (app/http/guards.py), then wraps the request in an `Exchange` (app/http/exchange.py) for Strawberry's hooks;
2. answers a read through the response cache (app/http/read_path.py) and a write in its turn, with the hot
   answers it made stale computed again (app/http/write_path.py); what the document decides is worked out
   once (app/http/documents.py);
3. gives the answer its HTTP caching headers, or a 304 (app/http/caching.py), and GraphQL over HTTP's
   media type (app/http/negotiation.py).

Subscriptions go over WebSocket (`graphql-transport-ws`, legacy `graphql-ws`, app/http/subscription_messages.py)
and over HTTP as server-sent events (`graphql-sse`, `Accept: text/event-stream`); `Context.session` looks for a
token in a WebSocket's connection_init payload first. GraphiQL is served from our copies (app/http/graphiql.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import timedelta
from typing import Any

import orjson
from starlette.responses import Response
from starlette.types import Receive, Scope, Send
from strawberry.asgi import GraphQL
from strawberry.http import GraphQLHTTPResponse, GraphQLRequestData
from strawberry.subscriptions import GRAPHQL_SSE_PROTOCOL, GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_WS_PROTOCOL
from strawberry.types import ExecutionResult

from app.http import persisted_queries
from app.http.caching import with_http_caching
from app.http.documents import Documents
from app.http.exchange import Asked, Exchange, ExchangeAdapter
from app.http.graphiql import offline_page
from app.http.graphql_request import GraphQLRequest, ReadingRules, read
from app.http.guards import (
    BAD_REQUEST,
    METHOD_NOT_ALLOWED,
    TIMEOUT,
    UNSUPPORTED_MEDIA_TYPE,
    Refused,
    refuse_state_change_over_get,
)
from app.http.negotiation import media_type, wants_graphql_response
from app.http.read_path import ReadPath
from app.http.request_metrics import count_request, outcome_of
from app.http.single_flight import flight_clock
from app.http.subscription_messages import CheckedLegacyWS, CheckedTransportWS, TextFrames
from app.http.write_path import WritePath
from cache.fills import RidingFills
from cache.redis.coalesce import at_once
from cache.response.persisted import PersistedQueries
from cache.response.responses import LookUp
from config.settings import AnswerSettings, SubscriptionSettings
from resolvers.deps import Deps
from schema.context import Context, Loaders
from schema.engine.seam import HTTPException, stream_protocol
from schema.schema import DiscoursSchema
from telemetry import tracing

log = logging.getLogger(__name__)

PROTOCOLS = (GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_WS_PROTOCOL, GRAPHQL_SSE_PROTOCOL)


class DiscoursGraphQL(GraphQL[Context, None]):
    """See the module's docstring."""

    websocket_adapter_class = TextFrames
    graphql_transport_ws_handler_class = CheckedTransportWS
    graphql_ws_handler_class = CheckedLegacyWS
    request_adapter_class = ExchangeAdapter  # type: ignore[assignment]

    schema: DiscoursSchema

    def __init__(self, schema: DiscoursSchema, *, answers: AnswerSettings, subscriptions: SubscriptionSettings,
                 max_json_depth: int = 32, session_cookie: str = "session_token") -> None:
        """Configured by two groups of config/settings.py: how requests are answered and how subscriptions are
        held; `max_json_depth` and `session_cookie`: how a request is read (app/http/graphql_request.py)."""
        super().__init__(schema, graphql_ide="graphiql", subscription_protocols=PROTOCOLS,
                         max_subscriptions_per_connection=subscriptions.subscriptions_per_connection,
                         connection_init_wait_timeout=timedelta(seconds=subscriptions.subscription_init_timeout))
        self.documents = Documents(schema, self, rendered_ttl=answers.rendered_answer_ttl)
        self.reads = ReadPath(self.documents, self, ttl=answers.response_cache_ttl,
                              refreshed_per_write=answers.responses_refreshed_per_write)
        self.writes = WritePath(self.reads.readers, answers)
        self.readers = self.reads.readers  # the front counts its hits among them (app/http/response_front.py)
        self.flights = self.reads.single_flight  # the front waits for them too
        self.persisted_query_ttl, self.request_timeout = answers.persisted_query_ttl, answers.request_timeout
        batching = schema.config.batching_config
        self.rules = ReadingRules(max_json_depth, batching["max_operations"] if batching else 0, session_cookie)

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
                    looked: LookUp | None = None, began: float | None = None, joined: int = 0,
                    refreshing: bool = False) -> None:
        """Answer a request read already (or refused while being read), within `request_timeout`: past it, its
        work (database queries and Redis calls included) is cancelled and the client gets a 503 with code
        TIMEOUT; a write's commit under way is not cancelled (resolvers/writes.py). `looked`: what a look-up
        before the view found under the public key (the request began at `began`, before it); `refreshing`: a
        write computes the answer again (app/http/write_refresh.py). A computed answer is kept after it has
        gone out. `joined`: the computations of its answer the front waited for, which gave none."""
        started = time.perf_counter()
        if isinstance(request, Refused):
            count_request("refused", None, started)
            accept = dict(scope["headers"]).get(b"accept", b"").decode("latin-1")
            await request.response(media_type(accept))(scope, receive, send)
            return
        began = flight_clock() if began is None else began
        exchange: Exchange | None = None
        outcome = "refused"
        try:
            try:
                async with asyncio.timeout(self.request_timeout):
                    exchange = Exchange(scope, receive, Asked(await self._prepare(scope, request), began,
                                                              looked, joined, refreshing))
                    with tracing.operation(request.operation_name):
                        response = await self._answer(exchange)
                outcome = outcome_of(response, exchange)
            except HTTPException as exc:  # Strawberry's (an unknown operation name): as JSON, with a code
                code = {405: METHOD_NOT_ALLOWED, 415: UNSUPPORTED_MEDIA_TYPE}.get(exc.status_code, BAD_REQUEST)
                response = Refused(exc.status_code, code, exc.reason).response(media_type(request.accept))
            except Refused as refused:
                response = refused.response(media_type(request.accept))
            except TimeoutError:
                outcome = "timeout"
                log.warning("%s request stopped after %.1fs", request.method, self.request_timeout)
                response = Refused(503, TIMEOUT, f"The request took longer than {self.request_timeout:g}s and was "
                                   "stopped; try again, or ask for less", {"Retry-After": "1"}
                                   ).response(media_type(request.accept))
            finally:
                if not refreshing:  # a write's work, not a read (app/http/write_refresh.py counts it)
                    count_request(outcome, request.operation_name, started)
            await response(scope, receive, send)
        finally:
            if exchange is not None and exchange.answer.after_answer is not None:
                await exchange.answer.after_answer()

    async def _prepare(self, scope: Scope, request: GraphQLRequest) -> GraphQLRequest:
        """The request with the document a persisted query's hash names; a state change over GET refused."""
        deps: Deps = scope["app"].state.deps
        store = PersistedQueries(deps.cache, ttl=self.persisted_query_ttl)
        graphql = await persisted_queries.resolved(request, store)
        single = graphql.single
        if single is not None:
            refuse_state_change_over_get(self.schema, graphql.method, single.document, single.operation_name)
        return graphql

    async def _answer(self, exchange: Exchange) -> Any:
        key = await self.reads.key(exchange)
        if key is None and self.documents.changes_state(exchange):
            response = await self.writes.answer(exchange, self.execute, self.serve)
        else:
            response = await self.reads.answer(exchange, key)
        return with_http_caching(exchange, response, changes_state=lambda: self.documents.changes_state(exchange),
                                 policy=lambda: self.documents.policy(exchange))

    async def execute(self, exchange: Exchange, left: RidingFills | None = None) -> Any:
        """Strawberry's run: parse (cached), validate with the limits, execute; the answer in the media type
        the client asked for. A query of one rendered field whose answer is current is sent as it is, with
        nothing executed (app/http/documents.py `rendered_whole`). `left`: keeps the values computed that are
        still to be stored when execution ends, for the caller to send (cache/fills.py `queue_left`)."""
        cache = exchange.app.state.deps.cache
        accept = exchange.asked.graphql.accept
        with at_once():  # when it answers, the request's only command: sent at the next turn, as a hit's is
            rendered = await self.documents.rendered_whole(exchange, cache)
        if rendered is not None:
            return Response(rendered.body, media_type=media_type(accept), headers={"etag": rendered.etag})
        # The values computed on the way are stored with the request's next read, not each on its own
        # (cache/fills.py `RidingFills`); what is left, as execution ends, or handed to `left`.
        async with cache.fills_ride_along(left):
            response = await self.run(exchange)
        if wants_graphql_response(accept) and isinstance(response, Response) and hasattr(response, "body"):
            response.headers["content-type"] = media_type(accept)
        return response

    # --- Strawberry's hooks ---------------------------------------------------------------------------

    def should_render_graphql_ide(self, request: Any) -> bool:
        return isinstance(request, ExchangeAdapter) and request.exchange.asked.graphql.asks_for_ide

    async def parse_http_body(self, request: Any) -> GraphQLRequestData | list[GraphQLRequestData]:
        """The request's operations as read once (app/http/graphql_request.py): nothing is decoded again."""
        graphql: GraphQLRequest = request.exchange.asked.graphql
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

    def encode_json(self, data: object) -> bytes:
        return orjson.dumps(data)

    async def get_sub_response(self, request: Any) -> Response:
        sub_response = await super().get_sub_response(request)
        if isinstance(request, Exchange):
            request.answer.sub_response = sub_response
        return sub_response

    async def process_result(self, request: Any, result: ExecutionResult) -> GraphQLHTTPResponse:
        data = await super().process_result(request, result)
        if not isinstance(request, Exchange):
            return data
        answer = request.answer
        if result.errors:
            answer.errors = True
        if wants_graphql_response(request.asked.graphql.accept) and answer.sub_response is not None:
            errors = result.errors or []
            if result.data is None and errors and all(e.path is None for e in errors):  # never executed
                answer.sub_response.status_code = 400
                data.pop("data", None)
        return data

    async def get_context(self, request: Any, response: Any) -> Context:
        if isinstance(request, Exchange):
            context = self.context_of(request)
            context.response = response
            return context
        deps: Deps = request.app.state.deps
        return Context(deps=deps, loaders=Loaders.create(deps), request=request, response=response)

    def context_of(self, exchange: Exchange) -> Context:
        """The request's context: made once, by the first step that needs it (the private answer's key
        needs the session before execution, which then reuses it)."""
        if exchange.answer.context is None:
            deps: Deps = exchange.app.state.deps
            exchange.answer.context = Context(deps=deps, loaders=Loaders.create(deps), request=exchange,
                                              rendered=self.documents.rendered_answers(exchange, deps.cache),
                                              counts_reads=not exchange.asked.refreshing)
        return exchange.answer.context

