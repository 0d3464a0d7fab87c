"""Carrying out an adoption: one transaction from a Discours database to ours at `ADOPTED_AT`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncConnection

from orm.adopt import ADOPTED_AT, LEGACY
from orm.adopt.database import Found, Kind, read
from orm.adopt.notifications import convert_notifications
from orm.adopt.plan import Plan, absent_columns, columns_of, make_plan
from orm.adopt.transfers import SEQUENCED


class NotAdoptable(Exception):
    """The database is not a Discours database, or its plan has blockers; nothing was changed."""

    def __init__(self, found: Found, plan: Plan | None = None) -> None:
        super().__init__(f"{len(plan.blockers)} blockers" if plan is not None else found.describe())
        self.found = found
        self.plan = plan


@dataclass
class Adopted:
    plan: Plan  # what was carried out
    rows: dict[str, int] = field(default_factory=dict)  # our table -> rows it holds now
    recipients: int = 0


async def check(conn: AsyncConnection) -> tuple[Found, Plan | None]:
    """What the database is and, for a Discours database, the plan; reads only."""
    found = await read(conn)
    if found.kind is not Kind.DISCOURS:
        return found, None
    return found, await make_plan(conn, found)


async def adopt(conn: AsyncConnection, *, fanout: int = 1000,
                progress: Callable[[str, int, int], None] = lambda label, done, total: None) -> Adopted:
    """Adopt the Discours database `conn` is connected to, inside the transaction `conn` is in (the caller
    commits, or rolls back on any error). Raises NotAdoptable, having changed nothing, when there is nothing
    to adopt or the plan has blockers. `progress(label, done, total)` follows the tables carried over."""
    found, plan = await check(conn)
    if plan is None or plan.blockers:
        raise NotAdoptable(found, plan)
    # Every Discours table, with its indexes, constraints and owned sequences, out of the way of ours.
    await conn.execute(text(f"CREATE SCHEMA {LEGACY}"))
    for table in sorted(found.tables):
        await conn.execute(text(f'ALTER TABLE public."{table}" SET SCHEMA {LEGACY}'))
    await conn.run_sync(_migrate_to, ADOPTED_AT)
    adopted = Adopted(plan)
    carried = [step for step in plan.steps if step.transfer.source is not None and step.present]
    for done, step in enumerate(carried):
        transfer = step.transfer
        progress("tables carried over", done, len(carried))
        if transfer.in_python:
            absent = {column: transfer.optional_columns[column].sql for column in absent_columns(transfer, found)}
            await convert_notifications(conn, LEGACY, fanout=fanout, absent=absent)
            continue
        columns = columns_of(transfer, found)
        source = transfer.from_sql or f"{{L}}.{transfer.source} s"
        select = ", ".join(columns.values())
        await conn.execute(text(
            f"INSERT INTO public.{transfer.target} ({', '.join(_quoted(c) for c in columns)}) "
            f"SELECT {select} FROM {source}".replace("{L}", LEGACY)))
    progress("tables carried over", len(carried), len(carried))
    for table in SEQUENCED:
        await conn.execute(text(f"SELECT setval(pg_get_serial_sequence('public.{table}', 'id'), "
                                f"coalesce((SELECT max(id) FROM public.{table}), 0) + 1, false)"))
    await conn.execute(text(f"DROP SCHEMA {LEGACY} CASCADE"))
    await _drop_orphaned_types(conn)
    for step in plan.steps:
        adopted.rows[step.transfer.target] = int(await conn.scalar(text(
            f"SELECT count(*) FROM public.{step.transfer.target}")) or 0)
    adopted.recipients = int(await conn.scalar(text("SELECT count(*) FROM public.notification_recipient")) or 0)
    return adopted


def _quoted(column: str) -> str:
    return f'"{column}"'


def _migrate_to(connection: Connection, revision: str) -> None:
    """Our migrations up to `revision`, on this connection and in its transaction (Alembic's env.py uses a
    connection it is given and does not commit one it did not begin)."""
    from alembic import command

    from orm.migrations import alembic_config

    config = alembic_config()
    config.attributes["connection"] = connection
    config.attributes["skip_logging"] = True
    command.upgrade(config, revision)


async def _drop_orphaned_types(conn: AsyncConnection) -> None:
    """Enum types Discours' models made (its notification status and kind) stay in `public` when their
    tables go; ours use none."""
    orphans = (await conn.scalars(text(
        "SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace "
        "WHERE n.nspname = 'public' AND t.typtype = 'e' AND NOT EXISTS (SELECT 1 FROM pg_attribute a "
        "JOIN pg_class c ON c.oid = a.attrelid WHERE a.atttypid = t.oid AND NOT a.attisdropped)"))).all()
    for name in orphans:
        await conn.execute(text(f'DROP TYPE public."{name}"'))
