"""The contract's object types. Instances are built from the cache's plain dicts with `build`;
relations resolve through the request's DataLoaders, so a page costs a constant number of batches."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable
from typing import Any, Self, TypeVar

import strawberry

from auth.accounts import get_account
from auth.permissions import DEFAULT_COMMUNITY
from resolvers.author_reads import AUTHORS_BY_RATING
from schema.context import Info, Soon, soon, soon_all, then
from schema.engine.cache_control import cache_control
from schema.engine.execution import DIRECT
from schema.enums import ReactionKind

T = TypeVar("T")


def build(cls: type[T], data: dict[str, Any] | None) -> T | None:
    """A strawberry type from a dict: every init field from the dict's key of the same name. A page builds
    a hundred or more of them: where the dataclass's `__init__` would only assign its arguments, they are
    assigned directly (a third cheaper)."""
    if data is None:
        return None
    names, direct = _init_fields(cls)
    values = {name: data.get(name) for name in names}
    if not direct:
        return cls(**values)
    obj = object.__new__(cls)
    obj.__dict__.update(values)
    return obj


def _init_fields(cls: type) -> tuple[tuple[str, ...], bool]:
    """The init fields' names, and whether `__init__` does no more than assign them (no default made by a
    factory, none for a field outside `__init__`, no `__post_init__`, no slots)."""
    known = _INIT_FIELDS.get(cls)
    if known is None:
        known = _INIT_FIELDS[cls] = _inspect_init(cls)
    return known


_INIT_FIELDS: dict[type, tuple[tuple[str, ...], bool]] = {}  # one entry per type of this module


def _inspect_init(cls: type) -> tuple[tuple[str, ...], bool]:
    fields = dataclasses.fields(cls)
    direct = (not hasattr(cls, "__post_init__") and not hasattr(cls, "__slots__")
              and all(f.default_factory is dataclasses.MISSING for f in fields)
              and all(f.default is dataclasses.MISSING for f in fields if not f.init))
    return tuple(f.name for f in fields if f.init), direct


def _stat(info: Info, kind: str, entity_id: int, cls: type[T]) -> Soon[T | None]:
    """An entity's live counters as its `stat` type, at once when the request's loader holds them."""
    return then(soon(info.context.loaders.counters[kind], entity_id), lambda counts: build(cls, counts))


class FromData:
    """Types built from a cached dict keep it whole: relation and derived fields read it through `_get`."""

    data: Any

    @classmethod
    def of(cls, data: dict[str, Any] | None) -> Self | None:
        obj = build(cls, data)
        if obj is not None:
            obj.data = data
        return obj

    def _get(self, name: str) -> Any:
        return (self.data or {}).get(name)


async def _private_account(info: Info, author_id: int) -> dict[str, Any] | None:
    viewer = await info.context.viewer()
    if viewer is None or (viewer.author_id != author_id and not viewer.is_admin):
        return None
    deps = info.context.deps
    return await get_account(author_id, cache=deps.cache, db=deps.db)


@strawberry.type
class AuthorStat:
    shouts: int | None = None
    topics: int | None = None
    authors: int | None = None
    followers: int | None = None
    rating: int | None = None
    rating_shouts: int | None = None
    rating_comments: int | None = None
    comments: int | None = None
    viewed: int | None = strawberry.field(default=None, description=(
        "Views of the author's public shouts, as last written down from the view counters (a minute "
        "or so behind the shouts' own `stat.viewed`)."))
    coauthors: int | None = strawberry.field(default=None, description=(
        "Authors who sign at least one public shout with this one."))
    replies_count: int | None = strawberry.field(default=None, description=(
        "Comments by others in reply to this author's comments."))

    @strawberry.field(description="`viewed`, under the name the 2025 web client asks for.")
    def viewed_shouts(self) -> int | None:
        return self.viewed


@strawberry.type
class CommunityStat:
    shouts: int = 0
    followers: int = 0
    authors: int = 0


@strawberry.type
class TopicStat:
    shouts: int = 0
    followers: int = 0
    authors: int = 0
    comments: int | None = None


@strawberry.type
class Author(FromData):
    id: int
    slug: str
    # Non-null as the 2025-08 contract has it: an author who never gave a name shows their slug.
    name: str = ""
    pic: str | None = None
    bio: str | None = None
    about: str | None = None
    links: list[str] | None = None
    created_at: int | None = None
    last_seen: int | None = None
    updated_at: int | None = None
    deleted_at: int | None = None
    seo: str | None = None
    data: strawberry.Private[dict[str, Any] | None] = None

    @classmethod
    def of(cls, data: dict[str, Any] | None) -> Author | None:
        obj: Author | None = super().of(data)
        if obj is not None:
            if not obj.name:
                obj.name = obj.slug
            if obj.links is not None and None in obj.links:
                obj.links = [link for link in obj.links if link is not None]
        return obj

    @strawberry.field
    def user(self) -> str:
        return self._get("user") or ""

    @strawberry.field(metadata=DIRECT, graphql_type=AuthorStat | None)
    def stat(self, info: Info) -> Soon[AuthorStat | None]:
        return _stat(info, "author", self.id, AuthorStat)

    @strawberry.field(description="The author's place among all authors by rating, 1 for the first "
                                  "(the `authors:rating` leaderboard).")
    async def rating_rank(self, info: Info) -> int | None:
        place = await info.context.deps.boards.rank(AUTHORS_BY_RATING, self.id)
        return None if place is None else place + 1

    # The account's private fields: shown to the author themselves and to admins, null to anyone else.
    @strawberry.field(metadata=cache_control(private=True))
    async def email(self, info: Info) -> str | None:
        account = await _private_account(info, self.id)
        return None if account is None else account["email"]

    @strawberry.field(metadata=cache_control(private=True))
    async def email_verified(self, info: Info) -> bool | None:
        account = await _private_account(info, self.id)
        return None if account is None else account["email_verified"]

    @strawberry.field(metadata=cache_control(private=True))
    async def roles(self, info: Info) -> list[str] | None:
        account = await _private_account(info, self.id)
        return None if account is None else account["roles"].get(str(DEFAULT_COMMUNITY), [])

    @strawberry.field
    async def communities(self, info: Info) -> list[Community | None] | None:
        from resolvers.community import get_communities_by_author

        found = await get_communities_by_author(info.context.deps, author_id=self.id)
        return [Community.of(c) for c in found]


@strawberry.type(description="An author's place on the leaderboard of authors by rating (an addition to "
                             "the Discours contract).")
class AuthorPlace:
    place: int = strawberry.field(description="1 for the first.")
    score: int = strawberry.field(description="The rating the board ranks by.")
    author: Author


@strawberry.type
class Community(FromData):
    id: int
    slug: str
    name: str
    desc: str | None = None
    created_at: int = 0
    data: strawberry.Private[dict[str, Any] | None] = None

    @strawberry.field
    def pic(self) -> str:
        return self._get("pic") or ""

    @strawberry.field(metadata=DIRECT, graphql_type=Author)
    def created_by(self, info: Info) -> Soon[Author | None]:
        return load_author(info, self._get("created_by"))

    @strawberry.field(metadata=DIRECT, graphql_type=CommunityStat | None)
    def stat(self, info: Info) -> Soon[CommunityStat | None]:
        return _stat(info, "community", self.id, CommunityStat)


@strawberry.type
class Topic(FromData):
    id: int
    slug: str
    title: str | None = None
    body: str | None = None
    pic: str | None = None
    oid: str | None = None
    community: int | None = None
    # The topics this one sits under (a topic may sit under several), in one community.
    parent_ids: list[int | None] | None = None
    is_main: bool | None = None
    data: strawberry.Private[dict[str, Any] | None] = None

    @classmethod
    def of(cls, data: dict[str, Any] | None, *, is_main: bool | None = None) -> Topic | None:
        obj: Topic | None = super().of(data)
        if obj is not None:
            obj.is_main = is_main
        return obj

    @strawberry.field(metadata=DIRECT, graphql_type=TopicStat | None)
    def stat(self, info: Info) -> Soon[TopicStat | None]:
        return _stat(info, "topic", self.id, TopicStat)


@strawberry.type
class MediaItem:
    url: str | None = None
    title: str | None = None
    body: str | None = None
    source: str | None = None
    pic: str | None = None
    date: str | None = None
    genre: str | None = None
    artist: str | None = None
    lyrics: str | None = None


def media_items(items: Any) -> list[MediaItem | None] | None:
    if not isinstance(items, list):
        return None
    return [build(MediaItem, m) if isinstance(m, dict) else None for m in items]


@strawberry.type
class Stat:
    rating: int | None = None
    comments_count: int | None = None
    last_commented_at: int | None = None
    shout_id: strawberry.Private[int | None] = None

    def _views(self, info: Info) -> int | Awaitable[int] | None:
        return None if self.shout_id is None else soon(info.context.loaders.views, self.shout_id)

    @strawberry.field(metadata=DIRECT, graphql_type=int | None)
    def viewed(self, info: Info) -> Soon[int | None]:
        return self._views(info)

    @strawberry.field(description="`viewed`, under the name the 2025 web client asks for.", metadata=DIRECT,
                      graphql_type=int | None)
    def views_count(self, info: Info) -> Soon[int | None]:
        return self._views(info)


# Relations, answered at once from what the request's loaders hold (a page loads them first, together:
# schema/pages.py), else awaited: each returns a value or an awaitable, which GraphQL awaits.

def load_authors(info: Info, ids: list[int]) -> Soon[list[Author | None]]:
    return then(soon_all(info.context.loaders.authors, ids),
                lambda found: [Author.of(a) for a in found if a is not None])


def main_topic_of(info: Info, shout: dict[str, Any]) -> Soon[Topic | None]:
    topic_id = shout.get("main_topic_id")
    if topic_id is None:
        return None
    return then(soon(info.context.loaders.topics, topic_id), lambda topic: Topic.of(topic, is_main=True))


def topics_of_shout(info: Info, shout: dict[str, Any]) -> Soon[list[Topic | None]]:
    main = shout.get("main_topic_id")
    return then(soon_all(info.context.loaders.topics, shout.get("topic_ids") or []),
                lambda found: [Topic.of(t, is_main=t["id"] == main) for t in found if t is not None])


def load_author(info: Info, author_id: int | None) -> Soon[Author | None]:
    if author_id is None:
        return None
    return then(soon(info.context.loaders.authors, author_id), Author.of)


@strawberry.type
class Authored(FromData):
    """Who made a shout, a draft or a reaction, and who deleted it (never in the schema by itself)."""

    @strawberry.field(metadata=DIRECT, graphql_type=Author)
    def created_by(self, info: Info) -> Soon[Author | None]:
        return load_author(info, self._get("created_by"))

    @strawberry.field(metadata=DIRECT, graphql_type=Author | None)
    def deleted_by(self, info: Info) -> Soon[Author | None]:
        return load_author(info, self._get("deleted_by"))


@strawberry.type
class Edited(Authored):
    """What shouts and drafts also share: the last editor, the community, the media."""

    @strawberry.field(metadata=DIRECT, graphql_type=Author | None)
    def updated_by(self, info: Info) -> Soon[Author | None]:
        return load_author(info, self._get("updated_by"))

    @strawberry.field(metadata=DIRECT, graphql_type=Community)
    def community(self, info: Info) -> Soon[Community | None]:
        return then(soon(info.context.loaders.communities, self._get("community")),
                    Community.of)

    @strawberry.field
    def media(self) -> list[MediaItem | None] | None:
        return media_items(self._get("media"))


@strawberry.type
class Shout(Edited):
    id: int
    title: str
    slug: str
    layout: str
    lead: str | None = None
    subtitle: str | None = None
    lang: str | None = None
    cover: str | None = None
    cover_caption: str | None = None
    created_at: int = 0
    updated_at: int | None = None
    published_at: int | None = None
    featured_at: int | None = None
    deleted_at: int | None = None
    seo: str | None = None
    score: float | None = None
    data: strawberry.Private[dict[str, Any] | None] = None

    @strawberry.field(metadata=DIRECT, graphql_type=str)
    def body(self, info: Info) -> Soon[str]:
        """A list's cards leave the text out (most of a shout's size, and no list shows it: a page is read
        whole, resolvers/shout_reads.py `card`); asked of one, it comes from the full shout."""
        data = self.data or {}
        if "body" in data:
            return data["body"] or ""
        return then(soon(info.context.loaders.shouts, self.id),
                    lambda full: (full or {}).get("body") or "")

    @strawberry.field(metadata=DIRECT, graphql_type=Topic | None)
    def main_topic(self, info: Info) -> Soon[Topic | None]:
        return main_topic_of(info, self.data or {})

    @strawberry.field(metadata=DIRECT, graphql_type=list[Topic | None] | None)
    def topics(self, info: Info) -> Soon[list[Topic | None] | None]:
        return topics_of_shout(info, self.data or {})

    @strawberry.field(metadata=DIRECT, graphql_type=list[Author | None] | None)
    def authors(self, info: Info) -> Soon[list[Author | None] | None]:
        return load_authors(info, self._get("author_ids") or [])

    @strawberry.field
    async def version_of(self, info: Info) -> Shout | None:
        original = self._get("version_of")
        return None if original is None else Shout.of(await info.context.loaders.shouts.load(original))

    @strawberry.field
    def draft(self) -> Draft | None:
        return None  # a shout's draft is private to its authors; read it through load_drafts

    @strawberry.field(metadata=DIRECT, graphql_type=Stat | None)
    def stat(self, info: Info) -> Soon[Stat | None]:
        return shout_stat(info, self.id)


def shout_stat(info: Info, shout_id: int) -> Soon[Stat | None]:
    """A shout's live counters as its `stat`."""
    return then(soon(info.context.loaders.counters["shout"], shout_id),
                lambda counts: Stat(rating=counts["rating"], comments_count=counts["comments"],
                                    # 0, not null, for a shout without comments: as Discours answers
                                    last_commented_at=counts["last_commented_at"] or 0, shout_id=shout_id))


