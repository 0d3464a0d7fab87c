"""Single flight for whole answers: identical requests that miss the response cache together (many readers
right after an invalidation of a hot query) wait for the first one's computation in this worker instead
of computing the answer again, each (stampede protection)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


class SingleFlight:
    def __init__(self) -> None:
        # Computations under way, by response key; each future says whether the answer was stored.
        self._running: dict[str, asyncio.Future[bool]] = {}

    async def stored_meanwhile(self, key: str) -> bool:
        """Whether an identical computation was under way and stored its answer: look it up again then.
        It is looked up rather than taken as it is: the computation began before this request, perhaps
        before a write this reader must see, and the stored answer's stamp says whether it did."""
        running = self._running.get(key)
        return running is not None and await asyncio.shield(running)

    async def lead(self, key: str, compute: Callable[[], Awaitable[tuple[T, bool]]]) -> T:
        """`compute()` (the answer, and whether it was stored), with the requests that arrive meanwhile
        waiting for it; one that fails or is cancelled lets them compute for themselves."""
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._running[key] = future
        try:
            answer, stored = await compute()
            future.set_result(stored)
            return answer
        finally:
            if self._running.get(key) is future:
                del self._running[key]
            if not future.done():
                future.set_result(False)

    def __len__(self) -> int:
        return len(self._running)
