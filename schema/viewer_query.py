"""Queries that need a signed-in viewer: feeds, bookmarks, one's own votes, drafts and notifications."""

from __future__ import annotations

import strawberry

from resolvers import bookmark, draft, feed, histories, notifications, rating
from schema.context import Info
from schema.engine.cache_control import READ_MAX_AGE, cache_control
from schema.enums import ReactionKind
from schema.inputs import LoadShoutsOptions, shouts_query
from schema.pages import shouts_list
from schema.results import CommonResult, MyRateComment, MyRateShout, NotificationGroup, NotificationsResult, common
from schema.types import Shout


def _rate(kind: str | None) -> ReactionKind | None:
    return None if kind is None else ReactionKind(kind)


@strawberry.type
class ViewerQuery:
    @strawberry.field(metadata=cache_control(READ_MAX_AGE, private=True))
    async def load_shouts_feed(self, info: Info, options: LoadShoutsOptions | None = None) -> list[Shout | None] | None:
        viewer = await info.context.viewer()
        found = await feed.load_shouts_feed(info.context.deps, viewer, shouts_query(options, info.context.deps))
        return await shouts_list(info, found)

    @strawberry.field
    async def load_shouts_followed_by(self, info: Info, slug: str | None = None,
                                      options: LoadShoutsOptions | None = None) -> list[Shout | None] | None:
        viewer = await info.context.viewer()
        query = shouts_query(options, info.context.deps)
        found = await feed.load_shouts_followed_by(info.context.deps, viewer, slug, query)
        return await shouts_list(info, found)

    @strawberry.field
    async def load_shouts_unrated(self, info: Info,
                                  options: LoadShoutsOptions | None = None) -> list[Shout | None] | None:
        viewer = await info.context.viewer()
        query = shouts_query(options, info.context.deps)
        return await shouts_list(info, await feed.load_shouts_unrated(info.context.deps, viewer, query))

    @strawberry.field
    async def load_shouts_coauthored(self, info: Info,
                                     options: LoadShoutsOptions | None = None) -> list[Shout | None] | None:
        viewer = await info.context.viewer()
        query = shouts_query(options, info.context.deps)
        return await shouts_list(info, await feed.load_shouts_coauthored(info.context.deps, viewer, query))

    @strawberry.field
    async def load_shouts_discussed(self, info: Info,
                                    options: LoadShoutsOptions | None = None) -> list[Shout | None] | None:
        viewer = await info.context.viewer()
        query = shouts_query(options, info.context.deps)
        return await shouts_list(info, await feed.load_shouts_discussed(info.context.deps, viewer, query))

    @strawberry.field(metadata=cache_control(READ_MAX_AGE, private=True))
    async def load_shouts_bookmarked(self, info: Info,
                                     options: LoadShoutsOptions | None = None) -> list[Shout | None] | None:
        viewer = await info.context.viewer()
        query = shouts_query(options, info.context.deps)
        found = await bookmark.load_shouts_bookmarked(info.context.deps, viewer, query)
        return await shouts_list(info, found)

    @strawberry.field(metadata=cache_control(READ_MAX_AGE, private=True))
    async def get_my_rates_shouts(self, info: Info, shouts: list[int]) -> list[MyRateShout | None] | None:
        found = await rating.get_my_rates_shouts(info.context.deps, await info.context.viewer(), shouts)
        return [MyRateShout(shout_id=r["shout_id"], my_rate=_rate(r["my_rate"])) for r in found]

    @strawberry.field(metadata=cache_control(READ_MAX_AGE, private=True))
    async def get_my_rates_comments(self, info: Info, comments: list[int]) -> list[MyRateComment | None] | None:
        found = await rating.get_my_rates_comments(info.context.deps, await info.context.viewer(), comments)
        return [MyRateComment(comment_id=r["comment_id"], shout_id=r["shout_id"], my_rate=_rate(r["my_rate"]))
                for r in found]

    @strawberry.field
    async def get_my_shout(self, info: Info, shout_id: int) -> CommonResult:
        return common(await draft.get_my_shout(info.context.deps, await info.context.viewer(), shout_id))

    @strawberry.field(description="The shouts the signed-in reader read, most recent first (the newest 100).")
    async def load_reading_history(self, info: Info, limit: int | None = None,
                                   offset: int | None = None) -> list[Shout | None]:
        found = await histories.reading_history(info.context.deps, await info.context.viewer(), limit, offset)
        return await shouts_list(info, found)

    @strawberry.field(description="What the signed-in reader searched for, most recent first (the newest 50).")
    async def load_search_history(self, info: Info, limit: int | None = None) -> list[str]:
        return await histories.search_history(info.context.deps, await info.context.viewer(), limit)

    @strawberry.field
    async def get_shouts_drafts(self, info: Info) -> CommonResult:
        return common(await draft.get_shouts_drafts(info.context.deps, await info.context.viewer()))

    @strawberry.field
    async def load_drafts(self, info: Info) -> CommonResult:
        return common(await draft.load_drafts(info.context.deps, await info.context.viewer()))

    @strawberry.field
    async def load_notifications(self, info: Info, after: int, limit: int | None = None,
                                 offset: int | None = None) -> NotificationsResult:
        viewer = await info.context.viewer()
        found = await notifications.load_notifications(info.context.deps, viewer, after, limit, offset)
        groups = [NotificationGroup(id=g["id"], thread=g["thread"], entity=g["entity"], action=g["action"],
                                    updated_at=g["updated_at"], seen=g["seen"], author_ids=g["author_ids"],
                                    shout_id=g["shout_id"], reaction_ids=g["reaction_ids"])
                  for g in found["notifications"]]
        return NotificationsResult(notifications=groups, unread=found["unread"], total=found["total"],
                                   error=found["error"])
