"""What a database holds, and whether it is ours, Discours' or something else."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

# The tables the Discours backend's start creates (Feb 2025); a full create_all of its models adds
# invite, collection, shout_collection and author_bookmark.
DISCOURS_TABLES = frozenset({
    "author", "author_follower", "author_rating", "community", "community_author", "topic", "topic_followers",
    "shout", "shout_author", "shout_topic", "shout_reactions_followers", "reaction", "draft", "draft_author",
    "draft_topic", "notification", "notification_seen",
})


class Kind(StrEnum):
    OURS = "ours"
    DISCOURS = "discours"
    EMPTY = "empty"
    UNKNOWN = "unknown"


@dataclass
class Found:
    """The tables of the `public` schema, their columns (in order) and row counts."""

    columns: dict[str, list[str]] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)
    revision: str | None = None  # ours: the alembic revision stamped

    @property
    def tables(self) -> set[str]:
        return set(self.columns)

    @property
    def kind(self) -> Kind:
        if not self.columns:
            return Kind.EMPTY
        if "alembic_version" in self.columns:
            return Kind.OURS if self.revision is not None else Kind.UNKNOWN
        # most of its tables, by their names: one of another version too, whose plan then says what differs
        if "shout" in self.tables and 2 * len(DISCOURS_TABLES & self.tables) > len(DISCOURS_TABLES):
            return Kind.DISCOURS
        return Kind.UNKNOWN

    @property
    def nothing_to_adopt(self) -> bool:
        """Ours already, or empty: not an error, nothing to do."""
        return self.kind in (Kind.OURS, Kind.EMPTY)

    def describe(self) -> str:
        """One line: what this database is."""
        if self.kind is Kind.OURS:
            return f"a database of this server, at revision {self.revision}: nothing to adopt"
        if self.kind is Kind.EMPTY:
            return "an empty database: nothing to adopt (`discours migrate` makes our tables)"
        if self.kind is Kind.DISCOURS:
            missing = sorted(DISCOURS_TABLES - self.tables)
            return (f"a Discours database: {len(self.columns)} tables, {sum(self.rows.values())} rows"
                    + (f"; not of the version the adopter knows (it lacks {', '.join(missing)})" if missing else ""))
        names = sorted(self.columns)
        missing = sorted(DISCOURS_TABLES - self.tables)
        return (f"not a database this server knows: {len(names)} tables ({', '.join(names[:8])}"
                f"{', …' if len(names) > 8 else ''}); a Discours database would also have "
                f"{', '.join(missing[:6]) or 'draft_author.shout'}{', …' if len(missing) > 6 else ''}")


async def read(conn: AsyncConnection, schema: str = "public", *, count_rows: bool = True) -> Found:
    """The tables of `schema` on PostgreSQL (an adoption's only kind of database), with their row counts."""
    found = Found()
    result = await conn.execute(text(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = :schema "
        "ORDER BY table_name, ordinal_position"), {"schema": schema})
    for table, column in result.all():
        found.columns.setdefault(table, []).append(column)
    for table in found.columns if count_rows else ():
        if table != "alembic_version":
            found.rows[table] = int(await conn.scalar(text(f'SELECT count(*) FROM {schema}."{table}"')) or 0)
    if "alembic_version" in found.columns:
        from orm.migrations import known_revisions

        stamped = (await conn.scalars(text(f"SELECT version_num FROM {schema}.alembic_version"))).all()
        found.revision = next((r for r in stamped if r in known_revisions()), None)
    return found
