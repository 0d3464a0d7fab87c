"""The plan of an adoption: per table of ours, where its rows come from and by which rules; and the blockers,
each a reason the database cannot be carried over as it is. Reading only: `discours adopt --check` prints
it, `discours adopt` refuses to start while it has blockers."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlalchemy import String, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection

from orm import Base
from orm.adopt import ADOPTED_AT
from orm.adopt.database import DISCOURS_TABLES, Found
from orm.adopt.transfers import KNOWN_KINDS, MAIN_COMMUNITY, TRANSFERS, Transfer

# A rough rate for the time the plan expects (rows copied per second on modest hardware, indexes included).
ROWS_PER_SECOND = 20_000


@dataclass
class Step:
    transfer: Transfer
    rows: int  # rows of the Discours table read (0 when it is absent or ours alone)
    present: bool  # the Discours table exists


@dataclass
class Plan:
    found: Found
    steps: list[Step] = field(default_factory=list)
    blockers: list[str] = field(default_factory=list)
    unchecked: bool = False  # the shape blocks, so the values were not read

    @property
    def rows(self) -> int:
        return sum(self.found.rows.values())

    def describe(self) -> str:
        lines = [f"{self.found.describe()}.",
                 f"Plan: one transaction that moves the Discours tables aside, makes our schema at revision "
                 f"{ADOPTED_AT} with our migrations, copies every row through the rules below and drops the old "
                 "tables; then the migrations after it run as for any database.", ""]
        for step in self.steps:
            transfer = step.transfer
            if transfer.source is None:
                lines.append(f"- {transfer.target}: new, starts empty" + _rules(transfer.rules))
                continue
            if not step.present:
                lines.append(f"- {transfer.target}: no `{transfer.source}` table here (Discours' start does not "
                             "make it): starts empty")
                continue
            copied = transfer.copied()
            renamed = [f"{source} → {target}" for target, source in copied.items() if source != target]
            derived = [target for target in transfer.columns if target not in copied]
            lines.append(f"- {transfer.target} ← {transfer.source} ({step.rows} rows): "
                         f"{len(copied)} columns copied as they are"
                         + (f"; renamed: {', '.join(renamed)}" if renamed else "")
                         + (f"; set by rule: {', '.join(derived)}" if derived else "")
                         + (f"; not carried over: {_dropped(transfer)}" if transfer.dropped_columns else "")
                         + _rules(transfer.rules)
                         + _rules(tuple(f"no `{transfer.source}.{column}` here (a version without it): "
                                        f"{transfer.optional_columns[column].says}"
                                        for column in absent_columns(transfer, self.found))))
        lines.append("- notification_recipient: new, derived from the notifications (rules above)")
        lines.append("- types: unbounded VARCHAR becomes our VARCHAR(n) or TEXT; constraints and indexes get our "
                     "names; no ON DELETE becomes ours (CASCADE / SET NULL); sequences are set past the highest id")
        seconds = max(1, self.rows // ROWS_PER_SECOND)
        lines += ["", f"Expected: about {seconds} s for {self.rows} rows. Locks: every Discours table is held "
                  "ACCESS EXCLUSIVE for the whole transaction (nothing else reads or writes them meanwhile): "
                  "stop the Discours backend first, take a pg_dump, and keep it until you are sure."]
        lines += ["", "Blockers:" if self.blockers else "Blockers: none"]
        lines += [f"  - {blocker}" for blocker in self.blockers]
        if self.unchecked:
            lines.append("  (the values are checked once the tables and columns are those the adopter knows)")
        return "\n".join(lines)


def _dropped(transfer: Transfer) -> str:
    return ", ".join(f"{column} ({why})" for column, why in transfer.dropped_columns.items())


def _rules(rules: tuple[str, ...]) -> str:
    return "".join(f"\n    rule: {rule}" for rule in rules)


async def make_plan(conn: AsyncConnection, found: Found, schema: str = "public") -> Plan:
    """The plan for the Discours tables in `schema` (where they are before the adoption moves them)."""
    plan = Plan(found)
    for transfer in TRANSFERS:
        present = transfer.source is not None and transfer.source in found.columns
        plan.steps.append(Step(transfer, found.rows.get(transfer.source or "", 0), present))
    unknown, missing = _unrecognised(found)
    plan.blockers += missing + unknown
    if missing:  # the values are read by the columns the adopter knows: checked once those are there
        plan.unchecked = True
        return plan
    try:
        for step in plan.steps:
            if step.present and step.rows:
                plan.blockers += await _values_that_do_not_fit(conn, step.transfer, found, schema)
        plan.blockers += await _data_blockers(conn, found, schema)
    except DBAPIError as error:  # a shape the checks above did not foresee: reported, never raised
        plan.blockers.append(f"the values could not be checked ({_first_line(error.orig)}): this is not the "
                             "Discours schema the adopter knows")
    return plan


def _first_line(error: BaseException | None) -> str:
    return str(error).strip().splitlines()[0] if error is not None and str(error).strip() else "no message"


def columns_of(transfer: Transfer, found: Found) -> dict[str, str]:
    """The transfer's column expressions for this database: a column Discours may lack replaced by its
    fallback when it does lack it."""
    columns = dict(transfer.columns)
    for missing in absent_columns(transfer, found):
        fallback = transfer.optional_columns[missing].sql
        columns = {t: re.sub(rf"\bs\.\"?{missing}\"?(?!\w)", fallback, sql) for t, sql in columns.items()}
    return columns


def absent_columns(transfer: Transfer, found: Found) -> list[str]:
    """The columns of the transfer's source that this database lacks and the transfer does without."""
    present = set(found.columns.get(transfer.source or "", []))
    return [column for column in transfer.optional_columns if column not in present]


