"""`GET /connect` (CONNECT_PATH): the web client's live events, as server-sent events.

The 2025 Discours client opens it (`PUBLIC_REALTIME_EVENTS`, `extended-eventsource`) with its token as
`Authorization: Bearer` (or the session cookie) and reads `data:` lines of JSON `{id, entity, action,
payload, created_at}` (`created_at` in milliseconds), reconnecting with back-off. What a viewer gets is what
their personal channel carries (cache/messaging/pubsub.py, resolvers/events.py): the notifications meant for
them (reactions to what they wrote or follow, new followers, publications of what they follow, accepted
invites) and the changes of drafts they co-author; and, for a moderator, every new comment or reaction in
the communities they moderate (the editors' panel's queue). Another viewer's never: the channel is theirs.

- An event's `id` is its notification's (`n<id>`), or, for one that has none (a draft's change, an edit or
  deletion of a reaction), the last notification sent before it with a sequence number (`n<id>.<seq>`). A
  stream that comes back with `Last-Event-ID` is sent first the notifications after that one (at most
  CONNECT_BACKLOG, from the database), then the live ones; events without a notification are not sent again.
- A comment line every CONNECT_HEARTBEAT seconds keeps proxies from closing a quiet stream; the session is
  checked again then, and a signed-out, revoked or expired one ends the stream.
- A worker holds at most CONNECT_STREAMS streams, a viewer CONNECT_STREAMS_PER_VIEWER on one worker: past
  them, 503 or 429 with Retry-After at once, never a hang. Every stream of a worker shares the worker's one
  pub/sub connection (the hub); a stream too slow to take its events is ended, and its client comes back
  with Last-Event-ID.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import orjson
from redis.exceptions import RedisError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from cache import keys
from cache.messaging.pubsub import Event, SubscriberTooSlow
from config.settings import SubscriptionSettings
from resolvers.auth import account_viewer
from resolvers.deps import Deps
from resolvers.moderation import moderated_by
from resolvers.notifications import notifications_since
from schema.context import bearer_token

log = logging.getLogger(__name__)

# The client's words for what an event is about (a live event's type, a stored notification's entity; the
# others are the client's already), and for what happened to it.
ENTITIES = {"publication": "shout", "invite": "shout"}
ACTIONS = {"publish": "create", "accept": "update", "unfollow": "delete"}
RETRY_MS = 3000  # what the stream asks a client to wait before it reconnects
RECENT = 256  # notification ids a stream remembers, to send each once


class Streams:
    """The streams open on this worker: in all, and by viewer."""

    def __init__(self, settings: SubscriptionSettings) -> None:
        self.most, self.per_viewer = settings.connect_streams, settings.connect_streams_per_viewer
        self.by_viewer: dict[int, int] = {}
        self.open = 0

    def admit(self, viewer: int) -> Response | None:
        """None when `viewer` may open one more; else the refusal."""
        if self.open >= self.most:
            return _refused("this server holds as many event streams as it can; try again shortly", 503)
        if self.by_viewer.get(viewer, 0) >= self.per_viewer:
            return _refused("too many event streams open for this account", 429)
        self.open += 1
        self.by_viewer[viewer] = self.by_viewer.get(viewer, 0) + 1
        return None

    def leave(self, viewer: int) -> None:
        self.open -= 1
        left = self.by_viewer.get(viewer, 1) - 1
        if left:
            self.by_viewer[viewer] = left
        else:
            self.by_viewer.pop(viewer, None)


def _refused(message: str, status: int) -> Response:
    headers = {"retry-after": "5"} if status in (429, 503) else {}
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def frame(event_id: str, item: dict[str, Any]) -> bytes:
    return b"id: " + event_id.encode() + b"\ndata: " + orjson.dumps(item) + b"\n\n"


def shaped(event: Event) -> dict[str, Any]:
    """A live event in the client's shape."""
    note = event.data.get("notification")
    return {"id": note, "entity": ENTITIES.get(event.type, event.type),
            "action": ACTIONS.get(event.action, event.action), "payload": event.data,
            "created_at": event.timestamp * 1000}


