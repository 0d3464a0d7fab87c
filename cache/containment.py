"""Lost writes contained: an invalidation or live update that did not reach Redis never lets a value computed
before it be served after it.

A write whose invalidation was lost (`lose_write`) forgets the global and live epochs wherever a server
answers before it answers, so that every value and response computed before is a miss; a loss left
uncontained is forgotten again as soon as Redis answers this worker (`recover_if_needed`, and in the
background `recover_quietly`). `Cache` (cache/store.py) is one of these: the state below is a cache's.
"""

from __future__ import annotations

import asyncio
import logging
import time
from contextlib import suppress
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from cache import keys
from cache.redis.client import unreachable
from telemetry import metrics

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from cache.generations import CacheStats
    from cache.redis.client import RedisGuard

log = logging.getLogger(__name__)

# A write whose invalidation was lost waits for the loss to be contained before it answers (`Cache.lose_write`),
# trying every LOST_WRITE_RETRY seconds: up to LOST_WRITE_WAIT (REDIS_LOST_WRITE_WAIT) while a server refuses
# for now, up to UNREACHABLE_WRITE_WAIT (REDIS_UNREACHABLE_WRITE_WAIT) while none answers at all. A loss left
# uncontained is tried again every LOST_WRITE_RECOVERY seconds in the background (`Cache.recover_quietly`).
LOST_WRITE_WAIT = 10.0
UNREACHABLE_WRITE_WAIT = 1.0
LOST_WRITE_RETRY = 0.05
LOST_WRITE_RECOVERY = 0.5