@strawberry.type
class Reaction(Authored):
    id: int
    created_at: int
    kind: ReactionKind
    updated_at: int | None = None
    deleted_at: int | None = None
    range: str | None = None
    body: str | None = None
    reply_to: int | None = None
    oid: str | None = None
    data: strawberry.Private[dict[str, Any] | None] = None

    @classmethod
    def of(cls, data: dict[str, Any] | None) -> Reaction | None:
        obj: Reaction | None = super().of(None if data is None else {**data, "kind": ReactionKind(data["kind"])})
        if obj is not None:
            obj.data = data
        return obj

    @strawberry.field(metadata=DIRECT, graphql_type=Shout)
    def shout(self, info: Info) -> Soon[Shout | None]:
        return then(soon(info.context.loaders.shouts, self._get("shout")), Shout.of)

    @strawberry.field
    def stat(self) -> Stat | None:
        stat = self._get("stat") or {}
        return Stat(rating=stat.get("rating"), comments_count=stat.get("comments_count"))

    @strawberry.field
    def first_replies(self) -> list[Reaction | None] | None:
        replies = self._get("first_replies")
        return None if replies is None else [Reaction.of(r) for r in replies]


@strawberry.type
class PublicationInfo:
    id: int
    slug: str
    published_at: int | None = None


