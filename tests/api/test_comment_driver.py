"""A comment on PostgreSQL sent on the driver (resolvers/comment_driver.py) against the same comment through a
session (resolvers/reaction_write.py, the path of SQLite and of a transaction pooler): the same rows, the same
record for the cache (tags, marks, live operations, messages' channels), announced as the session's path
announces; and `one_statement`'s guarantees: a statement that fails withdraws its announcement, and one that was
sent is applied even when its request is cancelled. Its first statement goes out beside its writer's check."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import pytest
from redis.asyncio import Redis
from sqlalchemy import select

from cache import keys
from orm import Notification, NotificationRecipient, Reaction, Shout, ShoutReactionsFollower
from orm.driver import DriverReads
from orm.stats import is_listed
from resolvers import reaction_write
from resolvers.deps import Deps
from resolvers.writes import one_statement
from schema.context import Context
from tests.helpers import Api
from triggers.changes import Changes
from triggers.listeners import sink_of
from triggers.sink import CacheSink

CREATE = "mutation($r: ReactionInput!) { create_reaction(reaction: $r) { error reaction { id } } }"


async def _listed_shouts(deps: Deps, count: int) -> list[int]:
    async with deps.db() as session:
        return list((await session.scalars(select(Shout.id).where(is_listed()).order_by(Shout.id.desc())
                                           .limit(count))).all())


def _shape(changes: Changes, ids: dict[str, str]) -> dict[str, Any]:
    """What a record says, its new rows' ids named by what they are (`ids`), its messages by their channels."""
    def named(value: Any) -> str:  # an id as a key's member is zero-padded (cache/keys.py)
        return ids.get(str(int(value)), str(value)) if str(value).isdigit() else str(value)

    def writer_named(text: str) -> str:  # the writer's id where a key or channel names it
        return re.sub(rf"\b{ids['writer id']}\b", "writer", text)
    return {
        "tags": sorted(map(writer_named, changes.tags)),
        "marks": sorted((kind, named(entity)) for kind, entity in changes.marks),
        "live": {(kind, named(entity)): sorted((op.verb, writer_named(op.name), tuple(map(named, op.args)))
                                               for op in ops)
                 for (kind, entity), ops in sorted(changes.live.by_entity.items()) if ops},
        "announced": sorted((kind, named(entity)) for kind, entity in changes.live.by_entity),
        "channels": sorted(writer_named(channel) for channel, _ in changes.messages),
        "writes": dict(changes.writes),
    }


async def _comment(api: Api, deps: Deps, monkeypatch: pytest.MonkeyPatch, *, driver: bool, user: Any, shout: int,
                   reply_to: int | None) -> tuple[Changes, dict[str, Any]]:
    recorded: list[Changes] = []
    schedule = CacheSink.schedule

    def recording(self: CacheSink, changes: Changes, *, announced: bool) -> Any:
        recorded.append(changes)
        assert announced  # both announce the live structures they change before the write is visible
        return schedule(self, changes, announced=announced)

    with monkeypatch.context() as patched:
        patched.setattr(CacheSink, "schedule", recording)
        if not driver:
            patched.setattr(reaction_write, "driver_of", lambda _db: None)
        created = await api(CREATE, {"r": {"kind": "COMMENT", "shout": shout, "body": "одно и то же",
                                           "reply_to": reply_to}}, user)
    assert created["error"] is None and len(recorded) == 1
    comment = created["reaction"]["id"]
    async with deps.db() as session:
        row = await session.get(Reaction, comment)
        follow = await session.get(ShoutReactionsFollower, (user.id, shout))
        note = await session.scalar(select(Notification).where(Notification.payload["reaction"].as_integer() == comment))
        assert row is not None and follow is not None and note is not None
        recipients = sorted((await session.scalars(select(NotificationRecipient.author).where(
            NotificationRecipient.notification == note.id))).all())
    rows = {"reaction": {k: v for k, v in row.dict().items() if k not in ("id", "created_by")},
            "follow": (follow.auto, follow.deleted_at, follow.created_at),
            "note": (note.entity, note.action, note.status, note.kind, note.created_at,
                     {k: v for k, v in note.payload.items() if k not in ("reaction", "created_by")}),
            "recipients": recipients}
    ids = {str(comment): "comment", str(user.id): "writer", "writer id": str(user.id)}
    return recorded[0], {"rows": rows, "record": _shape(recorded[0], ids)}


@pytest.mark.parametrize("reply", [False, True], ids=["a comment", "a reply"])
async def test_a_comment_on_the_driver_writes_and_records_what_one_through_a_session_does(
        api: Api, deps: Deps, monkeypatch: pytest.MonkeyPatch, reply: bool) -> None:
    """Two readers new to a discussion (each comment makes its writer's follow) comment on one shout, one on each
    path, at the same second; on a reply, both answer a third reader's comment (whose counts and digests move).
    The second's recipients also hold the first, who follows the discussion by then: left out."""
    assert sink_of(deps.primary) is not None and reaction_write.driver_of(deps.primary) is not None
    shout = (await _listed_shouts(deps, 1))[0]
    answered = await api.user()
    reply_to = None
    if reply:
        reply_to = (await api(CREATE, {"r": {"kind": "COMMENT", "shout": shout, "body": "вопрос"}},
                              answered))["reaction"]["id"]
    writers = {True: await api.user(), False: await api.user()}
    now = time.time()
    seen = {}
    monkeypatch.setattr(time, "time", lambda: now)  # one second for both: their rows and scores hold it
    for driver in (True, False):
        _, seen[driver] = await _comment(api, deps, monkeypatch, driver=driver, user=writers[driver], shout=shout,
                                         reply_to=reply_to)
    seen[False]["rows"]["recipients"].remove(writers[True].id)
    seen[False]["record"]["channels"].remove(keys.channel_user(writers[True].id))
    assert seen[True] == seen[False]
    assert seen[True]["record"]["live"] and seen[True]["rows"]["recipients"]  # there was something to compare


