"""Declarative base with a naming convention, so Alembic names every constraint the same way on
PostgreSQL and SQLite and autogenerate finds no spurious differences."""

from __future__ import annotations

import time
from typing import Any, ClassVar

from sqlalchemy import JSON, MetaData
from sqlalchemy.orm import DeclarativeBase

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def now() -> int:
    """Discours stores every timestamp as integer epoch seconds."""
    return int(time.time())


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, list[Any]: JSON}

    def dict(self) -> dict[str, Any]:
        """Plain column values, the shape cached values are built from (never the ORM instance)."""
        return {c.key: getattr(self, c.key) for c in self.__mapper__.column_attrs}
