"""At most `in_flight` state-changing requests of a worker run at once (WRITES_IN_FLIGHT): the next wait
for a turn, at most `wait` seconds (WRITE_WAIT_SECONDS), then are answered 503 SERVICE_UNAVAILABLE with
`Retry-After`, having changed nothing. At most `waiting` of them wait (WRITES_WAITING): the next is
answered so at once.

Why side by side: a write spends most of its time waiting for PostgreSQL and Redis, and, under reads, for its
turns of the event loop. Taken one at a time, each waited for every write before it: on a busy page a comment
waited seconds for its turn (bench/RESULTS.md, a comment alone and on a busy page).
Writes of different viewers do not wait for one another now; what they change is kept consistent by the
database (row locks, the vote's advisory lock), as it is between workers.

Why a bound at all: a write costs a worker some ten times the CPU of a warm read and a hundred times a hit.
Offered more writes than it can do, a worker without a bound takes them all at once: each waits behind the
others, and the reads wait behind all of them. With the bound, the writes beyond what the worker does are
refused in `wait` seconds, told to retry, and the readers keep the CPU the admitted writes leave them. A
client that gets 503 may send the write again: nothing of it was done (the refusal comes before its
execution). The wait (10 s by default) is long enough to ride out a Redis or PostgreSQL failover, when the
writes holding the turns wait too (tests/drills/test_redis_cluster_failover.py: every write done); it ends
before REQUEST_TIMEOUT.

A bound on the writes' share of a flooded worker's time while readers wait for it (WRITE_SHARE, 0.5 by
default). Offered more writes than its turns take (a write ends while others wait for a turn), a worker would
give the writes all its time, the next starting as soon as the last ends. So a write that others waited for,
having held its turn `w` seconds, is followed by a pause of `w * (1 - s) / s` before the next turn is given
(at most MAX_PAUSE: a turn held long was spent waiting, not computing). The pause is only taken while reads
are being answered (`Readers`, counted by the response front around a hit and by the view around a query it
answers): a write delays no one while the worker has nothing else to do. Writes that come slower than the
turns take them never pause: the pause is for a flood, whose writes past it wait, and are refused as above.
WRITE_SHARE=1 lets through every write the turns allow, the readers getting what the writes leave.

Why a bound on the waiting too: offered writes faster than it does them, a worker held every one that
arrived within the wait, each with its request and task (at 250 writes a second past a worker's 100, a
backlog of some 1,500), and its memory grew with the backlog (the soak, bench/soak.py). Past `waiting`
a write is refused at once, and what the worker holds for the writes it has not begun stays bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from app.http.guards import SERVICE_UNAVAILABLE, Refused
from telemetry import metrics

# A write that held its turn long was waiting (a failover, a lock), not taking the worker's CPU: the pause
# after it is at most this many seconds, or the writes after a stall would be refused for longer still.
MAX_PAUSE = 1.0


class Readers:
    """How many reads a worker is answering now: a hit the response front serves (app/http/response_front.py)
    and a query the view answers (app/http/graphql_view.py). Not a stream being sent: a subscriber waiting for
    events waits for no CPU. Counted inline rather than by a context manager: a hit is a few hundred
    microseconds, and this is on its path."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0


class WriteGate:
    def __init__(self, in_flight: int, wait: float, waiting: int = 64, share: float = 1.0,
                 readers: Readers | None = None) -> None:
        """`in_flight` 0: no bound (and none on the waiting, nor on the share, either). `share` 1: no pause
        after a write. `readers`: the reads in flight the share's pause yields to."""
        self.in_flight = in_flight
        self.wait = wait
        self.waiting = waiting
        self.share = share
        self.readers = readers or Readers()
        self._changed = asyncio.Condition()
        self._running = 0
        self._waiters = 0
        self._next_turn = 0.0  # loop time before which no turn is given (the readers' pause)

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """A turn to run a state-changing request, or Refused (503): after `wait` seconds without one, or at
        once when `waiting` writes wait already."""
        if self.in_flight <= 0:
            yield
            return
        loop = asyncio.get_running_loop()
        if not self._free(loop.time()):
            if self._waiters >= self.waiting:
                raise _refused()
            await self._wait_for_turn(loop)
        self._running += 1
        began = loop.time()
        try:
            yield
        finally:
            self._running -= 1
            if self._waiters and self.share < 1:
                # writes come faster than the turns take them: the readers get their share first
                pause = (loop.time() - began) * (1 - self.share) / self.share
                self._next_turn = max(self._next_turn, loop.time() + min(pause, MAX_PAUSE))
            async with self._changed:  # never contended across an await: taken at once
                self._changed.notify_all()

    async def _wait_for_turn(self, loop: asyncio.AbstractEventLoop) -> None:
        deadline = loop.time() + self.wait
        self._waiters += 1
        try:
            async with self._changed:
                while not self._free(now := loop.time()):
                    if now >= deadline or (self._next_turn > deadline and self.readers.count):
                        raise _refused()  # no turn within the wait: refused now rather than at its end
                    # a turn taken is given back with a notification; the pause ends at its time
                    until = self._next_turn if self._next_turn > now and self.readers.count else deadline
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._changed.wait(), max(until - now, 0.001))
        finally:
            self._waiters -= 1

    def _free(self, now: float) -> bool:
        """A turn is free: fewer than `in_flight` taken, and no pause. A pause holds only while reads are being
        answered (it would give the time to no one else)."""
        return self._running < self.in_flight and (now >= self._next_turn or not self.readers.count)


def _refused() -> Refused:
    metrics.WRITES_REFUSED.inc()
    return Refused(503, SERVICE_UNAVAILABLE, "The server has more writes to do than it can take now; nothing was "
                   "changed: send it again shortly", {"Retry-After": "1"})
