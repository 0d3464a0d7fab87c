"""The Query type: each field unpacks the context and calls one function of `resolvers/`."""

from __future__ import annotations

import asyncio
from typing import Any

import strawberry

from resolvers import author_reads as authors
from resolvers import collection as collections
from resolvers import community as communities
from resolvers import feed, histories, search, shout_reads
from resolvers import following as followers
from resolvers import reaction_reads as reactions
from resolvers import topic_reads as topics
from schema.admin import AdminQuery
from schema.admin_people import AdminPeopleQuery
from schema.auth import AuthQuery
from schema.context import Info, client_address
from schema.engine.cache_control import READ_MAX_AGE, cache_control
from schema.enums import ReactionSort, ShoutsOrderBy
from schema.inputs import (
    AuthorsBy,
    LoadShoutsOptions,
    ReactionBy,
    as_dict,
    authors_query,
    reactions_query,
    shouts_query,
)
from schema.pages import along, entities_list, reactions_page, shouts_list, shouts_page
from schema.results import Collection, CommonResult, CountResult, SearchResult
from schema.types import Author, AuthorPlace, Community, Reaction, Shout, Topic
from schema.viewer_query import ViewerQuery


def _authors(items: list[dict[str, Any]]) -> list[Author | None]:
    return [Author.of(a) for a in items]


def _topics(items: list[dict[str, Any]]) -> list[Topic | None]:
    return [Topic.of(t) for t in items]


def _communities(items: list[dict[str, Any]]) -> list[Community | None]:
    return [Community.of(c) for c in items]


async def _listed_authors(info: Info, items: list[dict[str, Any]]) -> list[Author | None]:
    return await entities_list(info, "author", items, Author.of)


async def _listed_topics(info: Info, items: list[dict[str, Any]]) -> list[Topic | None]:
    return await entities_list(info, "topic", items, Topic.of)


async def _listed_communities(info: Info, items: list[dict[str, Any]]) -> list[Community | None]:
    return await entities_list(info, "community", items, Community.of)


