"""The people and objects of the authorization tests: a second person (the owner) with real objects of
every kind, the callers who try them, and documents that ask every field an operation's answer has.

The owner's private things carry markers (an e-mail address, a draft's title and body, an unpublished
shout's title) that only those entitled to them may ever find in an answer."""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from graphql import (
    GraphQLField,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLSchema,
    GraphQLUnionType,
)
from sqlalchemy import delete, or_, select, update

from orm import Community, CommunityAuthor, Draft, Invite, NotificationRecipient, Shout, ShoutTopic, Topic
from resolvers.writes import transaction
from tests.helpers import PASSWORD, Api, User

# Who tries each operation: nobody, an ordinary reader, the objects' owner, an editor and an administrator
# of another community, and an editor and an administrator of the objects' own community.
CALLERS = ("anonymous", "reader", "owner", "editor_elsewhere", "admin_elsewhere", "editor", "admin")
SELECTION_DEPTH = 3


@dataclass
class Person:
    id: int
    slug: str
    email: str
    password: str = PASSWORD


@dataclass
class People:
    """Made once a run (their rows stay in the database; their sessions are minted per test)."""

    owner: Person
    reader: Person
    guest: Person  # a third person: invites the owner, is invited, comments on the owner's shout
    editor_1: Person
    admin_1: Person
    editor_c: Person  # editor and administrator of each community the owner founds in a test
    admin_c: Person
    editor_e: Person  # editor and administrator of another community, E
    admin_e: Person
    elsewhere: int  # E's id


_PEOPLE: People | None = None


async def grant(api: Api, person: Person, community: int, role: str) -> None:
    roles = ",".join(("reader", "author", *(("artist", "expert", "editor") if role == "admin" else ()), role))
    async with transaction(api.deps) as session:
        row = await session.get(CommunityAuthor, (community, person.id))
        if row is None:
            session.add(CommunityAuthor(community=community, author=person.id, roles=roles, joined_at=0))
        else:
            row.roles = roles


async def _register(api: Api, name: str) -> Person:
    """An account whose name is not its e-mail address (which then shows only where e-mail is shown)."""
    email = f"{name}-{uuid.uuid4().hex[:12]}@example.org"
    await api("mutation($e: String!, $p: String!, $n: String!) { registerUser(email: $e, password: $p, name: $n) "
              "{ success } }", {"e": email, "p": PASSWORD, "n": name.replace("_", " ").title()})
    login = await api("mutation($e: String!, $p: String!) { login(email: $e, password: $p) { author { id slug } } }",
                      {"e": email, "p": PASSWORD})
    return Person(login["author"]["id"], login["author"]["slug"], email)


async def people(api: Api) -> People:
    global _PEOPLE
    if _PEOPLE is None:
        made: dict[str, Person] = {}
        for name in ("owner", "reader", "guest", "editor_1", "admin_1", "editor_c", "admin_c", "editor_e",
                     "admin_e"):
            made[name] = await _register(api, name)
        slug = f"elsewhere-{uuid.uuid4().hex[:8]}"
        async with transaction(api.deps) as session:
            community = Community(slug=slug, name=slug, pic="", created_at=0, created_by=made["guest"].id)
            session.add(community)
            await session.flush()
            elsewhere = community.id
        await grant(api, made["editor_1"], 1, "editor")
        await grant(api, made["admin_1"], 1, "admin")
        await grant(api, made["editor_e"], elsewhere, "editor")
        await grant(api, made["admin_e"], elsewhere, "admin")
        _PEOPLE = People(**made, elsewhere=elsewhere)
    return _PEOPLE


def marker(kind: str) -> str:
    return f"{kind}-{uuid.uuid4().hex[:16]}"


