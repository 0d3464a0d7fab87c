"""Notifiable events on real PostgreSQL and Redis: published after the commit and never after a rollback,
pushed to exactly the people whose notification list shows them, and read and marked by the 2025 web
client's five notification operations."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from graphql import parse, validate
from sqlalchemy import func, select

from cache import keys
from cache.messaging.pubsub import Subscription
from orm import Invite, Notification, ShoutReactionsFollower, Topic
from resolvers.deps import Deps
from resolvers.events import follow_event
from resolvers.notifications import notifications_of
from resolvers.writes import transaction
from schema.engine.seam import graphql_schema
from schema.schema import build_schema
from tests.helpers import Api, sink_of, until
from tests.live import subscribed

CLIENT_OPERATIONS = Path(__file__).parents[1] / "contract_files" / "client-2025" / "notifier.graphql"
_MARK = "test-marker"
COMMENT = "mutation($r: ReactionInput!) { create_reaction(reaction: $r) { error reaction { id } } }"


@contextlib.asynccontextmanager
async def listening(deps: Deps, channels: list[str]) -> AsyncIterator[list[tuple[str, dict[str, Any]]]]:
    """Everything published on `channels` while the block runs, decoded: at its end the commits' work is
    waited for, then a marker published on each channel; once every marker has arrived, so has everything
    published before it (Redis delivers a channel's messages in the order it took them)."""
    got: list[tuple[str, dict[str, Any]]] = []
    sub: Subscription = await deps.hub.subscribe(channels)

    async def read() -> None:
        async for channel, raw in sub:
            got.append((channel, orjson.loads(raw)))

    task = asyncio.create_task(read())
    for channel in channels:
        await subscribed(deps.cache.redis, channel)
    try:
        yield got
        await sink_of(deps).settled()
        for channel in channels:
            await deps.cache.redis.publish(channel, orjson.dumps({"type": _MARK}))
        await until(lambda: sum(m.get("type") == _MARK for _, m in got) == len(channels),
                    "the markers published after the block reach the listener")
        got[:] = [(channel, message) for channel, message in got if message.get("type") != _MARK]
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await sub.aclose()


async def test_published_after_the_commit_and_never_after_a_rollback(api: Api, deps: Deps) -> None:
    follower, author = await api.user(), await api.user()
    async with listening(deps, [keys.channel_user(author.id)]) as got:
        with pytest.raises(RuntimeError):
            async with transaction(deps) as session:
                await follow_event(session, follower.id, author.id)
                raise RuntimeError("the write fails after the event was recorded")
        async with transaction(deps) as session:
            savepoint = await session.begin_nested()
            await follow_event(session, follower.id, author.id)
            await savepoint.rollback()
            await follow_event(session, follower.id, author.id)
    assert len(got) == 1, got  # the committed event, once
    channel, message = got[0]
    assert channel == keys.channel_user(author.id)
    assert set(message) == {"type", "user_id", "entity_type", "entity_id", "action", "data", "timestamp"}
    assert (message["type"], message["user_id"], message["entity_type"], message["entity_id"], message["action"]) == (
        "follower", author.id, "author", follower.id, "created")  # seed 000's word for what happened
    assert message["data"]["follower"]["id"] == follower.id and abs(message["timestamp"] - time.time()) < 60


async def test_who_is_pushed_an_event_is_who_lists_it(api: Api, deps: Deps) -> None:
    """A publication (followers of the author and of the topic), a comment (author, discussion follower),
    a reply (the replied-to commenter too), a muted thread, a follow and an accepted invite: for every
    user, the notifications pushed on their channel are exactly those their list holds."""
    author, topic_fan, author_fan, commenter, replier, muter, invitee = [await api.user() for _ in range(7)]
    people = [author, topic_fan, author_fan, commenter, replier, muter, invitee]
    async with deps.db() as session:
        topic_id, topic_slug = (await session.execute(select(Topic.id, Topic.slug).order_by(Topic.id).limit(1))).one()
    await api('mutation($s: String!) { follow(what: TOPIC, slug: $s) { error } }', {"s": topic_slug}, topic_fan)
    await api('mutation($s: String!) { follow(what: AUTHOR, slug: $s) { error } }', {"s": author.slug}, author_fan)
    async with deps.db() as session:
        before = await session.scalar(select(func.max(Notification.id))) or 0
    async with listening(deps, [keys.channel_user(p.id) for p in people]) as got:
        shout = await api.published(author, topic=topic_id)
        comment = (await api(COMMENT, {"r": {"kind": "COMMENT", "shout": shout, "body": "первый"}}, commenter))
        await api(COMMENT, {"r": {"kind": "COMMENT", "shout": shout, "body": "ответ",
                                  "reply_to": comment["reaction"]["id"]}}, replier)
        await api(COMMENT, {"r": {"kind": "COMMENT", "shout": shout, "body": "я тоже"}}, muter)
        await api('mutation($t: String!) { notification_unsubscribe_thread(thread_id: $t) { success } }',
                  {"t": f"shout:{shout}"}, muter)
        await api(COMMENT, {"r": {"kind": "COMMENT", "shout": shout, "body": "после"}}, commenter)
        await api('mutation($s: String, $a: Int) { create_invite(slug: $s, author_id: $a) { error } }',
                  {"s": (await api("query($id: Int!) { get_shout(shout_id: $id) { slug } }", {"id": shout}))["slug"],
                   "a": invitee.id}, author)
        async with deps.db() as session:
            invite = await session.scalar(select(Invite.id).where(Invite.shout_id == shout))
        await api("mutation($id: Int!) { accept_invite(invite_id: $id) { error } }", {"id": invite}, invitee)
    pushed: dict[int, set[int]] = {p.id: set() for p in people}
    for channel, message in got:
        pushed[int(channel.rsplit(":", 1)[1])].add(message["data"]["notification"])
    async with deps.db() as session:
        listed = {p.id: {n.id for n, _ in await notifications_of(session, p.id, 0) if n.id > before} for p in people}
    assert pushed == listed
    kinds = {p.id: sorted(m["type"] for c, m in got if c == keys.channel_user(p.id)) for p in people}
    assert kinds[topic_fan.id] == kinds[author_fan.id] == ["publication"]  # not in the discussion
    assert kinds[commenter.id] == ["reaction", "reaction"]  # the reply to them, the next comment; not their own
    assert kinds[replier.id] == ["reaction", "reaction"]  # the comments after they joined the discussion
    assert kinds[muter.id] == []  # joined after the reply, muted the thread before the next comment
    assert kinds[author.id] == ["invite", "reaction", "reaction", "reaction", "reaction"]
    assert kinds[invitee.id] == []


async def test_the_client_notification_operations_run(api: Api) -> None:
    """The 2025 web client's five operations, unedited, validate and return data against seeded data."""
    documents = [d.strip() for d in CLIENT_OPERATIONS.read_text().split("#---") if d.strip()]
    schema = build_schema()
    assert len(documents) == 5
    for document in documents:
        assert not validate(graphql_schema(schema), parse(document)), document
    author, reader = await api.user(), await api.user()
    shout = await api.published(author)
    since = int(time.time()) - 5
    await api(COMMENT, {"r": {"kind": "COMMENT", "shout": shout, "body": "интересно"}}, reader)
    await api('mutation($s: String!) { follow(what: AUTHOR, slug: $s) { error } }', {"s": reader.slug}, author)
    await api('mutation($s: String!) { follow(what: AUTHOR, slug: $s) { error } }', {"s": author.slug}, reader)
    by_name = {d.split("(")[0].split()[1]: d for d in documents}

    async def run(name: str, variables: dict[str, Any]) -> Any:
        body = await api.raw(by_name[name], variables, author)
        assert "errors" not in body and body["data"], (name, body)
        return next(iter(body["data"].values()))

    loaded = await run("LoadNotificationsQuery", {"after": since, "limit": 10, "offset": 0})
    assert loaded["total"] == 2 and loaded["unread"] == 2
    discussion = next(g for g in loaded["notifications"] if g["shout"])
    assert discussion["shout"]["id"] == shout and discussion["authors"][0]["id"] == reader.id
    assert len(discussion["reactions"]) == 1 and isinstance(discussion["reactions"][0], int)
    assert (await run("MarkNotificationAsReadMutation", {"notificationId": discussion["id"]}))["error"] is None
    assert (await run("LoadNotificationsQuery", {"after": since}))["unread"] == 1
    assert (await run("MarkThreadSeen", {"thread": "followers", "after": since}))["error"] is None
    assert (await run("LoadNotificationsQuery", {"after": since}))["unread"] == 0
    assert (await run("MarkSeenAfter", {"after": since}))["error"] is None
    assert (await run("NotificationUnsubscribeThread", {"threadId": f"shout:{shout}"})) == {
        "success": True, "error": None}
    after = await run("LoadNotificationsQuery", {"after": since})
    assert after["total"] == 1 and not any(g["shout"] for g in after["notifications"])  # the muted thread is gone


async def test_commenting_again_follows_a_muted_discussion_again(api: Api, deps: Deps) -> None:
    """Muting a discussion switches its follow off (deleted_at); a comment there joins it again, as any
    comment does (resolvers/reaction_write.py reads the follow in the statement that reads the shout)."""
    author, reader = await api.user(), await api.user()
    shout = await api.published(author)
    await api(COMMENT, {"r": {"kind": "COMMENT", "shout": shout, "body": "первый"}}, reader)
    await api("mutation($t: String!) { notification_unsubscribe_thread(thread_id: $t) { success } }",
              {"t": f"shout:{shout}"}, reader)

    async def follows() -> tuple[int | None, ...] | None:
        async with deps.db() as session:
            row = await session.get(ShoutReactionsFollower, (reader.id, shout), populate_existing=True)
            return None if row is None else (row.deleted_at,)

    muted = await follows()
    assert muted is not None and muted[0] is not None
    await api(COMMENT, {"r": {"kind": "COMMENT", "shout": shout, "body": "снова"}}, reader)
    assert await follows() == (None,)


async def test_a_comment_costs_the_same_statements_whatever_its_discussion_s_size(
        api: Api, deps: Deps, sql_counter: Any) -> None:
    """Who a comment concerns is chosen and stored by one INSERT ... SELECT, with the notification itself on
    PostgreSQL: a discussion of fifteen followers takes as many statements as one of two, and every one of
    them lists the comment. A comment is two statements: the shout (with its authors and topics), then the
    reaction with the writer's follow and the notification with its recipients (resolvers/comment_driver.py);
    the cache's rules asking the shout's facts again, the notification stored apart, reading the followers and
    the muted in Python, the stats of a comment nothing answers yet and the shout again made it thirteen."""
    author = await api.user()
    small, large = await api.published(author), await api.published(author)
    commenters = [await api.user() for _ in range(15)]
    for n, commenter in enumerate(commenters):  # each joins the large discussion; two join the small one
        await api(COMMENT, {"r": {"kind": "COMMENT", "shout": large, "body": f"к {n}"}}, commenter)
        if n < 2:
            await api(COMMENT, {"r": {"kind": "COMMENT", "shout": small, "body": f"к {n}"}}, commenter)
    writer = await api.user()
    for shout in (small, large):  # the writer joins both discussions first: the comments counted are alike
        await api(COMMENT, {"r": {"kind": "COMMENT", "shout": shout, "body": "сначала"}}, writer)
    statements = {}
    for shout in (small, large):
        sql_counter.reset()
        created = await api(COMMENT, {"r": {"kind": "COMMENT", "shout": shout, "body": "ещё"}}, writer)
        statements[shout] = list(sql_counter.statements)
    assert len(statements[large]) == len(statements[small]) == 2, statements
    recipients = [s for s in statements[large] if "notification_recipient" in s]
    assert len(recipients) == 1 and "note AS (INSERT INTO notification " in " ".join(recipients[0].split()), recipients
    async with deps.db() as session:
        for person in (author, *commenters):
            listed = {n.payload["reaction"] for n, _ in await notifications_of(session, person.id, 0)}
            assert created["reaction"]["id"] in listed, person
