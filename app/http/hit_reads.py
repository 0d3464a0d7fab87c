"""The reads that response-cache hits answered, counted together: a hit of a shout still counts its view
and enters a signed-in reader's history, but not on its own.

A hit is answered from one Redis GET. Counting its read there and then costs it two more round trips
(the session checked, to know whose history; then the view and the history) and the CPU they take,
which the next hits wait for: a signed-in hit of `get_shout` ran at about a third of the rate of the
other hits. Here a hit only notes its read, and a flush, `interval` seconds after the first read noted
since the last one (or at once when `max_pending` are waiting), counts them all:

- each session token among them is checked once, all of them in one round trip (a token that does not
  check out, or cannot be checked because Redis does not answer, reads as a guest, as before);
- each shout is counted once per reader (the view counts once per reader and hour anyway, and the
  history keeps a shout once), every count and history entry in one round trip.

What a crash may lose: the reads of the last `interval` seconds (at most `max_pending` reads). A
graceful stop (SIGTERM, app/graceful.py) flushes them before the views are written to the database.
One count runs at a time; while it runs, at most `max_pending` more reads wait, and beyond that a read is
not counted (`discours_hit_reads_dropped_total`): input from clients never grows what is held without a
bound (two batches at most).
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from redis.exceptions import RedisError

from cache.live.views import client_key
from resolvers import histories
from resolvers.deps import Deps
from telemetry import metrics

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class HitRead:
    shout_ids: tuple[int, ...]
    guest: str  # who reads when no session proves otherwise (schema/context.py `reader_of`)
    token: str | None  # the session token the request carried, checked at the flush


class HitReads:
    def __init__(self, deps: Deps, *, interval: float = 0.25, max_pending: int = 10_000) -> None:
        self.deps = deps
        self.interval = interval
        self.max_pending = max_pending
        self._pending: list[HitRead] = []
        self._timer: asyncio.TimerHandle | None = None
        self._flushing: set[asyncio.Task[int]] = set()

    def add(self, read: HitRead) -> None:
        """Note a hit's read; it is counted by the next flush."""
        if len(self._pending) >= self.max_pending:
            metrics.HIT_READS_DROPPED.inc()
            return
        self._pending.append(read)
        if len(self._pending) >= self.max_pending:
            self._flush_soon(0)
        elif self._timer is None:
            self._flush_soon(self.interval)

    def _flush_soon(self, delay: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(delay, self._start_flush)

    def _start_flush(self) -> None:
        self._timer = None
        if self._flushing:  # one count at a time: what is noted meanwhile waits for the next (and its bound)
            self._flush_soon(self.interval)
            return
        task = asyncio.ensure_future(self._count())
        self._flushing.add(task)
        task.add_done_callback(self._flushing.discard)

    async def flush(self) -> int:
        """Count every read noted so far, once the counts already under way are done: how many reads this
        call counted."""
        if self._flushing:
            await asyncio.gather(*self._flushing, return_exceptions=True)
        return await self._count()

    async def _count(self) -> int:
        """Count the reads waiting; how many. Never raises: their answers were sent."""
        reads, self._pending = self._pending, []
        if not reads:
            return 0
        try:
            readers = await self._readers({read.token for read in reads if read.token is not None})
            shouts: dict[tuple[int | None, str], dict[int, None]] = defaultdict(dict)  # ordered, once each
            for read in reads:
                reader = readers.get(read.token) if read.token is not None else None
                client = client_key(reader, None, None) if reader is not None else read.guest
                shouts[reader, client].update(dict.fromkeys(read.shout_ids))
            await asyncio.gather(*(histories.count_views(self.deps, reader, client, list(ids))
                                   for (reader, client), ids in shouts.items()))
        except Exception:
            log.exception("the reads of %d response-cache hits were not counted", len(reads))
        return len(reads)

    async def _readers(self, tokens: set[str]) -> dict[str, int]:
        """The author of each token's valid session, all checked together (one round trip)."""
        auth = self.deps.auth
        if auth is None or not tokens:
            return {}
        ordered = list(tokens)
        checked = await asyncio.gather(*(auth.sessions.validate(token) for token in ordered), return_exceptions=True)
        readers = {}
        for token, session in zip(ordered, checked, strict=True):
            if isinstance(session, RedisError):
                continue  # not checked: a guest's read, as a session Redis cannot answer for reads elsewhere
            if isinstance(session, BaseException):
                raise session
            if session is not None:
                readers[token] = session.user_id
        return readers

    async def stop(self) -> None:
        """Count what is waiting and what is being counted (a graceful stop)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        await self.flush()


def hit_reads_of(app: Any) -> HitReads:
    """The app's one HitReads (app/main.py `attach_shared`)."""
    reads: HitReads = app.state.hit_reads
    return reads


async def stop_hit_reads(app: Any) -> None:
    """Count the reads still waiting, if any hit noted one (a graceful stop)."""
    reads = getattr(app.state, "hit_reads", None)
    if reads is not None:
        await reads.stop()