class LostWrites:
    """A cache's containment of lost writes (mixed into `Cache`)."""

    redis: Redis
    state: Redis
    guard: RedisGuard
    stats: CacheStats

    def contain_losses(self, lost_write_wait: float, unreachable_write_wait: float) -> None:
        """The containment's state, none lost yet."""
        self._lost_invalidations = False
        self._losses = 0  # invalidations lost so far: a forgetting clears the flag only if none came since
        self._forgetting: asyncio.Task[tuple[list[BaseException], int]] | None = None  # joined (`_forget_joined`)
        self.lost_write_wait = lost_write_wait
        self.unreachable_write_wait = unreachable_write_wait

    @property
    def lost_invalidations(self) -> bool:
        """Whether an invalidation or live update failed and the epochs have not been bumped since."""
        return self._lost_invalidations

    def lose(self, exc: BaseException, what: str) -> None:
        """A write's invalidation or live update did not reach Redis: trust nothing until it is back."""
        self._losses += 1
        self._lost_invalidations = True
        metrics.LOST_INVALIDATIONS.inc()
        self.stats.errors += 1
        self.guard.trip(exc, what)  # whatever the error: until the loss is contained nothing cached is trusted

    async def lose_write(self, exc: BaseException, what: str) -> None:
        """`lose`, and before the write answers, the loss contained: every epoch forgotten wherever a
        server answers, by a command each, tried again every `LOST_WRITE_RETRY` seconds until every one is
        forgotten. UNLINK, which a full Redis (`noeviction`) still takes. Contained, nothing is left to
        recover.

        Why wait at all: other workers may be reading a server this one did not reach. On a Redis Cluster
        that lost a master the others go on serving every worker, and a write whose pipeline failed on the
        lost one may have left its updates undone on them too; a cluster failing over refuses every command
        (CLUSTERDOWN) and serves again after: tried up to `lost_write_wait`. Behind Sentinel the workers
        find the promoted replica at different moments: the first to reach it moves the epochs there
        (cache/failover.py), which covers every write lost before, but not one this worker loses just
        after, its attempt still sent to the dead master or told that no master is named yet, while
        another worker reads the promoted one (a test drill found such reads stale). So a loss where no
        server answered is tried again too, up to `unreachable_write_wait`, long enough for this worker to
        find the new master. A server no worker reaches (an outage) costs each write that wait; the loss
        is then left to the recovery, which tries again in the background (`recover_quietly`) and before
        this worker reads Redis again."""
        self.lose(exc, what)
        mine, started = self._losses, time.monotonic()
        while True:
            failed, covered = await self._forget_joined()
            if not failed:
                if covered >= mine:
                    break
                continue  # the forgetting joined began before this loss: the next one covers it
            waited = time.monotonic() - started
            if waited >= self.lost_write_wait or (
                    waited >= self.unreachable_write_wait and all(unreachable(error) for error in failed)):
                return
            await asyncio.sleep(LOST_WRITE_RETRY)
        metrics.LOST_WRITES_CONTAINED.inc()
        log.warning("an update lost during %s was contained: the cache and live epochs were forgotten", what)

    async def recover_if_needed(self) -> None:
        """After an invalidation or a live update was lost, forget the global epoch and the epochs of the
        live structures before trusting Redis again: everything computed before is then a miss. Raises
        what failed."""
        while self._lost_invalidations:
            failed, _ = await self._forget_joined()
            if failed:
                raise failed[0]

    async def recover_quietly(self) -> None:
        """`recover_if_needed` as a background round (the lifespan's, every LOST_WRITE_RECOVERY seconds): a
        loss a write left behind is contained as soon as Redis answers this worker, not at its next read.
        A Redis still away is tried again next round (its failures trip the breaker, and are counted)."""
        with suppress(RedisError):
            await self.recover_if_needed()

    async def _forget_joined(self) -> tuple[list[BaseException], int]:
        """The epochs forgotten (`_forget_epochs`) once for every caller at this moment: the writes that lost
        their invalidation and the readers that found a loss join the forgetting under way (each forgetting
        them again would make a miss of what the others stored meanwhile). What failed, and how many losses
        it covers: those before it began (a caller whose loss came later starts another). The flag goes
        down when it covered every loss so far."""
        if self._forgetting is None:
            self._forgetting = asyncio.create_task(self._forget_after_losses())
        return await asyncio.shield(self._forgetting)

    async def _forget_after_losses(self) -> tuple[list[BaseException], int]:
        try:
            covered = self._losses
            failed = await self._forget_epochs()
            if not failed and self._losses == covered and self._lost_invalidations:
                self._lost_invalidations = False
                log.warning("cache and live epochs forgotten after lost writes")
            return failed, covered
        finally:
            self._forgetting = None

    async def _forget_epochs(self) -> list[BaseException]:
        """Every live kind's epoch and the WAL floor, then the global epoch, unlinked by a command each (sent
        together); each epoch starts again at random when next read, which nothing stored before can match,
        and the floor again from the primary's position, past every commit so far (cache/wal_floor.py).
        Those first: a reader that sees the new global epoch sees the new live epochs too, so it cannot
        store a value built from the old structures under the new stamp, nor one read from a replica that
        lacks the lost write. What failed, having tried all (`lose_write` tries again)."""
        # a command of one key each: a cluster client's `unlink` splits its keys by slot into a pipeline
        live = await asyncio.gather(*(self.state.execute_command("UNLINK", key)
                                      for key in (*map(keys.live_epoch, keys.LIVE_KINDS), keys.wal_floor())),
                                    return_exceptions=True)
        stamps = await asyncio.gather(self.redis.execute_command("UNLINK", keys.generation(keys.GLOBAL_TAG)),
                                      return_exceptions=True)
        # then the invalidation clock, or a response found current at its value would skip the check that
        # now fails on the epoch (cache/response/responses.py); after the epoch, not with it: a hit in between would
        # find the old epoch current and start the clock again at a value no move of the epoch then changes
        clock = await asyncio.gather(self.redis.execute_command("UNLINK", keys.invalidation_clock()),
                                     return_exceptions=True)
        return [result for result in (*live, *stamps, *clock) if isinstance(result, BaseException)]
