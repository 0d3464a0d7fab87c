"""One GraphQL request over HTTP, read once: the body received and decoded, the parameters checked, the
response key derived. The front (app/http/response_front.py) makes it before anything else; the view and its
steps (app/http/graphql_view.py), the response cache and Strawberry (`GraphQLRequestData`, handed to it as it
is, not parsed again) all read this one value.

A request the server will not run is refused here, before anything is parsed as GraphQL: a POST body
that is not JSON (415), malformed or too deeply nested JSON, a batch that is empty or too long, a field of
the wrong type, a persisted query in a form Apollo's protocol does not have (400). `read` raises
`Refused`; the view answers it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple
from urllib.parse import parse_qsl

import orjson
from starlette.requests import cookie_parser
from starlette.types import Message, Receive, Scope

from app.http.guards import (
    BAD_REQUEST,
    PERSISTED_QUERY_NOT_SUPPORTED,
    TOO_MANY_OPERATIONS,
    UNSUPPORTED_MEDIA_TYPE,
    Refused,
    json_depth,
)
from cache.response.persisted import SHA256, sha256
from cache.response.responses import request_key
from schema.context import token_from

# The headers the request's steps read, by their lower-case names as ASGI gives them.
_HEADERS = (b"content-type", b"accept", b"accept-encoding", b"if-none-match", b"authorization", b"cookie")


@dataclass(frozen=True, slots=True)
class ReadingRules:
    """What a request may be: its JSON's nesting, its batch's length; and the session cookie's name, whose
    presence (or a bearer token) marks a signed-in request."""

    max_json_depth: int = 32
    max_batch: int = 1
    session_cookie: str = "session_token"


# The two below are NamedTuples, typed and immutable like frozen dataclasses but made at a third of their
# cost: every request makes one of each, a response-cache hit included (about 2 us saved per hit).


class Operation(NamedTuple):
    """One operation's parameters, as GraphQL over HTTP names them (a request holds one, a batch several)."""

    document: str | None  # `query`; None for a hash-only persisted query until its document is found
    operation_name: str | None = None
    variables: dict[str, Any] | None = None
    extensions: dict[str, Any] | None = None
    persisted_hash: str | None = None  # `extensions.persistedQuery.sha256Hash`

    @property
    def document_hash(self) -> str | None:
        """The SHA-256 that names the document: the persisted query's, else the text's."""
        if self.persisted_hash is not None:
            return self.persisted_hash
        return sha256(self.document) if self.document else None


class GraphQLRequest(NamedTuple):
    """A request's GraphQL parameters and what its steps need of its headers, decoded once."""

    method: str  # GET or POST
    operations: tuple[Operation, ...]  # one; several for a batch; none for GraphiQL's page
    batch: bool = False
    accept: str = ""
    accept_encoding: str = ""
    if_none_match: str = ""
    token: str | None = None  # the session token it carries (checked later, where it matters)
    address: str | None = None  # the client's (uvicorn takes it from X-Forwarded-For behind a trusted proxy)
    asks_for_ide: bool = False  # a browser's GET: GraphiQL, its query, variables and operation filled in
    public_key: str | None = None  # where a public answer to it is kept

    @property
    def signed_in(self) -> bool:
        """It carries credentials."""
        return self.token is not None

    @property
    def single(self) -> Operation | None:
        """The request's one operation (None for a batch or GraphiQL's page)."""
        return self.operations[0] if len(self.operations) == 1 and not self.batch else None

    @property
    def operation_name(self) -> str | None:
        single = self.single
        return single.operation_name if single is not None else ("batch" if self.batch else None)

    def response_key(self, scope: str = "") -> str | None:
        """Where the answer to this request is kept: the public key, or one viewer's (`scope`); None when
        it is not kept (a batch; a browser's GET, which may be GraphiQL's)."""
        single = self.single
        return None if single is None else _key(single, self.method, self.accept, scope)

    def with_document(self, document: str) -> GraphQLRequest:
        """The request of a hash-only persisted query, its document found."""
        single = self.single
        assert single is not None
        return self._replace(operations=(single._replace(document=document),))


