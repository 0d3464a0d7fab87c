"""Paging: the one place that decides what `limit` and `offset` a list may be asked for, and how a page's
bounds reach its statement. The resolvers take their pages through `page`; the query cost
(schema/engine/limits.py) prices a list at `clamped` items, so a limit is counted as the resolvers will read it.

A first page's limit may be written into its statement's text (`kept_page`); any other page's bounds are
bound parameters. PostgreSQL plans a statement whose LIMIT is a parameter at every execution: a plan made
without knowing the limit would expect to read a tenth of the rows, and for a page of reactions at
benchmark size that plan scans and sorts the whole table (half a second), so the planner always makes a
custom one, 0.4-0.7 ms of planning for a statement that runs in 0.25 ms. With the limit in its text, after
five executions the connection keeps one plan (PostgreSQL's generic plan) and plans no more. That plan is
made without the values of the parameters left, from default guesses of how many rows each selects: the
caller says whether its statement's plan can go wrong so (`planned_once`). An equality on an indexed
column is read through that index whatever its value; a list of reaction kinds is not: kept, the plan walks
the whole table in date order looking for a kind that has no reactions (180 ms, where a plan made for the
value reads the kind's rows, 2 ms). First pages are what most readers read, and their texts are as many as
the page sizes asked for (`page` clamps them); later pages, as many as their offsets, keep parameters.
"""

from __future__ import annotations

import functools
from typing import Any

from sqlalchemy import Integer, Select, bindparam, func, literal_column, select

from orm.engine import SessionFactory, read_session
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


def page_fields(total: int, limit: int, offset: int) -> dict[str, int]:
    """What the admin API's lists answer beside their items (Discours' names): the total, the page (from 1),
    its size and how many pages."""
    return {"total": total, "page": offset // limit + 1 if limit else 1, "perPage": limit,
            "totalPages": -(-total // limit) if limit else 0}


async def counted_page(db: SessionFactory, statement: Select[*tuple[Any, ...]], order: Any, limit: int,
                       offset: int) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """A page of `statement`'s rows (dicts of their columns) in `order`, and its `page_fields`: an
    administrator's list, read uncached, whose total is counted whole."""
    async with read_session(db) as session:
        total = await session.scalar(select(func.count()).select_from(statement.subquery()))
        rows = (await session.execute(statement.order_by(*order).limit(limit).offset(offset))).mappings().all()
    return [dict(row) for row in rows], page_fields(int(total or 0), limit, offset)


# The bounds of a page past the first, as parameters of a statement kept (`kept_page`).
_BOUNDS = {"limit": bindparam("limit", type_=Integer), "offset": bindparam("offset", type_=Integer)}


def kept_page(statement: Select[Any], limit: int, offset: int, *, planned_once: bool
              ) -> tuple[Select[Any], dict[str, int]]:
    """A statement built once (a module's, a bounded cache's) limited to a page, and the parameters its
    bounds need; a first page with its limit in its text when `planned_once` (its plan does not depend on
    its other parameters' values). The page's statement is kept too, so that it is compiled once
    (orm/driver.py)."""
    if offset == 0 and planned_once:
        return _first_page(statement, int(limit)), {}
    return _later_page(statement), {"limit": limit, "offset": offset}


@functools.lru_cache(maxsize=1024)  # the statements kept, by the page sizes clients ask for (at most `maximum`)
def _first_page(statement: Select[Any], limit: int) -> Select[Any]:
    return statement.limit(literal_column(str(limit), Integer))


@functools.lru_cache(maxsize=1024)
def _later_page(statement: Select[Any]) -> Select[Any]:
    return statement.limit(_BOUNDS["limit"]).offset(_BOUNDS["offset"])
