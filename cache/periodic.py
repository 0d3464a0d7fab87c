"""A background loop owned by the lifespan: runs one round every `interval` seconds; a failing round is
logged and the next one tried, so the loop never dies of one error (Redis or the database away)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from redis.exceptions import RedisError

log = logging.getLogger(__name__)


class Periodic:
    # How the loop waits between rounds; a test replaces it to see the interval asked for without waiting it.
    sleep: Callable[[float], Awaitable[None]] = staticmethod(asyncio.sleep)

    def __init__(self, name: str, interval: float, round_: Callable[[], Awaitable[Any]]) -> None:
        self.name = name
        self.interval = interval
        self._round = round_
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._in_round = False
        self.failed = 0  # rounds that raised, since start

    def start(self) -> None:
        if self._task is None:
            self._stopping = False
            self._task = asyncio.create_task(self._loop(), name=self.name)

    async def _loop(self) -> None:
        while True:
            await self.sleep(self.interval)
            self._in_round = True
            try:
                done = await self._round()
                if done:
                    log.info("%s: %s", self.name, done)
            except (RedisError, OSError) as exc:
                self.failed += 1
                log.warning("%s round failed, retrying next round: %s", self.name, exc)
            except Exception:
                self.failed += 1
                log.exception("%s round failed", self.name)
            finally:
                self._in_round = False
            # A cancellation that lands as a round's timeout fires comes out as that timeout (asyncio's and
            # redis-py's timeouts do this in Python 3.11), which the handling above takes for a failed round:
            # without this the loop would go on and `stop()` wait for ever (found under load by
            # tests/cache/test_revalidator.py). A cancellation during the sleep ends the loop as usual.
            if self._stopping:
                return

    async def stop(self, *, finish_round: float = 0.0) -> None:
        """End the loop. `finish_round`: a round under way may finish within that many seconds (a graceful
        shutdown: what it took from a queue is done and acknowledged, not left leased) before it is cancelled."""
        if self._task is not None:
            self._stopping = True
            if self._in_round and finish_round > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(self._task), finish_round)
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()
