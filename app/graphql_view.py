"""The GraphQL HTTP view: Strawberry's ASGI app with the response cache in front and GraphQL-over-HTTP
media types."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import orjson
from graphql import GraphQLError
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocketDisconnect
from strawberry import UNSET
from strawberry.asgi import GraphQL
from strawberry.http import GraphQLHTTPResponse
from strawberry.types import ExecutionResult

from app.graphiql import offline_page
from app.http_guards import (
    BAD_REQUEST,
    METHOD_NOT_ALLOWED,
    PERSISTED_QUERY_NOT_FOUND,
    PERSISTED_QUERY_NOT_SUPPORTED,
    TIMEOUT,
    TOO_MANY_OPERATIONS,
    UNSUPPORTED_MEDIA_TYPE,
    Refused,
    json_depth,
)
from app.response_front import (
    GRAPHQL_RESPONSE,
    cache_control,
    carries_credentials,
    count_views,
    is_current,
    looked_up,
    media_type,
    responses_of,
    stored_body,
)
from cache import response_capture
from cache.persisted import SHA256, PersistedQueries, sha256
from cache.response import Hit, ResponseCache, etag_of, request_key
from resolvers.deps import Deps
from resolvers.errors import Busy
from schema.cache_control import Policy, PolicyCache
from schema.context import Context, Loaders
from schema.safety import changes_state
from schema.schema import DiscoursSchema
from schema.seam import ASGIWebSocketAdapter, WebSocketDisconnected, graphql_schema, parse_content_type
from telemetry import metrics

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _RequestNote:
    """What the steps of one HTTP request learn of it, for the others: its parameters (decoded once), the
    document a persisted query's hash stands for, the operation name and whether execution had errors
    (for the metrics, the response cache and HTTP caching)."""

    params: dict[str, Any] | None = None  # a POST's JSON object or GET's parameters; None for a batch
    persisted: str | None = None
    operation: object = None
    errors: bool = False
    # How long the answer may be kept and whether for one viewer only (schema/cache_control.py); None
    # until known (a hit carries its own, an answer computed is judged by its document and its reads).
    max_age: int | None = None
    private: bool = False
    # A context made before execution (to find whose private answer to look up); execution reuses it.
    context: Context | None = None
    policy: Policy | None = None  # the document's, once looked up

    def policy_of(self, policies: PolicyCache) -> Policy:
        if self.policy is None:
            self.policy = policies.get(self.document or "")
        return self.policy

    @property
    def document(self) -> str | None:
        query = (self.params or {}).get("query") or self.persisted
        return query if isinstance(query, str) else None


_NOTE: ContextVar[_RequestNote | None] = ContextVar("graphql_request_note", default=None)


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
    """Strawberry's ASGI view, with:

    - the response cache first: a request is looked up by a hash of its document, operation and variables
      (and, for a private answer, its viewer) before anything is executed, an anonymous one before
      anything is parsed; a valid hit is the stored bytes. Which answers are kept, for how long and for
      whom, the fields declare (schema/cache_control.py);
    - `application/graphql-response+json` when the client asks for it (GraphQL over HTTP): then a request
      that never executed (parse, validation or variable errors) is a 400 with no `data`. Clients that
      accept only `application/json` get the classic 200;
    - GraphiQL from the server's own copies of its scripts (app/graphiql.py), working offline;
    - subscriptions over WebSocket (`graphql-transport-ws`, legacy `graphql-ws`) and over HTTP as server-sent
      events (`graphql-sse`, `Accept: text/event-stream`). Strawberry keeps a WebSocket's connection_init
      payload on `Context.connection_params`, where `Context.session` looks for a token first.
    """

    websocket_adapter_class = TextFrames  # type: ignore[assignment]

    schema: DiscoursSchema

    def __init__(self, schema: DiscoursSchema, *args: Any, response_cache_ttl: int = 60,
                 request_timeout: float = 15.0, max_json_depth: int = 32, persisted_query_ttl: int = 86_400,
                 **kwargs: Any) -> None:
        super().__init__(schema, *args, **kwargs)
        self.response_cache_ttl = response_cache_ttl
        self.policies = PolicyCache(schema)
        # Answers being computed in this worker, by response key: identical requests that miss meanwhile
        # (many readers right after an invalidation of a hot query) wait for the first one's answer
        # instead of computing it again, each (stampede protection for whole responses). The future says
        # whether the answer was stored.
        self._computing: dict[str, asyncio.Future[bool]] = {}
        self.persisted_query_ttl = persisted_query_ttl
        self.request_timeout = request_timeout
        self.max_json_depth = max_json_depth
        batching = schema.config.batching_config
        self.max_batch_operations = batching["max_operations"] if batching else 1

    @property
    def graphql_ide_html(self) -> str:
        return offline_page()

    async def run(self, request: Any, context: Any = UNSET, root_value: Any = UNSET) -> Any:
        """An HTTP request is answered within `request_timeout`: past it, its work (database queries and
        Redis calls included) is cancelled and the client gets a 503 with code TIMEOUT. A write's commit
        under way is not cancelled (resolvers/writes.py)."""
        if not isinstance(request, Request):  # a WebSocket lives as long as its subscriptions
            return await super().run(request, context, root_value)
        started = time.perf_counter()
        note = _RequestNote(operation=request.query_params.get("operationName"))
        token = _NOTE.set(note)
        outcome = "refused"
        try:
            async with asyncio.timeout(self.request_timeout):
                note.params = await _request_params(request)
                note.persisted = await self._persisted_query(request, note.params)
                self._refuse_state_change_over_get(request, note.persisted)
                response = await self._answer(request, note, context, root_value)
                response = await self._http_caching(request, response, note)
            outcome = _outcome_of(response, note)
            return response
        except Refused as refused:
            return refused.response(_media_type(request))
        except TimeoutError:
            outcome = "timeout"
            log.warning("%s request stopped after %.1fs", request.method, self.request_timeout)
            timeout = Refused(503, TIMEOUT, f"The request took longer than {self.request_timeout:g}s and was "
                              "stopped; try again, or ask for less", {"Retry-After": "1"})
            return timeout.response(_media_type(request))
        finally:
            _NOTE.reset(token)
            operation = metrics.operation_label(note.operation)
            metrics.child(metrics.REQUESTS, operation, outcome).inc()
            metrics.child(metrics.REQUEST_SECONDS, operation, outcome).observe(time.perf_counter() - started)

    async def _persisted_query(self, request: Request, params: dict[str, Any] | None) -> str | None:
        """Automatic persisted queries (Apollo's protocol): `extensions.persistedQuery.sha256Hash` with the
        document registers it (the hash checked), without it names a registered one (returned here), or
        is answered PERSISTED_QUERY_NOT_FOUND, which tells the client to send the document too."""
        extensions = params.get("extensions") if params else None
        if isinstance(extensions, str):
            try:
                extensions = orjson.loads(extensions)
            except orjson.JSONDecodeError:
                raise Refused(400, BAD_REQUEST, "`extensions` is not JSON") from None
        persisted = extensions.get("persistedQuery") if isinstance(extensions, dict) else None
        if persisted is None or params is None:
            return None
        digest = persisted.get("sha256Hash") if isinstance(persisted, dict) else None
        if (not isinstance(persisted, dict) or persisted.get("version") != 1 or not isinstance(digest, str)
                or not SHA256.match(digest)):
            raise Refused(400, PERSISTED_QUERY_NOT_SUPPORTED, "persistedQuery takes version 1 and a sha256Hash "
                          "of 64 lower-case hex digits")
        store = PersistedQueries(request.app.state.deps.cache, ttl=self.persisted_query_ttl)
        document = params.get("query")
        if isinstance(document, str) and document:
            if sha256(document) != digest:
                raise Refused(400, BAD_REQUEST, "provided sha does not match query")
            await store.put(digest, document)
            return None
        found = await store.get(digest)
        if found is None:
            raise Refused(200, PERSISTED_QUERY_NOT_FOUND, "PersistedQueryNotFound")
        return found

    async def _http_caching(self, request: Request, response: Any, note: _RequestNote) -> Any:
        """HTTP caching of query answers: an ETag on every error-free query answer (stored with a cached
        response, else computed) and 304 Not Modified when `If-None-Match` names it; `Cache-Control` from the
        answer's policy (`_cache_control`); `no-store` for mutations, errors and whatever sets a cookie."""
        if not isinstance(response, Response) or not hasattr(response, "body"):
            return response  # a stream (a subscription over SSE)
        stored = response.headers.get("x-cache") in ("HIT", "MISS")  # a kept answer: a query
        if (response.status_code != 200 or note.errors or "set-cookie" in response.headers
                or (not stored and self._changes_state(note))):
            response.headers["cache-control"] = "no-store"
            return response
        etag = response.headers.get("etag") or etag_of(bytes(response.body))
        headers = {"etag": etag, "cache-control": self._cache_control(request, note)}
        if is_current(etag, request.headers.get("if-none-match", "")):
            not_modified = Response(status_code=304, headers=headers, background=response.background)
            return _marked(not_modified, response.headers.get("x-cache", "BYPASS"))
        response.headers.update(headers)
        return response

    def _cache_control(self, request: Request, note: _RequestNote) -> str:
        """`public` or `private`, with the answer's max age (the smallest its fields declare); `no-cache`
        (keep, but revalidate with the ETag) for answers that declare none."""
        if note.max_age is None and note.document:  # not kept by the response cache: judged by the document
            policy = note.policy_of(self.policies)
            if policy.cacheable:
                note.max_age, note.private = policy.max_age, policy.private or _signed_in(request)
        if note.max_age:
            return cache_control(note.max_age, note.private)
        return "private, no-cache" if _signed_in(request) else "no-cache"

    def _changes_state(self, note: _RequestNote) -> bool:
        """Whether the request ran a mutation (or a state-changing query); True when it cannot tell."""
        if note.params is None or note.document is None:
            return True
        try:
            return changes_state(graphql_schema(self.schema), self.schema.parse(note.document),
                                 note.params.get("operationName"))
        except GraphQLError:
            return True

    def should_render_graphql_ide(self, request: Any) -> bool:
        """Not for a GET that names a persisted query (it carries no `query` either)."""
        return super().should_render_graphql_ide(request) and "extensions" not in request.query_params

    def _refuse_state_change_over_get(self, request: Request, persisted: str | None = None) -> None:
        query = request.query_params.get("query") or persisted
        if request.method != "GET" or not query:
            return
        try:
            document = self.schema.parse(query)
        except GraphQLError:
            return  # execution answers the syntax error
        if changes_state(graphql_schema(self.schema), document, request.query_params.get("operationName")):
            raise Refused(405, METHOD_NOT_ALLOWED, "This operation changes state: send it with POST",
                          {"Allow": "POST"})

    def decode_json(self, data: str | bytes) -> object:
        """orjson: invalid UTF-8 and nesting past 1,024 levels are JSON errors (HTTP 400; a WebSocket
        message that is not JSON closes its connection, as the protocols say)."""
        return orjson.loads(data)

    def parse_json(self, data: str | bytes) -> Any:
        """An HTTP body or GET parameter, decoded, within the depth limit."""
        value = super().parse_json(data)
        if json_depth(value) > self.max_json_depth:
            raise Refused(400, BAD_REQUEST, f"JSON nested deeper than {self.max_json_depth} levels")
        return value

    async def parse_http_body(self, request: Any) -> Any:
        """POST bodies: JSON only (415 otherwise), an object or a batch of at most `max_batch_operations`."""
        if request.method == "POST":
            content_type, _ = parse_content_type(request.content_type or "")
            if content_type != "application/json":
                raise Refused(415, UNSUPPORTED_MEDIA_TYPE, "Send GraphQL requests as application/json",
                              {"Accept": "application/json"})
            body = self.parse_json(await request.get_body())
            batch = body if isinstance(body, list) else [body]
            if not all(isinstance(item, dict) for item in batch) or not batch:
                raise Refused(400, BAD_REQUEST, "The body must be a JSON object, or a list of them (a batch)")
            if len(batch) > self.max_batch_operations:
                raise Refused(400, TOO_MANY_OPERATIONS, f"{len(batch)} operations in one request; at most "
                              f"{self.max_batch_operations} are run together")
        data = await super().parse_http_body(request)
        note = _NOTE.get()
        if note is not None:
            note.operation = "batch" if isinstance(data, list) else data.operation_name
            if note.persisted is not None and not isinstance(data, list) and not data.query:
                data.query = note.persisted
        return data

    async def _answer(self, request: Request, note: _RequestNote, context: Any, root_value: Any) -> Any:
        key = await self._response_key(request, note)
        if key is None:
            return _marked(await super().run(request, context, root_value), "BYPASS")
        responses = responses_of(request.app, self.response_cache_ttl)
        # The front (app/response_front.py) looked the public key up already and found nothing it could serve.
        hit = None if key == looked_up(request.scope) else await responses.get(key)
        if hit is not None:
            return await self._answer_hit(request, note, hit)
        computing = self._computing.get(key)
        if computing is not None and await asyncio.shield(computing):
            # The same answer, just computed and stored. It is looked up again rather than taken as it
            # is: its computation began before this request, perhaps before a write this reader must see;
            # its stamp says whether it did (a write acknowledged since moved a tag it read).
            hit = await responses.get(key)
            if hit is not None:
                return await self._answer_hit(request, note, hit)
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._computing[key] = future
        try:
            response, stored = await self._compute(request, note, context, root_value, key, responses)
            future.set_result(stored)
            return response
        finally:
            if self._computing.get(key) is future:
                del self._computing[key]
            if not future.done():
                future.set_result(False)  # failed or cancelled: whoever waits computes for themselves

    async def _answer_hit(self, request: Request, note: _RequestNote, hit: Hit) -> Response:
        note.operation = (note.params or {}).get("operationName")
        note.max_age, note.private = hit.max_age, hit.private
        response = _hit_response(request, hit)
        if hit.views:  # a read of a shout served from the response cache still counts as a view: once the
            # answer is sent, so that a hit waits for its one round trip only
            response.background = BackgroundTask(count_views, request.scope, hit.views,
                                                 signed_in=_signed_in(request), context=note.context)
        return _marked(response, "HIT")  # type: ignore[no-any-return]

    async def _compute(self, request: Request, note: _RequestNote, context: Any, root_value: Any, key: str,
                       responses: ResponseCache) -> tuple[Any, bool]:
        """Execute, and keep the answer if its policy and its reads allow; and whether it was kept (the
        identical requests waiting meanwhile then look it up)."""
        capture, token = response_capture.begin()
        try:
            response = await super().run(request, context, root_value)
        finally:
            response_capture.end(token)
        if not hasattr(response, "body"):  # a stream (a subscription over SSE): nothing to store
            return response, False
        answer = response.body
        policy = note.policy_of(self.policies)
        # A public answer that read the viewer after all (an argument such as `reacted` makes it the
        # viewer's) is not kept for everyone; a private one is kept under its viewer's key.
        shared = policy.cacheable and (policy.private or not capture.read_viewer)
        # Cache-Control says the same: an answer shaped by the viewer (a guest's too) is private.
        note.max_age, note.private = policy.max_age, policy.private or capture.read_viewer
        if response.status_code == 200 and isinstance(answer, bytes) and not note.errors and shared:
            response.headers["etag"] = etag_of(answer)
            stored = await responses.store(key, answer, capture, response.headers["etag"], max_age=policy.max_age,
                                           private=note.private)
            return _marked(response, "MISS"), stored
        return _marked(response, "BYPASS"), False

    async def _response_key(self, request: Request, note: _RequestNote) -> str | None:
        """Where this request's answer is kept: a guest's under the public key (looked up before anything
        is parsed); a signed-in reader's under the public key when every field is public, under the
        reader's own when one is private; None when it is not kept (a mutation, an undeclared field)."""
        if self.response_cache_ttl <= 0 or note.params is None or note.document is None:
            return None
        if request.method == "GET" and "text/html" in request.headers.get("accept", ""):
            return None
        variables = note.params.get("variables")
        if isinstance(variables, str):  # a GET's: keyed as the same POST's are
            try:
                variables = orjson.loads(variables)
            except orjson.JSONDecodeError:
                return None
        params = (sha256(note.document), note.params.get("operationName"), variables)
        if not _signed_in(request):
            return request_key(*params)
        policy = note.policy_of(self.policies)
        if not policy.cacheable:
            return None
        if not policy.private:
            return request_key(*params)
        note.context = await self.get_context(request, None)
        try:
            session = await note.context.session(shapes_answer=False)
        except Busy:
            return None  # the session cannot be checked: execution answers (SERVICE_UNAVAILABLE)
        return request_key(*params, scope=f"user:{session.user_id}") if session else request_key(*params)

    def encode_json(self, data: object) -> bytes:  # type: ignore[override]
        return orjson.dumps(data)

    async def get_sub_response(self, request: Any) -> Response:
        sub_response = await super().get_sub_response(request)
        request.state.sub_response = sub_response
        return sub_response

    async def process_result(self, request: Any, result: ExecutionResult) -> GraphQLHTTPResponse:
        data = await super().process_result(request, result)
        note = _NOTE.get()
        if note is not None and result.errors:
            note.errors = True
        if GRAPHQL_RESPONSE not in request.headers.get("accept", ""):
            return data
        sub_response = request.state.sub_response
        sub_response.graphql_response = True
        errors = result.errors or []
        never_executed = result.data is None and bool(errors) and all(e.path is None for e in errors)
        if never_executed:
            sub_response.status_code = 400
            data.pop("data", None)
        return data

    def create_response(self, response_data: Any, sub_response: Response) -> Response:
        response = super().create_response(response_data, sub_response)
        if getattr(sub_response, "graphql_response", False):
            response.headers["content-type"] = f"{GRAPHQL_RESPONSE}; charset=utf-8"
        return response

    async def get_context(self, request: Any, response: Any) -> Context:
        note = _NOTE.get()
        if note is not None and note.context is not None:  # made before execution (a private answer)
            note.context.response = response
            return note.context
        deps: Deps = request.app.state.deps
        return Context(deps=deps, loaders=Loaders.create(deps), request=request, response=response)


def _marked(response: Any, outcome: str) -> Any:
    """`X-Cache` says what the response cache did: HIT (stored bytes), MISS (computed, now stored) or
    BYPASS (not a cacheable request: signed in, a mutation, an error, a query outside the public list)."""
    if isinstance(response, Response):
        response.headers["x-cache"] = outcome
    return response


def _outcome_of(response: Any, note: _RequestNote) -> str:
    """hit (the response cache's bytes), error (GraphQL errors), refused (an HTTP error) or ok."""
    if not isinstance(response, Response):
        return "ok"
    if response.headers.get("x-cache") == "HIT":
        return "hit"
    if note.errors:
        return "error"
    return "refused" if response.status_code >= 400 else "ok"


def _hit_response(request: Request, hit: Hit) -> Response:
    body, encoding = stored_body(hit, request.headers.get("accept-encoding", ""))
    return Response(body, media_type=_media_type(request),
                    headers={"vary": "accept-encoding", "etag": hit.etag, **encoding})


def _media_type(request: Request) -> str:
    return media_type(request.headers.get("accept", ""))


def _signed_in(request: Request) -> bool:
    """Whether the request carries credentials: a bearer token or the session cookie."""
    deps: Deps = request.app.state.deps
    cookie = deps.auth.settings.session_cookie if deps.auth else "session_token"
    return carries_credentials(request.headers.get("authorization"), request.headers.get("cookie"), cookie)


async def _request_params(request: Request) -> dict[str, Any] | None:
    """The request's GraphQL parameters as sent: a POST JSON body that is one object, or GET's query
    parameters (values still JSON text); None for anything else (a batch, another content type)."""
    if request.method == "POST" and request.headers.get("content-type", "").startswith("application/json"):
        try:
            body = orjson.loads(await request.body())
        except orjson.JSONDecodeError:
            return None
        return body if isinstance(body, dict) else None
    if request.method == "GET":
        return dict(request.query_params)
    return None
