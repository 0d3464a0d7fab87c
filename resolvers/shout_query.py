"""One shout-list query: what a client asked of a list of shouts, checked once, where the schema meets
the resolvers (schema/inputs.py `shouts_query`).

Every shout list (`load_shouts_by` and its topic and author forms, the random top, search, the viewer's
feeds and bookmarks) takes a `ShoutsQuery`: its page validated and clamped (resolvers/paging.py), its
order one of ORDERS, its filters normalised (layouts sorted, each once), so that equal queries have
equal cache keys (`digest`). `board` names the leaderboard that answers it without SQL, if one does.

A page of cards comes back as a `ShoutPage`, with the relations its reader will show (`Along`) when the
resolver brought them in the page's own round trip.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from cache import keys
from resolvers.errors import BadInput
from resolvers.paging import page

DEFAULT_LIMIT = 10
ORDERS = ("rating", "comments_count", "last_commented_at", "views_count")
# order_by -> the leaderboard that holds that order (cache/live/boards.py), for unfiltered, descending lists.
BOARD_ORDERS = {"rating": "shouts:rating", "comments_count": "shouts:comments", "views_count": "shouts:views"}


@dataclass(frozen=True, slots=True)
class ShoutFilters:
    """Which listed shouts a list holds (resolvers/shout_reads.py `filtered` turns them into SQL)."""

    topic: str | None = None  # a topic's slug
    author: str | None = None  # an author's slug
    layouts: tuple[str, ...] | None = None  # sorted, each once
    featured: bool | None = None
    after: int | None = None  # published at or after (unix seconds)
    community: int | None = None  # a community's id

    @classmethod
    def of(cls, *, topic: str | None = None, author: str | None = None, layouts: Iterable[str] | None = None,
           featured: bool | None = None, after: int | None = None, community: int | None = None) -> ShoutFilters:
        return cls(topic=topic, author=author, featured=featured, after=after, community=community,
                   layouts=None if layouts is None else tuple(sorted(set(layouts))))

    def named(self) -> list[tuple[str, Any]]:
        """The filters that are set, by name in order: what a cache key digests."""
        return [(field.name, value) for field in dataclasses.fields(self)
                if (value := getattr(self, field.name)) is not None]

    def digest(self) -> str:
        return keys.digest(self.named())


NO_FILTERS = ShoutFilters()


@dataclass(frozen=True, slots=True)
class ShoutsQuery:
    """A valid shout-list query (`of` checks one; the defaults are a first page of the newest)."""

    limit: int = DEFAULT_LIMIT  # clamped to the page size
    offset: int = 0
    filters: ShoutFilters = NO_FILTERS
    order_by: str | None = None  # of ORDERS; None: newest published first
    order_by_desc: bool = True
    random_limit: int | None = None  # load_shouts_random_top: the pool the sample is drawn from
    reacted: bool = False  # load_shouts_by: only shouts the viewer reacted to (resolvers/feed.py)

    @classmethod
    def of(cls, *, maximum: int, limit: int | None = None, offset: int | None = None,
           filters: ShoutFilters = NO_FILTERS, order_by: str | None = None, order_by_desc: bool | None = None,
           random_limit: int | None = None, reacted: bool = False) -> ShoutsQuery:
        """The query, or BadInput naming the field that is wrong; a limit past `maximum` is clamped."""
        limit, offset = page(limit, offset, default=DEFAULT_LIMIT, maximum=maximum)
        if order_by is not None and order_by not in ORDERS:
            raise BadInput(f"order_by must be one of {', '.join(ORDERS)}", field="order_by")
        return cls(limit=limit, offset=offset, filters=filters, order_by=order_by,
                   order_by_desc=True if order_by_desc is None else order_by_desc, random_limit=random_limit,
                   reacted=reacted)

    def narrowed(self, *, topic: str | None = None, author: str | None = None) -> ShoutsQuery:
        """The same query within one topic or one author's shouts (`load_shouts_with_topic`, `..._authored_by`)."""
        filters = dataclasses.replace(self.filters, topic=self.filters.topic if topic is None else topic,
                                      author=self.filters.author if author is None else author)
        return dataclasses.replace(self, filters=filters)

    def ordered_by_default(self, order_by: str) -> ShoutsQuery:
        """This query, ordered by `order_by` unless it names an order itself."""
        return self if self.order_by is not None else dataclasses.replace(self, order_by=order_by)

    def digest(self) -> str:
        """What the cache key of this query's ids holds: equal for equal queries, whoever asks."""
        return keys.digest(self.filters.named(), self.order_by, self.order_by_desc, self.limit, self.offset)

    @property
    def ids_key(self) -> str:
        """The cache key of this page's ids, of seed 002's families where it names one: the main feed (no
        filter, newest first) is `shouts:feed`, a community's (filtered by community alone) `community:shouts`;
        any other list is `shouts:by` its digest."""
        newest = self.order_by is None and self.order_by_desc
        community = self.filters.community
        if newest and self.filters == NO_FILTERS:
            return keys.shouts_feed(self.limit, self.offset)
        if newest and community is not None and self.filters == ShoutFilters(community=community):
            return keys.community_shouts(community, self.limit, self.offset)
        return keys.shouts_by(self.digest())

    @property
    def board(self) -> str | None:
        """The leaderboard that holds this page in order (an unfiltered list, best first), if one does."""
        if self.filters != NO_FILTERS or not self.order_by_desc:
            return None
        return BOARD_ORDERS.get(self.order_by or "")


@dataclass(frozen=True, slots=True)
class Along:
    """The relations a page of shout cards brings along in its own round trip: those its reader shows
    (schema/pages.py `along`), kept with the page's composite (resolvers/shout_reads.py `load_shouts_by`)."""

    authors: bool = False  # the cards' authors and creators
    topics: bool = False  # the cards' topics and main topics

    @property
    def shape(self) -> str:
        """The page composite's shape: what its stored value holds besides the cards."""
        return "-".join(("cards", *(("authors",) if self.authors else ()), *(("topics",) if self.topics else ())))


NOTHING_ALONG = Along()


@dataclass(frozen=True, slots=True)
class ShoutPage:
    """Shouts (full, or cards without their body) in order, and what came along with them (None when not
    asked for: the request's loaders read it when a field needs it)."""

    shouts: Sequence[dict[str, Any] | None]
    authors: list[dict[str, Any]] | None = None
    topics: list[dict[str, Any]] | None = None