def _unrecognised(found: Found) -> tuple[list[str], list[str]]:
    """(what this database has that the adopter does not know, what it lacks that the adopter reads)."""
    unknown, missing = [], [f"table `{table}` is missing: this is not the Discours schema the adopter knows (its "
                            "start of Feb 2025 makes it)" for table in sorted(DISCOURS_TABLES - found.tables)]
    sources = {t.source for t in TRANSFERS if t.source}
    for table in sorted(found.tables - sources):
        unknown.append(f"table `{table}` ({found.rows.get(table, 0)} rows) is not one the Discours backend makes: "
                       "adopting would lose it; move it to another schema or drop it, then check again")
    read_by: dict[str, set[str]] = {}
    optional: dict[str, set[str]] = {}
    dropped: dict[str, set[str]] = {}
    for transfer in TRANSFERS:
        if transfer.source:
            read_by.setdefault(transfer.source, set()).update(transfer.reads(), transfer.dropped_columns)
            optional.setdefault(transfer.source, set()).update(transfer.optional_columns)
            dropped.setdefault(transfer.source, set()).update(transfer.dropped_columns)
    for table, columns in sorted(found.columns.items()):
        if table not in read_by:
            continue
        for column in columns:
            if column not in read_by[table]:
                unknown.append(f"column `{table}.{column}` is not one this adopter knows (an older model's?): "
                               "adopting would lose it; drop or rename it, then check again")
        for column in sorted(read_by[table] - set(columns) - optional.get(table, set()) - dropped.get(table, set())):
            missing.append(f"column `{table}.{column}` is missing: this is not the Discours schema the adopter knows")
    return unknown, missing


async def _values_that_do_not_fit(conn: AsyncConnection, transfer: Transfer, found: Found,
                                  schema: str) -> list[str]:
    """Values, as the transfer would write them (rules applied), longer than our column or NULL where ours
    requires one; copied values referring to a row that does not exist."""
    target = Base.metadata.tables[transfer.target]
    checks: list[tuple[str, str]] = []
    copied = transfer.copied()
    for ours, sql in columns_of(transfer, found).items():
        column = target.columns[ours]
        name = f"`{transfer.source}.{copied[ours]}`" if ours in copied else f"`{transfer.target}.{ours}` (by rule)"
        if isinstance(column.type, String) and column.type.length:
            checks.append((f"count(*) FILTER (WHERE length(({sql})::text) > {column.type.length})",
                           f"{name}: {{n}} values longer than our {column.type.length} characters (shorten "
                           "them, then check again)"))
        if not column.nullable and column.server_default is None:
            checks.append((f"count(*) FILTER (WHERE ({sql}) IS NULL)",
                           f"{name}: {{n}} rows without a value, which ours requires"))
    for ours, theirs in copied.items():
        column = target.columns[ours]
        quoted = f'"{theirs}"'
        for key in column.foreign_keys:
            referred = next((t for t in TRANSFERS if t.target == key.column.table.name and t.source
                             and t.copied().get(key.column.name) == "id"), None)
            if referred is None or referred.source not in found.columns:
                continue
            checks.append((f"count(*) FILTER (WHERE s.{quoted} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "
                           f"{schema}.{referred.source} r WHERE r.id = s.{quoted}))",
                           f"`{transfer.source}.{theirs}`: {{n}} rows refer to a `{referred.source}` that does "
                           "not exist"))
    if not checks:
        return []
    source = (transfer.from_sql or f"{{L}}.{transfer.source} s").replace("{L}", schema)
    counts = (await conn.execute(text(
        f"SELECT {', '.join(sql for sql, _ in checks)} FROM {source}".replace("{L}", schema)))).one()
    return [message.format(n=n) for (_, message), n in zip(checks, counts, strict=True) if n]


async def _data_blockers(conn: AsyncConnection, found: Found, schema: str) -> list[str]:
    blockers = []
    unknown = (await conn.scalars(text(f"SELECT DISTINCT kind FROM {schema}.reaction WHERE kind <> ALL(:known) "
                                       "ORDER BY kind"), {"known": sorted(KNOWN_KINDS)})).all()
    if unknown:
        blockers.append(f"reaction kinds this server does not know: {', '.join(unknown)} (map them to a known kind "
                        "or delete those reactions, then check again)")
    shared = (await conn.execute(text(f'SELECT "user", count(*) FROM {schema}.author WHERE "user" IS NOT NULL '
                                      'GROUP BY "user" HAVING count(*) > 1 ORDER BY "user" LIMIT 10'))).all()
    if shared:
        blockers.append("authors sharing one sign-in (`author.user`), which ours keeps unique: "
                        + ", ".join(f"{user!r} ×{n}" for user, n in shared)
                        + " (merge or unlink those authors, then check again)")
    main = await conn.scalar(text("SELECT " + MAIN_COMMUNITY.replace("{L}", schema)))
    homeless = await conn.scalar(text(f"SELECT (SELECT count(*) FROM {schema}.topic WHERE community IS NULL)"
                                      + (f" + (SELECT count(*) FROM {schema}.draft WHERE community IS NULL)"
                                         if "community" in found.columns.get("draft", []) else "")))
    if main is None and homeless:
        blockers.append(f"{homeless} topics or drafts without a community, and no community to put them in")
    return blockers
