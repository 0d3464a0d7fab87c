"""Where committed changes go: tags invalidated and live structures updated at once (one pipeline),
counters marked for the revalidator, then the live messages published. Nothing here raises into the
writer: a Redis failure never fails a mutation."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from redis.asyncio.client import Pipeline

from cache.live.structures import LiveOps, LiveStore
from cache.messaging.pubsub import publish_quietly
from cache.refresh import refreshing_now
from cache.revalidator import CacheRevalidationManager
from cache.store import Cache
from cache.wal_floor import WalFloor
from triggers.changes import Changes

log = logging.getLogger(__name__)


class CacheSink:
    def __init__(self, cache: Cache, revalidator: CacheRevalidationManager | None, live: LiveStore, *,
                 invalidation: bool = True, wal_floor: WalFloor | None = None) -> None:
        """`wal_floor`: with read replicas, raised past each commit before anything else (cache/wal_floor.py)."""
        self.cache = cache
        self.wal_floor = wal_floor
        self.revalidator = revalidator
        self.live = live
        # Off (CACHE_INVALIDATION=off, tests and drills only): commits leave cached values and live
        # structures as they were, so a control run can show the stale reads the invalidation prevents.
        self.invalidation = invalidation
        self._running: set[asyncio.Task[None]] = set()

    @property
    def running(self) -> int:
        """How many commits' invalidations are under way."""
        return len(self._running)

    async def settled(self) -> None:
        """Until every invalidation started so far has ended (and those they started): what a test waits
        for before asserting what a commit did or did not invalidate."""
        awaited: set[asyncio.Task[None]] = set()
        while started := self._running - awaited:
            awaited |= started
            await asyncio.gather(*started, return_exceptions=True)

    def _spawn(self, work: Coroutine[Any, Any, None], what: str) -> asyncio.Task[None] | None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a synchronous script committed: nothing is cached in its process
            log.warning("commit outside an event loop; %s skipped", what)
            work.close()
            return None
        task = loop.create_task(work)
        self._running.add(task)  # keep a reference until done (asyncio keeps only weak ones)
        task.add_done_callback(self._running.discard)
        return task

    async def announce(self, changes: Changes) -> bool:
        return await self.live.announce(changes.live.by_entity)

    def schedule(self, changes: Changes, *, announced: bool) -> asyncio.Task[None] | None:
        return self._spawn(self.apply(changes, announced=announced), f"invalidation of {sorted(changes.tags)}")

    def withdraw(self, changes: Changes) -> None:
        """A write announced before a commit that failed: nothing to apply, readers may build again."""
        self._spawn(self.live.apply(LiveOps.touching(changes.live.by_entity), announced=True),
                    "withdrawal of an announced write")

    async def apply(self, changes: Changes, *, announced: bool) -> None:
        async def live_changes(pipe: Pipeline) -> None:
            await self.live.queue_apply(pipe, changes.live, announced=announced)

        # First: a reader that sees what follows reads a replica holding it. A raise whose loss could not be
        # contained has found no Redis to send the rest to either: it is left to the recovery too.
        if self.wal_floor is not None and not await self.wal_floor.raise_after_commit():
            return
        # The marks in no order with the rest: sent beside the invalidation, the two share a round trip (what
        # is sent at the same moment goes out together, cache/redis/coalesce.py).
        steps = [self.revalidator.mark_many(changes.marks)] if self.revalidator is not None and changes.marks else []
        refreshing = refreshing_now()
        if refreshing is not None:  # a write answered over HTTP: as its graces end (cache/refresh.py), or, closing,
            refreshing.messages.extend(changes.messages)  # with its moves
        if self.invalidation:
            steps.append(self.cache.invalidate_tags(changes.tags, also=live_changes if changes.live else None))
        await asyncio.gather(*steps)
        if changes.messages and refreshing is None:
            await publish_quietly(self.cache.redis, changes.messages)
