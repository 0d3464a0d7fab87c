"""At most `in_flight` state-changing requests of a worker run at once (WRITES_IN_FLIGHT): the next wait
for a turn, at most `wait` seconds (WRITE_WAIT_SECONDS), then are answered 503 SERVICE_UNAVAILABLE with
`Retry-After`, having changed nothing. At most `waiting` of them wait (WRITES_WAITING): the next is
answered so at once.

Why: a write costs a worker some ten times the CPU of a warm read and a hundred times a hit (a comment:
nine SQL statements, its invalidation, its live structures and notifications). Offered more writes than
it can do, a worker without a bound takes them all at once: each waits behind the others, and the reads
wait behind all of them (bench/RESULTS.md, figures behind the code's rules).
With the bound, the writes beyond what the worker does are refused in `wait` seconds, told to retry, and
the readers keep the CPU the admitted writes leave them. A client that gets 503 may send the write again:
nothing of it was done (the refusal comes before its execution). The wait (10 s by default) is long
enough to ride out a Redis or PostgreSQL failover, when the writes holding the turns wait too
(tests/drills/test_redis_cluster_failover.py: every write done); it ends before REQUEST_TIMEOUT.

A bound on the writes' share of the worker's time while readers wait for it (WRITE_SHARE, 0.5 by
default). One write at a time still takes the worker whole when writes keep coming, since the next starts
as soon as the last ends, and the reads get what the writes' waits on PostgreSQL and Redis leave them
(about half their read-only rate in the mixed bench, whatever a write costs: a cheaper write is followed
by more writes). With a share `s`, a write that held its turn `w` seconds is followed by a pause of
`w * (1 - s) / s` before the next turn (at most MAX_PAUSE: a turn held long was spent waiting, not
computing). The pause is only taken while reads are being answered (`Readers`, counted by the response
front around a hit and by the view around a query it answers): a write delays no one while the worker has
nothing else to do, so an idle worker does its writes one after the other as before, and the bound only
divides a busy one. Writes then hold turns at most `s` of the time the readers compete for, and so bound
the CPU they take with the misses they make; the writes past that wait, and are refused as above. Nothing
is refused for it while writes come slower than the share lets through. Under more writes than the
worker does, half its time goes to the readers by default (bench/RESULTS.md, reads under writes: 0.73 of
their read-only rate on one worker with the bound, 0.52-0.56 without); WRITE_SHARE=1 lets through every
write the waits allow, the readers getting what the writes leave.

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
        self.wait = wait
        self.waiting = waiting
        self.share = share
        self.readers = readers or Readers()
        self._turns = asyncio.Semaphore(in_flight) if in_flight > 0 else None
        self._waiters = 0
        self._next_turn = 0.0  # loop time before which no turn starts (the pause after the last write)

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """A turn to run a state-changing request, or Refused (503): after `wait` seconds without one, or at
        once when `waiting` writes wait already."""
        if self._turns is None:
            yield
            return
        loop = asyncio.get_running_loop()
        if (self._turns.locked() or self._pause(loop.time())) and self._waiters >= self.waiting:
            raise _refused()
        deadline = loop.time() + self.wait
        self._waiters += 1
        try:
            await asyncio.wait_for(self._turns.acquire(), self.wait)
        except TimeoutError:
            raise _refused() from None
        finally:
            self._waiters -= 1
        try:
            if (pause := self._pause(loop.time())) > 0:
                if self._next_turn > deadline:
                    raise _refused()
                await asyncio.sleep(pause)
            started = loop.time()
            try:
                yield
            finally:
                if self.share < 1:
                    pause = (loop.time() - started) * (1 - self.share) / self.share
                    self._next_turn = loop.time() + min(pause, MAX_PAUSE)
        finally:
            self._turns.release()

    def _pause(self, now: float) -> float:
        """Seconds the next turn waits after the last write: none while no read is being answered (the pause
        would give the time to no one)."""
        return max(self._next_turn - now, 0.0) if self.readers.count else 0.0


def _refused() -> Refused:
    metrics.WRITES_REFUSED.inc()
    return Refused(503, SERVICE_UNAVAILABLE, "The server has more writes to do than it can take now; nothing was "
                   "changed: send it again shortly", {"Retry-After": "1"})
