"""Counting Redis round trips as they happen on the wire, for the bench and the tests: every write of
commands to a connection is one (a single command, a pipeline, a batch of coalesced commands
(cache/coalesce.py), a script call), whichever client or layer sent it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from redis.asyncio.connection import AbstractConnection


@contextlib.contextmanager
def redis_round_trips() -> Iterator[list[int]]:
    """A one-item list holding the number of round trips sent meanwhile, by this process."""
    sent = [0]
    send = AbstractConnection.send_packed_command

    async def counted(self: AbstractConnection, *args: Any, **kwargs: Any) -> None:
        sent[0] += 1
        await send(self, *args, **kwargs)

    AbstractConnection.send_packed_command = counted  # type: ignore[method-assign]
    try:
        yield sent
    finally:
        AbstractConnection.send_packed_command = send  # type: ignore[method-assign]
