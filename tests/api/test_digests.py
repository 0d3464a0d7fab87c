"""Notification digests on the delayed queue: a busy window is one message and one mail per author,
listing what they have not seen; nothing is mailed for what they saw, or to an unverified address; the
one who acted gets no digest of their own act."""

from __future__ import annotations

import uuid

import pytest
from redis.asyncio import Redis
from sqlalchemy import select, update

from app.main import sweep_pending
from auth.mailer import LogMailer
from cache import keys
from cache.messaging.delayed import Message
from config.settings import Settings
from orm import Author, NotificationRecipient
from resolvers.digests import DIGEST
from resolvers.writes import transaction
from tests.helpers import Api, User, inside_one_window

DRAFT = "mutation($d: DraftInput!) { create_draft(draft_input: $d) { draft { id } } }"
PUBLISH = "mutation($id: Int!) { publish_draft(draft_id: $id) { shout { id } } }"
COMMENT = "mutation($s: Int!) { create_reaction(reaction: {kind: COMMENT, shout: $s, body: \"да\"}) { error } }"
FOLLOW = "mutation($s: String!) { follow(what: AUTHOR, slug: $s) { error } }"
SEEN_ALL = "mutation { notifications_seen_after(after: 0) { error } }"
WINDOW = 3600


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"notification_digest_window": WINDOW})


async def _author_with_shout(api: Api, *, verified: bool) -> tuple[User, int, str]:
    user = await api.user()
    async with transaction(api.deps) as session:
        await session.execute(update(Author).where(Author.id == user.id).values(email_verified=verified))
        email = (await session.get(Author, user.id)).email  # type: ignore[union-attr]
    draft = await api(DRAFT, {"d": {"title": "Дайджест", "body": "<p>текст</p>",
                                    "slug": f"digest-{uuid.uuid4().hex[:10]}"}}, user)
    shout = await api(PUBLISH, {"id": draft["draft"]["id"]}, user)
    return user, shout["shout"]["id"], email


async def _deliver_due(api: Api) -> int:
    """Handle every digest as if its window had ended."""
    queue = api.deps.delayed
    handled = 0
    for message in await queue.fetch(now=10**10):
        assert message.kind == DIGEST, message
        handled += await queue.handle(message) == "done"
    return handled


async def test_a_busy_window_is_one_digest(api: Api, redis: Redis, mailer: LogMailer) -> None:
    await redis.delete(keys.delayed_queue("deferred"))
    author, shout, email = await _author_with_shout(api, verified=True)
    reader = await api.user()
    for _ in range(3):
        assert (await api(COMMENT, {"s": shout}, reader))["error"] is None
    assert (await api(FOLLOW, {"s": author.slug}, reader))["error"] is None
    assert await redis.zcard(keys.delayed_queue("deferred")) == 1  # one author, one window: one message
    mailer.sent.clear()
    assert await _deliver_due(api) == 1
    # in the deployment's language (DEFAULT_LANGUAGE, Russian): the reader is not asking
    assert [(m.to, m.subject, m.lang) for m in mailer.sent] == [(email, "Дискурс: новых уведомлений — 4", "ru")]
    assert f"3 нов. в shout:{shout}" in mailer.sent[0].body and "1 нов. в followers" in mailer.sent[0].body
    assert mailer.sent[0].html is not None and "/inbox" in mailer.sent[0].html


async def test_no_digest_of_what_was_seen_or_to_an_unverified_address(api: Api, redis: Redis,
                                                                      mailer: LogMailer) -> None:
    await redis.delete(keys.delayed_queue("deferred"))
    seen, seen_shout, _ = await _author_with_shout(api, verified=True)
    _, other_shout, _ = await _author_with_shout(api, verified=False)
    reader = await api.user()
    await api(COMMENT, {"s": seen_shout}, reader)
    await api(COMMENT, {"s": other_shout}, reader)
    await api(SEEN_ALL, None, seen)
    assert await redis.zcard(keys.delayed_queue("deferred")) == 2  # the reader queued none for themself
    mailer.sent.clear()
    assert await _deliver_due(api) == 2  # both handled, neither mailed
    assert list(mailer.sent) == []


REPLY = """mutation($s: Int!, $r: Int) {
  create_reaction(reaction: {kind: COMMENT, shout: $s, body: "ответ", reply_to: $r}) { error reaction { id } }
}"""


async def test_the_sweep_queues_again_from_sql_what_a_lost_redis_held(api: Api, redis: Redis,
                                                                      mailer: LogMailer) -> None:
    """A Redis that loses its data loses no digest: the sweep reads from the database who was notified
    directly in the current window and queues the very messages the writes queued. Who was notified only
    as a follower of the discussion gets none (the control: that person is in the database's recipients)."""
    await inside_one_window(WINDOW, needed=30)  # the writes and the sweep in one digest window
    queue = keys.delayed_queue("deferred")
    await redis.delete(queue)
    author, shout, email = await _author_with_shout(api, verified=True)
    answered, answering, watcher, followed = [await api.user() for _ in range(4)]
    await api(REPLY, {"s": shout, "r": None}, watcher)  # the watcher follows the discussion from now on
    comment = (await api(REPLY, {"s": shout, "r": None}, answered))["reaction"]["id"]
    assert (await api(REPLY, {"s": shout, "r": comment}, answering))["error"] is None
    assert (await api(FOLLOW, {"s": followed.slug}, watcher))["error"] is None
    queued = await redis.zrange(queue, 0, -1, withscores=True)
    async with api.deps.db() as session:
        recipients = set((await session.scalars(select(NotificationRecipient.author))).all())
    assert watcher.id in recipients  # notified, as a follower of the discussion

    await redis.flushdb()  # the Redis lost its data
    await sweep_pending(api.deps)
    mine = {user.id for user in (author, answered, answering, watcher, followed)}

    def of_this_test(members: list[tuple[bytes, float]]) -> list[tuple[bytes, float]]:
        return [(m, at) for m, at in members if Message.parse(m.decode()).payload["author"] in mine]

    swept = await redis.zrange(queue, 0, -1, withscores=True)
    assert of_this_test(swept) == queued  # earlier tests' authors of this window are swept as well
    due = [Message.parse(member.decode()).payload["author"] for member, _ in queued]
    assert sorted(due) == sorted([author.id, answered.id, followed.id])
    await sweep_pending(api.deps)  # idempotent
    assert await redis.zrange(queue, 0, -1, withscores=True) == swept
    mailer.sent.clear()
    assert await _deliver_due(api) == len(swept)
    assert email in [m.to for m in mailer.sent]
