"""Automatic persisted queries (Apollo's APQ protocol): a client sends the SHA-256 of a document instead of
the document; the first time, or after the server forgot it, it sends both, and the server keeps the
document under its hash for `ttl` seconds (refreshed by use). Documents live on the cache's Redis: one
that is evicted or expires costs the client one more round trip, never a wrong answer, because a stored
document is used only if its own hash is the one asked for."""

from __future__ import annotations

import hashlib
import re

from redis.exceptions import RedisError

from cache import keys
from cache.store import Cache
from telemetry import metrics

SHA256 = re.compile(r"^[0-9a-f]{64}$")


def sha256(document: str) -> str:
    return hashlib.sha256(document.encode()).hexdigest()


class PersistedQueries:
    def __init__(self, cache: Cache, *, ttl: int = 86_400) -> None:
        self.cache, self.ttl = cache, ttl

    async def get(self, digest: str) -> str | None:
        """The document registered under `digest`, or None (unknown, or Redis unavailable)."""
        if not self.cache.available:
            return None
        key = keys.persisted_query(digest)
        try:
            async with self.cache.redis.pipeline(transaction=False) as pipe:
                pipe.get(key)
                pipe.expire(key, self.ttl)
                raw, _ = await pipe.execute()
        except RedisError as exc:
            self.cache.trip(exc, "persisted query read")
            return None
        document = raw.decode() if isinstance(raw, bytes) else raw
        return document if document is not None and sha256(document) == digest else None

    async def put(self, digest: str, document: str) -> None:
        """Keep the document, unless it is over the cache's bound on a value (seed 004): such a client sends
        its document each time, as the protocol lets it."""
        if len(document.encode()) > self.cache.max_value:
            metrics.child(metrics.VALUES_TOO_BIG, "persisted query", "persisted").inc()
            return
        try:
            await self.cache.redis.set(keys.persisted_query(digest), document, ex=self.ttl)
        except RedisError as exc:
            self.cache.trip(exc, "persisted query store")
