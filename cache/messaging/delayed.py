"""The delayed queue (seed 001): `delayed_queue:{name}`, a sorted set of messages scored by the time
they are due, and consumers that take due messages atomically (Lua) so that no two take the same one.

A message taken is not gone: it moves to `…:leased`, scored by the end of its lease, and leaves only when
its handler succeeds (ack). A consumer that dies leaves its messages leased; when the lease runs out the
next fetch puts them back, so none is lost. A failing message comes back after a growing delay
(`backoff · 2^(attempt-1)`, capped, with jitter); after `max_attempts` it is parked in `…:parked` with its
last error, where `discours queue` shows it and can put it back.

The queue is bounded (seed 004: no sorted set over 5,000 members): queued and leased messages together
are at most `max_queued`, and parked ones at most `parked_cap`. A message that finds no room is refused
and counted, not an error: every kind of message is made from rows of the database, which a sweep reads
to queue again what is pending (resolvers/scheduled.py, resolvers/digests.py), so a full queue, or a
Redis that lost its data, delays a message and loses none.

Handlers must be idempotent: a message is handed out again when its consumer died after handling it but
before acknowledging it (the only case of a second delivery).
"""

from __future__ import annotations

import logging
import random
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
from redis.asyncio import Redis

from cache import keys
from cache.lua import load_lua
from cache.periodic import Periodic
from cache.redis.limits import BATCH
from telemetry import metrics

if TYPE_CHECKING:
    from config.settings import QueueSettings

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], Awaitable[None]]

_ENQUEUE = load_lua("delayed_enqueue")

_FETCH = load_lua("delayed_fetch")

_SETTLE = load_lua("delayed_settle")


@dataclass(frozen=True, slots=True)
class Message:
    id: str
    kind: str
    payload: dict[str, Any]
    raw: str  # the member as stored
    attempt: int = 0

    @classmethod
    def parse(cls, raw: str, attempt: int = 0) -> Message:
        message_id, kind, payload = raw.split("|", 2)
        return cls(message_id, kind, orjson.loads(payload), raw, attempt)


def encode(message_id: str, kind: str, payload: dict[str, Any]) -> str:
    if "|" in message_id or "|" in kind:
        raise ValueError("a message id or kind holds no '|'")
    return f"{message_id}|{kind}|{orjson.dumps(payload, option=orjson.OPT_SORT_KEYS).decode()}"


# Message ids `DelayedQueue.enqueue_once` remembers per worker (ids of digests: one an author and window).
ONCE_KEPT = 10_000


