"""Notifiable events: a Notification row written in the writer's transaction, and the pub/sub messages
(seed 000, section 6) published after its commit and not at all if it rolls back.

Who an event concerns is decided here, once, when it happens: the people are stored with the row
(`NotificationRecipient`), the live message goes to exactly them, and their lists (`resolvers/notifications.py`)
show exactly those rows. The rules:

- a reaction created on a shout concerns its authors, the followers of its discussion and the author of
  the comment it answers; edits and deletions reach only the watchers of the shout;
- a new follower concerns the followed author;
- a publication concerns the followers of its authors and of its topics, goes to the watchers of each
  of its topics, and is site-wide news (`notifications:global`);
- an accepted invite concerns the author who sent it;
- a draft changed or deleted concerns its other authors, live only (its edits are no news to keep: no row);
- a reaction created goes live to the moderators of its shout's community too (`channel_moderation`).

Nobody is notified of their own action or of a thread they muted, and an event about a shout that is
not public reaches its authors only. One event concerns at most `NOTIFY_FANOUT_CAP` people (a bound on
the rows and messages one write makes); the watchers of a topic or shout channel are not counted.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    CompoundSelect,
    Insert,
    Integer,
    Select,
    Table,
    bindparam,
    insert,
    select,
    true,
    union,
)
from sqlalchemy.ext.asyncio import AsyncSession

from cache import keys
from cache.messaging.pubsub import Event
from orm import (
    Author,
    AuthorFollower,
    Invite,
    Notification,
    NotificationMuted,
    NotificationRecipient,
    Reaction,
    Shout,
    ShoutAuthor,
    ShoutReactionsFollower,
    ShoutTopic,
    TopicFollower,
)
from triggers.listeners import publish_after_commit, record_statement

REACTION_ACTIONS = ("create", "update", "delete")
# inserted as plain tables (`_stored`)
NOTIFICATIONS = cast(Table, Notification.__table__)
RECIPIENTS = cast(Table, NotificationRecipient.__table__)


def thread_of(entity: str, payload: dict[str, Any]) -> str:
    """The thread a notification belongs to: what a reader groups, marks seen and mutes."""
    if entity == "follower":
        return "followers"
    if entity == "shout":
        return f"publication:{payload.get('shout')}"
    if entity == "invite":
        return f"invite:{payload.get('invite')}"
    if payload.get("reply_to"):
        return f"shout:{payload['shout']}::{payload['reply_to']}"
    return f"shout:{payload.get('shout')}"


# The notification row, by the parameters `now`, `entity`, `action` and `payload`: a plain INSERT, not the ORM's
# flush, which cost a comment more than the statement. Its status and kind are the model's defaults, given here:
# an INSERT inside a WITH is sent as written.
_NOTE = insert(NOTIFICATIONS).values(
    created_at=bindparam("now", type_=Integer), entity=bindparam("entity"), action=bindparam("action"),
    payload=bindparam("payload", type_=NOTIFICATIONS.c.payload.type),
    **{column: getattr(NOTIFICATIONS.c[column].default, "arg", None) for column in ("status", "kind")}
).returning(NOTIFICATIONS.c.id)
_NOTE_PARAMETERS = ("now", "entity", "action", "payload")


@dataclass(frozen=True, slots=True)
class _Recipients:
    """Who an event is for, chosen and stored by one INSERT ... SELECT whatever their number: the candidates
    minus the actor and those who muted the thread, at most `cap` of them (the lowest ids). `apart`: after the
    notification row, whose id it takes as `note`; `together`: on PostgreSQL, the row and its recipients in one
    statement (data-modifying CTEs), each a round trip the write waits for. Built once per kind of event, with
    bound parameters (actor, thread, cap and the candidates' own): building and keying such a statement on each
    write cost a comment more than running it."""

    apart: Insert
    together: Select[int, int | None]


def _recipients(candidates: Select[Any] | CompoundSelect[Any], *,
                besides: ColumnElement[bool] | None = None) -> _Recipients:
    """`candidates`: a SELECT of the ids of who may be concerned, each source read by its own index, then joined
    to the authors (an id given twice counts once, one no author has not at all): the statement reads as many
    rows as there are candidates, whatever the number of authors. `besides`: a condition on `Author.id` the
    candidates must also meet."""
    def chosen(note: Any, beside: Any = None) -> Select[int, int]:
        """`beside`: the statement whose row `note` is, which the authors are read beside."""
        muted = select(NotificationMuted.viewer).where(NotificationMuted.thread == bindparam("thread"))
        candidate = candidates.subquery("candidate")
        rows = select(note, Author.id)
        rows = (rows.select_from(beside).join(candidate, true()) if beside is not None
                else rows.select_from(candidate)).join(Author, Author.id == candidate.c.id)
        kept = rows.where(Author.id != bindparam("actor"), Author.id.not_in(muted))
        if besides is not None:
            kept = kept.where(besides)
        return kept.order_by(Author.id).limit(bindparam("cap", type_=Integer))

    def stored(rows: Select[int, int]) -> Insert:
        return insert(RECIPIENTS).from_select(["notification", "author"], rows).returning(RECIPIENTS.c.author)

    note = _NOTE.cte("note")
    delivered = stored(chosen(note.c.id, note)).cte("delivered")
    return _Recipients(apart=stored(chosen(bindparam("note", type_=Integer))),
                       together=select(note.c.id, delivered.c.author).select_from(
                           note.outerjoin(delivered, true())))


_PEOPLE: BindParameter[list[int]] = bindparam("people", expanding=True)
_AUTHORS: BindParameter[list[int]] = bindparam("authors", expanding=True)
_PEOPLE_IDS = select(Author.id.label("id")).where(Author.id.in_(_PEOPLE))
# the authors `people`
_TO_PEOPLE = _recipients(_PEOPLE_IDS)
# the authors `people` and the followers of the discussion of `shout`
_TO_PEOPLE_AND_DISCUSSION = _recipients(union(_PEOPLE_IDS, select(ShoutReactionsFollower.follower).where(
    ShoutReactionsFollower.shout == bindparam("shout"), ShoutReactionsFollower.deleted_at.is_(None))))
# the followers of the shout's `authors` and of its `topics`, its authors excepted
_TO_FOLLOWERS_OF_PUBLICATION = _recipients(
    union(select(AuthorFollower.follower.label("id")).where(AuthorFollower.author.in_(_AUTHORS)),
          select(TopicFollower.follower).where(TopicFollower.topic.in_(bindparam("topics", expanding=True)))),
    besides=Author.id.not_in(_AUTHORS))
_AUTHORS_OF_SHOUT = select(ShoutAuthor.author).where(ShoutAuthor.shout == bindparam("shout"))
_TOPICS_OF_SHOUT = select(ShoutTopic.topic).where(ShoutTopic.shout == bindparam("shout"))
_FOLLOWER = select(Author.id, Author.slug, Author.name, Author.pic).where(Author.id == bindparam("follower"))


def _note_parameters(entity: str, action: str, payload: dict[str, Any], now: int, *, thread: str = "",
                     actor: int | None = None, cap: int = 0, **candidates: Any) -> dict[str, Any]:
    """The parameters of `_NOTE` and of a `_Recipients` statement, given its `candidates`' own."""
    return {"now": now, "entity": entity, "action": action, "payload": payload,
            "actor": actor if actor is not None else -1, "thread": thread, "cap": max(cap, 0), **candidates}


async def _stored(session: AsyncSession, parameters: dict[str, Any],
                  recipients: _Recipients | None) -> tuple[int, list[int]]:
    """The notification row and who it is for (`recipients`, one of the statements above; `parameters`:
    `_note_parameters`): its id and them, in order."""
    record_statement(session, Notification)  # a plain INSERT: the mapper's events do not see it
    row = {name: parameters[name] for name in _NOTE_PARAMETERS}  # an INSERT takes its columns' values only
    if recipients is None or parameters["cap"] <= 0:
        return int((await session.execute(_NOTE, row)).scalar_one()), []
    if session.get_bind().dialect.name == "postgresql":
        return stored_recipients((await session.execute(recipients.together, parameters)).all())
    note = int((await session.execute(_NOTE, row)).scalar_one())
    chosen = {name: value for name, value in parameters.items() if name not in _NOTE_PARAMETERS}
    return note, sorted((await session.scalars(recipients.apart, {**chosen, "note": note})).all())


def stored_recipients(rows: Iterable[Any]) -> tuple[int, list[int]]:
    """The notification's id and its recipients, in order, from the rows of a `together` statement (the note's
    id and a recipient, or None, each)."""
    listed = list(rows)
    return int(listed[0][0]), sorted(person for _, person, *_ in listed if person is not None)


def _publish(session: AsyncSession, event: Event, people: list[int], channels: Iterable[str] = ()) -> None:
    """The event to its people and to `channels`, after the commit."""
    publish_after_commit(session, _messages(event, people, channels))


def _messages(event: Event, people: list[int], channels: Iterable[str] = ()) -> list[tuple[str, bytes]]:
    shared = event.encode()
    return [*((channel, shared) for channel in channels),
            *zip((keys.channel_user(person) for person in people), event.encode_to(people), strict=True)]


async def _shout_brief(session: AsyncSession, shout_id: int,
                       authors: list[int] | None = None) -> tuple[dict[str, Any], list[int], bool]:
    """(id, slug and title; authors; public) of a shout. The shout is the session's own when the writer
    has read it already (`session.get`: no statement then), and so are its authors when the writer passes
    them."""
    shout = await session.get(Shout, shout_id)
    assert shout is not None, f"shout {shout_id} is gone within its own transaction"
    if authors is None:
        authors = list((await session.scalars(_AUTHORS_OF_SHOUT, {"shout": shout_id})).all())
    public = shout.published_at is not None and shout.deleted_at is None
    return {"id": shout.id, "slug": shout.slug, "title": shout.title, "community": shout.community}, authors, public


@dataclass(frozen=True, slots=True)
class ReactionNotice:
    """A reaction's notification and live event, from what its writer knows (`reaction`: its plain values, as
    resolvers return it; `shout`: its shout's id, slug, title and community; `answered`: the author of the
    comment it answers, if any). `direct`: who it concerns directly (the shout's authors, the author of the
    comment it answers): they get digests (resolvers/digests.py); followers of the discussion have the
    in-app list only."""

    reaction: dict[str, Any]
    action: str
    shout: dict[str, Any]
    authors: list[int]
    public: bool
    direct: frozenset[int]
    now: int

    @classmethod
    def of(cls, reaction: dict[str, Any], action: str, shout: dict[str, Any], authors: list[int], public: bool,
           answered: int | None = None, now: int | None = None) -> ReactionNotice:
        assert action in REACTION_ACTIONS
        direct = set(authors)
        if action == "create" and public and answered is not None:
            direct.add(answered)
        return cls(reaction, action, shout, authors, public, frozenset(direct), now or int(time.time()))

    @property
    def payload(self) -> dict[str, Any]:
        return {"reaction": self.reaction["id"], "shout": self.shout["id"], "reply_to": self.reaction.get("reply_to"),
                "created_by": self.reaction["created_by"], "kind": self.reaction["kind"]}

    @property
    def recipients(self) -> _Recipients | None:
        """A reaction created concerns its shout's authors (and, the shout public, the discussion's followers
        and the author of the comment it answers); edits and deletions reach the shout's watchers only."""
        return None if self.action != "create" else _TO_PEOPLE_AND_DISCUSSION if self.public else _TO_PEOPLE

    def parameters(self, cap: int) -> dict[str, Any]:
        """Those of the notification's statement (`_NOTE`, `recipients`)."""
        payload = self.payload
        return _note_parameters("reaction", self.action, payload, self.now, thread=thread_of("reaction", payload),
                                actor=self.reaction["created_by"], cap=cap if self.recipients else 0,
                                people=sorted(self.direct), shout=self.shout["id"])

    def messages(self, note: int, people: list[int]) -> list[tuple[str, bytes]]:
        value = {k: v for k, v in self.reaction.items() if k != "first_replies"}
        event = Event(type="reaction", entity_type="reaction", entity_id=self.reaction["id"], action=self.action,
                      timestamp=self.now, data={"notification": note, "reaction": value, "shout": self.shout,
                                                "public": self.public,
                                                **({} if self.public else {"authors": self.authors})})
        # a new one also goes to whoever moderates the shout's community (the editors' panel's queue)
        moderators = [keys.channel_moderation(self.shout["community"])] if self.action == "create" else []
        return _messages(event, people, [keys.channel_shout(self.shout["id"]), *moderators])

    def concerned(self, people: list[int]) -> set[int]:
        return {p for p in people if p in self.direct}


async def reaction_event(session: AsyncSession, reaction: dict[str, Any], action: str, *, cap: int,
                         shout_authors: list[int] | None = None) -> set[int]:
    """A reaction created, edited or deleted, in the writer's transaction (`shout_authors`: its shout's, if the
    writer has read them in it). Returns who it concerns directly (`ReactionNotice.direct`)."""
    shout, authors, public = await _shout_brief(session, reaction["shout"], shout_authors)
    answered = None
    if action == "create" and public and reaction.get("reply_to") is not None:
        parent = await session.get(Reaction, reaction["reply_to"])  # the writer's own, read already
        answered = parent.created_by if parent is not None else None
    notice = ReactionNotice.of(reaction, action, shout, authors, public, answered)
    note, people = await _stored(session, notice.parameters(cap), notice.recipients)
    publish_after_commit(session, notice.messages(note, people))
    return notice.concerned(people)


async def follow_event(session: AsyncSession, follower: int, author: int) -> None:
    now = int(time.time())
    payload = {"follower": follower, "author": author}
    note, people = await _stored(session, _note_parameters("follower", "follow", payload, now, cap=1, people=[author],
                                                           thread=thread_of("follower", payload), actor=follower),
                                 _TO_PEOPLE)
    who = (await session.execute(_FOLLOWER, {"follower": follower})).one()
    event = Event(type="follower", entity_type="author", entity_id=follower, action="follow", timestamp=now,
                  data={"notification": note, "follower": dict(who._mapping), "author": author})
    _publish(session, event, people)


async def publication_event(session: AsyncSession, shout_id: int, actor: int | None, *, cap: int) -> None:
    """A shout became public (first publication or publication again)."""
    now = int(time.time())
    shout, authors, public = await _shout_brief(session, shout_id)
    if not public:
        return
    topics = list((await session.scalars(_TOPICS_OF_SHOUT, {"shout": shout_id})).all())
    payload = {"shout": shout_id, "created_by": actor}
    note, people = await _stored(session, _note_parameters("shout", "publish", payload, now, cap=cap, authors=authors,
                                                           topics=topics, thread=thread_of("shout", payload),
                                                           actor=actor),
                                 _TO_FOLLOWERS_OF_PUBLICATION)
    event = Event(type="publication", entity_type="shout", entity_id=shout_id, action="publish", timestamp=now,
                  data={"notification": note, "shout": shout, "authors": authors, "topics": topics})
    _publish(session, event, people, [keys.CHANNEL_GLOBAL, *(keys.channel_topic(t) for t in topics)])


async def invite_event(session: AsyncSession, invite: Invite) -> None:
    """An invite accepted: its sender learns they have a co-author."""
    now = int(time.time())
    payload = {"invite": invite.id, "inviter": invite.inviter_id, "author": invite.author_id,
               "shout": invite.shout_id}
    note, people = await _stored(session, _note_parameters("invite", "accept", payload, now, cap=1,
                                                           people=[invite.inviter_id],
                                                           thread=thread_of("invite", payload),
                                                           actor=invite.author_id),
                                 _TO_PEOPLE)
    shout, _, _ = await _shout_brief(session, invite.shout_id)
    event = Event(type="invite", entity_type="invite", entity_id=invite.id, action="accept", timestamp=now,
                  data={"notification": note, "shout": shout, "author": invite.author_id})
    _publish(session, event, people)


def draft_event(session: AsyncSession, draft_id: int, action: str, actor: int | None, authors: list[int]) -> None:
    """A draft changed or deleted by `actor`: its other authors see it live, once the write commits."""
    people = sorted(author for author in authors if author != actor)
    if not people:
        return
    event = Event(type="draft", entity_type="draft", entity_id=draft_id, action=action,
                  data={"draft": draft_id, "by": actor})
    publish_after_commit(session, list(zip((keys.channel_user(p) for p in people), event.encode_to(people),
                                           strict=True)))
