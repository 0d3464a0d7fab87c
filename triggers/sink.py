"""Where committed changes go: tags invalidated at once, counters marked for the revalidator.
Nothing here raises into the writer: a Redis failure never fails a mutation."""

from __future__ import annotations

import asyncio
import logging

from cache.revalidator import CacheRevalidationManager
from cache.store import Cache
from triggers.changes import Changes

log = logging.getLogger(__name__)


class CacheSink:
    def __init__(self, cache: Cache, revalidator: CacheRevalidationManager | None) -> None:
        self.cache = cache
        self.revalidator = revalidator
        self._running: set[asyncio.Task[None]] = set()

    def schedule(self, changes: Changes) -> asyncio.Task[None] | None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a synchronous script committed: nothing is cached in its process
            log.warning("commit outside an event loop; cache tags not invalidated: %s", sorted(changes.tags))
            return None
        task = loop.create_task(self.apply(changes))
        self._running.add(task)  # keep a reference until done (asyncio keeps only weak ones)
        task.add_done_callback(self._running.discard)
        return task

    async def apply(self, changes: Changes) -> None:
        await self.cache.invalidate_tags(changes.tags)
        if self.revalidator is not None and changes.marks:
            await self.revalidator.mark_many(changes.marks)
