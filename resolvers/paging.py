"""Paging: the one place that decides what `limit` and `offset` a list may be asked for. The resolvers
take their pages through `page`; the query cost (schema/limits.py) prices a list at `clamped` items, so
a limit is counted as the resolvers will read it."""

from __future__ import annotations

from resolvers.errors import BadInput

MAX_OFFSET = 1_000_000


def clamped(limit: int, maximum: int) -> int:
    """The items a list asked for `limit` reads: a huge limit is clamped, never refused."""
    return min(limit, maximum)


def page(limit: int | None, offset: int | None, *, default: int, maximum: int) -> tuple[int, int]:
    """Validate paging: a negative value is refused with a clear error, a huge limit is clamped."""
    if limit is None:
        limit = default
    if offset is None:
        offset = 0
    if limit < 0:
        raise BadInput(f"limit must be zero or positive, got {limit}", field="limit")
    if offset < 0:
        raise BadInput(f"offset must be zero or positive, got {offset}", field="offset")
    if offset > MAX_OFFSET:
        raise BadInput("offset is too large", field="offset")
    return clamped(limit, maximum), offset
