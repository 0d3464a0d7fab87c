"""The response cache (DESIGN.md, data flow of a read, steps 1 and 3).

A hit returns the stored response bytes with no parse, validate or execute. A response is stored with
every tag generation the cache reads saw while computing it (captured through a context variable that
`Cache.get_many` reports to), so any later invalidation of any of them makes the stored response a miss:
the same correctness argument as for each cached value, applied to the whole response.

Which answers are stored, and for whom, their fields' cache policies say (schema/engine/cache_control.py): public
answers under one key for everyone, private ones under a key of the viewer's (`scope`). A request that
read while Redis was unavailable, or saw a tag move while it ran, is not stored.

A stored response is a HASH: `b` the body as sent, `s` its stamp (`epoch=81,author:5=3`), `v` the shouts
whose views it counted, `z` set when the body is gzip (seed 004: a value over 10 KB is compressed), `a` its
max age, `p` set when it is private (for Cache-Control on a hit, which parses nothing) and `c` the
invalidation clock it was last found current at. A hit is one round trip: the invalidation clock
(keys.invalidation_clock) and the hash, read together; while the clock is where it was when the response was
last found current, the response is still current. Otherwise a Lua script reads the hash, compares every
generation of the stamp with the current one inside Redis, and returns the body only if all still match
(one round trip more, once after each write; a response the script last found stale, being computed again,
goes to the script at once, as does one found current at an earlier clock than this worker has seen since).
The body goes out as it is stored: gzip bodies to clients that accept gzip (most do), decompressed only for
the others.

A response is kept by a script too, which checks its stamp first (every generation it names is still
current) and keeps nothing otherwise: an answer read before a write that committed while it was computed
is never kept, and one that is kept was current when it was, at the invalidation clock it notes (`c`), so
its first hit skips the check. Readers that waited for the computation (app/http/single_flight.py) are given it
as it is, with no look-up.

A response missing or stale is computed by one worker at a time while no write comes (`ResponseCache.claim`):
the one computing it holds its claim, and the others' readers of it wait for what it keeps instead of each
computing it too.

On a Redis Cluster the generations live in other slots than the response, where a script cannot read
them: a hit there is two round trips, the hash, then its generations (MGETs split by slot), and a response
is kept unchecked, in a MULTI/EXEC, and looked up by those who waited for it; nothing is claimed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import random
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from redis.asyncio.client import Pipeline
from redis.exceptions import RedisError, ResponseError

from cache import keys
from cache.lua import load_lua
from cache.redis.client import is_cluster, queue_script, queue_set, script_reply
from cache.redis.coalesce import at_once
from cache.response_capture import Capture
from cache.stamps import COMPRESS_OVER, PART_MARGIN, capture_stamp, split, stamp_is_current
from cache.store import Cache
from telemetry import metrics

RESPONSE_TTL = 60  # bounds the lag of what is not tagged (view counters); counters may lag more anyway
PLAIN_KEPT_BYTES = 16 * 1024 * 1024  # plain forms of gzip bodies a worker keeps (PlainBodies)
FOUND_KEPT = 4096  # response keys a worker remembers what its last look-up found of (`ResponseCache._check_here`)

# The fields of a stored response, in the order a hit returns them after its first element.
_FIELDS = ("s", "b", "z", "v", "e", "a", "p")
# What `b` starts with when it names the parts a body is kept in (seed 004, cache/stamps.py `split`): no JSON
# and no gzip stream begins with it.
IN_PARTS = b"\x00parts:"
KEPT, KEPT_GRACED = 1, 2  # what `_STORE` returns when it kept the response current, or graced
_GRACE_PREFIX = keys.grace("")
_FIELDS_END = 3 + len(_FIELDS) + 1  # the fields a look-up asks for end there: `c` is the last
_HIT = load_lua("response_hit", grace_prefix=_GRACE_PREFIX, fields_end=_FIELDS_END)
_HIT_OR_CLAIM = load_lua("response_hit_or_claim", grace_prefix=_GRACE_PREFIX, fields_end=_FIELDS_END)
_STORE = load_lua("response_store", grace_prefix=_GRACE_PREFIX, kept=KEPT, kept_graced=KEPT_GRACED)
CLAIMED = b"1"  # another worker computes the response, and its answer will be current
UNSHARED = b"0"  # the last computation's answer was not to be kept (an error, the viewer's): no one waits
# A worker waiting for another's answer looks again after CLAIM_POLL_FIRST seconds, then twice as long each
# time up to CLAIM_POLL_MOST: a hot page is computed in a few milliseconds, and every millisecond a reader
# waits past the store is added to the read's latency (bench/RESULTS.md: looking again after 2, 6, 14 and
# 30 ms, as values' fills do, doubled the read p99 under writes).
CLAIM_POLL_FIRST = 0.001
CLAIM_POLL_MOST = 0.004

_GZIP = 31  # zlib's wbits for the gzip container


def as_bytes(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode()


def request_key(document_digest: str, operation: str | None, variables: Any, scope: str = "") -> str:
    """The key of one request's answer: public (no scope) or one viewer's (`user:{id}`). The document is
    named by its SHA-256 (hex), the hash a persisted query is sent as: a hash-only request finds the
    answer without fetching the document first."""
    canonical = orjson.dumps([document_digest, operation, variables, scope] if scope
                             else [document_digest, operation, variables], option=orjson.OPT_SORT_KEYS)
    return keys.response(hashlib.blake2b(canonical, digest_size=16).hexdigest())


@dataclass(frozen=True, slots=True)
class Hit:
    body: bytes  # as stored: gzip when `gzipped`
    gzipped: bool
    views: list[int]  # shouts whose views the stored response counted (a hit counts them again)
    etag: str  # of the plain body, computed when it was stored
    max_age: int  # seconds a client may keep it (Cache-Control)
    private: bool  # kept for one viewer only
    key: str  # the response's key in Redis
    graced: bool = False  # stale, served under a write's grace until it is answered (cache/refresh.py)

    def plain(self) -> bytes:
        return gunzip(self.body) if self.gzipped else self.body


@dataclass(frozen=True, slots=True)
class LookUp:
    """What a look-up found under a key: `hit`, the stored response if current; `stale`, whether what was
    there was a response a write made stale; `clock`, the invalidation clock as the look-up read it when it
    found nothing current (one Redis server; None on a cluster, or when there is no clock). Two look-ups
    that read the same clock had no invalidation between them (app/http/single_flight.py)."""

    hit: Hit | None
    stale: bool = False
    clock: bytes | None = None
    moved: tuple[str, ...] = ()  # when stale: the tags whose moves made it so (one Redis server)


@dataclass(frozen=True, slots=True)
class Storable:
    """A computed response as it would be kept: `hit`, what a look-up would give once it is."""

    hit: Hit
    stored: dict[Any, Any]  # the hash's fields, its stamp `s` first
    ttl: int
    parts: tuple[tuple[str, bytes], ...] = ()  # the body's, when `b` names them (cache/stamps.py `split`)


@dataclass(frozen=True, slots=True)
class Kept:
    """A response `ResponseCache.store` kept. `hit`: what a look-up would give, when the store found its
    stamp current as it kept it (one Redis server: in the same script); None when it could not check (a
    Redis Cluster) or kept it graced (`_STORE`), and whoever would take it looks it up."""

    hit: Hit | None


@dataclass(frozen=True, slots=True)
class Claim:
    """Who computes a response that was not found (`ResponseCache.claim`): this worker, under its claim
    (`ours`: released with the answer's store), or without one; or nobody, as another worker's answer was
    kept meanwhile (`hit`, current as any hit)."""

    ours: bool
    hit: Hit | None = None
    looked: float = 0.0  # when the look-up that found `hit` was sent, on the clock `claim` was given


def gunzip(body: bytes) -> bytes:
    return zlib.decompress(body, _GZIP)


def etag_of(body: bytes) -> str:
    """A weak validator of a response body (HTTP ETag): weak, because the same answer goes out gzip to
    some clients and plain to others, and a strong tag would have to differ between them."""
    return 'W/"' + hashlib.blake2b(body, digest_size=16).hexdigest() + '"'


class PlainBodies:
    """The plain form of the gzip bodies last sent to clients that do not accept gzip (server-side
    renderers, scripts, many HTTP libraries), at most `max_bytes` in all: such a client's hit then costs
    what a gzip client's does, instead of a decompression each time. One per response key, with the ETag
    of the body it is the plain form of (`etag_of`, the digest of the plain body): a write that changes a
    response replaces its plain form instead of leaving the old one beside it, so under writes the bytes
    kept stay those of the responses read, not of every version of them."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._kept: OrderedDict[str, tuple[str, bytes]] = OrderedDict()  # key: (etag, plain body)
        self._bytes = 0

    @property
    def kept_bytes(self) -> int:
        """The bytes of the plain bodies kept."""
        return self._bytes

    def of(self, hit: Hit) -> bytes:
        if not hit.gzipped:
            return hit.body
        kept = self._kept.get(hit.key)
        if kept is not None and kept[0] == hit.etag:
            self._kept.move_to_end(hit.key)
            return kept[1]
        plain = hit.plain()
        if kept is not None:  # an older version of this response: never sent again
            self._bytes -= len(self._kept.pop(hit.key)[1])
        if len(plain) <= self.max_bytes:
            self._kept[hit.key] = (hit.etag, plain)
            self._bytes += len(plain)
            while self._bytes > self.max_bytes:
                self._bytes -= len(self._kept.popitem(last=False)[1][1])
        return plain


class ResponseCache:
    def __init__(self, cache: Cache, *, ttl: int = RESPONSE_TTL, plain_kept_bytes: int = PLAIN_KEPT_BYTES) -> None:
        self.cache = cache
        self.ttl = ttl
        self.plain = PlainBodies(plain_kept_bytes)
        self.hits = 0
        self.stores = 0
        self._hit = cache.redis.register_script(_HIT)
        self._store = cache.redis.register_script(_STORE)
        self._hit_or_claim = cache.redis.register_script(_HIT_OR_CLAIM)
        self._cluster = is_cluster(cache.redis)
        # What this worker's look-ups last found of each response (`_check_here`): the invalidation clock it was
        # current at, or None when it was not (stale, absent, graced); and the clock as a reply last showed it.
        self._found_at: OrderedDict[str, bytes | None] = OrderedDict()
        self._clock: bytes | None = None

    async def get(self, key: str) -> Hit | None:
        """The stored response, if every generation it was stamped with is still current."""
        return (await self.look_up(key)).hit

    async def look_up(self, key: str) -> LookUp:
        """`get`, whether there was a response under the key that a write made stale (its rendered root
        field, stored with it under the same reads, most likely is too: schema/engine/rendered.py), and the
        invalidation clock the look-up read (`LookUp`)."""
        if not self.cache.available:
            return LookUp(None)
        try:
            await self.cache.recover_if_needed()  # after a lost invalidation, nothing stored before is trusted
            found = await (self._check_apart(key) if self._cluster else self._check_here(key))
            looked = await self._made_whole(_looked(found, key))
        except RedisError as exc:
            self.cache.trip(exc, "response cache read")
            return LookUp(None)
        _count(("graced" if looked.hit.graced else "hit") if looked.hit is not None
               else "stale" if looked.stale else "miss")
        if looked.hit is not None:
            self.hits += 1
        return looked

    async def clock(self) -> bytes | None:
        """The invalidation clock as a look-up would read it: for a request that waits for its answer being
        computed in this worker instead of looking it up (app/http/response_front.py). None on a cluster, or
        when Redis does not answer: then only an answer kept after the request began is given to it."""
        if self._cluster or not self.cache.available:
            return None
        try:
            await self.cache.recover_if_needed()
            with at_once():
                clock = await self.cache.redis.get(keys.invalidation_clock())
        except RedisError as exc:
            self.cache.trip(exc, "response cache read")
            return None
        return clock if isinstance(clock, bytes) else None

    async def hit_of(self, kept: Kept, key: str) -> Hit | None:
        """What a store kept under `key`, as a hit: as the store found it, or as a look-up finds it (a cluster)."""
        return kept.hit if kept.hit is not None else await self.get(key)

    async def _made_whole(self, looked: LookUp) -> LookUp:
        """A hit whose body is kept in parts with its body read (one more round trip); a miss when a part is gone."""
        hit = looked.hit
        if hit is None or not hit.body.startswith(IN_PARTS):
            return looked
        body = await self.cache.joined_parts(part_names(hit.body))
        return LookUp(None) if body is None else dataclasses.replace(looked, hit=dataclasses.replace(hit, body=body))

    async def _check_here(self, key: str) -> list[Any]:
        """What a stored response is now: [0] (none), [1] (stale) or [2, its fields...]. The invalidation clock,
        then the response, read in one round trip without a script: when the clock is where the response was
        last found current at, the response is current (`c` is only ever noted at the clock's value, in the same
        script that reads it; the clock moves with every generation), and it was so when the clock was read,
        within this request. Redis runs the two reads in a tenth of the script's time. Otherwise the hit script
        decides (its stamp checked, and noted current at the new clock for the hits after it).

        The script is asked at once, with no plain read first, when the plain read would only send the request
        on to it: the response was last found here without a current hit (a write made it stale, and it is
        computed again), or current at a clock other than the one a reply last showed (a clock never returns to
        an earlier value). After a write, the first hit of one hot answer learns that the clock moved, and the
        first hits of the others pay one round trip each, not two. Which way is taken never changes the answer:
        a plain read that finds the clock moved goes on to the script."""
        with at_once():  # a hit has nothing else to send, and waits for no one else's commands
            if key not in self._found_at or ((found_at := self._found_at[key]) is not None
                                             and found_at == self._clock):
                plainly = await self._read_plainly(key)
                if plainly is not None:
                    return plainly
            found: list[Any] = await self._hit(keys=[key, keys.invalidation_clock()],
                                               args=[keys.generation(""), random.getrandbits(62) + 1,
                                                     self.cache.generation_ttl, *_FIELDS, "c"])
        if found[0] == 2:  # current at the clock it returns last; none when graced
            current_at = as_bytes(found[8]) if len(found) > 8 and found[8] else None
            self._note(key, current_at, current_at)
        else:
            self._note(key, None, as_bytes(found[1]) if len(found) > 1 and found[1] else None)
        return found

    def _note(self, key: str, current_at: bytes | None, clock: bytes | None) -> None:
        """What the script found of `key`: current at the clock `current_at`, or not current (None); and the
        clock its reply showed, if any."""
        if clock is not None:
            self._clock = clock
        self._found_at[key] = current_at
        self._found_at.move_to_end(key)
        if len(self._found_at) > FOUND_KEPT:
            self._found_at.popitem(last=False)

    async def _read_plainly(self, key: str) -> list[Any] | None:
        """`_check_here`'s answer from the clock and the hash, when they give it: a miss, or a hit at the clock
        the response was last found current at; None when the script is to decide. Notes the clock it read."""
        async with self.cache.redis.pipeline(transaction=False) as pipe:
            pipe.get(keys.invalidation_clock())
            pipe.hmget(key, [*_FIELDS, "c"])
            clock, stored = await pipe.execute(raise_on_error=False)
        if isinstance(clock, Exception):
            raise clock
        if isinstance(stored, ResponseError):  # WRONGTYPE: the key holds something else than a response
            return [0, clock]
        if isinstance(stored, Exception):
            raise stored
        stamp, body, gzipped, views, etag, max_age, private, current_at = stored
        if clock is not None:
            self._clock = clock
        if stamp is None or body is None:
            return [0, clock]
        if clock is not None and clock == current_at:
            return [2, body, gzipped or b"", views or b"", etag or b"", max_age or b"", private or b"", b""]
        return None

    async def _check_apart(self, key: str) -> list[Any]:
        """What `_HIT` answers, in two round trips: the hash, then the current generations. No grace is set
        on a cluster (cache/refresh.py), so none is read, and a stale answer does not say what moved."""
        try:
            stored: list[Any] = await self.cache.redis.hmget(key, list(_FIELDS))
        except ResponseError:  # WRONGTYPE: the key holds something else than a stored response
            return [0]
        stamp, body, gzipped, views, etag, max_age, private = stored
        if stamp is None or body is None:
            return [0]
        if not await stamp_is_current(self.cache.redis, stamp):
            return [1]
        return [2, body, gzipped or b"", views or b"", etag or b"", max_age or b"", private or b"", b""]

    async def claim(self, key: str, clock: Callable[[], float] = time.perf_counter) -> Claim:
        """Whether this worker is to compute the response under `key`, which a look-up did not find: the
        cache's fill lock (cache/store.py `Cache._fill`) for whole answers. Each worker has its own single
        flight (app/http/single_flight.py); without a claim, a write to a hot page had every worker compute it
        again. The first to claim it computes; the others look again, after CLAIM_POLL_FIRST seconds and then
        more slowly, and are answered by what it kept (current, as any hit). Each look finds the answer, or
        else tries the claim, in one step (`_HIT_OR_CLAIM`); the claim is released by the store of the answer,
        after it (`keep`), so a worker that finds it free finds what was kept too. A claim is waited for only
        while no invalidation has come since it was taken: one may have made the answer under way old, and
        those who waited for such an answer computed theirs after it, one after the other (bench/RESULTS.md);
        the first to look after one takes the claim over and computes. (The worker it was taken from still
        releases it when it stores: one more worker may then compute the answer, as all did without claims;
        a claim only spares work, and no answer is given for it that a look-up would not give.) Nothing is
        waited for past the cache's fill wait either, nor while the claim says that the answers are not
        shared (`not_kept`). On a Redis Cluster, which reads no invalidation clock, nothing is claimed.
        `clock`: what `Claim.looked` is read from."""
        deadline = time.monotonic() + self.cache.fill_wait_ms / 1000
        poll = CLAIM_POLL_FIRST
        while True:
            looked = clock()
            hit, held = await self._hit_or_claim_of(key)
            if hit is not None:
                _count_claim("elsewhere")
                return Claim(ours=False, hit=hit, looked=looked)
            if held != CLAIMED or time.monotonic() >= deadline:
                break
            await asyncio.sleep(poll)
            poll = min(poll * 2, CLAIM_POLL_MOST)
        _count_claim("claimed" if held is None else "unclaimed")
        return Claim(ours=held is None)

    async def _hit_or_claim_of(self, key: str) -> tuple[Hit | None, bytes | None]:
        """The current answer under `key`, if there is one; else None and the claim of it tried: None when
        it is now this worker's, else what holds it (CLAIMED, UNSHARED, or b"" when nothing was claimed: a
        Redis Cluster, or Redis could not be asked)."""
        if not self.cache.available or self._cluster:
            return None, b""
        try:
            await self.cache.recover_if_needed()
            with at_once():
                found = await self._hit_or_claim(
                    keys=[key, keys.invalidation_clock(), keys.response_claim(key)],
                    args=[keys.generation(""), random.getrandbits(62) + 1, self.cache.generation_ttl, *_FIELDS, "c",
                          self.cache.fill_lock_ms])
            looked = await self._made_whole(_looked(found, key))
        except RedisError as exc:
            self.cache.trip(exc, "response claim")
            return None, b""
        if looked.hit is not None:
            return looked.hit, b""
        return None, as_bytes(found[2]) or None

    async def abandon(self, key: str) -> None:
        """Release this worker's claim of `key` now: its computation failed or was cancelled, and the next
        to claim it computes."""
        try:
            await self.cache.redis.delete(keys.response_claim(key))
        except RedisError as exc:
            self.cache.trip(exc, "response claim")

    async def not_kept(self, *, also: Callable[[Pipeline], object], unshared: str | None = None) -> None:
        """An answer computed that is not kept (an error, or it read the viewer): `also`'s commands and, when
        this worker held the claim of `unshared`, the claim marked so, in one round trip. For as long as a
        claim lasts, the other workers then compute that answer at once instead of waiting for one that
        would not be kept."""
        if unshared is not None:
            also = followed(also, lambda pipe: pipe.set(keys.response_claim(unshared), UNSHARED, xx=True,
                                                         px=self.cache.fill_lock_ms))
        await self._send_apart(also)

    async def store(self, key: str, body: bytes, capture: Capture, etag: str, *, max_age: int,
                    private: bool = False, also: Callable[[Pipeline], object] | None = None) -> Kept | None:
        """Keep `body` (its ETag computed by the caller, who sends it too) under the generations it saw, at
        most `max_age` seconds (and the cache's own TTL), if they are all still current (on a Redis Cluster,
        unchecked); None when it was not kept. `also` queues more commands (the rendered answer the
        response is made of), sent whatever becomes of the response: in the same round trip on one server,
        in a pipeline of their own otherwise."""
        return await self.keep(self.prepare(key, body, capture, etag, max_age=max_age, private=private), also=also)

    def prepare(self, key: str, body: bytes, capture: Capture, etag: str, *, max_age: int,
                private: bool = False) -> Storable | None:
        """`body` as `store` keeps it; None when it is not to be kept (`capture_stamp`)."""
        stamp = capture_stamp(capture)
        if stamp is None:
            return None
        gzipped = len(body) > COMPRESS_OVER
        hit = Hit(_gzip(body) if gzipped else body, gzipped, list(capture.views), etag, max_age, private, key)
        parts = split(hit.body, self.cache.max_value) if len(hit.body) > self.cache.max_value else ()
        if len(hit.body) > self.cache.max_value and not parts:  # seed 004: past what one MGET reads
            metrics.child(metrics.VALUES_TOO_BIG, "response", keys.family(key)).inc()
            return None
        kept_body = IN_PARTS + b",".join(name.encode() for name, _ in parts) if parts else hit.body
        stored: dict[Any, Any] = {"s": stamp, "b": kept_body, "v": ",".join(str(v) for v in hit.views), "e": etag,
                                  "a": max_age}
        if gzipped:
            stored["z"] = b"1"
        if private:
            stored["p"] = b"1"
        lifetime = min(self.ttl, max_age)
        return Storable(hit, stored, self.cache.jittered(lifetime) or lifetime, parts)

    async def keep(self, storable: Storable | None, *, also: Callable[[Pipeline], object] | None = None,
                   claimed: str | None = None) -> Kept | None:
        """`store`'s second half: keep what `prepare` made of a response, if anything. `claimed`: the key whose
        claim this worker holds (`claim`), released once the store is done, in its step: the others' next
        look finds what was kept, or the claim free to take."""
        sent_apart = also if claimed is None else followed(  # what goes without the script releases the claim
            also, lambda pipe: pipe.delete(keys.response_claim(claimed)))
        if storable is None:
            await self._send_apart(sent_apart)
            return None
        key, stored, ttl = storable.hit.key, storable.stored, storable.ttl
        kept: Kept | None = Kept(None)
        try:
            if self._cluster:
                await self._keep_apart(key, stored, ttl, storable.parts)
            else:
                how = await self._keep_if_current(key, stored, ttl, also, claimed, parts=storable.parts)
                # graced, it is looked up by whoever would take it (served as long as the graces last)
                kept = Kept(storable.hit) if how == KEPT else Kept(None) if how == KEPT_GRACED else None
                sent_apart = None  # sent with it, and the claim released by the script
        except RedisError as exc:
            self.cache.trip(exc, "response cache store")
            kept = None
        await self._send_apart(sent_apart)
        if kept is not None:
            self.stores += 1
        return kept

    async def _keep_if_current(self, key: str, stored: dict[Any, Any], ttl: int,
                               also: Callable[[Pipeline], object] | None, claimed: str | None = None, *,
                               parts: tuple[tuple[str, bytes], ...] = ()) -> int:
        """By the store script (KEPT, KEPT_GRACED or 0), with `also` in the same round trip (cache/redis/client.py
        `queue_script`); the script releases the claim of `claimed`, after the store, even when it is run again
        because Redis did not have it. The body's `parts` go first: what names them is never kept before them."""
        script_keys = [key, keys.invalidation_clock(), *([keys.response_claim(claimed)] if claimed else [])]
        script_args = [keys.generation(""), ttl, random.getrandbits(62) + 1, self.cache.generation_ttl,
                       *(part for field in stored.items() for part in field)]
        async with self.cache.redis.pipeline(transaction=False) as pipe:
            _queue_parts(pipe, parts, ttl)
            queue_script(pipe, self._store, script_keys, script_args)
            if also is not None:
                also(pipe)
            replies = await pipe.execute(raise_on_error=False)
        # a part not kept makes the kept response a miss for its readers: safe, and counted as a failure below
        kept, others = replies[len(parts)], [*replies[:len(parts)], *replies[len(parts) + 1:]]
        kept = await script_reply(kept, self._store, script_keys, script_args)
        failed = next((reply for reply in others if isinstance(reply, Exception)), None)
        if failed is not None:  # the response is kept whatever became of the rest
            self.cache.trip(failed, "response cache store")
        return int(kept)

    async def _keep_apart(self, key: str, stored: dict[Any, Any], ttl: int,
                          parts: tuple[tuple[str, bytes], ...]) -> None:
        """On a Redis Cluster, unchecked (the generations are in other slots): a MULTI/EXEC, so that the entry
        never exists without its expiry; the parts of its body first, in slots of their own."""
        if parts:
            async with self.cache.redis.pipeline(transaction=False) as pipe:
                _queue_parts(pipe, parts, ttl)
                await pipe.execute()
        async with self.cache.redis.pipeline(transaction=True) as pipe:
            pipe.unlink(key)  # whatever was there, of any type
            pipe.hset(key, mapping=stored)
            pipe.expire(key, ttl)
            await pipe.execute()

    async def _send_apart(self, also: Callable[[Pipeline], object] | None) -> None:
        """`also`'s commands in a pipeline of their own (on a cluster a transaction keeps to one slot)."""
        if also is None or not self.cache.available:
            return
        try:
            async with self.cache.redis.pipeline(transaction=False) as pipe:
                also(pipe)
                await pipe.execute()
        except RedisError as exc:
            self.cache.trip(exc, "response cache store")


def _queue_parts(pipe: Pipeline, parts: tuple[tuple[str, bytes], ...], ttl: int) -> None:
    for name, data in parts:
        queue_set(pipe, name, data, ttl + PART_MARGIN)


def followed(also: Callable[[Pipeline], object] | None,
              then: Callable[[Pipeline], object]) -> Callable[[Pipeline], object]:
    """`also`'s commands (if any), then `then`'s, queued in one pipeline."""
    def queued(pipe: Pipeline) -> None:
        if also is not None:
            also(pipe)
        then(pipe)

    return queued


def _gzip(body: bytes) -> bytes:
    compressor = zlib.compressobj(1, zlib.DEFLATED, _GZIP)
    return compressor.compress(body) + compressor.flush()


def part_names(body: bytes) -> list[str]:
    """The parts a stored body names after IN_PARTS."""
    return body[len(IN_PARTS):].decode().split(",")


def _looked(found: list[Any], key: str) -> LookUp:
    """What `_HIT` (or `_check_apart`) answered, as a LookUp."""
    if found[0] != 2:
        moved = as_bytes(found[3]).decode().split(",") if len(found) > 3 and found[3] else ()
        return LookUp(None, found[0] == 1, as_bytes(found[1]) if len(found) > 1 and found[1] else None, tuple(moved))
    views = as_bytes(found[3]).decode()
    return LookUp(Hit(as_bytes(found[1]), found[2] in (b"1", "1"), [int(v) for v in views.split(",") if v],
                      as_bytes(found[4]).decode(), int(found[5] or 0), found[6] in (b"1", "1"), key,
                      len(found) > 7 and found[7] in (b"1", "1")))


def _count(result: str) -> None:
    metrics.child(metrics.CACHE_READS, "response", "response", result).inc()


def _count_claim(outcome: str) -> None:
    metrics.child(metrics.RESPONSE_CLAIMS, outcome).inc()
