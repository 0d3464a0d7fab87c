"""SQLAlchemy past its public API: every such use of the project is here, and only here, each with a
canary in `tests/test_seams.py` that fails naming SQLAlchemy, the internal and what to do.

Routing a read to a replica (orm/replicas.py) happens in `Session.get_bind`, which SQLAlchemy calls
synchronously, inside the greenlet its asyncio extension runs a session's work in; deciding needs a Redis
read and maybe a replica's answer, both awaited. SQLAlchemy's own drivers do exactly this with
`sqlalchemy.util.await_` (`await_only` before 2.1), which its documentation describes but does not list
as public. Whether a SELECT locks rows (FOR UPDATE: the primary's business) is its `_for_update_arg`.

The SQLAlchemy versions these were written against are the bounds in `pyproject.toml`.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, TypeVar

from sqlalchemy import Select
from sqlalchemy.util import await_

T = TypeVar("T")


def await_in_session(awaitable: Awaitable[T]) -> T:
    """Await `awaitable` from synchronous code a session runs for an AsyncSession (`Session.get_bind`)."""
    return await_(awaitable)  # type: ignore[no-any-return]


def locks_rows(select: Select[Any]) -> bool:
    """Whether `select` is a SELECT ... FOR UPDATE / FOR SHARE."""
    return select._for_update_arg is not None
