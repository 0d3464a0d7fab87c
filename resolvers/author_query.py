"""One author-list query (`load_authors_by`): what a client asked of a list of authors, checked once where
the schema meets the resolvers (schema/inputs.py `authors_query`): its page validated and clamped
(resolvers/paging.py), its order one of ORDERS, its time window fixed to the minute, so that the query and
its cache key (`digest`) agree on it.

`last_seen` / `created_at` mean "within the last N seconds" (as Discours reads them), measured from the
start of the current minute: the window moves with the clock a minute at a time, and each minute's list
is kept like any other. As in Discours, `last_seen` wins when both are given, and 0 asks for no window."""

from __future__ import annotations

import time
from dataclasses import dataclass

from cache import keys
from resolvers.errors import BadInput
from resolvers.paging import page

DEFAULT_LIMIT = 20
ORDERS = ("name", "created_at", "last_seen", "shouts", "followers")
WINDOW_STEP = 60


@dataclass(frozen=True, slots=True)
class Window:
    """Authors whose `column` ("last_seen" or "created_at") is after `earliest` (unix seconds)."""

    column: str
    earliest: int


@dataclass(frozen=True, slots=True)
class AuthorsQuery:
    limit: int = DEFAULT_LIMIT
    offset: int = 0
    slug: str | None = None
    name: str | None = None  # a part of the name, any case
    topic: str | None = None  # authors of shouts in this topic (its slug)
    window: Window | None = None
    after: int | None = None  # created after (unix seconds)
    order: str = "created_at"  # of ORDERS
    community: int | None = None  # members of this community (its id)

    @classmethod
    def of(cls, *, maximum: int, limit: int | None = None, offset: int | None = None, slug: str | None = None,
           name: str | None = None, topic: str | None = None, last_seen: int | None = None,
           created_at: int | None = None, after: int | None = None, order: str | None = None,
           stat: str | None = None, community: int | None = None, now: float | None = None) -> AuthorsQuery:
        """The query, or BadInput naming the field that is wrong; a limit past `maximum` is clamped. `order`
        (or, as Discours names it, `stat`) defaults to the newest authors first."""
        limit, offset = page(limit, offset, default=DEFAULT_LIMIT, maximum=maximum)
        ordered = order or stat or "created_at"
        if ordered not in ORDERS:
            raise BadInput(f"order must be one of {', '.join(ORDERS)}", field="order")
        return cls(limit=limit, offset=offset, slug=slug or None, name=name or None, topic=topic or None,
                   window=_window(last_seen, created_at, time.time() if now is None else now), after=after,
                   order=ordered, community=community)

    def digest(self) -> str:
        return keys.digest(self.slug, self.name, self.topic, self.window, self.after, self.order, self.limit,
                           self.offset, self.community)

    @property
    def key(self) -> str:
        """The cache key of this page's ids: a community's members under seed 002's `community:authors`."""
        if self.community is not None:
            return keys.community_authors(self.community, self.limit, self.offset, self.order, self.digest())
        return keys.authors_stats(self.limit, self.offset, self.order, self.digest())


def _window(last_seen: int | None, created_at: int | None, now: float) -> Window | None:
    for column, seconds in (("last_seen", last_seen), ("created_at", created_at)):
        if seconds:
            if seconds < 0:
                raise BadInput(f"{column} is a number of seconds back from now: 0 or more", field=column)
            # a window longer than the clock has run is every author (and stays a 32-bit time)
            return Window(column, max(0, int(now) // WINDOW_STEP * WINDOW_STEP - seconds))
    return None
