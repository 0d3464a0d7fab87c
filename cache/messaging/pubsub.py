"""Live events over Redis pub/sub (seed 000, section 6): the message format, publishing after a commit,
and the per-worker hub that fans messages out to subscribers in process.

Messages are at most once: a subscriber sees what is published while it is subscribed, nothing else
(the Notification rows are the durable record; `load_notifications` reads them). Each worker holds one
pub/sub connection whatever the number of subscribers; a subscriber gets a bounded queue, and one that
falls `queue_size` messages behind is dropped (its `on_overflow` is called) instead of slowing the
others or growing memory. When Redis goes away the hub reconnects and subscribes again to every channel
that still has a subscriber.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import orjson
from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from cache.live.structures import queue_eval
from cache.lua import load_lua
from cache.redis.client import is_cluster
from cache.redis.limits import PUBLISH_PER_CALL

if TYPE_CHECKING:
    from config.settings import SubscriptionSettings

log = logging.getLogger(__name__)

PUBLISH_BATCH = 100  # messages per pipeline (seed 004)
_PUBLISH_ALL = load_lua("publish_all")
_USER_KEY = b'"user_id":'  # how an encoded event names whom it is for (Event.encode_to)
_NO_USER = _USER_KEY + b"null"
READ_TIMEOUT = 1.0  # how long one read waits for a message before the hub looks at its own state
RETRY_DELAYS = (0.1, 0.25, 0.5, 1.0, 2.0)  # between reconnection attempts; the last one repeats


# On the wire, `action` is seed 000's word (`created`, `updated`, `deleted`), so that a listener written for
# the seed understands every message; inside the server (and in GraphQL subscription payloads) an event
# keeps its own verb, which its `type` and the seed's word give back.
SEED_ACTIONS = {"create": "created", "update": "updated", "delete": "deleted", "follow": "created",
                "unfollow": "deleted", "publish": "created", "accept": "updated"}
_VERBS = {"follower": {"created": "follow", "deleted": "unfollow"}, "publication": {"created": "publish"},
          "invite": {"updated": "accept"}}
_PLAIN_VERBS = {"created": "create", "updated": "update", "deleted": "delete"}


def seed_action(action: str) -> str:
    return SEED_ACTIONS.get(action, action)


def verb_of(type_: str, action: str) -> str:
    """The verb an event of `type_` published with the seed's `action` was made with."""
    return _VERBS.get(type_, _PLAIN_VERBS).get(action, _PLAIN_VERBS.get(action, action))


@dataclass(frozen=True, slots=True)
class Event:
    """The seed's message: what happened (`entity_type`, `entity_id`, `action`), to whom (`user_id`, on
    personal channels), with `data` for the reader, at `timestamp`."""

    type: str
    entity_type: str
    entity_id: int
    action: str
    data: dict[str, Any] = field(default_factory=dict)
    timestamp: int = field(default_factory=lambda: int(time.time()))
    user_id: int | None = None

    def encode(self) -> bytes:
        return orjson.dumps({"type": self.type, "user_id": self.user_id, "entity_type": self.entity_type,
                             "entity_id": self.entity_id, "action": seed_action(self.action), "data": self.data,
                             "timestamp": self.timestamp})

    def to(self, user_id: int) -> Event:
        """The same event addressed to one person."""
        return replace(self, user_id=user_id)

    def encode_to(self, people: Iterable[int]) -> list[bytes]:
        """`to(person).encode()` for each person, encoded once: a comment on a discussion that hundreds
        follow is hundreds of messages that differ in `user_id` alone. Its key follows `type`, whose value
        is a JSON string, which cannot hold the key's quotes unescaped: the first match is the key."""
        encoded = replace(self, user_id=None).encode()
        at = encoded.index(_NO_USER) + len(_USER_KEY)
        head, tail = encoded[:at], encoded[at + len(b"null"):]
        return [head + str(person).encode() + tail for person in people]

    @classmethod
    def decode(cls, raw: bytes) -> Event | None:
        """None for anything that is not one of our messages (channels are shared; never trust them)."""
        try:
            value = orjson.loads(raw)
            return cls(type=str(value["type"]), entity_type=str(value["entity_type"]),
                       entity_id=int(value["entity_id"]), action=verb_of(str(value["type"]), str(value["action"])),
                       data=dict(value.get("data") or {}), timestamp=int(value["timestamp"]),
                       user_id=None if value.get("user_id") is None else int(value["user_id"]))
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return None


