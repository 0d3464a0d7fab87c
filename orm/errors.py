"""What a database error says about the database rather than the statement: out of reach for a moment, or a
standby cancelling a read. Read through the whole chain of causes, since SQLAlchemy wraps what the driver
raises on a connection it has, but not always what connecting raises."""

from __future__ import annotations

from collections.abc import Iterator

from asyncpg.exceptions import TargetServerAttributeNotMatched
from sqlalchemy import exc

# SQLSTATEs that say the database cannot take the statement now, though it may in a moment: a connection
# lost or refused (class 08), a server shutting down or starting (57P01-57P03), a primary that is now a
# standby (25006: a write sent to a read-only server, as after a failover that demoted it).
UNAVAILABLE_SQLSTATES = ("08", "57P01", "57P02", "57P03", "25006")
# What a standby cancels a read with when the read holds back its replay (a recovery conflict: row versions
# the read's snapshot may need are removed, or a lock it holds is taken). On a primary the same code is a
# serialization failure, which reads under READ COMMITTED never get.
RECOVERY_CONFLICT_SQLSTATE = "40001"


def is_unavailable(error: BaseException) -> bool:
    """Whether `error` means the database is out of reach or is changing roles (a stopped primary, a
    failover under way: no host of a multi-host URL takes writes yet), not that the statement is wrong:
    the request may be tried again shortly."""
    if isinstance(error, exc.DBAPIError) and error.connection_invalidated:
        return True
    return any(isinstance(cause, OSError | TimeoutError | exc.TimeoutError | TargetServerAttributeNotMatched)
               or _sqlstate(cause).startswith(UNAVAILABLE_SQLSTATES) for cause in _causes(error))


def is_recovery_conflict(error: BaseException) -> bool:
    """Whether a standby cancelled the statement (or ended its connection) to go on replaying its primary."""
    return any(_sqlstate(cause) == RECOVERY_CONFLICT_SQLSTATE for cause in _causes(error))


def _sqlstate(error: BaseException) -> str:
    return getattr(error, "sqlstate", None) or ""


def _causes(error: BaseException) -> Iterator[BaseException]:
    """`error`, what it wraps, and what caused it, at most eight deep (a chain can loop)."""
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in seen and len(seen) < 8:
        seen.append(current)
        yield current
        wrapped = current.orig if isinstance(current, exc.DBAPIError) else None
        current = wrapped or current.__cause__ or current.__context__