@dataclass
class World:
    """The owner's objects, made when an operation's arguments first ask for them."""

    api: Api
    people: People
    community: int = 1  # the community the objects live in ("here")
    secrets: dict[str, str] = field(default_factory=dict)  # marker -> the kind of secret
    _made: dict[str, Any] = field(default_factory=dict)

    async def as_(self, who: Person, query: str, variables: dict[str, Any] | None = None) -> Any:
        return await self.api(query, variables, await self.user(who))

    async def user(self, who: Person) -> User:
        session = await self.api.deps.accounts.sessions.create(who.id, who.slug)
        return User(who.id, who.slug, session.token)

    async def once(self, name: str, make: Callable[[], Awaitable[Any]]) -> Any:
        """What `make` makes, made once in this world."""
        return await self._once(name, make)

    async def _once(self, name: str, make: Callable[[], Awaitable[Any]]) -> Any:
        if name not in self._made:
            self._made[name] = await make()
        return self._made[name]

    async def draft(self) -> int:
        """The owner's draft, never published: its title and body are private to its authors (and to whom
        may read any draft)."""
        async def make() -> int:
            title, body = marker("draft-title"), marker("draft-body")
            self.secrets.update({title: "draft", body: "draft"})
            created = await self.as_(self.people.owner, CREATE_DRAFT, {"d": {
                "title": title, "body": f"<p>{body}</p>", "slug": marker("draft"), "topic_ids": [1]}})
            return int(created["draft"]["id"])
        return int(await self._once("draft", make))

    async def _publish(self, who: Person, title: str = "Опубликовано") -> dict[str, Any]:
        created = await self.as_(who, CREATE_DRAFT, {"d": {
            "title": title, "body": "<p>публичный текст</p>", "slug": marker("shout"), "topic_ids": [1]}})
        published = await self.as_(who, "mutation($id: Int!) { publish_draft(draft_id: $id) "
                                         "{ draft { id } shout { id slug } } }", {"id": created["draft"]["id"]})
        return {"id": published["shout"]["id"], "slug": published["shout"]["slug"],
                "draft": published["draft"]["id"]}

    async def shout(self) -> dict[str, Any]:
        """The owner's published shout: id, slug and its draft's id."""
        return dict(await self._once("shout", lambda: self._publish(self.people.owner)))

    async def hidden_shout(self) -> dict[str, Any]:
        """The owner's shout, published and unpublished since: private to its authors again."""
        async def make() -> dict[str, Any]:
            title = marker("hidden-title")
            self.secrets[title] = "draft"
            shout = await self._publish(self.people.owner, title)
            await self.as_(self.people.owner, "mutation($id: Int!) { unpublish_shout(shout_id: $id) { error } }",
                           {"id": shout["id"]})
            return shout
        return dict(await self._once("hidden_shout", make))

    async def comment(self) -> int:
        async def make() -> int:
            shout = await self.shout()
            made = await self.as_(self.people.owner, CREATE_REACTION, {"r": {
                "kind": "COMMENT", "shout": shout["id"], "body": "комментарий владельца"}})
            return int(made["reaction"]["id"])
        return int(await self._once("comment", make))

    async def collection(self) -> str:
        async def make() -> str:
            slug = marker("collection")
            await self.as_(self.people.owner, "mutation($c: CollectionInput!) { create_collection("
                           "collection_input: $c) { error } }", {"c": {"slug": slug, "title": "Подборка"}})
            return slug
        return str(await self._once("collection", make))

    async def topic(self, name: str = "topic") -> dict[str, Any]:
        """A topic of community 1 (`name` tells two apart: a topic and its parent, or what merges into it)."""
        async def make() -> dict[str, Any]:
            slug = marker("topic")
            made = await self.as_(self.people.editor_1, "mutation($t: TopicInput!) { create_topic(topic_input: $t) "
                                  "{ error topic { id slug } } }", {"t": {"slug": slug, "title": "Тема"}})
            return dict(made["topic"])
        return dict(await self._once(name, make))

    async def own_community(self) -> str:
        """A community the owner founds: the objects' community from then on, with its own editor and
        administrator."""
        async def make() -> str:
            slug = marker("community")
            made = await self.as_(self.people.owner, "mutation($c: CommunityInput!) { create_community("
                                  "community_input: $c) { error community { id } } }", {"c": {"slug": slug}})
            self.community = int(made["community"]["id"])
            await grant(self.api, self.people.editor_c, self.community, "editor")
            await grant(self.api, self.people.admin_c, self.community, "admin")
            return slug
        return str(await self._once("own_community", make))

    async def _invite(self, inviter: Person, invitee: Person, shout: dict[str, Any]) -> int:
        await self.as_(inviter, "mutation($s: String, $a: Int) { create_invite(slug: $s, author_id: $a) { error } }",
                       {"s": shout["slug"], "a": invitee.id})
        async with self.api.deps.db() as session:
            return int(await session.scalar(select(Invite.id).where(
                Invite.inviter_id == inviter.id, Invite.author_id == invitee.id, Invite.shout_id == shout["id"])))

    async def invite_by_owner(self) -> int:
        async def make() -> int:
            return await self._invite(self.people.owner, self.people.guest, await self.shout())
        return int(await self._once("invite_by_owner", make))

    async def invite_to_owner(self) -> int:
        async def make() -> int:
            return await self._invite(self.people.guest, self.people.owner, await self._publish(self.people.guest))
        return int(await self._once("invite_to_owner", make))

    async def coauthored(self) -> dict[str, Any]:
        """The owner's shout with the guest as co-author (invited and accepted)."""
        async def make() -> dict[str, Any]:
            shout = await self._publish(self.people.owner)
            invite = await self._invite(self.people.owner, self.people.guest, shout)
            await self.as_(self.people.guest, "mutation($i: Int!) { accept_invite(invite_id: $i) { error } }",
                           {"i": invite})
            return shout
        return dict(await self._once("coauthored", make))

    async def notification(self) -> int:
        """One of the owner's notifications: the guest's comment on the owner's shout."""
        async def make() -> int:
            shout = await self.shout()
            await self.as_(self.people.guest, CREATE_REACTION, {"r": {
                "kind": "COMMENT", "shout": shout["id"], "body": "комментарий гостя"}})
            async with self.api.deps.db() as session:
                return int(await session.scalar(select(NotificationRecipient.notification).where(
                    NotificationRecipient.author == self.people.owner.id)
                    .order_by(NotificationRecipient.notification.desc()).limit(1)))
        return int(await self._once("notification", make))

    async def account(self) -> Person:
        """An account of its own (for sign-in and mail operations, which anyone may call with it)."""
        return await self._once("account", lambda: _register(self.api, "account"))  # type: ignore[no-any-return]

    async def verification(self, kind: str, data: dict[str, Any] | None = None) -> str:
        account = await self.account()
        return await self.api.deps.accounts.verifications.issue(account.id, kind, data)

    async def everything(self) -> None:
        """Every private thing of the owner, for the reads: a public read must show none of them."""
        await self.draft()
        await self.hidden_shout()
        await self.comment()
        await self.collection()
        await self.notification()


