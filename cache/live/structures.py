"""Live structures (seeds 001 and 003): counters, follow graphs, comment threads and boards that the
write side keeps current in Redis after each commit (HINCRBY, ZADD, ZREM), instead of recomputing them.

Unlike cached values they carry no generation stamp, so three rules keep them equal to what SQL says:

- Each entity (`shout 5`, `author 7`) has a meta hash `live:{kind}:{id}`: `v` counts the writes that
  touched it, `p` the writes announced before their commit and not yet applied, and one field per built
  structure naming the epoch of its kind (`gen:live:{kind}`) it was built under.
- A structure that is missing is built from SQL for the ids being read only. The reader notes the meta
  *before* its query and stores what it built only if no write was announced or applied since
  (`v` unchanged) and none is under way (`p` == 0). A count taken from a snapshot that may or may not
  hold a write is therefore never stored beside that write's delta: no lost and no doubled update.
- A write changes only structures that are built; one it cannot apply (Redis down, a bulk statement that
  does not say which rows it touched) bumps the epoch of the kinds involved, which turns all their
  structures into misses, rebuilt from SQL on their next read: late, never wrong.

Sorted sets of followers are capped (seed 004: no collection over 5,000 members): a capped set holds
the newest `set_cap` members exactly, and readers that need more go to SQL.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from redis.asyncio.client import Pipeline
from redis.exceptions import RedisError

from cache import keys
from cache.lua import load_lua
from cache.redis.client import is_cluster
from cache.redis.limits import BATCH
from cache.store import Cache

if TYPE_CHECKING:
    from config.settings import LiveSettings

# How long an announced write may stay unapplied before readers stop waiting for it (a worker that died
# between its commit and its apply): after that, builds are stored again.
PENDING_TIMEOUT = 60
# Structure keys outlive their meta hash by this much, so a structure is never read as built while its
# key has already expired.
KEY_MARGIN = 600
# Leaderboards are global: the structures of one entity, (kind, BOARD_ENTITY), of the kind "board" for
# all-time boards and "weekly" for weekly editions (cache/live/boards.py).
BOARD_ENTITY = keys.BOARD_ENTITY

_ANNOUNCE = load_lua("live_announce")

_APPLY = load_lua("live_apply", margin=KEY_MARGIN, complete="-1e15")

_BUILD = load_lua("live_build", timeout=PENDING_TIMEOUT, chunk=BATCH, margin=KEY_MARGIN)


_NAMED: dict[str, Callable[[int], str]] = {
    "comments": keys.post_comments,
    "comments:best": lambda i: keys.post_comments(i, "best"),
    "comments:all": lambda i: keys.post_comments(i, "all"),
    "comment": keys.comment,
    "replies": keys.comment_replies,
    "replies:best": lambda i: keys.comment_replies(i, "best"),
}


def structure_key(kind: str, entity_id: int, name: str) -> str:
    """The Redis key of one structure of an entity (see cache/keys.py for the names)."""
    if kind in ("board", "weekly"):
        return keys.leaderboard(name)
    if name == "count":
        return keys.counters(kind, entity_id)
    if name == "fans":
        return keys.fans(kind, entity_id)
    if name.startswith("following:"):
        return keys.following(entity_id, name.split(":", 1)[1])
    if name in _NAMED:
        return _NAMED[name](entity_id)
    raise ValueError(f"unknown live structure {name!r}")


@dataclass(frozen=True, slots=True)
class Op:
    verb: str
    name: str
    args: tuple[str, ...] = ()


@dataclass
class LiveOps:
    """What one transaction does to live structures, recorded during its flush (triggers/) and applied
    after its commit. Plain data: recording never touches Redis."""

    by_entity: dict[tuple[str, int], list[Op]] = field(default_factory=dict)
    # Kinds whose structures a bulk statement may have changed in rows nobody can name.
    lost_kinds: set[str] = field(default_factory=set)

    @classmethod
    def touching(cls, entities: Iterable[tuple[str, int]]) -> LiveOps:
        """No operations yet on these entities: applied as announced, it settles their announcement."""
        return cls(by_entity={entity: [] for entity in entities})

    def _add(self, kind: str, entity_id: int | None, op: Op) -> None:
        if entity_id is not None:
            self.by_entity.setdefault((kind, int(entity_id)), []).append(op)

    def incr(self, kind: str, entity_id: int | None, **deltas: int) -> None:
        """Counter deltas (`count:{kind}:{id}`)."""
        self.hincr(kind, entity_id, "count", deltas)

    def hincr(self, kind: str, entity_id: int | None, name: str, deltas: dict[str, int]) -> None:
        """Deltas of the fields of any hash structure (a comment's rating)."""
        for metric, delta in deltas.items():
            if delta:
                self._add(kind, entity_id, Op("incr", name, (metric, str(delta))))

    def maximum(self, kind: str, entity_id: int | None, metric: str, value: int) -> None:
        self._add(kind, entity_id, Op("max", "count", (metric, str(value))))

    def drop(self, kind: str, entity_id: int | None, name: str = "count") -> None:
        self._add(kind, entity_id, Op("drop", name))

    def zadd(self, kind: str, entity_id: int | None, name: str, score: int, member_id: int) -> None:
        self._add(kind, entity_id, Op("zadd", name, (str(score), keys.member(member_id))))

    def zput(self, kind: str, entity_id: int | None, name: str, score: int, member_id: int) -> None:
        self._add(kind, entity_id, Op("zput", name, (str(score), keys.member(member_id))))

    def zdel(self, kind: str, entity_id: int | None, name: str, member_id: int) -> None:
        self._add(kind, entity_id, Op("zdel", name, (keys.member(member_id),)))

    def rank(self, board: str, delta: int, member_id: int) -> None:
        """Move an entity on a leaderboard by a delta (cache/live/boards.py)."""
        if delta:
            self._add(keys.board_kind(board), BOARD_ENTITY, Op("rank", board, (str(delta), keys.member(member_id))))

    def place(self, board: str, score: int, member_id: int) -> None:
        """An entity's new absolute score on a leaderboard, where scores only grow (views)."""
        self._add(keys.board_kind(board), BOARD_ENTITY, Op("place", board, (str(score), keys.member(member_id))))

    def drop_board(self, board: str) -> None:
        self.drop(keys.board_kind(board), BOARD_ENTITY, board)

    def zincr(self, kind: str, entity_id: int | None, name: str, delta: int, member_id: int) -> None:
        if delta:
            self._add(kind, entity_id, Op("zincr", name, (str(delta), keys.member(member_id))))

    def zrem(self, kind: str, entity_id: int | None, name: str, member_id: int) -> None:
        self._add(kind, entity_id, Op("zrem", name, (keys.member(member_id),)))

    def lose(self, *kinds: str) -> None:
        self.lost_kinds.update(kinds)

    def __bool__(self) -> bool:
        return bool(self.by_entity or self.lost_kinds)


_READ_HASHES = load_lua("live_read_hashes")
HASH_READS = (BATCH - 1) // 2  # ids per script call: at most BATCH keys in one command (seed 004)

_READ_NUMBERS = load_lua("live_read_numbers")


def queue_eval(pipe: Pipeline, script: str, key_list: Sequence[str], args: Sequence[Any]) -> None:
    """A script call queued in `pipe` as EVAL of its text. A Script object in a pipeline makes redis-py
    ask Redis first whether it knows the script (SCRIPT EXISTS, one round trip more on every commit) and
    take the pipeline off the coalesced connection; EVAL needs no such question, Redis caches the compiled
    script by its text's digest, and a Redis that restarted (or flushed its scripts) between two writes
    runs it just the same. A cluster pipeline sends scripts as EVAL anyway (cache/redis/client.py)."""
    pipe.execute_command("EVAL", script, len(key_list), *key_list, *args)


@dataclass(frozen=True, slots=True)
class Noted:
    """What a reader saw of one entity's meta before its query: the condition for storing its build."""

    version: str
    epoch: str


class LiveStore:
    """Reads, builds and updates live structures on the state Redis, through the cache's circuit breaker."""

    def __init__(self, cache: Cache, *, ttl: int = 7 * 86_400, set_cap: int = 5000,
                 thread_cap: int = 5000) -> None:
        self.cache = cache
        self.redis = cache.state
        self.ttl = ttl
        self.set_cap = set_cap
        self.thread_cap = thread_cap
        self._read_hashes = cache.state.register_script(_READ_HASHES)
        self._read_numbers = cache.state.register_script(_READ_NUMBERS)

    @classmethod
    def of(cls, cache: Cache, settings: LiveSettings) -> LiveStore:
        return cls(cache, ttl=settings.live_ttl, set_cap=settings.live_set_cap, thread_cap=settings.live_thread_cap)

    def _ttl(self) -> int:
        """An entity's structures' lifetime, spread as the cache's keys are (CACHE_TTL_JITTER): what one
        rebuild stored together does not expire together, as one wave of SQL rebuilds."""
        return self.cache.jittered(self.ttl) or self.ttl

    # --- the write side ------------------------------------------------------------------------------

    async def announce(self, entities: Iterable[tuple[str, int]]) -> bool:
        """Before a commit: readers must not store builds of these entities until the write is applied.
        Returns False if Redis did not take it (the caller then treats the write's changes as lost).
        One script call marks them all (a command per entity on a Redis Cluster, whose script keys must
        share a slot): four commands an entity cost a comment's worker more than the script does."""
        metas = [keys.live_meta(kind, entity_id) for kind, entity_id in dict.fromkeys(entities)]
        if not metas:
            return True
        if not self.cache.available:
            return False
        calls = [[meta] for meta in metas] if is_cluster(self.redis) else [
            metas[start:start + BATCH] for start in range(0, len(metas), BATCH)]
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                for call in calls:
                    queue_eval(pipe, _ANNOUNCE, call, [int(time.time()), self._ttl()])
                await pipe.execute()
        except RedisError as exc:
            self.cache.trip(exc, "live announce")
            return False
        return True

    async def queue_apply(self, pipe: Pipeline, ops: LiveOps, *, announced: bool) -> None:
        """Add one script call per entity to `pipe` (the commit's invalidation pipeline). A write that
        was not announced before its commit may race a build, so its structures are dropped instead of
        changed in place (a drop is right whatever a concurrent build stores)."""
        for kind in sorted(ops.lost_kinds):
            pipe.incr(keys.live_epoch(kind))
        for (kind, entity_id), entity_ops in ops.by_entity.items():
            key_list = [keys.live_meta(kind, entity_id)]
            args: list[str] = [str(self._ttl()), "1" if announced else "0", str(self.set_cap), str(self.thread_cap)]
            for op in entity_ops if announced else [Op("drop", o.name) for o in entity_ops]:
                key = structure_key(kind, entity_id, op.name)
                if key not in key_list:
                    key_list.append(key)
                args += [op.verb, str(key_list.index(key) + 1), op.name, *op.args]
            queue_eval(pipe, _APPLY, key_list, args)

    # --- the read side --------------------------------------------------------------------------------

    async def read(self, kind: str, name: str, ids: Sequence[int], commands: Callable[[Pipeline, str], object],
                   per_key: int = 1, *, note_all: bool = False) -> tuple[list[list[Any] | None], dict[int, Noted]]:
        """One round trip: for each id the results of `commands(pipe, key)` (`per_key` of them) if the
        structure is built under the current epoch, else None; and what was noted for building misses
        (for every id with `note_all`, to rebuild what is there). With Redis unavailable every entry is
        None and nothing is noted (nothing will be stored)."""
        if not ids:
            return [], {}
        if not self.cache.available:
            return [None] * len(ids), {}
        try:
            await self.cache.recover_if_needed()
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.get(keys.live_epoch(kind))
                for entity_id in ids:
                    pipe.hmget(keys.live_meta(kind, entity_id), "v", name)
                    commands(pipe, structure_key(kind, entity_id, name))
                raw = await pipe.execute()
            epoch = raw[0].decode() if raw[0] is not None else await self._create_epoch(kind)
        except RedisError as exc:
            self.cache.trip(exc, "live read")
            return [None] * len(ids), {}
        step = 1 + per_key
        return self._judged(ids, epoch, ((*raw[start], raw[start + 1:start + step])
                                         for start in range(1, len(raw), step)), note_all)

    async def read_hashes(self, kind: str, name: str, ids: Sequence[int], *, note_all: bool = False
                          ) -> tuple[list[list[Any] | None], dict[int, Noted]]:
        """`read` of whole HASH structures (comments) with HGETALL. On one server each chunk of ids is
        one script call instead of two commands per id (replies to parse are a client's largest cost
        here), the chunks sent together (cache/redis/coalesce.py). A cluster keeps each id's keys in a slot of
        their own: `read` there."""
        if not ids or is_cluster(self.redis):
            return await self.read(kind, name, ids, lambda pipe, key: pipe.hgetall(key), note_all=note_all)
        if not self.cache.available:
            return [None] * len(ids), {}
        try:
            replies, epoch = await self._read_chunks(self._read_hashes, kind, name, ids, [name])
        except RedisError as exc:
            self.cache.trip(exc, "live read")
            return [None] * len(ids), {}
        found = (reply[start:start + 3] for reply in replies for start in range(1, len(reply), 3))
        return self._judged(ids, epoch, ((version, built, [dict(zip(flat[::2], flat[1::2], strict=True))])
                                         for version, built, flat in found), note_all)

    async def read_numbers(self, kind: str, name: str, ids: Sequence[int], fields: Sequence[str], *,
                           note_all: bool = False) -> tuple[list[list[int | None] | None], dict[int, Noted]]:
        """`read` of integer `fields` of HASH structures (counters): per id the fields' values in order (None
        where absent) if built under the current epoch, else None. On one server each chunk of ids is one
        script call that judges the epoch itself and converts the values, so a page's counters cost one
        integer per field to parse. A cluster (each id's keys in a slot of their own) and `note_all` (the
        reconciliation, which notes built structures too) take `read`."""
        if not ids or note_all or is_cluster(self.redis):
            found, noted = await self.read(kind, name, ids, lambda pipe, key: pipe.hmget(key, list(fields)),
                                           note_all=note_all)
            return [None if f is None else [None if v is None else int(v) for v in f[0]] for f in found], noted
        if not self.cache.available:
            return [None] * len(ids), {}
        try:
            replies, epoch = await self._read_chunks(self._read_numbers, kind, name, ids, [name, *fields])
        except RedisError as exc:
            self.cache.trip(exc, "live read")
            return [None] * len(ids), {}
        results: list[list[int | None] | None] = []
        noted = {}
        for entity_id, item in zip(ids, (item for reply in replies for item in reply[1:]), strict=True):
            if type(item) is list:
                results.append(item)
            else:  # not built under the epoch: the item is its meta's version
                results.append(None)
                noted[entity_id] = Noted(item.decode() if item is not None else "", epoch)
        return results, noted

    async def _read_chunks(self, script: Any, kind: str, name: str, ids: Sequence[int], args: list[Any]
                           ) -> tuple[list[Any], str]:
        """`script` called once per chunk of ids (KEYS: the kind's epoch, then each id's meta and structure),
        the calls sent together (cache/redis/coalesce.py): their replies, and the kind's epoch (each reply's
        first item). Raises RedisError."""
        await self.cache.recover_if_needed()
        replies = await asyncio.gather(*(
            script(keys=[keys.live_epoch(kind), *(key for i in ids[start:start + HASH_READS]
                                                  for key in (keys.live_meta(kind, i), structure_key(kind, i, name)))],
                   args=args)
            for start in range(0, len(ids), HASH_READS)))
        epoch = replies[0][0].decode() if replies[0][0] is not None else await self._create_epoch(kind)
        return replies, epoch

    @staticmethod
    def _judged(ids: Sequence[int], epoch: str, found: Iterable[Sequence[Any]], note_all: bool
                ) -> tuple[list[list[Any] | None], dict[int, Noted]]:
        """`found`: per id, its meta's version and built epoch, then what was read of its structure."""
        results: list[list[Any] | None] = []
        noted: dict[int, Noted] = {}
        for entity_id, (version, built, values) in zip(ids, found, strict=True):
            fresh = built is not None and built.decode() == epoch
            results.append(values if fresh else None)
            if note_all or not fresh:
                noted[entity_id] = Noted(version.decode() if version is not None else "", epoch)
        return results, noted

    async def note(self, kind: str, name: str, ids: Sequence[int]) -> dict[int, Noted]:
        """What to build every id's structure under, built or not (a rebuild replaces what is there)."""
        return (await self.read(kind, name, ids, lambda pipe, key: pipe.exists(key), note_all=True))[1]

    async def _create_epoch(self, kind: str) -> str:
        """A missing epoch (a flushed or new Redis) starts at a random value, so that no structure left
        from an earlier life of this Redis can match it."""
        await self.redis.set(keys.live_epoch(kind), random.getrandbits(48), nx=True)
        value = await self.redis.get(keys.live_epoch(kind))
        return value.decode() if isinstance(value, bytes) else str(value or "")

    async def build(self, kind: str, name: str, items: Iterable[tuple[int, Sequence[Any]]],
                    noted: dict[int, Noted], *, structure: str) -> None:
        """Store structures built from SQL (`items`: id and flat field/value or score/member data), each
        only if its entity saw no write since it was noted. `structure` is 'hash' or 'zset'."""
        todo = [(i, data) for i, data in items if i in noted]
        if not todo or not self.cache.available:
            return
        now = str(int(time.time()))
        try:
            for start in range(0, len(todo), BATCH):
                async with self.redis.pipeline(transaction=False) as pipe:
                    for entity_id, data in todo[start:start + BATCH]:
                        seen = noted[entity_id]
                        queue_eval(pipe, _BUILD,
                                     [keys.live_meta(kind, entity_id), structure_key(kind, entity_id, name)],
                                     [seen.version, seen.epoch, now, str(self._ttl()), name, structure,
                                      *(v if isinstance(v, bytes) else str(v) for v in data)])
                    await pipe.execute()
        except RedisError as exc:
            self.cache.trip(exc, "live build")

    async def apply(self, ops: LiveOps, *, announced: bool) -> None:
        """Apply `ops` on their own (the commit path queues them into its invalidation pipeline)."""
        if not ops:
            return
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                await self.queue_apply(pipe, ops, announced=announced)
                await pipe.execute()
        except RedisError as exc:
            await self.cache.lose_write(exc, "live apply")
