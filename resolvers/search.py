"""Search: shouts by their text (full text in PostgreSQL, orm/search.py), authors by name, slug and bio
(trigram similarity: a part of a name or a small typo finds the person, in Latin and in Cyrillic).
Comment search (`ReactionBy.search`) uses the same full-text machinery (resolvers/reaction_reads.py).

Shouts are ranked in tiers: every title match above every match elsewhere, then by relevance, then the
most recent first. Their ranked ids and scores are cached per query, as seed 000 section 4 has it:
`search_cache:{normalized query}` holds the best `kept_results` with the total and when they were
ranked, and pages are cut from it (a page beyond them is ranked on its own, not kept). A publication,
an edit, an unpublication or a deletion of any shout moves the `shouts` tag the value is stamped with.

A cold search (one the cache does not answer) is bounded: a statement timeout, at most `candidates`
matches ranked beyond the title matches (the most recent: a common word does not rank every shout),
the total counted up to `count_cap`, and a per-address rate, so that a stream of unique queries cannot
load the database. A query of stop words or exclusions only finds nothing without reading any shout.

On SQLite (the embedded first run) search is a case-insensitive substring match with the same tiers and
no word forms.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Select, case, func, or_, select, union
from sqlalchemy import text as sql
from sqlalchemy.exc import DBAPIError

from auth.services import COLD_SEARCH
from cache import keys
from cache.entities import get_cached_shouts
from orm import Author, Shout
from orm.reaction import Reaction
from orm.search import (
    CONFIGS,
    TITLE_VECTOR,
    comment_match,
    is_postgres,
    query_config,
    searchable_configs_query,
    shout_match,
    shout_score,
)
from orm.stats import is_listed
from resolvers.author_query import DEFAULT_LIMIT as DEFAULT_AUTHORS_LIMIT
from resolvers.author_reads import authors_of_ids
from resolvers.deps import Deps, like_pattern
from resolvers.errors import BadInput, Busy, RateLimited
from resolvers.paging import page
from resolvers.shout_query import ShoutFilters, ShoutsQuery
from resolvers.shout_reads import filtered

TOO_LONG = "the search text is too long"
TIMED_OUT = "the search took too long: try rarer words, or a phrase in quotes"
WINDOW_TTL = 300


def search_text(deps: Deps, text: str) -> str:
    """The query as it is cached (lower case, single spaces), "" when nothing in it can be searched for
    (no letter or digit); longer than the setting: BAD_USER_INPUT."""
    if len(text) > deps.search.max_length:
        raise BadInput(f"{TOO_LONG} (at most {deps.search.max_length} characters)", field="text")
    needle = keys.normalize_query(text)
    return needle if any(c.isalnum() for c in needle) else ""


async def count_cold(deps: Deps, client: str | None) -> None:
    """A search the cache could not answer, from `client`: past the address's rate, RATE_LIMITED."""
    if client is not None and deps.auth is not None and not await deps.accounts.limits.allow(COLD_SEARCH, client):
        raise RateLimited("too many new searches from your address; try again in a minute")


@contextlib.asynccontextmanager
async def _cold_session(deps: Deps) -> AsyncIterator[Any]:
    """A session for a cold search. On PostgreSQL its statements stop after the setting's time (`BUSY`
    then) and each is planned for its own words: asyncpg prepares statements, and a plan PostgreSQL made
    generic would not know whether a word is in five shouts or in forty thousand, and reads a common word
    several times slower."""
    async with deps.db() as session:
        try:
            if is_postgres(session):
                await session.execute(sql("SELECT set_config('statement_timeout', :timeout, true), "
                                          "set_config('plan_cache_mode', 'force_custom_plan', true)"),
                                      {"timeout": str(int(deps.search.statement_timeout * 1000))})
            yield session
        except DBAPIError as exc:
            if "statement timeout" in str(exc.orig) or type(exc.orig).__name__ == "QueryCanceledError":
                raise Busy(TIMED_OUT) from None
            raise