CREATE_DRAFT = "mutation($d: DraftInput!) { create_draft(draft_input: $d) { error draft { id } } }"
CREATE_REACTION = "mutation($r: ReactionInput!) { create_reaction(reaction: $r) { error reaction { id } } }"


def named_type(gtype: GraphQLOutputType) -> Any:
    while isinstance(gtype, GraphQLNonNull | GraphQLList):
        gtype = gtype.of_type
    return gtype


def selection(gtype: GraphQLOutputType, depth: int = SELECTION_DEPTH) -> str:
    """Every field of `gtype` that needs no argument, objects `depth` levels deep: private fields (e-mail,
    roles, a shout's draft) are asked wherever they can be."""
    named = named_type(gtype)
    if isinstance(named, GraphQLUnionType):
        return "{ __typename " + " ".join(f"... on {t.name} {selection(t, depth)}" for t in named.types) + " }"
    if not isinstance(named, GraphQLObjectType | GraphQLInterfaceType):
        return ""
    parts = []
    for name, fld in named.fields.items():
        if any(isinstance(arg.type, GraphQLNonNull) for arg in fld.args.values()):
            continue
        inner = named_type(fld.type)
        if isinstance(inner, GraphQLObjectType | GraphQLInterfaceType | GraphQLUnionType):
            if depth > 1:
                parts.append(f"{name} {selection(fld.type, depth - 1)}")
        else:
            parts.append(name)
    return "{ " + " ".join(parts or ["__typename"]) + " }"


def document(schema: GraphQLSchema, kind: str, name: str, variables: dict[str, Any]) -> str:
    """A document calling operation `name` with `variables` (one per argument given), asking everything."""
    root = schema.query_type if kind == "Query" else schema.mutation_type
    assert root is not None
    fld: GraphQLField = root.fields[name]
    declared = ", ".join(f"${arg}: {fld.args[arg].type}" for arg in variables)
    passed = ", ".join(f"{arg}: ${arg}" for arg in variables)
    head = f"{kind.lower()} Call({declared})" if declared else kind.lower()
    return f"{head} {{ {name}{f'({passed})' if passed else ''} {selection(fld.type)} }}"


async def forget(api: Api, crowd: People) -> None:
    """What the matrix made, out of the other tests' way (they share the database): its people's drafts
    unscheduled and deleted, their shouts deleted, the topics it made removed."""
    ids = [p.id for p in (crowd.owner, crowd.reader, crowd.guest, crowd.editor_1, crowd.admin_1, crowd.editor_c,
                          crowd.admin_c, crowd.editor_e, crowd.admin_e)]
    now = int(time.time())
    async with transaction(api.deps) as session:
        await session.execute(update(Draft).where(Draft.created_by.in_(ids))
                              .values(publish_at=None, deleted_at=now))
        await session.execute(update(Shout).where(Shout.created_by.in_(ids), Shout.deleted_at.is_(None))
                              .values(deleted_at=now))
        await session.execute(delete(Topic).where(or_(Topic.slug.like("topic-%"), Topic.slug.like("t-%")),
                                                  Topic.id.not_in(select(ShoutTopic.topic))))