class DelayedQueue:
    def __init__(self, redis: Redis, name: str, *, batch: int = 100, lease: float = 60.0, max_attempts: int = 5,
                 backoff: float = 5.0, backoff_cap: float = 3600.0, max_queued: int = 5000,
                 parked_cap: int = 5000) -> None:
        self.redis, self.name = redis, name
        self.batch, self.lease, self.max_attempts = batch, lease, max_attempts
        self.backoff, self.backoff_cap = backoff, backoff_cap
        self.max_queued, self.parked_cap = max_queued, parked_cap
        self._keys = [keys.delayed_queue(name), keys.delayed_leased(name), keys.delayed_deliveries(name),
                      keys.delayed_parked(name), keys.delayed_errors(name)]
        self._enqueue = redis.register_script(_ENQUEUE)
        self._fetch = redis.register_script(_FETCH)
        self._settle = redis.register_script(_SETTLE)
        self.handlers: dict[str, Handler] = {}
        # What `enqueue_once` queued, by message id: when it is due (at most ONCE_KEPT ids).
        self._queued_until: dict[str, float] = {}
        self._loop: Periodic | None = None
        self._stopping = False  # a graceful stop: no batch is fetched after the one under way

    @classmethod
    def of(cls, redis: Redis, name: str, settings: QueueSettings) -> DelayedQueue:
        return cls(redis, name, batch=settings.queue_batch, lease=settings.queue_lease,
                   max_attempts=settings.queue_max_attempts, backoff=settings.queue_backoff,
                   max_queued=settings.queue_max_queued, parked_cap=settings.queue_parked_cap)

    # --- producing ------------------------------------------------------------------------------------

    async def enqueue(self, kind: str, payload: dict[str, Any], *, at: float,
                      message_id: str | None = None) -> str | None:
        """Add a message due at `at` (unix seconds); returns it as stored, or None when the queue is full. A
        message with the same id, kind and payload that is already queued or leased keeps its place
        (`message_id` makes scheduling idempotent)."""
        queued = await self.enqueue_many(kind, [(payload, message_id)], at=at)
        return queued[0] if queued else None

    async def enqueue_many(self, kind: str, messages: Sequence[tuple[dict[str, Any], str | None]], *,
                           at: float) -> list[str]:
        """`enqueue` for several messages of a kind due at the same time (payload and message id each): one
        command a hundred messages (a comment on a shout of three authors queues three digests in one).
        Returns those in the queue now; the others found it full."""
        members = [encode(message_id or uuid.uuid4().hex, kind, payload) for payload, message_id in messages]
        queued: list[str] = []
        for start in range(0, len(members), BATCH):
            chunk = members[start:start + BATCH]
            verdicts = await self._enqueue(keys=self._keys[:2], args=[self.max_queued, at, *chunk])
            queued += [member for member, verdict in zip(chunk, verdicts, strict=True) if verdict >= 0]
        if refused := len(members) - len(queued):
            metrics.QUEUE_REFUSED.labels(kind).inc(refused)
            log.warning("delayed queue %s is full (%d): %d %s message(s) refused, left to the sweep",
                        self.name, self.max_queued, refused, kind)
        return queued

    async def enqueue_once(self, kind: str, messages: list[tuple[dict[str, Any], str]], *, at: float) -> None:
        """`enqueue_many` of messages with ids, each sent by this worker once until it is due: the queue keeps the
        first of an id anyway (ZADD NX), so the events of a busy hour after the first cost no round trip. A queue
        Redis lost is filled again by what queues with `enqueue_many`, which does not look here (the sweeps)."""
        now = time.time()
        fresh = [message for message in messages if self._queued_until.get(message[1], 0.0) <= now]
        if not fresh:
            return
        queued = await self.enqueue_many(kind, fresh, at=at)
        if len(self._queued_until) + len(queued) > ONCE_KEPT:
            self._queued_until = {known: due for known, due in self._queued_until.items() if due > now}
            if len(self._queued_until) + len(queued) > ONCE_KEPT:
                self._queued_until.clear()
        for member in queued:
            self._queued_until[member.split("|", 1)[0]] = at

    async def cancel(self, member: str) -> bool:
        return bool(await self.redis.zrem(self._keys[0], member))

    # --- consuming ------------------------------------------------------------------------------------

    async def fetch(self, now: float | None = None) -> list[Message]:
        """Take up to `batch` due messages (and first put back those whose lease ran out)."""
        now = time.time() if now is None else now
        raw = await self._fetch(keys=self._keys[:3], args=[now, self.batch, now + self.lease])
        return [Message.parse(_text(raw[i]), int(raw[i + 1])) for i in range(0, len(raw), 2)]

    async def ack(self, message: Message) -> None:
        await self._settle(keys=self._keys, args=[message.raw, "ack", 0, "", self.parked_cap])

    async def fail(self, message: Message, error: str) -> str:
        """Retry later, or park after the last attempt; returns which."""
        if message.attempt >= self.max_attempts:
            await self._settle(keys=self._keys, args=[message.raw, "park", time.time(), error[:500], self.parked_cap])
            return "parked"
        delay = min(self.backoff * 2 ** (message.attempt - 1), self.backoff_cap) * random.uniform(0.8, 1.2)
        await self._settle(keys=self._keys, args=[message.raw, "retry", time.time() + delay, "", self.parked_cap])
        return "retried"

    async def handle(self, message: Message) -> str:
        handler = self.handlers.get(message.kind)
        try:
            if handler is None:
                raise LookupError(f"no handler for {message.kind!r}")
            await handler(message.payload)
        except Exception as exc:
            verdict = await self.fail(message, f"{type(exc).__name__}: {exc}")
            log.warning("delayed %s %s (attempt %d) failed and was %s: %s", message.kind, message.id,
                        message.attempt, verdict, exc)
            return verdict
        await self.ack(message)
        return "done"

    async def run_once(self) -> int:
        """Handle every message due now, a batch at a time (the batch under way only, once stopping);
        returns how many were handled."""
        handled = 0
        while True:
            messages = await self.fetch()
            for message in messages:
                handled += await self.handle(message) == "done"
            if len(messages) < self.batch or self._stopping:
                return handled

    def start(self, interval: float) -> None:
        self._stopping = False
        if self._loop is None:
            self._loop = Periodic(f"delayed queue {self.name}", interval, self.run_once)
        self._loop.start()

    async def stop(self, *, finish_round: float = 0.0) -> None:
        """Stop polling. `finish_round` (a graceful shutdown): the batch under way is handled and
        acknowledged within that many seconds, so nothing this worker took stays leased; what is still
        queued is left to the other workers."""
        self._stopping = True
        if self._loop is not None:
            await self._loop.stop(finish_round=finish_round)

    # --- operating (the CLI) --------------------------------------------------------------------------

    async def stats(self) -> dict[str, int]:
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in (self._keys[0], self._keys[1], self._keys[3]):
                pipe.zcard(key)
            queued, leased, parked = await pipe.execute()
        return {"queued": queued, "leased": leased, "parked": parked}

    async def parked(self, limit: int = 50) -> list[tuple[Message, float, str]]:
        """The newest parked messages with when they were parked and their last error."""
        rows: list[tuple[bytes, float]] = await self.redis.zrevrange(  # type: ignore[assignment]
            self._keys[3], 0, limit - 1, withscores=True)
        errors = await self.redis.hmget(self._keys[4], [m for m, _ in rows]) if rows else []
        return [(Message.parse(_text(m)), float(at), _text(e or b"")) for (m, at), e in zip(rows, errors, strict=True)]

    async def requeue_parked(self) -> int:
        """Give every parked message a fresh set of attempts, due now."""
        moved = 0
        while members := [_text(m) for m in await self.redis.zrange(self._keys[3], 0, 99)]:  # type: ignore[arg-type]
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.zrem(self._keys[3], *members)
                pipe.hdel(self._keys[4], *members)
                pipe.zadd(self._keys[0], {member: time.time() for member in members})
                await pipe.execute()
            moved += len(members)
        return moved


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