def _holds(column: Any, needle: str) -> ColumnElement[bool]:
    """SQLite's search: the column holds the text, whatever the case (the user's wildcards escaped)."""
    return func.lower(column).like(like_pattern(needle), escape="\\")


def comment_condition(session: Any, needle: str) -> ColumnElement[bool]:
    """`ReactionBy.search`: comments holding the text (a `search_text` needle)."""
    return comment_match(needle) if is_postgres(session) else _holds(Reaction.body, needle)


# --- shouts ----------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Ranking:
    """A shout search's statements: which shouts match (`match`, for the total), and the matches ranked
    (`ranked`, ordered, to be paged)."""

    match: ColumnElement[bool]
    ranked: Select[*tuple[Any, ...]]


def full_text_ranking(needle: str, configs: list[str], filters: ShoutFilters, candidates: int,
                      since: int | None = None) -> Ranking:
    """PostgreSQL: the full-text matches in the `configs` where the text is searchable. Ranked are every
    match whose title matches too (the first tier, whatever its age) and the `candidates` most recent
    others among the shouts published `since` (the newest `window`, resolvers/search.py `_window_start`),
    so that a frequent word ranks a bounded number of shouts whatever the size of the table."""
    base = filtered(select(Shout.id), filters)
    match = shout_match(needle, configs)
    recent = base.where(match)
    if since is not None:
        recent = recent.where(Shout.published_at >= since)
    recent = recent.order_by(Shout.published_at.desc(), Shout.id.desc()).limit(candidates)
    # The title matches, checked against the whole text (its exclusions) row by row: an index condition
    # here would read the whole text index's entries for the word, tens of thousands for a frequent one.
    titled = base.where(shout_match(needle, configs, TITLE_VECTOR), func.coalesce(match, False)).limit(candidates)
    score = shout_score(needle).label("score")
    ranked = select(Shout.id, score).where(Shout.id.in_(union(recent, titled)))
    return Ranking(match, ranked.order_by(score.desc(), Shout.published_at.desc(), Shout.id.desc()))


def window_start_query(window: int) -> Select[int | None]:
    """When the newest `window` listed shouts begin (no row while there are fewer)."""
    return select(Shout.published_at).where(is_listed()).order_by(Shout.published_at.desc()) \
        .offset(max(window - 1, 0)).limit(1)  # the window's oldest: `published_at >= it` is the window


async def _window_start(deps: Deps, session: Any) -> int | None:
    """`window_start_query`, kept for a few minutes: a window a little wider than asked for is as good
    (the shouts published since join it)."""
    async def query() -> int | None:
        start: int | None = await session.scalar(window_start_query(deps.search.window))
        return start

    start: int | None = await deps.cache.cached_query(keys.search_window(deps.search.window), query, ttl=WINDOW_TTL)
    return start


def substring_ranking(needle: str, filters: ShoutFilters) -> Ranking:
    """SQLite: a case-insensitive substring of the title, subtitle, lead or body; title matches first."""
    match = or_(*(_holds(column, needle) for column in (Shout.title, Shout.subtitle, Shout.lead, Shout.body)))
    score = case((_holds(Shout.title, needle), 1.0), else_=0.5).label("score")
    ranked = filtered(select(Shout.id), filters).add_columns(score).where(match)
    return Ranking(match, ranked.order_by(score.desc(), Shout.published_at.desc(), Shout.id.desc()))


async def _rank_shouts(deps: Deps, needle: str, filters: ShoutFilters, limit: int, offset: int,
                       client: str | None) -> dict[str, Any]:
    """The matches' ids and scores from `offset` (at most `limit`), their total (up to `count_cap`), and
    when they were ranked: the value of `search_cache`."""
    await count_cold(deps, client)
    async with _cold_session(deps) as session:
        if is_postgres(session):
            searchable = (await session.execute(searchable_configs_query(needle))).one()
            configs = [config for config in CONFIGS if getattr(searchable, config)]
            if query_config(needle) not in configs:  # stop words or exclusions only: nothing to find
                return {"hits": [], "total": 0, "cached_at": int(time.time())}
            ranking = full_text_ranking(needle, configs, filters, deps.search.candidates,
                                        await _window_start(deps, session))
        else:
            ranking = substring_ranking(needle, filters)
        rows = (await session.execute(ranking.ranked.limit(limit).offset(offset))).all()
        total = await session.scalar(select(func.count()).select_from(
            filtered(select(Shout.id), filters).where(ranking.match).limit(deps.search.count_cap).subquery()))
    return {"hits": [[shout_id, round(float(value), 6)] for shout_id, value in rows], "total": int(total or 0),
            "cached_at": int(time.time())}