@strawberry.type
class Draft(Edited):
    id: int
    created_at: int
    layout: str | None = None
    slug: str | None = None
    title: str | None = None
    subtitle: str | None = None
    lead: str | None = None
    body: str | None = None
    cover: str | None = None
    cover_caption: str | None = None
    lang: str | None = None
    seo: str | None = None
    updated_at: int | None = None
    deleted_at: int | None = None
    # When the draft is scheduled to be published (schedule_draft), unix seconds.
    publish_at: int | None = None
    data: strawberry.Private[dict[str, Any] | None] = None

    @strawberry.field
    def publication(self) -> PublicationInfo | None:
        return build(PublicationInfo, self._get("publication"))

    @strawberry.field(description="The shout this draft is published as (or was, if unpublished since).")
    async def shout(self, info: Info) -> Shout | None:
        publication = self._get("publication")
        if publication is None:
            return None
        if publication["published_at"] is not None:  # public: from the shared cache
            return Shout.of(await info.context.loaders.shouts.load(publication["id"]))
        from resolvers.draft import own_shout  # a draft's authors read its unpublished shout

        return Shout.of(await own_shout(info.context.deps, publication["id"]))

    @strawberry.field(metadata=DIRECT, graphql_type=list[Author | None])
    def authors(self, info: Info) -> Soon[list[Author | None]]:
        return load_authors(info, self._get("author_ids") or [])

    @strawberry.field(metadata=DIRECT, graphql_type=list[Topic | None])
    def topics(self, info: Info) -> Soon[list[Topic | None]]:
        return then(soon_all(info.context.loaders.topics, self._get("topic_ids") or []),
                    lambda found: [Topic.of(t) for t in found if t is not None])