async def test_a_statement_that_fails_withdraws_its_announcement(deps: Deps, redis: Redis) -> None:
    sink = sink_of(deps.primary)
    assert sink is not None
    entity = ("shout", 909_000_001)
    changes = Changes()
    changes.live.by_entity[entity] = []

    async def failing() -> None:
        assert await redis.hget(keys.live_meta(*entity), "p") == b"1"  # announced before it is sent
        raise RuntimeError("the statement failed")

    with pytest.raises(RuntimeError):
        await one_statement(sink, changes, failing)
    await sink.settled()  # type: ignore[attr-defined]
    assert await redis.hget(keys.live_meta(*entity), "p") == b"0"  # readers may build again


async def test_a_statement_sent_is_applied_when_its_request_is_cancelled(deps: Deps, redis: Redis) -> None:
    sink = sink_of(deps.primary)
    assert sink is not None
    tag = "tag:one-statement-test"
    changes = Changes()
    changes.tag(tag)
    before = await redis.get(keys.generations([tag])[0])
    sent, answered = asyncio.Event(), asyncio.Event()

    async def slow() -> str:
        sent.set()
        await answered.wait()  # the database answers after the request was cancelled
        return "committed"

    writing = asyncio.create_task(one_statement(sink, changes, slow))
    await sent.wait()
    writing.cancel()
    answered.set()
    with pytest.raises(asyncio.CancelledError):
        await writing
    assert await redis.get(keys.generations([tag])[0]) != before  # invalidated all the same


async def test_a_comment_reads_its_shout_while_its_writer_is_checked(api: Api, deps: Deps,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A comment's first statement (its shout, what it answers, its id) names no one: it goes out while the
    writer's session is checked, one wait for both, where they were one after the other."""
    shout = (await _listed_shouts(deps, 1))[0]
    writer = await api.user()
    assert deps.auth is not None
    sessions = type(deps.auth.sessions)
    validate, rows = sessions.validate, DriverReads.rows
    happened: list[str] = []

    async def slow_check(self: Any, token: str) -> Any:
        happened.append("check sent")
        await asyncio.sleep(0.05)  # Redis answers late: the statement goes out meanwhile
        session = await validate(self, token)
        happened.append("checked")
        return session

    async def read(self: DriverReads, *args: Any, **kwargs: Any) -> Any:
        happened.append("statement sent")
        return await rows(self, *args, **kwargs)

    monkeypatch.setattr(sessions, "validate", slow_check)
    monkeypatch.setattr(DriverReads, "rows", read)
    created = await api(CREATE, {"r": {"kind": "COMMENT", "shout": shout, "body": "пока проверяют"}}, writer)
    assert created["error"] is None
    assert happened.index("statement sent") < happened.index("checked"), happened
    # the control: read after the check, as when the request names no account before it is checked
    happened.clear()
    monkeypatch.setattr(Context, "_claimed", lambda self: None)
    await api(CREATE, {"r": {"kind": "COMMENT", "shout": shout, "body": "после проверки"}}, writer)
    assert happened.index("statement sent") > happened.index("checked"), happened


async def _comments_on(deps: Deps, shout: int) -> int:
    async with deps.db() as session:
        return len((await session.scalars(select(Reaction.id).where(Reaction.shout == shout))).all())


async def test_a_comment_read_beside_a_revoked_session_writes_nothing(api: Api, deps: Deps,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A token whose session is gone (signed, not expired: its statement is read beside the check) gets
    UNAUTHENTICATED and writes nothing; a guest, whose request names no account, has nothing read; a writer
    whose input is refused gets the same error as before anything was read."""
    shout = (await _listed_shouts(deps, 1))[0]
    writer = await api.user()
    assert deps.auth is not None
    before = await _comments_on(deps, shout)
    statements: list[object] = []
    rows = DriverReads.rows

    async def read(self: DriverReads, *args: Any, **kwargs: Any) -> Any:
        statements.append(args)
        return await rows(self, *args, **kwargs)

    monkeypatch.setattr(DriverReads, "rows", read)
    comment = {"r": {"kind": "COMMENT", "shout": shout, "body": "после выхода"}}
    assert await api.error(CREATE, {"r": {"kind": "COMMENT", "shout": shout, "body": ""}}, writer) == "BAD_USER_INPUT"
    await deps.auth.sessions.revoke_all(writer.id)
    assert await api.error(CREATE, comment, writer) == "UNAUTHENTICATED"
    assert len(statements) == 2  # each read its shout beside the check, and wrote nothing
    assert await api.error(CREATE, comment) == "UNAUTHENTICATED"
    assert len(statements) == 2  # a guest: nothing read
    assert await _comments_on(deps, shout) == before
