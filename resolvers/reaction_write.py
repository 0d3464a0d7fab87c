"""Creating, editing and deleting reactions: comments in threads, LIKE/DISLIKE votes on shouts and on
comments (one vote per author and target; the opposite vote replaces it), and the argument kinds."""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Integer, String, bindparam, cast, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased, load_only

from auth.permissions import Viewer
from orm import Reaction, Shout, ShoutAuthor, ShoutReactionsFollower, ShoutTopic
from orm.driver import driver_of
from orm.reaction import RATING_KINDS
from orm.stats import is_listed, reaction_stats
from resolvers.access import ViewerCheck, require
from resolvers.afterwards import after_answer
from resolvers.comment_driver import create_comment
from resolvers.deps import Deps
from resolvers.digests import queue_digests
from resolvers.errors import BadInput, Conflict, NotFound
from resolvers.events import reaction_event
from resolvers.reaction_input import MAX_BODY, NEEDS_BODY, checked_input
from resolvers.writes import added_once, transaction
from triggers.listeners import sink_of
from triggers.related import ShoutFacts, known_shout


async def _reaction_dict(session: AsyncSession, reaction: Reaction) -> dict[str, Any]:
    stats = await reaction_stats(session, [reaction.id])
    return {**reaction.dict(), "stat": stats[reaction.id]}


@dataclass(slots=True)
class _Target:
    """What a new reaction needs of its shout, read in one statement: the shout (with what its event tells
    of it, not its body, which may be long), its authors (the owners a vote must not be cast by, and the
    people its event concerns) and the writer's follow of its discussion, if any."""
    shout: Shout
    authors: list[int]
    follow: ShoutReactionsFollower | None


_FOLLOW = aliased(ShoutReactionsFollower)
# Built once (a statement built per write is a tenth of a comment's CPU): the shout, the writer's
# follow of its discussion and its authors, by the parameters `shout` and `writer`.
# Its topics as one string ("3,17"): the cache rules of the reaction ask them (triggers/related.py).
_TOPICS = (select(func.aggregate_strings(cast(ShoutTopic.topic, String), ","))
           .where(ShoutTopic.shout == Shout.id).scalar_subquery())
_TARGET = (select(Shout, _FOLLOW, ShoutAuthor.author, _TOPICS)
           .outerjoin(_FOLLOW, (_FOLLOW.shout == Shout.id) & (_FOLLOW.follower == bindparam("writer")))
           .outerjoin(ShoutAuthor, ShoutAuthor.shout == Shout.id)
           .where(Shout.id == bindparam("shout"), is_listed())
           .options(load_only(Shout.id, Shout.slug, Shout.title, Shout.published_at, Shout.deleted_at,
                              Shout.community)))


async def _listed_shout(session: AsyncSession, shout_id: int, writer: int) -> _Target:
    """The shout, if listed. Each statement is a round trip the write waits for, so the authors and the
    follow come in the same one (a row per author; the shout and the follow repeat, and the ORM keeps one
    instance of each in the session, where resolvers/events.py finds the shout again)."""
    rows = (await session.execute(_TARGET, {"shout": shout_id, "writer": writer})).all()
    if not rows:
        raise NotFound("no such shout", field="shout")
    shout, follows, topics = rows[0][0], rows[0][1], rows[0][3]
    authors = sorted({author for _, _, author, _ in rows if author is not None})
    # A reaction changes none of these: its rules take them rather than read them again.
    known_shout(session.sync_session.info, shout.id, ShoutFacts(
        authors, [int(topic) for topic in topics.split(",")] if topics else [], listed=True))
    return _Target(shout, authors, follows)


async def create_reaction(deps: Deps, check: ViewerCheck, reaction: dict[str, Any]) -> dict[str, Any]:
    now = int(time.time())
    if str(reaction["kind"]) not in RATING_KINDS and (driver := driver_of(deps.primary)) is not None and (
            sink := sink_of(deps.primary)) is not None:
        return await create_comment(deps, driver, sink, check, reaction, now)
    signed_in, kind, body = checked_input(await check.viewer(), reaction)
    async with transaction(deps) as session:
        target = await _listed_shout(session, reaction["shout"], signed_in.author_id)
        shout = target.shout
        reply_to = reaction.get("reply_to")
        if reply_to is not None:
            parent = await session.get(Reaction, reply_to)
            if parent is None or parent.shout != shout.id or parent.deleted_at is not None:
                raise BadInput("reply_to is not a reaction of this shout", field="reply_to")
        if kind in RATING_KINDS:
            await _check_vote(session, signed_in, shout.id, reply_to, kind, shout_authors=target.authors)
        created = Reaction(kind=kind, shout=shout.id, reply_to=reply_to, body=body, quote=reaction.get("quote"),
                           created_by=signed_in.author_id, created_at=now)
        session.add(created)
        if kind not in RATING_KINDS:
            await _join_discussion(session, target.follow, signed_in.author_id, shout.id, now)
        await session.flush()
        result = {**created.dict(), "stat": {"rating": 0, "comments_count": 0}}  # nothing answers it yet
        notified = await reaction_event(session, result, "create", cap=deps.notify_fanout,
                                        shout_authors=target.authors)
    await after_answer(lambda: queue_digests(deps, notified, now))
    return {"reaction": result, "error": None}


