"""One reaction-list query (`load_reactions_by`): what a client asked of a list of reactions, checked once
where the schema meets the resolvers (schema/inputs.py `reactions_query`): its page validated and
clamped (resolvers/paging.py), its order one of SORTS, its kinds each once, so that equal queries have
equal cache keys (`digest`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from cache import keys
from resolvers.errors import BadInput
from resolvers.paging import page

DEFAULT_LIMIT = 50
SORTS = ("newest", "oldest", "like", "dislike")


def checked_sort(sort: str | None) -> str:
    """A reaction order (cache/live/threads.py ORDERS), "newest" when none is named."""
    sort = sort or "newest"
    if sort not in SORTS:
        raise BadInput(f"sort must be one of {', '.join(SORTS)}", field="sort")
    return sort


@dataclass(frozen=True, slots=True)
class ReactionsQuery:
    """A valid reaction-list query: the filters that are set (None: not filtered by it), a page, an order."""

    limit: int = DEFAULT_LIMIT
    offset: int = 0
    shout: str | None = None  # one shout's slug
    shout_id: int | None = None  # one shout's id (with `shout` too: both must name it)
    shouts: tuple[str, ...] | None = None  # several shouts' slugs
    search: str | None = None  # comments holding the text
    kinds: tuple[str, ...] | None = None  # sorted, each once
    reply_to: int | None = None
    topic: str | None = None
    created_by: int | None = None
    author: str | None = None  # an author's slug
    after: int | None = None  # created at or after (unix seconds)
    sort: str = "newest"

    @classmethod
    def of(cls, *, maximum: int, limit: int | None = None, offset: int | None = None,
           kinds: Iterable[str] | None = None, shouts: Iterable[str] | None = None, sort: str | None = None,
           **filters: Any) -> ReactionsQuery:
        """The query, or BadInput naming the field that is wrong; a limit past `maximum` is clamped."""
        limit, offset = page(limit, offset, default=DEFAULT_LIMIT, maximum=maximum)
        return cls(limit=limit, offset=offset, kinds=None if kinds is None else tuple(sorted(set(kinds))),
                   shouts=None if shouts is None else tuple(shouts), sort=checked_sort(sort), **filters)

    def filters(self) -> list[tuple[str, Any]]:
        """The filters that are set, by name in order."""
        return [(field.name, value) for field in dataclasses.fields(self)
                if field.name not in ("limit", "offset", "sort") and (value := getattr(self, field.name)) is not None]

    def only_filters(self, *names: str) -> bool:
        """Whether no filter is set but (some of) these."""
        return all(name in names for name, _ in self.filters())

    def digest(self) -> str:
        """What the cache key of this query's page holds: equal for equal queries, whoever asks."""
        return keys.digest(self.filters(), self.sort, self.limit, self.offset)
