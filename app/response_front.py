"""The response cache in front of everything else: a hit answered before routing, before Starlette makes a
Request and before Strawberry's view is entered (DESIGN.md, data flow of a read, step 1).

A hit's cost is what any route of this stack pays, plus one Redis round trip: read the body, hash the
request, run the hit script (cache/response.py), send the stored bytes. Everything a hit does not need is
left to the view, which this middleware hands the request to, body and all, whenever it cannot answer:

- a request it does not recognise as a plain query (another path or method, a batch, a body that is not
  a JSON object, GraphiQL, a persisted query being registered): the view answers, errors included;
- a miss: the view computes and stores the answer. It is told the key was already looked up
  (`looked_up`), so a miss costs one round trip, not two;
- a stored answer kept private (`p`): such an entry under the public key is a guest's (an answer shaped
  by its reader, or with a field declared private). A signed-in reader goes on to the view, which checks
  the session and looks under the reader's own key.

A public entry is served to signed-in readers as well: an answer is stored under the public key only
when computing it never read the viewer and no field of it is private (app/graphql_view.py `_compute`),
so it is the same for every reader. That is why no session is checked on this path.

A hash-only persisted query (`extensions.persistedQuery.sha256Hash`, POST or GET) is looked up by that
hash, which is what the response key is made of (cache/response.py `request_key`), with no second round
trip for the document; a CDN may cache its GET too.
"""

from __future__ import annotations

import logging
import time
from typing import Any
from urllib.parse import parse_qsl

import orjson
from starlette.requests import Request, cookie_parser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cache.persisted import SHA256, sha256
from cache.response import Hit, ResponseCache, request_key
from resolvers import reading
from resolvers.deps import Deps
from resolvers.errors import Busy
from schema.context import Context, Loaders, reader_of
from telemetry import metrics

log = logging.getLogger(__name__)

GRAPHQL_RESPONSE = "application/graphql-response+json"
PATH = "/graphql"
LOOKED_UP = "response_front"  # scope["state"] key: the public key this request was looked up under

_HEADERS = (b"content-type", b"accept", b"accept-encoding", b"if-none-match", b"authorization", b"cookie")


def looked_up(scope: Scope) -> str | None:
    """The public key the front already looked this request up under and found no answer for it."""
    state = scope.get("state")
    return state.get(LOOKED_UP) if isinstance(state, dict) else None


def responses_of(app: Any, ttl: int) -> ResponseCache:
    """The app's one ResponseCache (made on first use: the app's dependencies exist only after start-up)."""
    state = app.state
    if getattr(state, "responses", None) is None:
        state.responses = ResponseCache(state.deps.cache, ttl=ttl)
    return state.responses  # type: ignore[no-any-return]


def public_key(params: dict[str, Any]) -> str | None:
    """The public response key of a query's parameters (a POST body, or GET's parameters with the JSON
    values decoded), or None when they are not a plain query: a batch, no document, a persisted query
    being registered, a malformed field (which the view reports)."""
    query = params.get("query")
    operation = params.get("operationName")
    variables = params.get("variables")
    extensions = params.get("extensions")
    if operation is not None and not isinstance(operation, str):
        return None
    if variables is not None and not isinstance(variables, dict):
        return None
    if extensions is not None:
        persisted = extensions.get("persistedQuery") if isinstance(extensions, dict) else None
        if query or not isinstance(persisted, dict) or persisted.get("version") != 1:
            return None  # a registration, or something the view refuses
        digest = persisted.get("sha256Hash")
        if not isinstance(digest, str) or not SHA256.match(digest):
            return None
        return request_key(digest, operation, variables)
    if not isinstance(query, str) or not query or "mutation" in query or "subscription" in query:
        return None  # a write or a stream is never stored: not worth a lookup (a query that merely
        # names such a word goes to the view, which answers it as ever)
    return request_key(sha256(query), operation, variables)


class ResponseCacheFront:
    """See the module's docstring. `ttl` is the response cache's (RESPONSE_CACHE_TTL); `session_cookie`
    the name of the session cookie, whose presence marks a signed-in request."""

    def __init__(self, app: ASGIApp, *, ttl: int, session_cookie: str) -> None:
        self.app = app
        self.ttl = ttl
        self.session_cookie = session_cookie

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != PATH or scope["method"] not in ("GET", "POST"):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = _wanted_headers(scope)
        body, receive = await _read_body(scope, receive)
        params = _params(scope, headers, body)
        key = public_key(params) if params is not None else None
        if key is None:
            await self.app(scope, receive, send)
            return
        responses = responses_of(scope["app"], self.ttl)
        hit = await responses.get(key)
        if hit is None or (hit.private and self._signed_in(headers)):
            scope.setdefault("state", {})[LOOKED_UP] = key
            await self.app(scope, receive, send)
            return
        await _send_hit(send, hit, headers)
        operation = metrics.operation_label(params.get("operationName") if params else None)
        metrics.child(metrics.REQUESTS, operation, "hit").inc()
        metrics.child(metrics.REQUEST_SECONDS, operation, "hit").observe(time.perf_counter() - started)
        if hit.views:  # a read of a shout answered from the cache still counts, once the answer is sent
            await count_views(scope, hit.views, signed_in=self._signed_in(headers))

    def _signed_in(self, headers: dict[bytes, bytes]) -> bool:
        """Asked only when it matters (a private entry, views to count): a hit of public data needs not
        parse the cookies."""
        cookie = headers.get(b"cookie")
        return carries_credentials(headers.get(b"authorization", b"").decode("latin-1"),
                                   cookie.decode("latin-1") if cookie is not None else None, self.session_cookie)


