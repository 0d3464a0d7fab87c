"""Search in the database: full-text vectors and trigram indexes that PostgreSQL keeps (migration 0009),
and the SQL expressions that use them.

The vectors are generated columns: the database computes them on every write, so no write path can forget
one. They are not mapped on the models: a cached shout never carries one, and nothing can lazy-load it.
Queries name them as columns of the `shout` / `reaction` tables they already select from
(`literal_column`), and Alembic's comparison of models and database leaves them, and their indexes, out
(`include_object`).

A shout's vector is in its own language's configuration (`search_config`, from `lang`: Russian,
English, else `simple`); a query is parsed once per configuration (`websearch_to_tsquery`: phrases in
quotes, `-word` to exclude, `or`), and each shout is matched by the query in its own configuration, so
an exclusion holds whatever the languages. Russian's configuration stems Latin words as English's does.

SQLite has none of this: there, search is a case-insensitive substring match (resolvers/search.py).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Select, and_, case, func, literal_column, or_, select
from sqlalchemy.dialects.postgresql import REGCONFIG, TSVECTOR
from sqlalchemy.ext.asyncio import AsyncSession

CONFIGS = ("russian", "english", "simple")
SEARCH_CONFIG = literal_column("shout.search_config", REGCONFIG)
SEARCH_VECTOR = literal_column("shout.search_vector", TSVECTOR)
TITLE_VECTOR = literal_column("shout.title_vector", TSVECTOR)
COMMENT_VECTOR = literal_column("reaction.body_vector", TSVECTOR)

# What migration 0009 adds that the models do not declare (see the module's docstring)
DATABASE_ONLY_COLUMNS = frozenset({("shout", "search_config"), ("shout", "search_vector"), ("shout", "title_vector"),
                                   ("reaction", "body_vector")})
DATABASE_ONLY_INDEXES = frozenset({"ix_shout_search_vector", "ix_shout_title_vector", "ix_reaction_body_vector",
                                   "ix_author_name_trgm", "ix_author_slug_trgm", "ix_author_bio_trgm"})


def include_object(obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any) -> bool:
    """For Alembic's comparison of models and database: leave out what the database keeps by itself."""
    if type_ == "column" and (obj.table.name, name) in DATABASE_ONLY_COLUMNS:
        return False
    return not (type_ == "index" and name in DATABASE_ONLY_INDEXES)


def is_postgres(session: AsyncSession) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def _config(name: str) -> ColumnElement[Any]:
    assert name in CONFIGS  # a fixed name, never input
    return literal_column(f"'{name}'::regconfig")


def text_query(config: str, text: str) -> ColumnElement[Any]:
    """The text as people type it, as a tsquery in one configuration."""
    return func.websearch_to_tsquery(_config(config), text)


def query_config(text: str) -> str:
    """The configuration of the language a query is written in: Russian's when it has a Cyrillic letter
    (it stems Latin words too), else English's. A text of that language's stop words finds nothing."""
    return "russian" if any("\u0400" <= c <= "\u04ff" for c in text) else "english"


def _searchable(query: ColumnElement[Any]) -> ColumnElement[bool]:
    """Whether an index can answer the query: not only stop words, not only exclusions (`querytree` is 'T'
    or empty then, and such a query would read every row)."""
    return func.querytree(query).not_in(["T", ""])


def searchable_configs_query(text: str) -> Select[*tuple[bool, ...]]:
    """One row: for each configuration, whether the text is searchable there (`_searchable`)."""
    return select(*(_searchable(text_query(config, text)).label(config) for config in CONFIGS))


def shout_match(text: str, configs: list[str], vector: ColumnElement[Any] = SEARCH_VECTOR) -> ColumnElement[bool]:
    """Shouts whose vector (`vector`) matches the text in their own language's configuration, among the
    `configs` where the text is searchable."""
    return or_(*(and_(SEARCH_CONFIG == _config(config), vector.op("@@")(text_query(config, text)))
                 for config in configs))


def shout_query(text: str) -> ColumnElement[Any]:
    """Per shout, the text's query in the shout's configuration (for ranking the matches)."""
    return case(*((SEARCH_CONFIG == _config(config), text_query(config, text)) for config in CONFIGS[:-1]),
                else_=text_query("simple", text))


def shout_score(text: str) -> ColumnElement[float]:
    """1 for a title match, plus the relevance of the whole text in [0, 1) (ts_rank's normalisation 32,
    rank / (rank + 1)): every title match scores above every match elsewhere."""
    query = shout_query(text)
    title = case((TITLE_VECTOR.op("@@")(query), 1.0), else_=0.0)
    return title + func.ts_rank(SEARCH_VECTOR, query, 32)


def comment_match(text: str) -> ColumnElement[bool]:
    """Comments (in Russian's configuration, which stems Latin words too) matching the text; a text of
    stop words or exclusions only matches none, without reading any (a constant condition, checked once)."""
    query = text_query("russian", text)
    return and_(_searchable(query), COMMENT_VECTOR.op("@@")(query))
