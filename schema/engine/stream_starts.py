"""Subscriptions start a few at a time in a worker, so that a burst of them shares the loop with everyone else.

Starting a subscription is a millisecond of the loop's time (reading the request, parsing and validating
its document, checking who may listen, subscribing to the hub), spread over a dozen turns of the loop.
Three hundred started together each take a step at every turn, and a turn then lasts tens of
milliseconds: a bystander's request, which needs a few turns, waits a tenth of a second or more. In turns,
at most `at_once` starts run together; the others wait for a turn without touching the loop.

A start holds its turn until it is subscribed (`started`, called where the hub subscription is made), until
its stream yields a first result (a refusal, or an operation that is not a subscription), until it ends, or
for `hold` seconds at most: a start that long is waiting for a service, not using the loop, and the next one
may go. A turn taken inside another one still held (an event stream's request takes one before any of its
work, then its stream would take another) is the outer one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING, TypeVar

from ambient import STREAM_TURN

if TYPE_CHECKING:
    from config.settings import SubscriptionSettings

T = TypeVar("T")


class Turn:
    """One start's turn, given back once, by whichever comes first."""

    __slots__ = ("_slots", "_timer")

    def __init__(self, slots: asyncio.Semaphore, hold: float) -> None:
        self._slots: asyncio.Semaphore | None = slots
        self._timer = asyncio.get_running_loop().call_later(hold, self.end)

    @property
    def live(self) -> bool:
        return self._slots is not None

    def end(self) -> None:
        if self._slots is not None:
            self._slots.release()
            self._slots = None
            self._timer.cancel()


def started() -> None:
    """The current subscription is subscribed: its turn goes to the next start."""
    turn = STREAM_TURN.get()
    if turn is not None:
        turn.end()


class StreamStarts:
    """See the module's docstring. `at_once`: starts run together (SUBSCRIPTION_STARTS_AT_ONCE); `hold`:
    seconds a start may keep its turn (SUBSCRIPTION_START_HOLD)."""

    def __init__(self, at_once: int, hold: float) -> None:
        self.at_once = at_once
        self.hold = hold
        # A semaphore belongs to the loop it first waits in; an app served again (tests) runs in a new one.
        self._slots: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def of(cls, settings: SubscriptionSettings) -> StreamStarts:
        return cls(settings.subscription_starts_at_once, settings.subscription_start_hold)

    def _slots_here(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._slots is None or self._loop is not loop:
            self._slots, self._loop = asyncio.Semaphore(self.at_once), loop
        return self._slots

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Wait for a turn and hold it within: see the module's docstring."""
        current = STREAM_TURN.get()
        if current is not None and current.live:
            yield
            return
        slots = self._slots_here()
        await slots.acquire()
        turn = Turn(slots, self.hold)
        # Left set once ended (an ended turn is no one's): a generator closed later, from another task's
        # context, has nothing to reset there.
        STREAM_TURN.set(turn)
        try:
            yield
        finally:
            turn.end()

    async def paced(self, source: AsyncGenerator[T, None]) -> AsyncGenerator[T, None]:
        """`source`, its start (up to its first result) in a turn; closed with it."""
        try:
            async with self.turn():
                try:
                    first = await anext(source)
                except StopAsyncIteration:
                    return
            yield first
            async for result in source:
                yield result
        finally:
            await source.aclose()