async def publish(redis: Redis, messages: Iterable[tuple[str, bytes]]) -> int:
    """PUBLISH each (channel, message), pipelined in batches; returns how many were sent."""
    batch: list[tuple[str, bytes]] = []
    sent = 0
    for message in messages:
        batch.append(message)
        if len(batch) == PUBLISH_BATCH:
            sent += await _publish_batch(redis, batch)
            batch = []
    if batch:
        sent += await _publish_batch(redis, batch)
    return sent


async def publish_quietly(redis: Redis, messages: Sequence[tuple[str, bytes]]) -> None:
    """`publish`, a failure logged: live messages are at most once, the rows are the record."""
    try:
        await publish(redis, messages)
    except RedisError as exc:
        log.warning("%d live messages not published: %s", len(messages), exc)


async def _publish_batch(redis: Redis, batch: list[tuple[str, bytes]]) -> int:
    async with redis.pipeline(transaction=False) as pipe:
        if is_cluster(redis):  # a script without keys has no node to go to: PUBLISH reaches every node anyway
            for channel, message in batch:
                pipe.publish(channel, message)
        else:
            for start in range(0, len(batch), PUBLISH_PER_CALL):
                queue_eval(pipe, _PUBLISH_ALL, [],
                             [part for message in batch[start:start + PUBLISH_PER_CALL] for part in message])
        await pipe.execute()
    return len(batch)


class SubscriberTooSlow(Exception):
    """The subscriber fell a whole queue behind and was dropped."""


class Subscription:
    """One local subscriber to some channels: iterate it for (channel, message) pairs."""

    def __init__(self, hub: Hub, channels: frozenset[str], queue_size: int,
                 on_overflow: Callable[[], None] | None) -> None:
        self.hub = hub
        self.channels = channels
        self.dropped = False
        self._queue: asyncio.Queue[tuple[str, bytes] | None] = asyncio.Queue(queue_size)
        self._on_overflow = on_overflow

    def _offer(self, channel: str, message: bytes) -> bool:
        """Queue a message without waiting; False when the queue is full (the hub then drops us)."""
        try:
            self._queue.put_nowait((channel, message))
        except asyncio.QueueFull:
            return False
        return True

    def _drop(self) -> None:
        self.dropped = True
        self._queue = asyncio.Queue(1)  # let go of the backlog: the reader gets the end at once
        self._queue.put_nowait(None)
        if self._on_overflow is not None:
            self._on_overflow()

    async def next(self, within: float | None = None) -> tuple[str, bytes] | None:
        """The next message, or None after `within` seconds without one (the wait for it is cancelled, the
        subscription goes on; None: no deadline); SubscriberTooSlow once dropped."""
        try:
            item = await asyncio.wait_for(self._queue.get(), within)
        except TimeoutError:
            return None
        if item is None:
            raise SubscriberTooSlow("this subscriber fell too far behind and was dropped")
        return item

    async def __aiter__(self) -> AsyncIterator[tuple[str, bytes]]:
        while True:
            item = await self.next()
            assert item is not None  # no deadline: a message, or SubscriberTooSlow
            yield item

    async def aclose(self) -> None:
        await self.hub._leave(self)


