"""The web client's event stream, `GET /connect` (issue 70), read by a client written to the 2025 client's
behaviour (`extended-eventsource`: a Bearer header, `data:` lines of JSON, `Last-Event-ID` on reconnecting),
against the app served by uvicorn with the slow-client read deadlines on: each kind of event arrives within a
second in the client's shape; another viewer's never; a stream past a limit is refused with a status; a
signed-out session ends its stream; a reconnection resumes; a thousand streams cost the worker a bounded
number of Redis connections."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson
import pytest
import uvicorn
from redis.asyncio import Redis
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from app.http.slow_clients import ReadDeadlines
from app.main import create_app, wire
from auth.mailer import LogMailer
from auth.services import build_auth
from cache.store import Cache
from config.settings import Settings
from devtools.services import free_port
from orm import Invite, Shout
from tests.helpers import Api, User, until


@dataclass
class Stream:
    """One open stream: its events (id, JSON) and comment lines as they arrive."""

    response: httpx.Response
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    comments: int = 0
    ended: bool = False

    async def read(self) -> None:
        event_id, data = "", []
        try:
            async for line in self.response.aiter_lines():
                if line.startswith(":"):
                    self.comments += 1
                elif line.startswith("id: "):
                    event_id = line[4:]
                elif line.startswith("data: "):
                    data.append(line[6:])
                elif line == "" and data:
                    self.events.append((event_id, orjson.loads("\n".join(data))))
                    data = []
        except httpx.HTTPError:
            pass
        self.ended = True

    async def arrived(self, entity: str, action: str | None = None, within: float = 1.0) -> dict[str, Any]:
        """The first event of `entity` (and `action`), which must arrive within `within` seconds."""
        started = time.monotonic()
        while time.monotonic() - started < within:
            for _, item in self.events:
                if item["entity"] == entity and (action is None or item["action"] == action):
                    return item
            await asyncio.sleep(0.01)
        raise AssertionError(f"no {entity} {action or ''} event within {within}s: {self.events}")


@pytest.fixture
async def served(request: pytest.FixtureRequest, engine: AsyncEngine, redis: Redis, settings: Settings,
                 monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[str, Api, Settings]]:
    """The app on a port of its own, served with the slow-client deadlines short: a stream outlives them. A
    viewer may open 3 streams, or the test's parameter."""
    configured = settings.model_copy(update={"connect_heartbeat": 0.3, "connect_streams": 1100,
                                             "cors_origins": ["http://client.test"],
                                             "connect_streams_per_viewer": getattr(request, "param", 3)})
    deps = wire(configured, engine, Cache(redis), auth=build_auth(configured, redis, mailer=LogMailer()))
    app = create_app(configured, deps=deps)
    monkeypatch.setattr(ReadDeadlines, "header_timeout", 0.5)
    monkeypatch.setattr(ReadDeadlines, "body_timeout", 0.5)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", http=ReadDeadlines,
                                           limit_concurrency=2048, timeout_graceful_shutdown=1))
    task = asyncio.get_running_loop().create_task(server.serve())
    await until(lambda: server.started or task.done(), "uvicorn starts")
    base = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient(base_url=base, timeout=10) as http:
        yield base, Api(http, deps), configured
    server.should_exit = True
    await asyncio.wait_for(task, 15)


@contextlib.asynccontextmanager
async def opened(base: str, user: User | None, last_event_id: str | None = None,
                 client: httpx.AsyncClient | None = None) -> AsyncIterator[Stream]:
    headers = {"accept": "text/event-stream", "cache-control": "no-cache"}
    if user is not None:
        headers["authorization"] = f"Bearer {user.token}"
    if last_event_id is not None:
        headers["last-event-id"] = last_event_id
    own = client is None
    http = client or httpx.AsyncClient(timeout=httpx.Timeout(10, read=None))
    try:
        async with http.stream("GET", f"{base}/connect", headers=headers) as response:
            stream = Stream(response)
            reader = asyncio.get_running_loop().create_task(stream.read()) if response.status_code == 200 else None
            try:
                yield stream
            finally:
                if reader is not None:
                    reader.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await reader
    finally:
        if own:
            await http.aclose()


INVITE = "mutation($s: String, $a: Int) { create_invite(slug: $s, author_id: $a) { error } }"
UPDATE = "mutation($id: Int!, $d: DraftInput!) { update_draft(draft_id: $id, draft_input: $d) { draft { id } } }"
FOLLOW = 'mutation($s: String!) { follow(what: AUTHOR, slug: $s) { error } }'
COMMENT = "mutation($r: ReactionInput!) { create_reaction(reaction: $r) { reaction { id } } }"


