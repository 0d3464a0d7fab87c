"""Redis commands of one moment sent together: auto-pipelining, as ioredis's `enableAutoPipelining` does.

A request's reads are many small calls made concurrently: a page's loaders each read their kind (authors,
topics, counters, views) at the same moment, and so do the requests a worker serves side by side. Sent
one by one, each is a round trip, and each round trip costs the client more than the server's work on it
(a connection taken from the pool, a write, a wake-up on the reply). The client's commands and
non-transactional pipelines are therefore queued, and the queue goes out as one pipeline once the event
loop has run everything that was ready: each caller gets its own replies back, in order, errors included.

Nothing waits for a timer: the queue is sent once `QUIET_TURNS` turns of the loop in a row added nothing
to it (at most `MAX_TURNS` turns after its first command, or at the next turn when a command was sent
`at_once`), so a lone command is delayed by a few loop turns only. Two quiet turns, not one: a
DataLoader starts its batch two turns after its first load (a callback that creates the task, then the
task's first step), and a page's loaders should share the round trip of whatever else the page sent
meanwhile.

What keeps its own round trip: MULTI/EXEC transactions and WATCH (their atomicity is per connection),
pipelines that run scripts through redis-py's Script objects (redis-py loads those before the pipeline),
and blocking or connection-state commands (`UNBATCHED`). Replies are split per caller, so one caller's
error never becomes another's; a failure of the whole round trip (a connection lost) fails every caller
in it, as it would have failed each alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from cache.seam import Command, execute_pipelined

QUIET_TURNS = 2  # turns of the loop with no new command after which the queue is sent
MAX_TURNS = 8  # turns a queue may wait for more commands after its first
UNBATCHED = frozenset({
    "AUTH", "BLMOVE", "BLMPOP", "BLPOP", "BRPOP", "BRPOPLPUSH", "BZMPOP", "BZPOPMAX", "BZPOPMIN", "CLIENT",
    "DISCARD", "EXEC", "HELLO", "MONITOR", "MULTI", "PSUBSCRIBE", "QUIT", "RESET", "SELECT", "SUBSCRIBE",
    "UNWATCH", "WAIT", "WATCH", "XREAD", "XREADGROUP",
})


# Set while commands are sent `at_once`.
_AT_ONCE: ContextVar[bool] = ContextVar("coalesce_at_once", default=False)


@contextmanager
def at_once() -> Iterator[None]:
    """Commands sent within go out at the next turn of the loop, with whatever is queued by then, instead
    of waiting for the queue to be quiet. For a request's only command, with nothing of its own to wait
    for: a response-cache hit (cache/response.py). Under a load of hits the queue is never quiet, every
    hit waits for the batch of all that arrived meanwhile, and while Redis runs that batch the worker has
    nothing to do: it sat idle a tenth of the time at 16 connections, under a twentieth with hits sent at
    once, for the same CPU per request (bench/RESULTS.md)."""
    token = _AT_ONCE.set(True)
    try:
        yield
    finally:
        _AT_ONCE.reset(token)


def batchable(commands: Sequence[Command]) -> bool:
    for args, _ in commands:
        name = args[0]
        allowed = _BATCHABLE.get(name)
        if allowed is None:
            # "CLIENT SETNAME" is how redis-py names a subcommand: its first word decides
            allowed = str(name.decode() if isinstance(name, bytes) else name).split(" ")[0].upper() not in UNBATCHED
            if len(_BATCHABLE) < 1024:  # command names come from code, not from clients: a few dozen
                _BATCHABLE[name] = allowed
        if not allowed:
            return False
    return True


_BATCHABLE: dict[Any, bool] = {}


class Coalescer:
    """The queue of one client (its connection pool and reply callbacks are the batch's)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._queued: list[tuple[list[Command], asyncio.Future[list[Any]]]] = []
        self._fresh = False  # commands were queued since the last turn
        self._turns = 0  # turns since the queue's first command
        self._quiet = 0  # turns in a row that queued nothing
        self._sending: set[asyncio.Task[None]] = set()

    def submit(self, commands: Sequence[Command]) -> asyncio.Future[list[Any]]:
        """Queue `commands`; the future gives their replies (a ResponseError in the place of a command
        that failed), or the error that failed the whole round trip."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[Any]] = loop.create_future()
        self._queued.append((list(commands), future))
        self._fresh = True
        if len(self._queued) == 1:
            self._turns = self._quiet = 0
            loop.call_soon(self._flush)
        if _AT_ONCE.get():
            self._turns = MAX_TURNS  # sent by the flush already scheduled, with whatever joins before it
        return future

    def _flush(self) -> None:
        self._turns += 1
        self._quiet = 0 if self._fresh else self._quiet + 1
        self._fresh = False
        if self._quiet < QUIET_TURNS and self._turns < MAX_TURNS:  # the loop may still add commands
            asyncio.get_running_loop().call_soon(self._flush)
            return
        queued, self._queued = self._queued, []
        task = asyncio.ensure_future(self._send(queued))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def _send(self, queued: list[tuple[list[Command], asyncio.Future[list[Any]]]]) -> None:
        # not the client's pipeline: that one would queue them here again
        try:
            replies = await execute_pipelined(self._client, [command for commands, _ in queued for command in commands])
        except BaseException as exc:  # the round trip failed (or the loop is closing): every caller in it
            for _, future in queued:
                if not future.done():
                    future.set_exception(exc if isinstance(exc, Exception) else asyncio.CancelledError())
            if not isinstance(exc, Exception):
                raise
            return
        start = 0
        for commands, future in queued:
            if not future.done():  # a caller that was cancelled meanwhile is not answered
                future.set_result(replies[start:start + len(commands)])
            start += len(commands)