def missed(note: Any) -> dict[str, Any]:
    """A notification from the database (sent again after a reconnection) in the client's shape."""
    return {"id": note.id, "entity": ENTITIES.get(note.entity, note.entity),
            "action": ACTIONS.get(note.action, note.action), "payload": note.payload or {},
            "created_at": note.created_at * 1000}


def last_seen(request: Request) -> int | None:
    """The notification id a reconnecting client last had (`Last-Event-ID`: `n<id>` or `n<id>.<seq>`)."""
    raw = request.headers.get("last-event-id") or request.query_params.get("lastEventId") or ""
    head = raw.removeprefix("n").split(".", 1)[0]
    return int(head) if head.isdigit() and len(head) < 19 else None


async def connect(request: Request) -> Response:
    deps: Deps = request.app.state.deps
    settings = request.app.state.settings
    token = bearer_token(request, settings.session_cookie)
    try:
        session = await deps.accounts.sessions.validate(token) if token else None
    except RedisError:
        return _refused("sessions cannot be checked for a moment; try again shortly", 503)
    if session is None:
        return _refused("sign in to open the event stream", 401)
    streams: Streams = request.app.state.streams
    refused = streams.admit(session.user_id)
    if refused is not None:
        return refused
    try:
        # the viewer's own channel, and, for a moderator, the new comments of the communities they moderate
        moderated = await moderated_by(deps, await account_viewer(deps, session.user_id))
        subscription = await deps.hub.subscribe(
            [keys.channel_user(session.user_id), *(keys.channel_moderation(c) for c in moderated)])
    except BaseException:
        streams.leave(session.user_id)
        raise

    async def stream() -> AsyncIterator[bytes]:
        me, sent, seq = session.user_id, last_seen(request), 0
        # notifications sent lately: one replayed from the backlog, or arriving on two channels (a moderator's
        # and their own), goes out once; ids arrive in commit order, not in id order, so no id is "past"
        recent: deque[int] = deque(maxlen=RECENT)
        try:
            yield f"retry: {RETRY_MS}\n\n".encode()
            if sent is not None and settings.connect_backlog:
                for note in await notifications_since(deps, me, sent, settings.connect_backlog):
                    sent = note.id
                    recent.append(note.id)
                    yield frame(f"n{note.id}", missed(note))
            checked = time.monotonic()
            while True:
                message = await subscription.next(settings.connect_heartbeat)
                if message is None or time.monotonic() - checked >= settings.connect_heartbeat:
                    if await deps.accounts.sessions.validate(session.token) is None:
                        return  # signed out, revoked or expired: the stream ends
                    checked = time.monotonic()
                    if message is None:
                        yield b": heartbeat\n\n"
                        continue
                event = Event.decode(message[1])
                if event is None:
                    continue
                item = shaped(event)
                note = item["id"]
                if isinstance(note, int):
                    if note in recent:
                        continue
                    recent.append(note)
                    sent, seq, event_id = max(note, sent or 0), 0, f"n{note}"
                else:
                    seq += 1
                    event_id = f"n{sent or 0}.{seq}"
                    item["id"] = event_id
                yield frame(event_id, item)
        except SubscriberTooSlow:
            log.info("an event stream fell too far behind and was ended; its client comes back with Last-Event-ID")
        except RedisError as exc:
            log.info("an event stream ended: Redis does not answer (%s)", exc)
        finally:
            await subscription.aclose()
            streams.leave(session.user_id)

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"cache-control": "no-cache", "x-accel-buffering": "no"})


def routes(settings: SubscriptionSettings) -> list[Route]:
    return [Route(settings.connect_path, connect, methods=["GET"])] if settings.connect_path else []