@strawberry.type
class Query(AuthQuery, AdminQuery, AdminPeopleQuery, ViewerQuery):
    # --- authors ---------------------------------------------------------------------------------
    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def get_author(self, info: Info, slug: str | None = None, author_id: int | None = None) -> Author | None:
        return Author.of(await authors.get_author(info.context.deps, slug=slug, author_id=author_id))

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def get_authors_all(self, info: Info) -> list[Author | None] | None:
        return await _listed_authors(info, await authors.get_authors_all(info.context.deps))

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def load_authors_by(self, info: Info, by: AuthorsBy, limit: int | None = None,
                              offset: int | None = None) -> list[Author | None] | None:
        query = authors_query(by, limit, offset, info.context.deps)
        return await _listed_authors(info, await authors.load_authors_by(info.context.deps, query))

    # No cache_control: never kept by the response cache, whose tags a vote does not move (the board does).
    @strawberry.field(description="The authors ranked around one (an addition to the Discours contract): "
                      "`radius` places above and below it on the leaderboard of authors by rating, itself "
                      "among them, with their places and ratings; empty for an author with no place.")
    async def load_authors_around(self, info: Info, slug: str | None = None, author_id: int | None = None,
                                  radius: int = 2) -> list[AuthorPlace]:
        found = await authors.load_authors_around(info.context.deps, radius, slug=slug, author_id=author_id)
        return [AuthorPlace(place=place, score=score, author=shown) for place, score, author in found
                if (shown := Author.of(author)) is not None]

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def load_authors_search(self, info: Info, text: str, limit: int | None = None,
                                  offset: int | None = None) -> list[Author] | None:
        found = await search.load_authors_search(info.context.deps, text, limit, offset,
                                                 client=client_address(info.context.request))
        return [a for a in await _listed_authors(info, found) if a is not None]

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def get_author_followers(self, info: Info, slug: str | None = None, user: str | None = None,
                                   author_id: int | None = None) -> list[Author | None] | None:
        found = await authors.get_author_followers(info.context.deps, slug, user, author_id)
        return await _listed_authors(info, found)

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def get_author_follows(self, info: Info, slug: str | None = None, user: str | None = None,
                                 author_id: int | None = None) -> CommonResult:
        found = await authors.get_author_follows(info.context.deps, slug, user, author_id)
        return CommonResult(error=found["error"], authors=_authors(found["authors"]),
                            topics=_topics(found["topics"]), communities=_communities(found["communities"]))

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def get_author_follows_topics(self, info: Info, slug: str | None = None, user: str | None = None,
                                        author_id: int | None = None) -> list[Topic | None] | None:
        found = await authors.get_author_follows_of_kind(info.context.deps, "topic", slug, user, author_id)
        return await _listed_topics(info, found)

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def get_author_follows_authors(self, info: Info, slug: str | None = None, user: str | None = None,
                                         author_id: int | None = None) -> list[Author | None] | None:
        return await _listed_authors(
            info, await authors.get_author_follows_of_kind(info.context.deps, "author", slug, user, author_id))

    # --- communities -----------------------------------------------------------------------------
    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def get_community(self, info: Info) -> Community | None:
        return Community.of(await communities.get_community(info.context.deps))

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def get_communities_all(self, info: Info) -> list[Community | None] | None:
        return await _listed_communities(info, await communities.get_communities_all(info.context.deps))

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def get_communities_by_author(self, info: Info, slug: str | None = None, user: str | None = None,
                                        author_id: int | None = None) -> list[Community | None] | None:
        return await _listed_communities(
            info, await communities.get_communities_by_author(info.context.deps, slug, user, author_id))

    # --- collections -----------------------------------------------------------------------------
    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def get_collection(self, info: Info, slug: str) -> Collection | None:
        return Collection.of(await collections.get_collection(info.context.deps, slug))

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def get_collections_all(self, info: Info) -> list[Collection | None] | None:
        return [Collection.of(c) for c in await collections.get_collections_all(info.context.deps)]

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def get_collections_by_author(self, info: Info, slug: str | None = None, user: str | None = None,
                                        author_id: int | None = None) -> list[Collection | None] | None:
        found = await collections.get_collections_by_author(info.context.deps, slug, user, author_id)
        return [Collection.of(c) for c in found]

    # --- topics ----------------------------------------------------------------------------------
    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def get_topic(self, info: Info, slug: str) -> Topic | None:
        return Topic.of(await topics.get_topic(info.context.deps, slug))

    @strawberry.field(metadata=cache_control(READ_MAX_AGE, rendered=True))
    async def get_topics_all(self, info: Info) -> list[Topic | None]:
        return await _listed_topics(info, await topics.get_topics_all(info.context.deps))

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def get_topics_by_author(self, info: Info, slug: str | None = None, user: str | None = None,
                                   author_id: int | None = None) -> list[Topic | None] | None:
        found = await topics.get_topics_by_author(info.context.deps, slug, user, author_id)
        return await _listed_topics(info, found)

    @strawberry.field(metadata=cache_control(READ_MAX_AGE, rendered=True))
    async def get_topics_by_community(self, info: Info, community_id: int, limit: int | None = None,
                                      offset: int | None = None) -> list[Topic | None] | None:
        found = await topics.get_topics_by_community(info.context.deps, community_id, limit, offset)
        return await _listed_topics(info, found)

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def get_topic_followers(self, info: Info, slug: str | None = None) -> list[Author | None] | None:
        return await _listed_authors(info, await topics.get_topic_followers(info.context.deps, slug))

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def get_topic_authors(self, info: Info, slug: str | None = None) -> list[Author | None] | None:
        return await _listed_authors(info, await topics.get_topic_authors(info.context.deps, slug))

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def get_shout_followers(self, info: Info, slug: str | None = None,
                                  shout_id: int | None = None) -> list[Author | None] | None:
        found = await followers.get_shout_followers(info.context.deps, slug, shout_id)
        return await _listed_authors(info, found)

    # --- reactions -------------------------------------------------------------------------------
    @strawberry.field(metadata=cache_control(READ_MAX_AGE, rendered=True))
    async def load_reactions_by(self, info: Info, by: ReactionBy, limit: int | None = None,
                                offset: int | None = None) -> list[Reaction | None] | None:
        query = reactions_query(by, limit, offset, info.context.deps)
        found = await reactions.load_reactions_by(info.context.deps, query, client=client_address(info.context.request))
        return await reactions_page(info, found)

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def load_shout_comments(self, info: Info, shout: int, limit: int | None = None,
                                  offset: int | None = None) -> list[Reaction | None] | None:
        return await reactions_page(info, await reactions.load_shout_comments(info.context.deps, shout, limit, offset))

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def load_shout_ratings(self, info: Info, shout: int, limit: int | None = None,
                                 offset: int | None = None) -> list[Reaction | None] | None:
        return await reactions_page(info, await reactions.load_shout_ratings(info.context.deps, shout, limit, offset))

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def load_comment_ratings(self, info: Info, comment: int, limit: int | None = None,
                                   offset: int | None = None) -> list[Reaction | None] | None:
        found = await reactions.load_comment_ratings(info.context.deps, comment, limit, offset)
        return await reactions_page(info, found)

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def load_comments_branch(
        self,
        info: Info,
        shout: int,
        parent_id: int | None = None,
        limit: int | None = None,
        offset: int | None = None,
        sort: ReactionSort | None = None,
        children_limit: int | None = None,
        children_offset: int | None = None,
    ) -> list[Reaction | None] | None:
        found = await reactions.load_comments_branch(
            info.context.deps, shout, parent_id, limit, offset, as_dict(sort), children_limit, children_offset)
        return await reactions_page(info, found)

    # --- shouts ----------------------------------------------------------------------------------
    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def get_shout(self, info: Info, slug: str | None = None, shout_id: int | None = None) -> Shout | None:
        ctx = info.context
        viewer = await ctx.viewer(shapes_answer=False)  # for the reading history only
        shout = await shout_reads.get_shout(ctx.deps, slug=slug, shout_id=shout_id)
        if shout is None:
            return None
        # The view is counted while the shout's relations load: their commands share a round trip, the
        # count first, so the page reads it. A counter that had to be started from the database meanwhile
        # may have been read before it held this view: read again.
        started, (loaded,) = await asyncio.gather(
            histories.count_read(ctx.deps, viewer, await ctx.client(), shout["id"], counted=ctx.counts_reads),
            shouts_list(info, [shout]))
        if started:
            ctx.loaders.views.clear(shout["id"])
        return loaded

    @strawberry.field(metadata=cache_control(READ_MAX_AGE, rendered=True))
    async def load_shouts_by(self, info: Info,
                             options: LoadShoutsOptions | None = None) -> list[Shout | None] | None:
        query = shouts_query(options, info.context.deps)
        if query.reacted:
            viewer = await info.context.viewer()
            return await shouts_list(info, await feed.load_shouts_reacted(info.context.deps, viewer, query))
        return await shouts_page(info, await shout_reads.load_shouts_by(info.context.deps, query, along(info)))

    @strawberry.field(metadata=cache_control(READ_MAX_AGE, rendered=True))
    async def load_shouts_with_topic(self, info: Info, slug: str | None = None,
                                     options: LoadShoutsOptions | None = None) -> list[Shout | None] | None:
        query = shouts_query(options, info.context.deps).narrowed(topic=slug)
        return await shouts_page(info, await shout_reads.load_shouts_by(info.context.deps, query, along(info)))

    @strawberry.field(metadata=cache_control(READ_MAX_AGE, rendered=True))
    async def load_shouts_authored_by(self, info: Info, slug: str | None = None,
                                      options: LoadShoutsOptions | None = None) -> list[Shout | None] | None:
        query = shouts_query(options, info.context.deps).narrowed(author=slug)
        return await shouts_page(info, await shout_reads.load_shouts_by(info.context.deps, query, along(info)))

    @strawberry.field
    async def load_shouts_random_top(self, info: Info,
                                     options: LoadShoutsOptions | None = None) -> list[Shout | None] | None:
        query = shouts_query(options, info.context.deps)
        return await shouts_list(info, await shout_reads.load_shouts_random_top(info.context.deps, query))

    @strawberry.field(description="A leaderboard of shouts (an addition to the Discours contract): by "
                      "rating, comments or views, all time or in one ISO week (`2026-W47`, or `current`: "
                      "only shouts that scored that week). Not by last_commented_at.")
    async def load_shouts_top(self, info: Info, order_by: ShoutsOrderBy = ShoutsOrderBy.rating,
                              week: str | None = None, limit: int | None = None,
                              offset: int | None = None) -> list[Shout | None] | None:
        found = await shout_reads.load_shouts_top(info.context.deps, order_by.value, week, limit, offset)
        return await shouts_list(info, found)

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def get_search_results_count(self, info: Info, text: str) -> CountResult:
        count = await search.count_shouts_search(info.context.deps, text, client=client_address(info.context.request))
        return CountResult(count=count)

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def load_shouts_search(self, info: Info, text: str,
                                 options: LoadShoutsOptions | None = None) -> list[SearchResult | None] | None:
        viewer = await info.context.viewer(shapes_answer=False)  # for the search history only
        found = await histories.search_shouts(info.context.deps, viewer, text, shouts_query(options, info.context.deps),
                                            client=client_address(info.context.request))
        return [SearchResult.of(s) for s in found]