async def _join_discussion(session: AsyncSession, follows: ShoutReactionsFollower | None, author_id: int,
                           shout_id: int, now: int) -> None:
    """Discours: whoever joins a discussion follows it (its notifications reach them); `follows` is the
    author's follow as the write read it. The same reader's comments sent together each find no follow
    (`added_once`)."""
    if follows is None and not await added_once(
            session, ShoutReactionsFollower(follower=author_id, shout=shout_id, auto=True, created_at=now)):
        # followed meanwhile, by a comment committed since this one read
        follows = await session.get(ShoutReactionsFollower, (author_id, shout_id), populate_existing=True)
    if follows is not None and follows.deleted_at is not None:
        follows.deleted_at = None


# A vote's statements, built once: the owner of the comment voted on, the voter's live votes on the shout or
# on the comment, and the lock that takes one author's votes on one target in turn.
_REPLY_OWNER = select(Reaction.created_by).where(Reaction.id == bindparam("reply_to"))
_VOTES = select(Reaction).where(Reaction.shout == bindparam("shout"), Reaction.created_by == bindparam("author"),
                                Reaction.kind.in_(RATING_KINDS), Reaction.deleted_at.is_(None))
_VOTES_ON_SHOUT = _VOTES.where(Reaction.reply_to.is_(None))
_VOTES_ON_COMMENT = _VOTES.where(Reaction.reply_to == bindparam("reply_to"))
_VOTE_LOCK = select(func.pg_advisory_xact_lock(bindparam("author", type_=Integer), bindparam("target", type_=Integer)))


async def _check_vote(session: AsyncSession, viewer: Viewer, shout_id: int, reply_to: int | None, kind: str, *,
                      shout_authors: list[int]) -> None:
    """One vote per author and target: the same vote twice is refused, the opposite one replaces it;
    nobody votes on their own shout or comment."""
    if reply_to is None:
        owners = set(shout_authors)
    else:
        owners = set((await session.scalars(_REPLY_OWNER, {"reply_to": reply_to})).all())
    if viewer.author_id in owners:
        raise BadInput("you cannot rate your own work", field="kind")
    await _one_vote_at_a_time(session, viewer.author_id, shout_id, reply_to)
    previous = (await session.scalars(_VOTES_ON_SHOUT if reply_to is None else _VOTES_ON_COMMENT,
                                      {"shout": shout_id, "reply_to": reply_to, "author": viewer.author_id})).all()
    for vote in previous:
        if vote.kind == kind:
            raise Conflict("you have already rated this", field="kind")
        vote.deleted_at, vote.deleted_by = int(time.time()), viewer.author_id


async def _one_vote_at_a_time(session: AsyncSession, author_id: int, shout_id: int, reply_to: int | None) -> None:
    """The votes of one author on one target are taken in turn: each reads the votes before it as
    committed (READ COMMITTED), so the same vote sent twice at once is one vote and a refusal, not two
    votes. A PostgreSQL advisory lock held until the transaction ends, keyed by the author and a hash of
    the target (a collision only makes two unrelated votes wait for each other). SQLite runs one writer
    at a time already."""
    if session.get_bind().dialect.name != "postgresql":
        return
    target = zlib.crc32(f"{shout_id}:{reply_to}".encode()) - 2**31  # a signed 32-bit key
    await session.execute(_VOTE_LOCK, {"author": author_id, "target": target})


async def _own_reaction(session: AsyncSession, viewer: Viewer | None, reaction_id: int, action: str) -> Reaction:
    found = await session.get(Reaction, reaction_id)
    if found is None or found.deleted_at is not None:
        raise NotFound("no such reaction", field="id")
    require(viewer, f"reaction:{action}", owners=[found.created_by])
    return found


async def update_reaction(deps: Deps, viewer: Viewer | None, reaction: dict[str, Any]) -> dict[str, Any]:
    if reaction.get("id") is None:
        raise BadInput("the reaction id is needed", field="id")
    body = (reaction.get("body") or "").strip()
    if len(body) > MAX_BODY:
        raise BadInput("the body is too long", field="body")
    async with transaction(deps) as session:
        found = await _own_reaction(session, viewer, reaction["id"], "update")
        if found.kind in RATING_KINDS:
            raise BadInput("a vote has no body to edit", field="kind")
        if not body and found.kind in NEEDS_BODY:
            raise BadInput(f"a {found.kind} needs a body", field="body")
        found.body, found.updated_at = body or None, int(time.time())
        if reaction.get("quote") is not None:
            found.quote = reaction["quote"]
        await session.flush()
        result = await _reaction_dict(session, found)
        await reaction_event(session, result, "update", cap=deps.notify_fanout)
    return {"reaction": result, "error": None}


async def delete_reaction(deps: Deps, viewer: Viewer | None, reaction_id: int) -> dict[str, Any]:
    """Soft delete: the row stays (threads keep their shape), readers stop seeing it."""
    async with transaction(deps) as session:
        found = await _own_reaction(session, viewer, reaction_id, "delete")
        found.deleted_at = int(time.time())
        found.deleted_by = viewer.author_id if viewer else None
        await session.flush()
        result = await _reaction_dict(session, found)
        await reaction_event(session, result, "delete", cap=deps.notify_fanout)
    return {"reaction": result, "error": None}
