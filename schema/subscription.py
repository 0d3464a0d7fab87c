"""GraphQL subscriptions: live events from Redis pub/sub (seed 000, section 6), through this worker's hub.

Each root field checks who may listen *before* it subscribes (a plain coroutine that returns the
stream), so a refusal is a GraphQL error for that operation, never a dropped socket. Every event is
resolved with fresh DataLoaders: a WebSocket's context lives as long as the connection, and loaders
kept that long would answer from what they loaded for an earlier event.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import strawberry
from starlette.websockets import WebSocket
from strawberry.scalars import JSON

from cache import keys
from cache.messaging.pubsub import Event
from resolvers.access import require_viewer
from resolvers.deps import Deps
from resolvers.listening import watchable_shout, watchable_topic
from schema.context import Info, Loaders
from schema.engine.stream_starts import started
from schema.types import Reaction
from schema.types import Shout as ShoutType

SLOW_SUBSCRIBER_CLOSE = 4413  # the WebSocket close code for a subscriber that fell a queue behind
_RECENT = 100  # notification ids remembered per subscription, to drop one event seen on two channels


@strawberry.type(description="One live event, with the fields of seed 000's message.")
class NotificationMessage:
    type: str
    user_id: int | None
    entity_type: str
    entity_id: int
    action: str
    data: JSON
    timestamp: int

    @classmethod
    def of(cls, event: Event) -> NotificationMessage:
        return cls(type=event.type, user_id=event.user_id, entity_type=event.entity_type,
                   entity_id=event.entity_id, action=event.action, data=event.data,  # type: ignore[arg-type]
                   timestamp=event.timestamp)


@strawberry.type(description="A reaction of a shout created, edited or deleted.")
class ReactionEvent:
    action: str
    reaction: Reaction


_closing: set[asyncio.Task[None]] = set()  # socket closes under way (asyncio keeps only weak references)
_SHARED_LOADERS = 256  # events whose loaders are kept for the other subscribers of this worker
_loaders_by_event: OrderedDict[tuple[int, bytes], Loaders] = OrderedDict()


def _loaders_for(deps: Deps, raw: bytes) -> Loaders:
    """Fresh loaders for an event, shared by every subscriber of this worker that resolves the same
    message: a thousand watchers of a shout then read its changed entities once, not a thousand times.
    The loaders hold public entities only (nothing about a viewer), so sharing them is safe."""
    key = (id(deps), raw)
    loaders = _loaders_by_event.get(key)
    if loaders is None:
        loaders = _loaders_by_event[key] = Loaders.create(deps)
        while len(_loaders_by_event) > _SHARED_LOADERS:
            _loaders_by_event.popitem(last=False)
    return loaders


async def _events(info: Info, channels: list[str]) -> AsyncIterator[Event]:
    """The decoded events of `channels`, each with fresh loaders (shared with the event's other
    subscribers)."""
    context = info.context
    deps: Deps = context.deps
    connection = context.request

    def close_slow_socket() -> None:
        if isinstance(connection, WebSocket):
            task = asyncio.get_running_loop().create_task(
                connection.close(code=SLOW_SUBSCRIBER_CLOSE, reason="subscriber too slow"))
            _closing.add(task)
            task.add_done_callback(_closing.discard)

    async with deps.hub.subscription(channels, on_overflow=close_slow_socket) as subscription:
        started()  # the next subscription may start (schema/engine/stream_starts.py)
        async for _channel, raw in subscription:
            event = Event.decode(raw)
            if event is not None:
                context.loaders = _loaders_for(deps, raw)
                yield event


def _visible(event: Event, viewer_id: int | None) -> bool:
    """An event about a shout that is not public reaches its authors only."""
    if event.data.get("public", True):
        return True
    return viewer_id is not None and viewer_id in (event.data.get("authors") or [])


@strawberry.type
class Subscription:
    @strawberry.subscription(description="The signed-in viewer's notifications: personal and site-wide.")
    async def notifications(self, info: Info) -> AsyncGenerator[NotificationMessage, None]:
        me = require_viewer(await info.context.viewer()).author_id
        return _notifications(info, me)

    @strawberry.subscription(description="New, edited and deleted comments and ratings of one shout.")
    async def shout_reactions(self, info: Info, shout_id: int) -> AsyncGenerator[ReactionEvent, None]:
        viewer = await info.context.viewer()
        me = viewer.author_id if viewer else None
        await watchable_shout(info.context.deps, shout_id, me)
        return _shout_reactions(info, shout_id, me)

    @strawberry.subscription(description="Shouts published in a topic.")
    async def topic_shouts(self, info: Info, slug: str) -> AsyncGenerator[ShoutType, None]:
        return _topic_shouts(info, await watchable_topic(info.context.deps, slug))


async def _notifications(info: Info, me: int) -> AsyncGenerator[NotificationMessage, None]:
    recent: deque[Any] = deque(maxlen=_RECENT)
    async for event in _events(info, [keys.channel_user(me), keys.CHANNEL_GLOBAL]):
        if event.type == "draft":  # a co-author's edit: the web client's event stream has it (/connect)
            continue
        note = event.data.get("notification")
        if note is not None:
            if note in recent:  # a publication comes both as site-wide news and to its followers
                continue
            recent.append(note)
        yield NotificationMessage.of(event)


async def _shout_reactions(info: Info, shout_id: int, me: int | None) -> AsyncGenerator[ReactionEvent, None]:
    async for event in _events(info, [keys.channel_shout(shout_id)]):
        reaction = Reaction.of(event.data.get("reaction"))
        if reaction is not None and _visible(event, me):
            yield ReactionEvent(action=event.action, reaction=reaction)


async def _topic_shouts(info: Info, topic_id: int) -> AsyncGenerator[ShoutType, None]:
    async for event in _events(info, [keys.channel_topic(topic_id)]):
        shout = ShoutType.of(await info.context.loaders.shouts.load(event.entity_id))
        if shout is not None:  # unpublished again since: nothing to show
            yield shout
