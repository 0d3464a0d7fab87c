"""Single flight for whole answers: identical requests that miss the response cache together (many readers
right after an invalidation of a hot query) wait for the first one's computation in this worker instead
of computing the answer again, each (stampede protection), and are given what it kept."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")
K = TypeVar("K")


class SingleFlight(Generic[K]):
    """`K`: what a computation kept (cache/response.py `Kept`)."""

    def __init__(self) -> None:
        # Computations under way, by response key; each future gives what the computation kept, if anything.
        self._running: dict[str, asyncio.Future[K | None]] = {}

    async def kept_meanwhile(self, key: str) -> K | None:
        """What an identical computation under way kept, once it is done; None when there was none or it
        kept nothing. It began before this request, perhaps before a write this reader must see: what it
        kept is given only as the store found it, current when it was kept (after this request began) or to
        be looked up (cache/response.py `Kept`)."""
        running = self._running.get(key)
        return None if running is None else await asyncio.shield(running)

    async def lead(self, key: str, compute: Callable[[], Awaitable[tuple[T, K | None]]]) -> T:
        """`compute()` (the answer, and what was kept of it), with the requests that arrive meanwhile
        waiting for it; one that fails or is cancelled lets them compute for themselves."""
        future: asyncio.Future[K | None] = asyncio.get_running_loop().create_future()
        self._running[key] = future
        try:
            answer, kept = await compute()
            future.set_result(kept)
            return answer
        finally:
            if self._running.get(key) is future:
                del self._running[key]
            if not future.done():
                future.set_result(None)

    def __len__(self) -> int:
        return len(self._running)
