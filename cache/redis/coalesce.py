"""Redis commands of one moment sent together: auto-pipelining, as ioredis's `enableAutoPipelining` does.

A request's reads are many small calls made concurrently: a page's loaders each read their kind (authors,
topics, counters, views) at the same moment, and so do the requests a worker serves side by side. Sent
one by one, each is a round trip, and each round trip costs the client more than the server's work on it
(a connection taken from the pool, a write, a wake-up on the reply). The client's commands and
non-transactional pipelines are therefore queued, and the queue goes out as one pipeline once the event
loop has run everything that was ready: each caller gets its own replies back, in order, errors included.

A round trip carries at most `max_commands` commands (seed 004: a hundred a pipeline; a setting): a caller
whose commands would take a queue past it closes that queue, which goes out at the next turn, and opens
the next one. One caller's own pipeline is never split, so a longer one goes alone.

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
import functools
import types
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ambient import SENT_AT_ONCE
from cache.redis.limits import BATCH
from cache.redis.seam import Command, HeldConnections, execute_pipelined
from telemetry import tracing

QUIET_TURNS = 2  # turns of the loop with no new command after which the queue is sent
MAX_TURNS = 8  # turns a queue may wait for more commands after its first
UNBATCHED = frozenset({
    "AUTH", "BLMOVE", "BLMPOP", "BLPOP", "BRPOP", "BRPOPLPUSH", "BZMPOP", "BZPOPMAX", "BZPOPMIN", "CLIENT",
    "DISCARD", "EXEC", "HELLO", "MONITOR", "MULTI", "PSUBSCRIBE", "QUIT", "RESET", "SELECT", "SUBSCRIBE",
    "UNWATCH", "WAIT", "WATCH", "XREAD", "XREADGROUP",
})


@contextmanager
def at_once() -> Iterator[None]:
    """Commands sent within go out at the next turn of the loop, with whatever is queued by then, instead
    of waiting for the queue to be quiet. For a request's only command, with nothing of its own to wait
    for: a response-cache hit (cache/response/responses.py). Under a load of hits the queue is never quiet, every
    hit waits for the batch of all that arrived meanwhile, and while Redis runs that batch the worker has
    nothing to do (bench/RESULTS.md, figures behind the code's rules)."""
    token = SENT_AT_ONCE.set(True)
    try:
        yield
    finally:
        SENT_AT_ONCE.reset(token)


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


class Batch:
    """The commands of one round trip, and how long it has waited for more."""

    __slots__ = ("commands", "fresh", "queued", "quiet", "turns")

    def __init__(self) -> None:
        self.queued: Queued = []
        self.commands = 0
        self.fresh = False  # commands were queued since the last turn
        self.turns = 0  # turns since its first command
        self.quiet = 0  # turns in a row that queued nothing

    def counted_turn(self) -> bool:
        """One more turn of its wait: whether it is over (quiet long enough, or long enough)."""
        self.turns += 1
        self.quiet = 0 if self.fresh else self.quiet + 1
        self.fresh = False
        return self.quiet >= QUIET_TURNS or self.turns >= MAX_TURNS


class Coalescer:
    """The queue of one client (its connection pool and reply callbacks are the batch's). `max_commands`:
    the most a round trip carries (REDIS_COALESCE_MAX_COMMANDS)."""

    def __init__(self, client: Any, max_commands: int = BATCH) -> None:
        self._client = client
        self.max_commands = max_commands
        self._open: Batch | None = None  # the batch new commands join, until it is sent or full
        self._sending: set[asyncio.Task[None]] = set()
        self._held = HeldConnections()  # the pool asked for a connection only by round trips that overlap

    @property
    def holding(self) -> int:
        """Connections of the pool it keeps between its round trips (in use, to the pool)."""
        return len(self._held)

    def submit(self, commands: Sequence[Command]) -> asyncio.Future[list[Any]]:
        """Queue `commands`; the future gives their replies (a ResponseError in the place of a command
        that failed), or the error that failed the whole round trip."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[Any]] = loop.create_future()
        batch = self._open
        if batch is not None and batch.commands and batch.commands + len(commands) > self.max_commands:
            batch.turns = MAX_TURNS  # full: it goes out at its next turn, and these open the next one
            batch = None
        if batch is None:
            batch = self._open = Batch()
            task = loop.create_task(self._send_when_quiet(batch))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)
        batch.queued.append((list(commands), future))
        batch.commands += len(commands)
        batch.fresh = True
        if SENT_AT_ONCE.get():
            batch.turns = MAX_TURNS  # sent by its task, with whatever joins before it runs
        return future

    async def _send_when_quiet(self, batch: Batch) -> None:
        """Wait while the loop adds commands, then send the queue. One task from the queue's first command
        to its replies: the task's first step, a turn after that command, can send already, and the
        callers have their replies before the connection goes back to the pool. A round trip sent at once
        is five or six turns of the loop (the write, the reply read, the replies handed over, the caller
        going on, and any turn Redis's reply comes after) where a flush callback, a task made by it and a
        release awaited before the replies made it eight:
        under load every turn runs the other requests' ready work, so a miss's round trips were most of
        its wall time."""
        try:
            while not batch.counted_turn():
                await _next_turn()  # the loop may still add commands
            self._close(batch)
            commands = [command for commands, _ in batch.queued for command in commands]
            # not the client's pipeline: that one would queue them here again
            with _traced(commands):
                await execute_pipelined(self._client, commands, deliver=functools.partial(_answer, batch.queued),
                                        held=self._held)
        except BaseException as exc:  # the round trip failed (or the loop is closing): every caller in it
            self._close(batch)
            _fail(batch.queued, exc if isinstance(exc, Exception) else asyncio.CancelledError())
            if not isinstance(exc, Exception):
                raise

    def _close(self, batch: Batch) -> None:
        """No command joins `batch` from now on."""
        if self._open is batch:
            self._open = None


def _traced(commands: list[Command]) -> Any:
    """The round trip's span when traces are on: its command, or PIPELINE, and how many it carries."""
    if tracing.TRACER is None:
        return tracing.NO_SPAN
    named = str(commands[0][0][0]).upper() if len(commands) == 1 and commands[0][0] else "PIPELINE"
    return tracing.span(f"redis {named}", {"db.system.name": "redis", "db.operation.name": named,
                                           "db.operation.batch.size": len(commands)}, client=True)


@types.coroutine
def _next_turn() -> Generator[None, None, None]:
    """One turn of the loop, as `asyncio.sleep(0)` yields it (a bare yield hands the task back to the loop,
    which runs it again at its next turn), without a name tests patch to count a waiter's pauses."""
    yield


Queued = list[tuple[list[Command], "asyncio.Future[list[Any]]"]]


def _answer(queued: Queued, replies: list[Any]) -> None:
    start = 0
    for commands, future in queued:
        if not future.done():  # a caller that was cancelled meanwhile is not answered
            future.set_result(replies[start:start + len(commands)])
        start += len(commands)


def _fail(queued: Queued, error: BaseException) -> None:
    for _, future in queued:
        if not future.done():  # answered already when the failure came after the replies (the release)
            future.set_exception(error)
