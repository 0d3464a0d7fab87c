"""HTTP caching of query answers: an ETag on every error-free query answer (stored with a cached response,
else computed) and 304 Not Modified when `If-None-Match` names it; `Cache-Control` from the answer's
policy (schema/engine/cache_control.py: the smallest max age its fields declare, private when a field is or the
answer was shaped by its reader); `no-store` for mutations, errors and whatever sets a cookie. `X-Cache`
says what the response cache did."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from starlette.responses import Response

from app.http.exchange import Exchange
from cache.response.responses import etag_of
from schema.engine.cache_control import Policy

T = TypeVar("T")


def with_http_caching(exchange: Exchange, response: Any, *, changes_state: Callable[[], bool],
                      policy: Callable[[], Policy]) -> Any:
    """The response with its caching headers, or 304 in its place. `changes_state` and `policy` are asked
    only when needed (an answer the response cache kept is a query, and carries its own policy)."""
    if not isinstance(response, Response) or not hasattr(response, "body"):
        return response  # a stream (a subscription over SSE)
    kept = response.headers.get("x-cache") in ("HIT", "MISS")
    if (response.status_code != 200 or exchange.answer.errors or "set-cookie" in response.headers
            or (not kept and changes_state())):
        response.headers["cache-control"] = "no-store"
        return response
    etag = response.headers.get("etag") or etag_of(bytes(response.body))
    headers = {"etag": etag, "cache-control": _cache_control_of(exchange, policy)}
    if is_current(etag, exchange.asked.graphql.if_none_match):
        not_modified = Response(status_code=304, headers=headers, background=response.background)
        return marked(not_modified, response.headers.get("x-cache", "BYPASS"))
    response.headers.update(headers)
    return response


def _cache_control_of(exchange: Exchange, policy: Callable[[], Policy]) -> str:
    signed_in = exchange.asked.graphql.signed_in
    max_age, private = exchange.answer.max_age, exchange.answer.private
    if max_age is None:  # not kept by the response cache: judged by the document
        found = policy()
        if found.cacheable:
            max_age, private = found.max_age, found.private or signed_in
    if max_age:
        return cache_control(max_age, private)
    return "private, no-cache" if signed_in else "no-cache"


def cache_control(max_age: int | None, private: bool) -> str:
    """`public` or `private` with the answer's max age; `no-cache` (keep, but revalidate with the ETag)
    for an answer that declares none."""
    return f"{'private' if private else 'public'}, max-age={max_age}" if max_age else "no-cache"


def is_current(etag: str, if_none_match: str) -> bool:
    """Whether `If-None-Match` names `etag` (weak tags compare by their opaque part)."""
    named = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",") if tag.strip()}
    return etag.removeprefix("W/") in named


def marked(response: T, outcome: str) -> T:
    """`X-Cache`: HIT (stored bytes), MISS (computed, now stored) or BYPASS (not a cacheable request:
    a mutation, an error, a query outside the public list)."""
    if isinstance(response, Response):
        response.headers["x-cache"] = outcome
    return response