async def test_each_kind_of_event_arrives_in_the_clients_shape_and_no_one_elses(
        served: tuple[str, Api, Settings]) -> None:
    base, api, _ = served
    me, other, stranger = await api.user(), await api.user(), await api.user()
    shout = await api.published(me)
    async with opened(base, me) as mine, opened(base, stranger) as theirs:
        assert mine.response.status_code == 200
        assert mine.response.headers["content-type"].startswith("text/event-stream")
        await api(FOLLOW, {"s": me.slug}, other)
        follower = await mine.arrived("follower", "follow")
        await api(COMMENT, {"r": {"shout": shout, "kind": "COMMENT", "body": "<p>hi</p>"}}, other)
        reaction = await mine.arrived("reaction", "create")
        await api(FOLLOW, {"s": other.slug}, me)
        await api.published(other)  # by an author I follow
        published = await mine.arrived("shout", "create")
        # a co-author: invited to my shout, accepted; then edits its draft
        slug = (await api("query($i: Int) { get_shout(shout_id: $i) { slug } }", {"i": shout}))["slug"]
        await api(INVITE, {"s": slug, "a": other.id}, me)
        async with api.deps.db() as session:
            invite = await session.scalar(select(Invite.id).where(Invite.shout_id == shout))
        await api("mutation($id: Int!) { accept_invite(invite_id: $id) { error } }", {"id": invite}, other)
        async with api.deps.db() as session:
            draft = await session.scalar(select(Shout.draft).where(Shout.id == shout))
        await api(UPDATE, {"id": draft, "d": {"title": "Вместе, правка"}}, other)
        edited = await mine.arrived("draft", "update")
        await asyncio.sleep(0.3)
    for item in (follower, reaction, published, edited):
        assert set(item) == {"id", "entity", "action", "payload", "created_at"}, item
        assert item["created_at"] > 1_700_000_000_000  # milliseconds
    assert follower["payload"]["follower"]["slug"] == other.slug
    assert reaction["payload"]["shout"]["id"] == shout and isinstance(reaction["id"], int)
    assert edited["payload"]["draft"] == draft and isinstance(edited["id"], str)
    assert theirs.events == [], "another viewer's events reached a stranger's stream"
    assert mine.comments >= 1, "no heartbeat in a stream that outlived the slow-client deadlines"


async def test_a_stream_is_refused_with_a_status_never_a_hang(served: tuple[str, Api, Settings]) -> None:
    base, api, settings = served
    async with opened(base, None) as anonymous:
        assert anonymous.response.status_code == 401
    user = await api.user()
    async with contextlib.AsyncExitStack() as stack:
        for _ in range(settings.connect_streams_per_viewer):
            stream = await stack.enter_async_context(opened(base, user))
            assert stream.response.status_code == 200
        async with opened(base, user) as over:
            assert over.response.status_code == 429 and over.response.headers["retry-after"]
    async with opened(base, user) as again:  # the others closed: room again
        assert again.response.status_code == 200


async def test_signing_out_ends_the_stream(served: tuple[str, Api, Settings]) -> None:
    base, api, _ = served
    user = await api.user()
    async with opened(base, user) as stream:
        await api("mutation { logout { success } }", user=user)
        await until(lambda: stream.ended, "the stream ends once its session is gone", deadline=5)


async def test_a_reconnection_resumes_from_last_event_id(served: tuple[str, Api, Settings]) -> None:
    base, api, _ = served
    me, other = await api.user(), await api.user()
    shout = await api.published(me)
    async with opened(base, me) as first:
        await api(COMMENT, {"r": {"shout": shout, "kind": "COMMENT", "body": "<p>one</p>"}}, other)
        await first.arrived("reaction")
        last = first.events[-1][0]
    for body in ("two", "three"):  # while the client is away
        await api(COMMENT, {"r": {"shout": shout, "kind": "COMMENT", "body": f"<p>{body}</p>"}}, other)
    async with opened(base, me, last_event_id=last) as second:
        await until(lambda: len(second.events) >= 2, "the missed events", deadline=2)
        await asyncio.sleep(0.2)
    assert [item["entity"] for _, item in second.events] == ["reaction", "reaction"]
    ids = [int(event_id.removeprefix("n")) for event_id, _ in second.events]
    assert ids == sorted(ids) and ids[0] > int(last.removeprefix("n"))


