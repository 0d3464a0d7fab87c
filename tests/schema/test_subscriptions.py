"""GraphQL subscriptions over WebSocket (graphql-transport-ws and legacy graphql-ws) and server-sent
events, against a real uvicorn, PostgreSQL and Redis: the protocol, authentication, and what each root
field delivers."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

import httpx
import pytest
import websockets

from cache import keys
from tests.helpers import Api, User
from tests.live import LEGACY_WS, GqlWs, serve, subscribed

NOTIFICATIONS = "subscription { notifications { type user_id entity_type entity_id action data timestamp } }"
SHOUT_REACTIONS = ("subscription($s: Int!) { shout_reactions(shout_id: $s) { action reaction { id kind body "
                   "created_by { id } } } }")
TOPIC_SHOUTS = "subscription($t: String!) { topic_shouts(slug: $t) { id slug title } }"
CREATE = "mutation($r: ReactionInput!) { create_reaction(reaction: $r) { error reaction { id } } }"


async def _published(api: Api, author: User, topic: int | None = None) -> tuple[int, str]:
    slug = f"live-{uuid.uuid4().hex[:10]}"
    draft: dict[str, Any] = {"title": "Живая статья", "body": "<p>текст</p>", "slug": slug}
    if topic is not None:
        draft["topic_ids"] = [topic]
        draft["main_topic_id"] = topic
    created = await api("mutation($d: DraftInput!) { create_draft(draft_input: $d) { draft { id } } }", {"d": draft},
                        author)
    shout = await api("mutation($id: Int!) { publish_draft(draft_id: $id) { shout { id } } }",
                      {"id": created["draft"]["id"]}, author)
    return shout["shout"]["id"], slug


async def _comment(api: Api, user: User, shout_id: int, body: str = "Комментарий") -> int:
    result = await api(CREATE, {"r": {"kind": "COMMENT", "shout": shout_id, "body": body}}, user)
    return int(result["reaction"]["id"])


@pytest.fixture
async def server(app: Any) -> Any:
    async with serve(app) as base:
        yield base


async def test_notifications_subscribe_next_complete(api: Api, server: str) -> None:
    author, reader = await api.user(), await api.user()
    shout_id, _ = await _published(api, author)
    async with GqlWs.connect(server) as ws:
        assert (await ws.init({"token": author.token}))["type"] == "connection_ack"
        await ws.subscribe("1", NOTIFICATIONS)
        await subscribed(api.deps.cache.redis, keys.channel_user(author.id))
        comment = await _comment(api, reader, shout_id, "Прочитал с интересом")
        message = await ws.next_message()
        assert message["type"] == "next" and message["id"] == "1"
        event = message["payload"]["data"]["notifications"]
        assert {k: event[k] for k in ("type", "user_id", "entity_type", "entity_id", "action")} == {
            "type": "reaction", "user_id": author.id, "entity_type": "reaction", "entity_id": comment,
            "action": "create"}
        assert event["data"]["reaction"]["body"] == "Прочитал с интересом"
        assert event["data"]["shout"]["id"] == shout_id and abs(event["timestamp"] - time.time()) < 60

        await ws.send({"id": "1", "type": "complete"})
        await _comment(api, reader, shout_id, "после complete")
        await ws.send({"type": "ping"})
        assert (await ws.receive())["type"] == "pong"  # and no `next` before it
        with pytest.raises(asyncio.TimeoutError):
            await ws.next_message(wait=0.5)


async def test_a_guest_is_refused_notifications_without_losing_the_socket(api: Api, server: str) -> None:
    author = await api.user()
    shout_id, _ = await _published(api, author)
    async with GqlWs.connect(server) as ws:
        assert (await ws.init())["type"] == "connection_ack"
        await ws.subscribe("guest", NOTIFICATIONS)
        refused = await ws.next_message()
        assert refused["type"] == "error" and refused["id"] == "guest"
        assert refused["payload"][0]["extensions"]["code"] == "UNAUTHENTICATED"
        # the same socket still serves public subscriptions
        await ws.subscribe("public", SHOUT_REACTIONS, {"s": shout_id})
        await subscribed(api.deps.cache.redis, keys.channel_shout(shout_id))
        await _comment(api, await api.user(), shout_id, "для всех")
        message = await ws.next_message()
        assert message["id"] == "public" and message["payload"]["data"]["shout_reactions"]["action"] == "create"


async def test_a_second_connection_init_is_refused_with_4429(server: str) -> None:
    async with GqlWs.connect(server) as ws:
        assert (await ws.init())["type"] == "connection_ack"
        await ws.send({"type": "connection_init"})
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await ws.receive()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4429


async def test_authorization_in_the_payload_and_by_cookie(api: Api, server: str) -> None:
    author, reader = await api.user(), await api.user()
    shout_id, _ = await _published(api, author)
    cookie = api.deps.accounts.settings.session_cookie
    for init, headers in (({"Authorization": f"Bearer {author.token}"}, None),
                          ({}, {"Cookie": f"{cookie}={author.token}"})):
        async with GqlWs.connect(server, headers=headers) as ws:
            await ws.init(init)
            await ws.subscribe("n", NOTIFICATIONS)
            await subscribed(api.deps.cache.redis, keys.channel_user(author.id))
            comment = await _comment(api, reader, shout_id)
            assert (await ws.next_message())["payload"]["data"]["notifications"]["entity_id"] == comment


async def test_shout_reactions_created_edited_deleted(api: Api, server: str) -> None:
    author, reader = await api.user(), await api.user()
    shout_id, _ = await _published(api, author)
    async with GqlWs.connect(server) as ws:
        await ws.init()
        await ws.subscribe("r", SHOUT_REACTIONS, {"s": shout_id})
        await subscribed(api.deps.cache.redis, keys.channel_shout(shout_id))
        comment = await _comment(api, reader, shout_id, "первый")
        await api("mutation($r: ReactionInput!) { update_reaction(reaction: $r) { error } }",
                  {"r": {"id": comment, "kind": "COMMENT", "shout": shout_id, "body": "исправленный"}}, reader)
        await api("mutation($id: Int!) { create_reaction(reaction: {kind: LIKE, shout: $id}) { error } }",
                  {"id": shout_id}, reader)
        await api("mutation($id: Int!) { delete_reaction(reaction_id: $id) { error } }", {"id": comment}, reader)
        seen = [(await ws.next_message())["payload"]["data"]["shout_reactions"] for _ in range(4)]
    assert [(s["action"], s["reaction"]["kind"], s["reaction"]["body"]) for s in seen] == [
        ("create", "COMMENT", "первый"), ("update", "COMMENT", "исправленный"), ("create", "LIKE", None),
        ("delete", "COMMENT", "исправленный")]
    assert all(s["reaction"]["created_by"] == {"id": reader.id} for s in seen)


async def test_topic_shouts_and_private_shouts(api: Api, server: str) -> None:
    author, stranger = await api.user(), await api.user()
    async with GqlWs.connect(server) as ws:
        await ws.init({"token": stranger.token})
        await ws.subscribe("t", TOPIC_SHOUTS, {"t": "culture"})
        async with api.deps.db() as session:
            from sqlalchemy import select

            from orm import Topic

            culture = await session.scalar(select(Topic.id).where(Topic.slug == "culture"))
        assert culture is not None
        await subscribed(api.deps.cache.redis, keys.channel_topic(culture))
        shout_id, slug = await _published(api, author, topic=culture)
        shout = (await ws.next_message())["payload"]["data"]["topic_shouts"]
        assert shout["id"] == shout_id and shout["slug"] == slug

        await api("mutation($id: Int!) { unpublish_shout(shout_id: $id) { error } }", {"id": shout_id}, author)
        await ws.subscribe("private", SHOUT_REACTIONS, {"s": shout_id})
        refused = await ws.next_message()
        assert refused["type"] == "error" and refused["payload"][0]["extensions"]["code"] == "NOT_FOUND"


async def test_legacy_graphql_ws_protocol(api: Api, server: str) -> None:
    author, reader = await api.user(), await api.user()
    shout_id, _ = await _published(api, author)
    async with GqlWs.connect(server, protocol=LEGACY_WS) as ws:
        await ws.send({"type": "connection_init", "payload": {"token": author.token}})
        assert (await ws.next_message())["type"] == "connection_ack"
        await ws.send({"id": "1", "type": "start", "payload": {"query": NOTIFICATIONS}})
        await subscribed(api.deps.cache.redis, keys.channel_user(author.id))
        comment = await _comment(api, reader, shout_id)
        message = await ws.next_message()
        assert message["type"] == "data" and message["payload"]["data"]["notifications"]["entity_id"] == comment
        await ws.send({"id": "1", "type": "stop"})
        assert (await ws.next_message())["type"] == "complete"


async def test_server_sent_events(api: Api, server: str) -> None:
    author, reader = await api.user(), await api.user()
    shout_id, _ = await _published(api, author)
    body = {"query": SHOUT_REACTIONS, "variables": {"s": shout_id}}
    async with httpx.AsyncClient(base_url=server, timeout=10) as http, http.stream(
            "POST", "/graphql", json=body, headers={"accept": "text/event-stream"}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        await subscribed(api.deps.cache.redis, keys.channel_shout(shout_id))
        comment = await _comment(api, reader, shout_id, "по SSE")
        lines = response.aiter_lines()
        event = data = None
        while data is None:
            line = await asyncio.wait_for(lines.__anext__(), 5)
            if line.startswith("event:"):
                event = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and event == "next":
                data = json.loads(line.split(":", 1)[1])
    assert data["data"]["shout_reactions"]["reaction"]["id"] == comment