async def _kept_ranking(deps: Deps, needle: str, filters: ShoutFilters, client: str | None) -> dict[str, Any]:
    """The best `kept_results` matches of a search with their total, as `search_cache` keeps them."""
    async def kept() -> dict[str, Any]:
        return await _rank_shouts(deps, needle, filters, deps.search.kept_results, 0, client)

    ranking: dict[str, Any] = await deps.cache.cached_query(keys.search(needle + "|" + filters.digest()), kept,
                                                            ttl=deps.ttl_search, tags=[keys.TAG_SHOUTS])
    return ranking


async def load_shouts_search(deps: Deps, text: str, query: ShoutsQuery, *,
                             client: str | None = None) -> list[dict[str, Any]]:
    needle = search_text(deps, text)
    if not needle or query.limit == 0:
        return []
    filters, start, end = query.filters, query.offset, query.offset + query.limit
    if end <= deps.search.kept_results:
        hits = (await _kept_ranking(deps, needle, filters, client))["hits"][start:end]
    else:  # a page past the kept results: ranked for itself
        hits = (await _rank_shouts(deps, needle, filters, query.limit, start, client))["hits"]
    shouts = await get_cached_shouts([h[0] for h in hits], cache=deps.cache, db=deps.db)
    return [{**s, "score": h[1]} for s, h in zip(shouts, hits, strict=True) if s is not None]


async def count_shouts_search(deps: Deps, text: str, *, client: str | None = None) -> int:
    """How many listed shouts a search finds (up to `count_cap`): the total its first page is kept with."""
    needle = search_text(deps, text)
    if not needle:
        return 0
    return int((await _kept_ranking(deps, needle, ShoutsQuery().filters, client))["total"])


# --- authors ---------------------------------------------------------------------------------------------

async def load_authors_search(deps: Deps, text: str, limit: int | None, offset: int | None, *,
                              client: str | None = None) -> list[Any]:
    """Authors whose name, slug or bio hold the text or something close to it (a part of a word, a typo),
    the closest first."""
    limit, offset = page(limit, offset, default=DEFAULT_AUTHORS_LIMIT, maximum=deps.max_page_size)
    needle = search_text(deps, text)
    if not needle or limit == 0:
        return []

    async def query() -> list[int]:
        await count_cold(deps, client)
        async with _cold_session(deps) as session:
            if is_postgres(session):
                await session.execute(sql("SELECT set_config('pg_trgm.word_similarity_threshold', :t, true)"),
                                      {"t": str(deps.search.author_similarity)})
                close = [Author.name, Author.slug, Author.bio]
                found = func.greatest(*(func.coalesce(func.word_similarity(needle, column), 0) for column in close))
                near = [column.op("%>")(needle) for column in close]  # pg_trgm: needle <% column, indexed
                stmt = select(Author.id).where(Author.deleted_at.is_(None), or_(*near)) \
                    .order_by(found.desc(), Author.id)
            else:
                stmt = select(Author.id).where(
                    Author.deleted_at.is_(None),
                    or_(*(_holds(column, needle) for column in (Author.name, Author.slug, Author.bio))),
                ).order_by(Author.last_seen.desc(), Author.id)
            return list((await session.scalars(stmt.limit(limit).offset(offset))).all())

    ids = await deps.cache.cached_query(keys.search_authors(needle, limit, offset), query,
                                        ttl=deps.ttl_search, tags=[keys.TAG_AUTHORS])
    return await authors_of_ids(deps, ids)
