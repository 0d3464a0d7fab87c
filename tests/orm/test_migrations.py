"""One Alembic history for PostgreSQL and SQLite: upgrade head matches the models (autogenerate finds
no difference) and downgrade base removes everything."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import delete, inspect, select, text
from sqlalchemy.ext.asyncio import create_async_engine

from orm import Base
from orm.migrations import alembic_config
from orm.search import include_object
from tests.conftest import TEST_DATABASE_URL

PG_ADMIN_URL = TEST_DATABASE_URL.rsplit("/", 1)[0] + "/postgres"
PG_MIGRATIONS_URL = TEST_DATABASE_URL + "_migrations"  # dropped with the run's own database
PG_MIGRATIONS_DB = PG_MIGRATIONS_URL.rsplit("/", 1)[1]


def _recreate_pg_database() -> None:
    async def run() -> None:
        engine = create_async_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
        async with engine.connect() as conn:
            await conn.execute(text(f'DROP DATABASE IF EXISTS "{PG_MIGRATIONS_DB}" WITH (FORCE)'))
            await conn.execute(text(f'CREATE DATABASE "{PG_MIGRATIONS_DB}"'))
        await engine.dispose()

    asyncio.run(run())


def _diff_and_tables(url: str) -> tuple[list[Any], set[str]]:
    def inspect_sync(conn: Any) -> tuple[list[Any], set[str]]:
        context = MigrationContext.configure(conn, opts={"compare_type": True, "include_object": include_object})
        return compare_metadata(context, Base.metadata), set(inspect(conn).get_table_names())

    async def run() -> tuple[list[Any], set[str]]:
        engine = create_async_engine(url)
        async with engine.connect() as conn:
            result = await conn.run_sync(inspect_sync)
        await engine.dispose()
        return result

    return asyncio.run(run())


@pytest.fixture(params=["postgresql", "sqlite"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        _recreate_pg_database()
        return PG_MIGRATIONS_URL
    return f"sqlite+aiosqlite:///{tmp_path / 'migrations.db'}"


def test_upgrade_matches_models_and_downgrade_removes_all(database_url: str) -> None:
    config = alembic_config(database_url)
    command.upgrade(config, "head")
    diff, tables = _diff_and_tables(database_url)
    assert diff == [], diff
    assert set(Base.metadata.tables) <= tables

    command.downgrade(config, "base")
    _, tables = _diff_and_tables(database_url)
    assert tables <= {"alembic_version"}

    command.upgrade(config, "head")  # and back up again: the history is repeatable
    diff, _ = _diff_and_tables(database_url)
    assert diff == []


REGISTER = ('mutation($e: String!) { registerUser(email: $e, password: "a long password", name: "New") '
            "{ success error } }")


def test_a_migrated_database_takes_registrations_before_any_seed(database_url: str) -> None:
    """A deployment that starts empty: migrations alone give the default community every new account joins;
    a community created next gets the next id. The control deletes it: registration fails aloud, never a
    success that created nothing."""
    import httpx

    from app.main import create_app, open_deps
    from config.settings import load_settings
    from orm import Author, Community, CommunityAuthor
    from orm.community import DEFAULT_COMMUNITY
    from resolvers.writes import transaction

    command.upgrade(alembic_config(database_url), "head")

    async def run() -> None:
        settings = load_settings(database_url=database_url, redis_url=None, registrations_per_address=0,
                                 jwt_secret="x" * 32)
        async with open_deps(settings) as deps:
            app = create_app(settings, deps=deps)
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app, raise_app_exceptions=False),
                                         base_url="http://t") as http:
                answer = (await http.post("/graphql", json={"query": REGISTER,
                                                            "variables": {"e": "first@example.org"}})).json()
                assert answer["data"]["registerUser"]["success"], answer
                async with deps.db() as session:
                    member = await session.scalar(select(CommunityAuthor.roles).join(
                        Author, Author.id == CommunityAuthor.author).where(Author.email == "first@example.org",
                                                                            CommunityAuthor.community == DEFAULT_COMMUNITY))
                    assert member == "reader,author"
                async with transaction(deps) as session:
                    session.add(next_one := Community(name="Next", slug="next", pic=""))
                    await session.flush()
                    assert next_one.id == DEFAULT_COMMUNITY + 1
                async with transaction(deps) as session:
                    await session.execute(delete(Community).where(Community.id == DEFAULT_COMMUNITY))
                refused = (await http.post("/graphql", json={"query": REGISTER,
                                                             "variables": {"e": "second@example.org"}})).json()
                assert refused["data"] is None or not (refused["data"]["registerUser"] or {}).get("success")
                assert refused.get("errors"), refused
                async with deps.db() as session:
                    assert await session.scalar(select(Author.id).where(Author.email == "second@example.org")) is None

    asyncio.run(run())
