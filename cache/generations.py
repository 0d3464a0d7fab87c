"""Generations: what every stamp is made of, and how a write makes the values stamped before it a miss.

A tag (an entity such as `author:5`, a family such as `shouts`, the global epoch) has a generation key; a
stored value carries the generations its computation read (cache/stamps.py). Invalidating a tag moves its
generation to a random value it never held, one command; a generation key that is missing (Redis flushed,
restarted or evicted) is created again with a random start, so no old stamp can match it. Moves come with
the invalidation clock after them (responses checked at the old clock are checked again) and, for a write
answered over HTTP, with graces (cache/refresh.py). `Cache` (cache/store.py) is one of these.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from redis.exceptions import RedisError

from cache import keys, response_capture
from cache.containment import LostWrites
from cache.redis.client import cannot_serve, is_cluster, queue_script, queue_set, script_reply
from cache.redis.limits import BATCH, PUBLISH_PER_CALL
from cache.refresh import GRACED_TAGS_MOST, Refreshing, refreshing_now
from telemetry import metrics

if TYPE_CHECKING:
    from redis.asyncio.client import Pipeline
    from redis.commands.core import AsyncScript


log = logging.getLogger(__name__)

GENERATION_TTL = 30 * 86_400
# Seconds between two reports of a bug's error replies during the same `what` (`Generations.trip`).
BUG_REPORT_EVERY = 60.0


@dataclass(slots=True)
class CacheStats:
    hits: int = 0
    misses: int = 0
    stale: int = 0
    errors: int = 0

    def count(self, result: str, n: int = 1) -> None:
        """Count `n` reads of a result: hit, miss or stale."""
        if result == "hit":
            self.hits += n
        elif result == "miss":
            self.misses += n
        else:
            self.stale += n


class Generations(LostWrites):
    """A cache's generations, its availability and its invalidation (mixed into `Cache`, which sets the state
    below)."""

    generation_ttl: int
    _bugs_reported: dict[str, float]  # `what` -> when its last error reply was logged (`trip`)
    _grace_bump: AsyncScript | None
    _end_graces: AsyncScript | None

    @property
    def available(self) -> bool:
        return self.guard.available

    def trip(self, exc: BaseException, what: str) -> None:
        """Redis failed during `what`. When it cannot serve (it did not answer, or answered that it is full,
        read-only, busy...: `cannot_serve`), readers use the database for the breaker's window. Any other
        error reply (a script's error, a wrong type) is a bug of ours, not an outage: it is logged as one,
        at most once a minute for each `what`, and only the call that met it went to the database."""
        self.stats.errors += 1
        if cannot_serve(exc):
            self.guard.trip(exc, what)
            return
        metrics.REDIS_ERRORS.labels(what).inc()
        now = time.monotonic()
        if now - self._bugs_reported.get(what, -BUG_REPORT_EVERY) >= BUG_REPORT_EVERY:
            self._bugs_reported[what] = now
            log.error("Redis answered %s with an error, a bug (the breaker stays closed): %s", what, exc,
                      exc_info=exc)

    @staticmethod
    def _all_tags(tags: Iterable[str]) -> list[str]:
        ordered = [keys.GLOBAL_TAG]
        for tag in tags:
            if tag not in ordered:
                ordered.append(tag)
        return ordered

    async def _ensure_generations(self, tags: Sequence[str], current: list[bytes | None]) -> list[bytes]:
        """Missing generation keys are created with a random start (never 0, never an old value)."""
        missing = [t for t, g in zip(tags, current, strict=True) if g is None]
        if missing:
            fetched: list[bytes | None] = []
            for start in range(0, len(missing), BATCH // 2):  # two commands per tag
                chunk = missing[start:start + BATCH // 2]
                async with self.redis.pipeline(transaction=False) as pipe:
                    for tag in chunk:
                        pipe.set(keys.generation(tag), random.getrandbits(48), nx=True, ex=self.generation_ttl)
                    pipe.mget(keys.generations(chunk))
                    *_, got = await pipe.execute()
                fetched += got
            by_tag = dict(zip(missing, fetched, strict=True))
            current = [g if g is not None else by_tag[t] for t, g in zip(tags, current, strict=True)]
        return [g or b"0" for g in current]

    async def observe(self, tags: Sequence[str]) -> None:
        """Let a response being stored depend on `tags` (for data read outside the stamped values, such
        as live follow sets): their generations join its stamp. Free when no response is being stored."""
        if not response_capture.active():
            return
        if not self.available:
            response_capture.report(None)
            return
        distinct = self._all_tags(tags)
        try:
            raw = cast("list[bytes | None]", await self.redis.mget(keys.generations(distinct)))
            gens = dict(zip(distinct, await self._ensure_generations(distinct, raw), strict=True))
        except RedisError as exc:
            self.trip(exc, "read")
            response_capture.report(None)
            return
        response_capture.report(gens)

    async def _move(self, tags: list[str], also: Callable[[Pipeline], Awaitable[None]] | None) -> None:
        """`also`'s commands, then the generations of `tags` moved and the clock after them: at most BATCH
        commands a pipeline (seed 004), `also`'s, then as many moves as leave room for the clock's."""
        remaining = tags
        while True:
            async with self.redis.pipeline(transaction=False) as pipe:
                if also is not None:
                    await also(pipe)
                    also = None
                room = max(BATCH - 1 - len(pipe), 0)  # what the pipeline holds already is `also`'s
                for tag in remaining[:room]:
                    self._queue_bump(pipe, tag)
                self._queue_clock(pipe)
                await pipe.execute()
            remaining = remaining[room:]
            if not remaining:
                break

    async def _move_graced(self, tags: list[str], also: Callable[[Pipeline], Awaitable[None]] | None,
                           refreshing: Refreshing) -> None:
        """`_move`, for a write answered over HTTP (cache/refresh.py): `also`'s commands, then one script that
        moves the generations, each with its grace, and the clock after them, and finds the responses the write
        is to compute again; noted in `refreshing`."""
        assert self._grace_bump is not None
        moved_to = [random.getrandbits(62) + 1 for _ in tags]
        graces = dict(zip(map(keys.grace, tags), moved_to, strict=True))
        # A write answered right after this move (`Refreshing.closing`) sets no grace, and its messages go out
        # in the same script, after the moves: the round trip that would end its graces is not needed.
        published = refreshing.messages[:PUBLISH_PER_CALL] if refreshing.closing else []
        script_keys = [*keys.generations(tags), *graces, *map(keys.refresh_index, tags), keys.invalidation_clock()]
        script_args = [self.generation_ttl, 0 if refreshing.closing else refreshing.grace_ms,
                       random.getrandbits(62) + 1, refreshing.most, *moved_to,
                       *(part for message in published for part in message)]
        async with self.redis.pipeline(transaction=False) as pipe:
            if also is not None:
                await also(pipe)
            queue_script(pipe, self._grace_bump, script_keys, script_args)
            *replies, found = await pipe.execute(raise_on_error=False)
        found = await script_reply(found, self._grace_bump, script_keys, script_args)
        del refreshing.messages[:len(published)]
        # whatever became of `also`'s: its graces are to be ended
        refreshing.noted({} if refreshing.closing else graces, found)
        failed = next((reply for reply in replies if isinstance(reply, Exception)), None)
        if failed is not None:
            raise failed

    async def end_graces(self, refreshing: Refreshing, messages: Sequence[tuple[str, bytes]] = ()) -> bool:
        """End a write's graces (cache/refresh.py) before it is answered, and publish `messages` (channel, message)
        in the same script after them: whoever they tell of the write reads once its graces are gone. When Redis
        cannot be told, wait until the graces have expired on their own (no reader is served under them once the
        write is answered) and return False: the messages are not published."""
        assert self._end_graces is not None  # graces are set on one server only
        try:
            await self._end_graces(keys=list(refreshing.graces), args=[
                *refreshing.graces.values(), *(part for message in messages for part in message)])
        except RedisError as exc:
            self.trip(exc, "write graces")
            await asyncio.sleep(refreshing.grace_left())
            return False
        return True

    def _queue_bump(self, pipe: Pipeline, tag: str) -> None:
        """Move a generation to a random value, never one the key held before (2^62 of them; an INCR
        restarts at 1 after an expiry, a value a stamp stored in an earlier life of the key may carry), and
        push its expiry out: one command."""
        queue_set(pipe, keys.generation(tag), b"%d" % (random.getrandbits(62) + 1), self.generation_ttl)

    def _queue_clock(self, pipe: Pipeline) -> None:
        """Move the invalidation clock after the generations of the same pipeline: a response checked at the
        clock's value before is checked again. To a random value, as a generation moves (`_queue_bump`): it
        only has to differ from every value a response was checked at, and never overflows."""
        queue_set(pipe, keys.invalidation_clock(), b"%d" % (random.getrandbits(62) + 1), self.generation_ttl)

    async def invalidate_tags(self, tags: Iterable[str], *,
                              also: Callable[[Pipeline], Awaitable[None]] | None = None) -> None:
        """Make every value that depends on any of `tags` a miss; `also` adds the commit's other commands
        (live structure updates, for the state Redis) before them: in the same pipeline when the state is
        the same single server, else (another Redis, or a cluster) in a pipeline of its own sent first.
        Never raises: a lost invalidation is remembered and answered with epoch bumps when Redis is back."""
        tag_list = list(dict.fromkeys(tags))
        # a member's tag moves with its family's (keys.covering): stamps may name the family's alone
        tag_list = list(dict.fromkeys([*tag_list, *filter(None, map(keys.covering, tag_list))]))
        if not tag_list and also is None:
            return
        try:
            # On a Redis Cluster one pipeline goes to each node at once, in no order: the live structures'
            # updates must have landed before a generation moves (below), so they go first, on their own.
            if also is not None and (self.state is not self.redis or is_cluster(self.redis)):
                async with self.state.pipeline(transaction=False) as pipe:
                    await also(pipe)
                    await pipe.execute()
                also = None
            # Live structures change before the generations move: a reader that sees a new generation
            # then also sees the new structures, so it cannot cache a page built from the old ones under
            # the new stamp.
            refreshing = refreshing_now()
            if refreshing is not None and self._grace_bump is not None and 0 < len(tag_list) <= GRACED_TAGS_MOST:
                await self._move_graced(tag_list, also, refreshing)
            else:
                await self._move(tag_list, also)
        except RedisError as exc:
            await self.lose_write(exc, "invalidation")
            return
        for tag in tag_list:
            metrics.INVALIDATIONS.labels(keys.family(tag)).inc()
