"""The Alembic migrations, inside the package so that an installed server carries them (`env.py`,
`versions/`, `alembic.ini`: package data), and where they are, for the CLI, the readiness check and tests."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from alembic.config import Config
from alembic.script import ScriptDirectory

HERE = Path(__file__).resolve().parent


def alembic_config(database_url: str | None = None) -> Config:
    config = Config(str(HERE / "alembic.ini"))
    config.set_main_option("script_location", str(HERE))
    if database_url:
        config.attributes["database_url"] = database_url
    return config


@cache
def head_revisions() -> frozenset[str]:
    """The revisions a database at head has (the migration scripts' heads, read once)."""
    return frozenset(ScriptDirectory.from_config(alembic_config()).get_heads())


@cache
def known_revisions() -> frozenset[str]:
    """Every revision of our history: a database stamped with one of them is ours."""
    return frozenset(script.revision for script in ScriptDirectory.from_config(alembic_config()).walk_revisions())