async def read(scope: Scope, receive: Receive, rules: ReadingRules) -> tuple[GraphQLRequest, Receive]:
    """The request of an HTTP scope (GET or POST), and a `receive` that gives its body again to whoever
    reads it next (BodySizeLimit, outside, bounds the body). Raises Refused for a request not to run."""
    headers = {name.decode(): value.decode("latin-1") for name, value in scope["headers"] if name in _HEADERS}
    body, receive = await body_of(scope, receive)
    cookie = headers.get("cookie")
    token = token_from(headers.get("authorization", ""), lambda: (  # cookies parsed only when they may hold it
        cookie_parser(cookie).get(rules.session_cookie) if cookie is not None and rules.session_cookie in cookie
        else None))
    client = scope.get("client")
    method, accept = scope["method"], headers.get("accept", "")
    if method == "GET":
        query = dict(parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True))
        if wants_a_page(accept) or ("query" not in query and "extensions" not in query and "*/*" in accept):
            return GraphQLRequest(method, (), accept=accept, token=token, asks_for_ide=True,
                                  address=client[0] if client else None), receive
        params: dict[str, Any] = dict(query)
        for name in ("variables", "extensions"):
            if query.get(name):
                params[name] = _decoded(query[name].encode(), rules)
            else:
                params.pop(name, None)
        operations: tuple[Operation, ...] = (_operation(params),)
        batch = False
    else:
        content_type = headers.get("content-type", "").partition(";")[0].strip().lower()
        if content_type != "application/json":
            raise Refused(415, UNSUPPORTED_MEDIA_TYPE, "Send GraphQL requests as application/json",
                          {"Accept": "application/json"})
        decoded = _decoded(body, rules)
        batch = isinstance(decoded, list)
        items = decoded if batch else [decoded]
        if not items or not all(isinstance(item, dict) for item in items):
            raise Refused(400, BAD_REQUEST, "The body must be a JSON object, or a list of them (a batch)")
        if batch and len(items) > rules.max_batch:
            raise Refused(400, TOO_MANY_OPERATIONS, f"{len(items)} operations in one request; at most "
                          f"{rules.max_batch} are run together")
        operations = tuple(_operation(item) for item in items)
    return GraphQLRequest(method=method, operations=operations, batch=batch, accept=accept,
                          accept_encoding=headers.get("accept-encoding", ""),
                          if_none_match=headers.get("if-none-match", ""), token=token,
                          address=client[0] if client else None,
                          public_key=None if batch else _key(operations[0], method, accept)), receive


def wants_a_page(accept: str) -> bool:
    """A browser's navigation (a shared `/graphql?query=…` link opened): it asks for HTML before any JSON, as
    GraphQL Yoga and Apollo's landing pages decide. A script's fetch (`*/*`, or JSON first) does not."""
    accept = accept.lower()
    html = accept.find("text/html")
    if html < 0:
        return False
    json_at = [at for at in (accept.find("application/json"), accept.find("application/graphql-response+json"))
               if at >= 0]
    return not json_at or html < min(json_at)


def _key(operation: Operation, method: str, accept: str, scope: str = "") -> str | None:
    digest = operation.document_hash
    if digest is None or (method == "GET" and "text/html" in accept):
        return None
    return request_key(digest, operation.operation_name, operation.variables, scope)


def _decoded(raw: bytes, rules: ReadingRules) -> Any:
    """JSON, decoded by orjson (invalid UTF-8 and nesting past 1,024 levels are errors), within the depth
    (walked only when the text has enough brackets to nest that deep: most requests have a handful)."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise Refused(400, BAD_REQUEST, "The request is not valid JSON") from None
    if raw.count(b"[") + raw.count(b"{") > rules.max_json_depth and json_depth(value) > rules.max_json_depth:
        raise Refused(400, BAD_REQUEST, f"JSON nested deeper than {rules.max_json_depth} levels")
    return value


def _operation(params: Mapping[str, Any]) -> Operation:
    query, name = params.get("query"), params.get("operationName")
    variables, extensions = params.get("variables"), params.get("extensions")
    if not (isinstance(query, str | None) and isinstance(name, str | None) and isinstance(variables, dict | None)
            and isinstance(extensions, dict | None)):
        for value, what, kind in ((query, "query", str), (name, "operationName", str),
                                  (variables, "variables", dict), (extensions, "extensions", dict)):
            if value is not None and not isinstance(value, kind):
                article = "a string" if kind is str else "an object"
                raise Refused(400, BAD_REQUEST, f"The operation's `{what}` must be {article} or null")
    return Operation(query or None, name, variables, extensions,
                     None if extensions is None else _persisted_hash(extensions))


def _persisted_hash(extensions: dict[str, Any] | None) -> str | None:
    """Automatic persisted queries (Apollo's protocol): the hash that names the document, if it is one."""
    persisted = extensions.get("persistedQuery") if extensions else None
    if persisted is None:
        return None
    digest = persisted.get("sha256Hash") if isinstance(persisted, dict) else None
    if (not isinstance(persisted, dict) or persisted.get("version") != 1 or not isinstance(digest, str)
            or not SHA256.match(digest)):
        raise Refused(400, PERSISTED_QUERY_NOT_SUPPORTED, "persistedQuery takes version 1 and a sha256Hash "
                      "of 64 lower-case hex digits")
    return digest


async def body_of(scope: Scope, receive: Receive) -> tuple[bytes, Receive]:
    """The whole request body, and a `receive` that gives it again."""
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