class Hub:
    """One Redis pub/sub connection per worker, shared by every subscriber of that worker."""

    def __init__(self, redis: Redis, *, queue_size: int = 100) -> None:
        self.redis = redis
        self.queue_size = queue_size
        self._by_channel: dict[str, set[Subscription]] = {}
        self._pubsub: PubSub | None = None
        self._reader: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()  # SUBSCRIBE, UNSUBSCRIBE and reconnection, one at a time
        self._broken = False
        self.reconnects = 0

    @classmethod
    def of(cls, redis: Redis, settings: SubscriptionSettings) -> Hub:
        """A subscriber's queue holds SUBSCRIPTION_QUEUE_SIZE events."""
        return cls(redis, queue_size=settings.subscription_queue_size)

    @property
    def subscribers(self) -> int:
        return len({s for subs in self._by_channel.values() for s in subs})

    @contextlib.asynccontextmanager
    async def subscription(self, channels: Iterable[str], *,
                           on_overflow: Callable[[], None] | None = None) -> AsyncIterator[Subscription]:
        sub = await self.subscribe(channels, on_overflow=on_overflow)
        try:
            yield sub
        finally:
            await sub.aclose()

    async def subscribe(self, channels: Iterable[str], *,
                        on_overflow: Callable[[], None] | None = None) -> Subscription:
        """Register a subscriber; SUBSCRIBE only channels this worker did not listen to yet. With Redis
        away the subscriber is registered anyway and the hub subscribes when Redis is back."""
        sub = Subscription(self, frozenset(channels), self.queue_size, on_overflow)
        async with self._lock:
            new = [c for c in sorted(sub.channels) if c not in self._by_channel]
            for channel in sub.channels:
                self._by_channel.setdefault(channel, set()).add(sub)
            if new and not self._broken:
                try:
                    await self._connection().subscribe(*new)
                except RedisError as exc:
                    log.warning("pub/sub: SUBSCRIBE failed, will resubscribe: %s", exc)
                    self._broken = True
            if self._reader is None or self._reader.done():
                self._reader = asyncio.get_running_loop().create_task(self._read(), name="pubsub hub")
        return sub

    async def _leave(self, sub: Subscription) -> None:
        async with self._lock:
            gone = []
            for channel in sub.channels:
                subs = self._by_channel.get(channel)
                if subs is None:
                    continue
                subs.discard(sub)
                if not subs:
                    del self._by_channel[channel]
                    gone.append(channel)
            if gone and self._pubsub is not None and not self._broken:
                try:
                    await self._pubsub.unsubscribe(*gone)
                except RedisError as exc:
                    log.warning("pub/sub: UNSUBSCRIBE failed, will reconnect: %s", exc)
                    self._broken = True

    def _connection(self) -> PubSub:
        if self._pubsub is None:
            self._pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
        return self._pubsub

    async def _read(self) -> None:
        failures = 0
        while True:
            try:
                if self._broken:
                    await self._reconnect()
                pubsub = self._pubsub
                if pubsub is None or not pubsub.subscribed:
                    if await self._stop_if_idle():
                        return
                    await asyncio.sleep(READ_TIMEOUT / 10)
                    continue
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=READ_TIMEOUT)
                failures = 0
                if message is not None and message.get("type") == "message":
                    self._fan_out(message["channel"], message["data"])
                    # Buffered messages come back without a real wait: yield, so that subscribers that
                    # keep up take each one before a burst fills their queues.
                    await asyncio.sleep(0)
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:
                delay = RETRY_DELAYS[min(failures, len(RETRY_DELAYS) - 1)]
                failures += 1
                if failures == 1:
                    log.warning("pub/sub: connection lost (%s); reconnecting", exc)
                self._broken = True
                await asyncio.sleep(delay)

    async def _stop_if_idle(self) -> bool:
        """With no subscriber left, give the connection back: an idle worker holds none. The next
        subscriber starts a new reader (under the same lock, so none is lost in between)."""
        async with self._lock:
            if self._by_channel:
                return False
            if self._pubsub is not None:
                with contextlib.suppress(RedisError, OSError):
                    await self._pubsub.aclose()
                self._pubsub = None
            self._reader = None
            return True

    async def _reconnect(self) -> None:
        """A fresh connection subscribed to every channel that still has a subscriber."""
        async with self._lock:
            old, self._pubsub = self._pubsub, None
            if old is not None:
                with contextlib.suppress(RedisError, OSError):
                    await old.aclose()
            if self._by_channel:
                await self._connection().subscribe(*sorted(self._by_channel))
            self._broken = False
            self.reconnects += 1

    def _fan_out(self, channel: bytes | str, message: bytes) -> None:
        name = channel.decode() if isinstance(channel, bytes) else channel
        for sub in list(self._by_channel.get(name, ())):
            if not sub._offer(name, message):
                log.warning("pub/sub: a subscriber to %s fell %d messages behind; dropped", name, self.queue_size)
                self._forget(sub)
                sub._drop()

    def _forget(self, sub: Subscription) -> None:
        """Stop delivering to `sub` at once; its channels are unsubscribed when it closes."""
        for channel in sub.channels:
            subs = self._by_channel.get(channel)
            if subs is not None:
                subs.discard(sub)

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
            self._reader = None
        async with self._lock:
            if self._pubsub is not None:
                with contextlib.suppress(RedisError, OSError):
                    await self._pubsub.aclose()
                self._pubsub = None
            self._by_channel.clear()
