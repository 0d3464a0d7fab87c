"""Single flight for whole answers: identical requests that miss the response cache together (many readers
right after an invalidation of a hot query) wait for the first one's computation in this worker instead
of computing the answer again, each (stampede protection).

A computation under way (a `Flight`) gives those waiting two things, each as soon as it exists:

- the answer as it is computed, with the invalidation clock the computing request read before it began
  (`Computed`). A waiter is given it at once when the computation began after the waiter did (it read
  everything acknowledged before the waiter began), or when the waiter's own look-up read the same clock
  (no invalidation came between the two look-ups, so every write acknowledged before the waiter began had
  moved its generations before the computation read anything);
- what was kept of it, once the store has answered (cache/response/responses.py `Kept`), for the others: current when
  it was kept, after they began, or to be looked up.

A waiter given neither (a write came while the computation ran, so nothing was kept) waits for the next
computation, begun after it, rather than starting one of its own: under a comment every 10 ms on a hot
page, every such waiter computed the page at once, each computation was outdated by the next comment
before it was kept, and most reads of the page were computations (bench/mixed.py, two workers: 16% of
all reads, the page being 20% of them).

The answer is published before it is kept, and the computing request goes on without waiting for the store:
the store is sent after its answer (`Flight.keep`), and the flight stays open until the store has answered,
so that identical requests arriving meanwhile still join it rather than compute again."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

# Computations a request waits for one after another, each of which ended with nothing it could be given
# (a write outdated one begun before it, or an answer with errors, which is not shared), before it computes
# its own: a bound on its wait.
FLIGHTS_JOINED = 3

T = TypeVar("T")
A = TypeVar("A")  # an answer as computed (cache/response/responses.py `Hit`)
K = TypeVar("K")  # what the store kept of it (cache/response/responses.py `Kept`)


@dataclass(frozen=True, slots=True)
class Computed(Generic[A]):
    answer: A
    clock: bytes | None  # the invalidation clock the computing request's look-up read, before it read anything


def flight_clock() -> float:
    """When a request or a computation began, on the clock `Flight.answer_for` compares them by."""
    return time.perf_counter()


class Flight(Generic[A, K]):
    """One computation under way, begun at `began` (`flight_clock`)."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.began = flight_clock()
        loop = asyncio.get_running_loop()
        self.computed: asyncio.Future[Computed[A] | None] = loop.create_future()
        self.kept: asyncio.Future[K | None] = loop.create_future()

    def publish(self, computed: Computed[A] | None) -> None:
        if not self.computed.done():
            self.computed.set_result(computed)

    async def answer_for(self, clock: bytes | None, began: float) -> A | None:
        """The answer, for a request begun at `began` whose look-up read `clock`, if it may have it as
        computed: the computation began after the request did, or read the same clock."""
        computed = await asyncio.shield(self.computed)
        if computed is None:
            return None
        if self.began > began or (clock is not None and computed.clock == clock):
            return computed.answer
        return None

    def found(self, answer: A, looked: float) -> None:
        """Publish an answer a look-up begun at `looked` found (another worker computed it, cache/response/responses.py
        `ResponseCache.claim`): given to those who began before the look-up, as a computation's would be."""
        self.began = looked
        self.publish(Computed(answer, None))

    async def kept_meanwhile(self) -> K | None:
        """What the store kept, once it has answered; None when nothing was kept."""
        return await asyncio.shield(self.kept)

    def close(self, kept: K | None) -> None:
        """Settle what waiters are given: nothing as computed if it was not published, and `kept` (None:
        nothing) as kept."""
        self.publish(None)
        if not self.kept.done():
            self.kept.set_result(kept)


class SingleFlight(Generic[A, K]):
    def __init__(self) -> None:
        self._running: dict[str, Flight[A, K]] = {}

    def joined(self, key: str) -> Flight[A, K] | None:
        """The identical computation under way, if there is one."""
        return self._running.get(key)

    async def answer_of(self, key: str, clock: bytes | None, began: float,
                        from_kept: Callable[[K], Awaitable[A | None]], *, joined: int = 0) -> tuple[A | None, int]:
        """The answer of the identical computations under way, for a request begun at `began` whose look-up
        read `clock`, and how many computations it has waited for in all: as computed when it may have it
        (`Flight.answer_for`), else as kept (`from_kept`: what the store kept, current when it was, after the
        request began), waiting for the next computation when a write left one nothing, until FLIGHTS_JOINED
        of them (`joined` of them before this call). No answer: there is no computation, or none gave it."""
        while joined < FLIGHTS_JOINED:
            flight = self._running.get(key)
            if flight is None:
                break
            joined += 1
            answer = await flight.answer_for(clock, began)
            if answer is None and (kept := await flight.kept_meanwhile()) is not None:
                answer = await from_kept(kept)
            if answer is not None:
                return answer, joined
        return None, joined

    async def lead(self, key: str, compute: Callable[[Flight[A, K]], Awaitable[T]]) -> T:
        """`compute(flight)`, with the requests that arrive meanwhile waiting for it. `compute` publishes its
        answer (`Flight.publish`) and either ends the flight (`end`) or leaves it to whoever keeps the
        answer later (`keep`); one that fails or is cancelled ends it, and they compute for themselves."""
        flight: Flight[A, K] = Flight(key)
        self._running[key] = flight
        try:
            return await compute(flight)
        except BaseException:
            self.end(flight, None)
            raise

    def end(self, flight: Flight[A, K], kept: K | None) -> None:
        """The flight is over: `kept` is what the store kept (None: nothing); new requests compute again."""
        flight.close(kept)
        if self._running.get(flight.key) is flight:
            del self._running[flight.key]

    async def keep(self, flight: Flight[A, K], store: Callable[[], Awaitable[K | None]]) -> None:
        """Run `store` (after the computing request's answer has gone out) and end the flight with what it
        kept; a store that fails or is cancelled ends it with nothing kept."""
        kept = None
        try:
            kept = await store()
        finally:
            self.end(flight, kept)

    def __len__(self) -> int:
        return len(self._running)