@pytest.mark.parametrize("served", [1000], indirect=True)
async def test_a_thousand_streams_cost_a_bounded_number_of_redis_connections(
        served: tuple[str, Api, Settings], redis: Redis) -> None:
    base, api, _ = served
    user = await api.user()
    before = len(await redis.client_list())
    limits = httpx.Limits(max_connections=1100, max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=httpx.Timeout(60, read=None), limits=limits) as http, \
            contextlib.AsyncExitStack() as stack:
        streams: list[Stream] = []
        for _ in range(10):
            streams += await asyncio.gather(*(stack.enter_async_context(opened(base, user, client=http))
                                              for _ in range(100)))
        assert [s.response.status_code for s in streams] == [200] * 1000
        during = len(await redis.client_list())
        await api(FOLLOW, {"s": user.slug}, await api.user())  # one event reaches all thousand
        await until(lambda: all(s.events for s in streams), "the event on every stream", deadline=10)
    # the hub's one pub/sub connection and what the pool lends meanwhile, whatever the number of streams
    assert during - before <= 12, (before, during)


async def test_the_clients_origin_may_open_it_with_credentials(served: tuple[str, Api, Settings]) -> None:
    base, api, _ = served
    preflight = await api.client.options("/connect", headers={
        "origin": "http://client.test", "access-control-request-method": "GET",
        "access-control-request-headers": "authorization, last-event-id, cache-control"})
    assert preflight.status_code in (200, 204)
    assert preflight.headers["access-control-allow-origin"] == "http://client.test"
    assert preflight.headers["access-control-allow-credentials"] == "true"
    elsewhere = await api.client.options("/connect", headers={
        "origin": "http://elsewhere.test", "access-control-request-method": "GET"})
    assert "access-control-allow-origin" not in elsewhere.headers
    user = await api.user()
    async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as http, http.stream(
            "GET", f"{base}/connect", headers={"origin": "http://client.test",
                                               "authorization": f"Bearer {user.token}"}) as response:
        assert response.status_code == 200
        assert response.headers["access-control-allow-origin"] == "http://client.test"
        assert response.headers["access-control-allow-credentials"] == "true"


def test_a_worker_refuses_past_its_total_and_a_viewer_past_theirs(settings: Settings) -> None:
    from app.routes.connect import Streams

    streams = Streams(settings.model_copy(update={"connect_streams": 3, "connect_streams_per_viewer": 2}))
    assert streams.admit(1) is None and streams.admit(1) is None
    assert getattr(streams.admit(1), "status_code", None) == 429  # the viewer's limit
    assert streams.admit(2) is None
    full = streams.admit(3)
    assert full is not None and full.status_code == 503 and full.headers["retry-after"]  # the worker's
    streams.leave(1)
    assert streams.admit(3) is None and streams.open == 3 and streams.by_viewer == {1: 1, 2: 1, 3: 1}
    for viewer in (1, 2, 3):
        streams.leave(viewer)
    assert streams.open == 0 and streams.by_viewer == {}


async def test_a_moderator_sees_new_comments_of_the_communities_they_moderate(
        served: tuple[str, Api, Settings]) -> None:
    base, api, _ = served
    editor, reader, author, commenter = await api.user("editor"), await api.user(), await api.user(), await api.user()
    shout = await api.published(author)  # in the default community, which the editor moderates
    async with opened(base, editor) as moderating, opened(base, reader) as reading:
        await api(COMMENT, {"r": {"shout": shout, "kind": "COMMENT", "body": "<p>spam?</p>"}}, commenter)
        seen = await moderating.arrived("reaction", "create")
        await asyncio.sleep(0.3)
    assert seen["payload"]["shout"] == {**seen["payload"]["shout"], "id": shout, "community": 1}
    assert reading.events == [], "a reader who moderates nothing got a moderator's event"


async def test_a_moderators_own_notification_arrives_once(served: tuple[str, Api, Settings]) -> None:
    """A comment on an editor's own shout reaches them on their channel and on the moderators': once."""
    base, api, _ = served
    editor, commenter = await api.user("editor"), await api.user()
    shout = await api.published(editor)
    async with opened(base, editor) as stream:
        await api(COMMENT, {"r": {"shout": shout, "kind": "COMMENT", "body": "<p>once</p>"}}, commenter)
        await stream.arrived("reaction", "create")
        await asyncio.sleep(0.4)
    assert [item["entity"] for _, item in stream.events] == ["reaction"], stream.events
