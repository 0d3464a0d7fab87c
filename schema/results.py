"""Result and auxiliary types of the contract: CommonResult and the other operation results,
search results, notifications, auth results. Entities (drafts among them) live in schema/types.py."""

from __future__ import annotations

from typing import Any

import orjson
import strawberry

from schema.context import Info, Soon
from schema.engine.execution import DIRECT
from schema.enums import InviteStatus, ReactionKind, ReactionStatus
from schema.types import (
    Author,
    Community,
    Draft,
    Reaction,
    Shout,
    Topic,
    load_author,
    load_authors,
    main_topic_of,
    topics_of_shout,
)


@strawberry.type
class ReactionUpdating:
    error: str | None = None
    status: ReactionStatus | None = None
    reaction: Reaction | None = None


@strawberry.type
class Rating:
    rater: str
    value: int



@strawberry.type
class Collection:
    id: int
    slug: str
    title: str
    created_at: int
    desc: str | None = None
    pic: str | None = None
    amount: int | None = None
    published_at: int | None = None
    created_by_id: strawberry.Private[int | None] = None

    @classmethod
    def of(cls, data: dict[str, Any] | None) -> Collection | None:
        if data is None:
            return None
        return cls(id=data["id"], slug=data["slug"], title=data["title"], created_at=data["created_at"],
                   desc=data.get("desc"), pic=data.get("pic"), amount=data.get("amount"),
                   published_at=data.get("published_at"), created_by_id=data.get("created_by"))

    @strawberry.field(metadata=DIRECT, graphql_type=Author)
    def created_by(self, info: Info) -> Soon[Author]:
        return load_author(info, self.created_by_id)  # type: ignore[return-value]


@strawberry.type
class CommonResult:
    error: str | None = None
    success: bool | None = None
    message: str | None = None
    stats: str | None = None  # a JSON object: what a batch operation did, by name (a merge's moves)
    drafts: list[Draft | None] | None = None
    draft: Draft | None = None
    slugs: list[str | None] | None = None
    shout: Shout | None = None
    shouts: list[Shout | None] | None = None
    author: Author | None = None
    authors: list[Author | None] | None = None
    reaction: Reaction | None = None
    reactions: list[Reaction | None] | None = None
    topic: Topic | None = None
    topics: list[Topic | None] | None = None
    community: Community | None = None
    communities: list[Community | None] | None = None


@strawberry.type
class CountResult:
    count: int


@strawberry.type
class SearchResult:
    id: int
    slug: str
    title: str
    score: float
    cover: str | None = None
    created_at: int | None = None
    shout: strawberry.Private[dict[str, Any] | None] = None

    @classmethod
    def of(cls, data: dict[str, Any]) -> SearchResult:
        return cls(id=data["id"], slug=data["slug"], title=data["title"], score=data.get("score") or 0.0,
                   cover=data.get("cover"), created_at=data.get("created_at"), shout=data)

    @strawberry.field(metadata=DIRECT, graphql_type=Topic | None)
    def main_topic(self, info: Info) -> Soon[Topic | None]:
        return main_topic_of(info, self.shout or {})

    @strawberry.field(metadata=DIRECT, graphql_type=list[Author | None] | None)
    def authors(self, info: Info) -> Soon[list[Author | None] | None]:
        return load_authors(info, (self.shout or {}).get("author_ids") or [])

    @strawberry.field(metadata=DIRECT, graphql_type=list[Topic | None] | None)
    def topics(self, info: Info) -> Soon[list[Topic | None] | None]:
        return topics_of_shout(info, self.shout or {})


@strawberry.type
class Invite:
    id: int
    inviter_id: int
    author_id: int
    shout_id: int
    status: InviteStatus | None = None


@strawberry.type
class AuthorFollowsResult:
    topics: list[Topic | None] | None = None
    authors: list[Author | None] | None = None
    communities: list[Community | None] | None = None
    error: str | None = None


@strawberry.type
class Notification:
    id: int
    action: str
    entity: str
    created_at: int
    payload: str
    seen: list[Author | None] | None = None


@strawberry.type
class NotificationSeenResult:
    error: str | None = None


@strawberry.type
class NotificationGroup:
    id: int  # the group's newest notification
    thread: str
    entity: str
    action: str
    updated_at: int
    seen: bool | None = None
    author_ids: strawberry.Private[list[int] | None] = None
    shout_id: strawberry.Private[int | None] = None
    reaction_ids: strawberry.Private[list[int] | None] = None

    @strawberry.field(metadata=DIRECT, graphql_type=list[Author | None] | None)
    def authors(self, info: Info) -> Soon[list[Author | None] | None]:
        return load_authors(info, self.author_ids or [])

    @strawberry.field
    async def shout(self, info: Info) -> Shout | None:
        return None if self.shout_id is None else Shout.of(await info.context.loaders.shouts.load(self.shout_id))

    @strawberry.field(description="The ids of the group's reactions. The contract types this [Reaction]; "
                                  "the 2025 web client selects it as a scalar list, and the client wins.")
    def reactions(self) -> list[int | None] | None:
        return list(self.reaction_ids or [])


@strawberry.type
class NotificationsResult:
    notifications: list[NotificationGroup]
    unread: int
    total: int
    error: str | None = None


@strawberry.type
class MyRateShout:
    shout_id: int
    my_rate: ReactionKind | None = None


@strawberry.type
class MyRateComment:
    comment_id: int
    shout_id: int | None = None
    my_rate: ReactionKind | None = None


@strawberry.type
class SuccessResult:
    success: bool
    error: str | None = None


@strawberry.type
class AuthResult:
    success: bool
    error: str | None = None
    token: str | None = None
    author: Author | None = None


@strawberry.type
class Permission:
    resource: str
    action: str
    conditions: str | None = None


@strawberry.type
class SessionInfo:
    token: str
    author: Author


@strawberry.type
class AuthSuccess:
    success: bool


@strawberry.type
class OAuthProvider:
    id: str
    name: str
    url: str


@strawberry.type
class RolesInfo:
    id: str
    name: str
    permissions: list[Permission]
    description: str | None = None


@strawberry.type
class SecurityUpdateResult:
    success: bool
    error: str | None = None
    author: Author | None = None


_COMMON_ONE = {"draft": Draft, "shout": Shout, "author": Author, "reaction": Reaction, "topic": Topic,
               "community": Community}
_COMMON_MANY = {"drafts": Draft, "shouts": Shout, "authors": Author, "reactions": Reaction, "topics": Topic,
                "communities": Community}


def common(result: dict[str, Any]) -> CommonResult:
    """A resolver's result dict as the contract's CommonResult (only the keys it has)."""
    stats = result.get("stats")
    values: dict[str, Any] = {"error": result.get("error"), "success": result.get("error") is None,
                              "message": result.get("message"), "slugs": result.get("slugs"),
                              "stats": None if stats is None else orjson.dumps(stats).decode()}
    for name, cls in _COMMON_ONE.items():
        if name in result:
            values[name] = cls.of(result[name])  # type: ignore[attr-defined]
    for name, cls in _COMMON_MANY.items():
        if name in result:
            values[name] = [cls.of(item) for item in result[name] or []]  # type: ignore[attr-defined]
    return CommonResult(**values)
