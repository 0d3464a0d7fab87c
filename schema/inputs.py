"""The contract's input types. `as_dict` turns one into the plain dict the resolver functions take."""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any

import strawberry

from resolvers.author_query import AuthorsQuery
from resolvers.deps import Deps
from resolvers.errors import BadInput
from resolvers.reaction_query import ReactionsQuery
from resolvers.shout_query import NO_FILTERS, ShoutFilters, ShoutsQuery
from schema.enums import ReactionKind, ReactionSort, ShoutsOrderBy


def as_dict(value: Any) -> Any:
    """Inputs -> plain dicts, enums -> their values, UNSET/None dropped from dicts, and nulls dropped from
    lists: the contract's list inputs (`[String]`, `[MediaItemInput]`) allow null items, which name
    nothing, and resolvers never see them."""
    if value is None or value is strawberry.UNSET:
        return None
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, list):
        return [as_dict(v) for v in value if v is not None and v is not strawberry.UNSET]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in dataclasses.fields(value):
            v = getattr(value, f.name)
            if v is not None and v is not strawberry.UNSET:
                out[f.name] = as_dict(v)
        return out
    return value


@strawberry.input
class MediaItemInput:
    url: str | None = None
    title: str | None = None
    body: str | None = None
    source: str | None = None
    pic: str | None = None
    date: str | None = None
    genre: str | None = None
    artist: str | None = None
    lyrics: str | None = None


@strawberry.input
class AuthorInput:
    id: int
    slug: str | None = None


@strawberry.input
class TopicInput:
    slug: str
    id: int | None = None
    title: str | None = None
    body: str | None = None
    pic: str | None = None
    community: int | None = None
    parent_ids: list[int | None] | None = None


@strawberry.input
class AdminTopicInput:
    id: int
    slug: str | None = None
    title: str | None = None
    body: str | None = None
    pic: str | None = None
    community: int | None = None
    parent_ids: list[int | None] | None = None


@strawberry.input
class TopicMergeInput:
    target_topic_id: int
    source_topic_ids: list[int]
    preserve_target_properties: bool | None = None
    dry_run: bool | None = strawberry.field(
        default=None, description="Say what the merge would move (its `stats`) and change nothing (an addition "
                                  "to the Discours contract).")


@strawberry.input
class DraftInput:
    id: int | None = None
    layout: str | None = None
    shout_id: int | None = None
    author_ids: list[int] | None = None
    topic_ids: list[int] | None = None
    main_topic_id: int | None = None
    media: list[MediaItemInput | None] | None = None
    lead: str | None = None
    subtitle: str | None = None
    lang: str | None = None
    seo: str | None = None
    body: str | None = None
    title: str | None = None
    slug: str | None = None
    cover: str | None = None
    cover_caption: str | None = None


@strawberry.input
class ProfileInput:
    slug: str | None = None
    name: str | None = None
    pic: str | None = None
    links: list[str | None] | None = None
    bio: str | None = None
    about: str | None = None


@strawberry.input
class ReactionInput:
    kind: ReactionKind
    shout: int
    id: int | None = None
    quote: str | None = None
    body: str | None = None
    reply_to: int | None = None


@strawberry.input
class AuthorsBy:
    last_seen: int | None = None
    created_at: int | None = None
    slug: str | None = None
    name: str | None = None
    topic: str | None = None
    order: str | None = None
    after: int | None = None
    stat: str | None = None
    community: int | None = strawberry.field(default=None, description=(
        "Members of this community (an addition to the Discours contract)."))


@strawberry.input
class LoadShoutsFilters:
    topic: str | None = None
    author: str | None = None
    layouts: list[str | None] | None = None
    featured: bool | None = None
    reacted: bool | None = None
    after: int | None = None
    community: int | None = None


@strawberry.input
class LoadShoutsOptions:
    limit: int
    filters: LoadShoutsFilters | None = None
    random_limit: int | None = None
    offset: int | None = None
    order_by: ShoutsOrderBy | None = None
    order_by_desc: bool | None = None


def authors_query(by: AuthorsBy, limit: int | None, offset: int | None, deps: Deps) -> AuthorsQuery:
    """The one author-list query `load_authors_by`'s arguments make (BadInput when they are not valid)."""
    return AuthorsQuery.of(maximum=deps.max_page_size, limit=limit, offset=offset, slug=by.slug, name=by.name,
                           topic=by.topic, last_seen=by.last_seen, created_at=by.created_at, after=by.after,
                           order=by.order, stat=by.stat, community=by.community)


def reactions_query(by: ReactionBy, limit: int | None, offset: int | None, deps: Deps) -> ReactionsQuery:
    """The one reaction-list query `load_reactions_by`'s arguments make (BadInput when they are not valid)."""
    if by.author_id is not None and by.created_by is not None and by.author_id != by.created_by:
        raise BadInput("author_id and created_by name one author: give one of them", field="author_id")
    return ReactionsQuery.of(
        maximum=deps.max_page_size, limit=limit, offset=offset, shout=by.shout, shout_id=by.shout_id,
        search=by.search, shouts=None if by.shouts is None else [slug for slug in by.shouts if slug is not None],
        kinds=None if by.kinds is None else [kind.value for kind in by.kinds if kind is not None],
        reply_to=by.reply_to, topic=by.topic, created_by=by.created_by if by.author_id is None else by.author_id,
        author=by.author, after=by.after, sort=None if by.sort is None else by.sort.value)


def shouts_query(options: LoadShoutsOptions | None, deps: Deps) -> ShoutsQuery:
    """The one shout-list query a list's options make (BadInput when they are not valid); no options, the
    first page of the newest."""
    if options is None:
        return ShoutsQuery()
    given = options.filters
    filters = NO_FILTERS if given is None else ShoutFilters.of(
        topic=given.topic, author=given.author, featured=given.featured, after=given.after, community=given.community,
        layouts=None if given.layouts is None else [layout for layout in given.layouts if layout is not None])
    return ShoutsQuery.of(maximum=deps.max_page_size, limit=options.limit, offset=options.offset, filters=filters,
                          order_by=None if options.order_by is None else options.order_by.value,
                          order_by_desc=options.order_by_desc, random_limit=options.random_limit,
                          reacted=bool(given and given.reacted))


@strawberry.input
class ReactionBy:
    shout: str | None = None
    shout_id: int | None = None
    shouts: list[str | None] | None = None
    search: str | None = None
    kinds: list[ReactionKind | None] | None = None
    reply_to: int | None = None
    topic: str | None = None
    created_by: int | None = None
    author_id: int | None = None  # the 2025-08 contract's name for created_by
    author: str | None = None
    after: int | None = None
    sort: ReactionSort | None = None


@strawberry.input
class NotificationSeenInput:
    notifications: list[int | None] | None = None
    thread: int | None = None


@strawberry.input
class CommunityInput:
    slug: str | None = None
    name: str | None = None
    desc: str | None = None
    pic: str | None = None


@strawberry.input
class CollectionInput:
    id: int | None = None
    slug: str | None = None
    title: str | None = None
    desc: str | None = None
    pic: str | None = None


# The 2025-08 contract's auth inputs: declared there, taken by no operation (the auth mutations take their
# fields as arguments); registered so that the schema carries them.
@strawberry.input
class LoginCredentials:
    email: str
    password: str


@strawberry.input
class RegisterInput:
    email: str
    password: str | None = None
    name: str | None = None


@strawberry.input
class ChangePasswordInput:
    oldPassword: str  # the contract's names
    newPassword: str


@strawberry.input
class ResetPasswordInput:
    token: str
    newPassword: str
