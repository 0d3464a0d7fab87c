"""The response cache (DESIGN.md, data flow of a read, steps 1 and 3).

A hit returns the stored response bytes with no parse, validate or execute. A response is stored with
every tag generation the cache reads saw while computing it (captured through a context variable that
`Cache.get_many` reports to), so any later invalidation of any of them makes the stored response a miss:
the same correctness argument as for each cached value, applied to the whole response.

Only anonymous, error-free responses of an allowlist of public queries are stored (their resolvers read
only through the cache: app/graphql_view.py keeps the list), and a request that read while Redis was
unavailable, or saw a tag move while it ran, is not stored.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import orjson
from redis.exceptions import RedisError

from cache import keys
from cache.response_capture import Capture
from cache.store import Cache, decode, encode
from telemetry import metrics

RESPONSE_TTL = 60  # bounds the lag of what is not tagged (view counters); counters may lag more anyway


def as_bytes(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode()


def request_key(query: str, operation: str | None, variables: Any) -> str:
    canonical = orjson.dumps([query, operation, variables], option=orjson.OPT_SORT_KEYS)
    return keys.response(hashlib.blake2b(canonical, digest_size=16).hexdigest())


class ResponseCache:
    def __init__(self, cache: Cache, *, ttl: int = RESPONSE_TTL) -> None:
        self.cache = cache
        self.ttl = ttl
        self.hits = 0
        self.stores = 0

    async def get(self, key: str) -> tuple[bytes, list[int]] | None:
        """The stored body and the shouts whose views its computation counted (to count them again)."""
        if not self.cache.available:
            return None
        try:
            raw = await self.cache.redis.get(key)
            if raw is None:
                _count("miss")
                return None
            _, stored = decode(as_bytes(raw))
            tags: list[str] = stored["t"]
            current = await self.cache.redis.mget(keys.generations(tags)) if tags else []
        except RedisError as exc:
            self.cache.trip(exc, "response cache read")
            return None
        if [as_bytes(g).decode() if g else None for g in current] != stored["g"]:
            _count("stale")
            return None
        self.hits += 1
        _count("hit")
        body: str = stored["b"]
        return body.encode(), list(stored.get("v", []))

    async def store(self, key: str, body: bytes, capture: Capture) -> None:
        if not capture.storable or not capture.generations:
            return
        tags = sorted(capture.generations)
        value = {"t": tags, "g": [capture.generations[t].decode() for t in tags], "b": body.decode(),
                 "v": capture.views}
        try:
            await self.cache.redis.set(key, encode(b"", value), ex=self.cache.jittered(self.ttl))
            self.stores += 1
        except RedisError as exc:
            self.cache.trip(exc, "response cache store")


def _count(result: str) -> None:
    metrics.CACHE_READS.labels("response", "response", result).inc()


def root_fields_allowed(document: Any, operation: str | None, allowed: Iterable[str]) -> bool:
    """True when the executed operation is a query whose root fields are all in `allowed`."""
    from graphql import FieldNode, OperationDefinitionNode, OperationType

    allowed_set = set(allowed)
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    chosen = [o for o in operations if operation is None or (o.name and o.name.value == operation)]
    if len(chosen) != 1 or chosen[0].operation != OperationType.QUERY:
        return False
    selections = chosen[0].selection_set.selections
    return all(isinstance(s, FieldNode) and s.name.value in allowed_set for s in selections)