def _wanted_headers(scope: Scope) -> dict[bytes, bytes]:
    return {name: value for name, value in scope["headers"] if name in _HEADERS}


async def _read_body(scope: Scope, receive: Receive) -> tuple[bytes, Receive]:
    """The whole request body (BodySizeLimit, outside this middleware, bounds it), and a `receive` that
    gives it to the app again."""
    if scope["method"] != "POST":
        return b"", receive
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"", _replaying([message], receive)
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    body = b"".join(chunks)
    return body, _replaying([{"type": "http.request", "body": body, "more_body": False}], receive)


def _replaying(messages: list[Message], receive: Receive) -> Receive:
    async def replay() -> Message:
        return messages.pop(0) if messages else await receive()

    return replay


def _params(scope: Scope, headers: dict[bytes, bytes], body: bytes) -> dict[str, Any] | None:
    """A request's GraphQL parameters, JSON values decoded; None when the front should not answer it."""
    if scope["method"] == "POST":
        if not headers.get(b"content-type", b"").startswith(b"application/json"):
            return None
        try:
            params = orjson.loads(body)
        except orjson.JSONDecodeError:
            return None
        return params if isinstance(params, dict) else None
    if b"text/html" in headers.get(b"accept", b""):
        return None  # GraphiQL
    params = dict(parse_qsl(scope["query_string"].decode("latin-1")))
    decoded: dict[str, Any] = dict(params)
    for name in ("variables", "extensions"):
        if name in params:
            try:
                decoded[name] = orjson.loads(params[name])
            except orjson.JSONDecodeError:
                return None
    return decoded


async def _send_hit(send: Send, hit: Hit, headers: dict[bytes, bytes]) -> None:
    """The stored answer as it is, or 304 when the client's copy is current; the headers the view gives
    an answer (app/graphql_view.py `_http_caching`)."""
    common = [(b"etag", hit.etag.encode()), (b"cache-control", cache_control(hit.max_age, hit.private).encode()),
              (b"vary", b"accept-encoding"), (b"x-cache", b"HIT")]
    if is_current(hit.etag, headers.get(b"if-none-match", b"").decode("latin-1")):
        await send({"type": "http.response.start", "status": 304, "headers": common})
        await send({"type": "http.response.body", "body": b""})
        return
    body, encoding = stored_body(hit, headers.get(b"accept-encoding", b"").decode("latin-1"))
    content_type = media_type(headers.get(b"accept", b"").decode("latin-1")).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-length", str(len(body)).encode()), (b"content-type", content_type),
                            *((k.encode(), v.encode()) for k, v in encoding.items()), *common]})
    await send({"type": "http.response.body", "body": body})


# --- what the view decides the same way (app/graphql_view.py) ------------------------------------------

def media_type(accept: str) -> str:
    """GraphQL over HTTP's media type to a client that asks for it, else the classic JSON."""
    return f"{GRAPHQL_RESPONSE}; charset=utf-8" if GRAPHQL_RESPONSE in accept else "application/json"


def stored_body(hit: Hit, accept_encoding: str) -> tuple[bytes, dict[str, str]]:
    """A stored body as it is (gzip to a client that accepts gzip, most do), else decompressed; and the
    headers that say which."""
    if hit.gzipped and "gzip" in accept_encoding:
        return hit.body, {"content-encoding": "gzip"}
    return hit.plain(), {}


def cache_control(max_age: int | None, private: bool) -> str:
    """`public` or `private` with the answer's max age; `no-cache` (keep, but revalidate with the ETag)
    for an answer that declares none."""
    return f"{'private' if private else 'public'}, max-age={max_age}" if max_age else "no-cache"


def is_current(etag: str, if_none_match: str) -> bool:
    """Whether `If-None-Match` names `etag` (weak tags compare by their opaque part)."""
    named = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",") if tag.strip()}
    return etag.removeprefix("W/") in named


def carries_credentials(authorization: str | None, cookie: str | None, session_cookie: str) -> bool:
    """Whether a request is signed in, as far as its headers say: a bearer token, or the session cookie
    (the session itself is checked later, where it matters)."""
    return bool(authorization) or (cookie is not None and bool(cookie_parser(cookie).get(session_cookie)))


async def count_views(scope: Scope, shout_ids: list[int], *, signed_in: bool, context: Context | None = None
                      ) -> None:
    """The views a stored answer counted, counted again for this reader (and remembered in a signed-in
    reader's history, as reading the shout would), once the answer is sent. A session that cannot be
    checked counts as a guest. `context`: the request's, when one was made already."""
    request = Request(scope)
    deps: Deps = scope["app"].state.deps
    reader = None
    try:
        if signed_in:
            context = context or Context(deps=deps, loaders=Loaders.create(deps), request=request)
            try:
                viewer = await context.viewer(shapes_answer=False)
                reader = viewer.author_id if viewer else None
            except Busy:
                pass
        await reading.count_views(deps, reader, reader_of(request, reader), shout_ids)
    except Exception:  # the answer is sent; a failure here is logged, never raised into the server
        log.exception("views of a response-cache hit were not counted")

