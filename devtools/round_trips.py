"""Counting Redis round trips as they happen on the wire, for the bench and the tests: every write of
commands to a connection is one (a single command, a pipeline, a batch of coalesced commands
(cache/redis/coalesce.py), a script call), whichever client or layer sent it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from redis.asyncio.connection import AbstractConnection

from cache.redis.seam import SentWithoutATask


@contextlib.contextmanager
def redis_round_trips() -> Iterator[list[int]]:
    """A one-item list holding the number of round trips sent meanwhile, by this process: by redis-py's
    connections and by the project's own (cache/redis/seam.py `SentWithoutATask`, which may hand a send to
    redis-py's: counted once, where it began)."""
    sent = [0]
    send, send_at_once = AbstractConnection.send_packed_command, SentWithoutATask.send_packed_command

    async def counted(self: AbstractConnection, *args: Any, **kwargs: Any) -> None:
        if not isinstance(self, SentWithoutATask):
            sent[0] += 1
        await send(self, *args, **kwargs)

    async def counted_at_once(self: SentWithoutATask, *args: Any, **kwargs: Any) -> None:
        sent[0] += 1
        await send_at_once(self, *args, **kwargs)

    AbstractConnection.send_packed_command = counted  # type: ignore[method-assign]
    SentWithoutATask.send_packed_command = counted_at_once  # type: ignore[method-assign]
    try:
        yield sent
    finally:
        AbstractConnection.send_packed_command = send  # type: ignore[method-assign]
        SentWithoutATask.send_packed_command = send_at_once  # type: ignore[method-assign]
