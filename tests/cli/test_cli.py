"""The `discours` command as a newcomer meets it (issue 10): every start-up error is one line on stderr
that names the setting and the fix (`--debug` for the traceback); migrations need only DATABASE_URL;
several workers without a shared Redis are refused before anything starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import TEST_DATABASE_URL
from tests.live import ROOT

BASE_ENV = {k: v for k, v in os.environ.items()
            if k not in ("DATABASE_URL", "REDIS_URL", "JWT_SECRET", "ADMIN_EMAILS", "CORS_ORIGINS")}


def discours(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app.cli.commands", *args], cwd=cwd, env={
        **BASE_ENV, "PYTHONPATH": str(ROOT), **env}, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("args, env, setting", [
    (("migrate",), {"DATABASE_URL": "postgresql://postgres@127.0.0.1:1/nothing"}, "DATABASE_URL"),
    (("serve",), {"ADMIN_EMAILS": "foo@bar"}, "ADMIN_EMAILS"),
    (("serve",), {"CORS_ORIGINS": '["https://discours.io/app"]'}, "CORS_ORIGINS"),
    (("serve",), {"DATABASE_URL": "postgresql://postgres@127.0.0.1/x"}, "JWT_SECRET"),
    (("serve", "--workers", "4"), {}, "REDIS_URL"),
    (("serve",), {"CACHE_INVALIDATION": "off", "ENVIRONMENT": "production", "JWT_SECRET": "j" * 40},
     "CACHE_INVALIDATION"),
    (("seed",), {"DATABASE_URL": "mysql://root@localhost/x"}, "DATABASE_URL"),
    # without a shared Redis these would act on a throwaway one inside their own process and report success
    (("queue",), {}, "REDIS_URL"),
    (("rebuild",), {}, "REDIS_URL"),
    (("serve", "--reload", "--workers", "2"), {"REDIS_URL": "redis://127.0.0.1:6379/0"}, "--reload"),
])
def test_a_start_up_error_is_one_line_naming_the_setting(tmp_path: Path, args: tuple[str, ...],
                                                         env: dict[str, str], setting: str) -> None:
    result = discours(*args, cwd=tmp_path, **env)
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and setting in lines[0] and "--debug" in lines[0], result.stderr
    assert "Traceback" not in result.stderr
    debug = discours("--debug", *args, cwd=tmp_path, **env)
    assert debug.returncode != 0 and "Traceback" in debug.stderr


def test_migrations_need_only_the_database_url(tmp_path: Path) -> None:
    """No JWT_SECRET, on PostgreSQL: migrations never use it. (Upgrading the test database, already at
    head, is a no-op that still loads the settings and connects.)"""
    result = discours("migrate", cwd=tmp_path, DATABASE_URL=TEST_DATABASE_URL)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("where, statement, unanswered", [
    ("the test database", "SELECT s.no_such_column FROM shout s", False),
    ("no such database", "SELECT 1", True),
    ("nothing listening", "SELECT 1", True),
    ("SQLite, a file it cannot open", "SELECT 1", True),
    ("SQLite, a table it lacks", "SELECT nothing FROM nowhere", False),
])
async def test_a_database_that_answers_is_not_said_not_to(where: str, statement: str, unanswered: bool) -> None:
    """`explain` (what a command prints for an error) tells a database that was not reached from one that
    answered a statement with an error: a column or table it lacks is no connection problem."""
    from sqlalchemy import text
    from sqlalchemy.engine import make_url

    from app.cli.commands import explain
    from orm.engine import make_engine

    url = {"the test database": TEST_DATABASE_URL,
           "no such database": make_url(TEST_DATABASE_URL).set(database="no_such_database_here").render_as_string(
               hide_password=False),
           "nothing listening": "postgresql+asyncpg://postgres@127.0.0.1:1/nothing",
           "SQLite, a file it cannot open": "sqlite+aiosqlite:////no/such/directory/x.db",
           "SQLite, a table it lacks": "sqlite+aiosqlite:///:memory:"}[where]
    engine = make_engine(url)
    try:
        with pytest.raises(Exception) as failed:
            async with engine.connect() as connection:
                await connection.execute(text(statement))
    finally:
        await engine.dispose()
    said = explain(failed.value)
    assert said.startswith("DATABASE_URL:")
    assert ("does not answer" in said) is unanswered, said
