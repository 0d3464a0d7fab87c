"""`discours adopt` on a database shaped as the Discours backend leaves it (tests/discours_db.py), on
PostgreSQL databases of the test's own: the check writes nothing and lists every blocker; the adoption keeps
every shared value (compared row by row), applies its documented rules, leaves exactly the schema `discours
migrate` makes, after which `migrate` changes nothing and a second `adopt` is a no-op; a database it does not
know is refused untouched; and the adopted rows answer the API, notifications included."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from alembic import command
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine

from app.cli.adopt import _adopt, refuse_migrating_a_discours_database
from app.main import create_app, wire
from auth.services import build_auth
from cache.live.rebuild import rebuild_all
from cache.redis.client import make_redis
from cache.store import Cache
from config.settings import Settings
from devtools.discours_db import (
    FEB_2024,
    FEB_2025,
    create_discours_schema,
    dump_statements,
    fill_discours_rows,
    load_dump,
)
from devtools.services import RedisServer, scratch_database
from orm.adopt.transfers import TRANSFERS
from orm.engine import make_engine
from orm.migrations import alembic_config

MERGED = {"community_author", "community_follower", "notification_seen", "invite", "notification"}


async def _run(url: str, *statements: str) -> None:
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        for statement in statements:
            await conn.execute(text(statement))
    await engine.dispose()


@pytest.fixture
async def discours_url() -> AsyncIterator[str]:
    async with scratch_database(prefix="discours") as url:
        engine = create_async_engine(url)
        async with engine.begin() as conn:
            await create_discours_schema(conn)
            await fill_discours_rows(conn)
        await engine.dispose()
        yield url


async def _fingerprint(url: str) -> dict[str, Any]:
    """Everything a database holds in `public`: columns, constraints, indexes, sequences, and every row."""
    engine = create_async_engine(url)
    async with engine.connect() as conn:
        shape = await _shape(conn)
        tables = [t for t in shape["columns"]]
        rows = {t: await conn.scalar(text(f'SELECT md5(coalesce(string_agg(x::text, \'|\' ORDER BY x::text), \'\')) '
                                          f'FROM public."{t}" x')) for t in tables}
    await engine.dispose()
    return {**shape, "rows": rows}


async def _shape(conn: AsyncConnection) -> dict[str, Any]:
    columns: dict[str, list[tuple[Any, ...]]] = {}
    for row in (await conn.execute(text(
            "SELECT table_name, column_name, data_type, character_maximum_length, is_nullable, column_default "
            "FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position"))):
        columns.setdefault(row[0], []).append(tuple(row[1:]))
    constraints = sorted(tuple(r) for r in await conn.execute(text(
        "SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid) FROM pg_constraint c "
        "JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = 'public'")))
    indexes = sorted(tuple(r) for r in await conn.execute(text(
        "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'")))
    sequences = sorted(r[0] for r in await conn.execute(text(
        "SELECT sequence_name FROM information_schema.sequences WHERE sequence_schema = 'public'")))
    types = sorted(r[0] for r in await conn.execute(text(
        "SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace "
        "WHERE n.nspname = 'public' AND t.typtype = 'e'")))
    return {"columns": columns, "constraints": constraints, "indexes": indexes, "sequences": sequences,
            "types": types}


async def _rows(url: str, sql: str) -> list[dict[str, Any]]:
    engine = create_async_engine(url)
    async with engine.connect() as conn:
        found = [dict(r._mapping) for r in await conn.execute(text(sql))]
    await engine.dispose()
    return found


async def test_check_prints_the_plan_and_writes_nothing(discours_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    before = await _fingerprint(discours_url)
    assert await _adopt(discours_url, check_only=True, fanout=1000) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("a Discours database: 21 tables") and "Blockers: none" in shown
    for transfer in TRANSFERS:
        assert f"- {transfer.target}" in shown, transfer.target
    assert "ACCESS EXCLUSIVE" in shown and "about 1 s" in shown
    # the columns its version lacks, each with the rule that replaces it
    assert "rule: no `notification.status` here (a version without it): every notification is unread" in shown
    assert "rule: no `draft.community` here (a version without it): every draft is put in the main" in shown
    assert "no `shout.seo` here" not in shown  # a column it has
    assert await _fingerprint(discours_url) == before


async def test_adoption_keeps_every_shared_value_and_applies_its_rules(discours_url: str) -> None:
    legacy: dict[str, list[dict[str, Any]]] = {}
    for transfer in TRANSFERS:
        if transfer.source and transfer.source not in legacy:
            legacy[transfer.source] = await _rows(discours_url, f"SELECT * FROM {transfer.source}")
    assert await _adopt(discours_url, check_only=False, fanout=1000) == 0

    for transfer in TRANSFERS:  # every value of every column copied as it is, row by row
        if transfer.source is None or transfer.target in MERGED:
            continue
        copied = transfer.copied()
        ours = await _rows(discours_url, f"SELECT * FROM {transfer.target}")
        assert len(ours) == len(legacy[transfer.source]), transfer.target
        theirs_values = sorted(repr([r[c] for c in copied.values()]) for r in legacy[transfer.source])
        ours_values = sorted(repr([r[c] for c in copied]) for r in ours)
        assert ours_values == theirs_values, transfer.target

    def one(rows: list[dict[str, Any]], **match: Any) -> dict[str, Any]:
        found = [r for r in rows if all(r[k] == v for k, v in match.items())]
        assert len(found) == 1, (match, rows)
        return found[0]

    authors = await _rows(discours_url, "SELECT id, slug FROM author")
    assert one(authors, id=3)["slug"].startswith("author-3-")  # `author-3` is author 6's slug
    assert one(authors, id=6)["slug"] == "author-3" and one(authors, id=1)["slug"] == "maria"
    topics = await _rows(discours_url, "SELECT id, slug, community FROM topic")
    assert one(topics, id=3) == {"id": 3, "slug": "topic-3", "community": 1}
    assert one(topics, id=4)["community"] == 1 and one(topics, id=2)["community"] == 2
    assert one(await _rows(discours_url, "SELECT id, slug FROM shout"), id=5)["slug"] == "shout-5"
    drafts = await _rows(discours_url, "SELECT id, community, description FROM draft")
    assert one(drafts, id=2) == {"id": 2, "community": 1, "description": "только описание"}
    kinds = {r["id"]: r["kind"] for r in await _rows(discours_url, "SELECT id, kind FROM reaction")}
    assert kinds[8] == kinds[9] == "COMMENT" and kinds[3] == "QUOTE" and kinds[10] == "ASK"
    members = await _rows(discours_url, "SELECT * FROM community_author")
    assert one(members, author=2, community=1) == {"community": 1, "author": 2, "joined_at": 1_700_000_005,
                                                   "roles": "author,expert,reader"}
    assert one(members, author=3, community=1)["roles"] == "reader"
    assert one(members, author=1, community=1)["roles"] == "reader,author,editor"  # a single row: as it was
    followers = await _rows(discours_url, "SELECT * FROM community_follower")
    assert sorted((r["follower"], r["community"]) for r in followers) == [(1, 1), (2, 1), (3, 1), (4, 2), (6, 1)]
    assert sorted((r["viewer"], r["notification"]) for r in await _rows(
        discours_url, "SELECT * FROM notification_seen")) == [(1, 1), (1, 3), (2, 2)]
    invites = await _rows(discours_url, "SELECT * FROM invite ORDER BY id")
    assert [(i["inviter_id"], i["author_id"], i["shout_id"], i["status"]) for i in invites] == [
        (4, 1, 4, "REJECTED"), (1, 2, 1, "PENDING"), (2, 4, 2, "PENDING")]
    assert [i["id"] for i in invites] == [3, 4, 5]  # 3 kept; the id two invites shared, given new ones
    ratings = {(r["rater"], r["author"]): r["plus"] for r in await _rows(discours_url, "SELECT * FROM author_rating")}
    assert ratings == {(2, 1): True, (3, 1): False, (4, 1): False}
    assert one(await _rows(discours_url, "SELECT * FROM collection"), id=2)["created_by"] == 1

    notes = {r["id"]: r for r in await _rows(discours_url, "SELECT * FROM notification")}
    assert (notes[2]["entity"], _json(notes[2]["payload"])) == (
        "reaction", {"reaction": 2, "shout": 1, "reply_to": 1, "created_by": 4, "kind": "COMMENT"})
    assert (notes[3]["entity"], _json(notes[3]["payload"])) == ("follower", {"follower": 3, "author": 1})
    assert (notes[4]["action"], _json(notes[4]["payload"])) == ("publish", {"shout": 2, "created_by": 2})
    # its models have no status, kind or update time: by the plan's rules for a version without them
    assert notes[4]["created_at"] > 0 and notes[2]["status"] == "unread" and notes[3]["kind"] == "general"
    assert notes[1]["updated_at"] is None
    recipients = sorted((r["notification"], r["author"]) for r in await _rows(
        discours_url, "SELECT * FROM notification_recipient"))
    assert recipients == [(1, 1), (1, 2), (2, 1), (2, 2), (2, 3), (3, 1), (4, 4)]
    next_ids = await _rows(discours_url, "SELECT nextval('shout_id_seq') AS shout, nextval('invite_id_seq') AS invite")
    assert next_ids == [{"shout": 6, "invite": 6}]


async def test_the_adopted_schema_is_what_migrate_makes_then_migrate_and_adopt_change_nothing(
        discours_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert await _adopt(discours_url, check_only=False, fanout=1000) == 0
    async with scratch_database(prefix="migrated") as fresh:
        await asyncio.to_thread(command.upgrade, alembic_config(fresh), "head")
        expected = await _fingerprint(fresh)
    adopted = await _fingerprint(discours_url)
    for part in ("columns", "constraints", "indexes", "sequences", "types"):
        assert adopted[part] == expected[part], part
    await asyncio.to_thread(command.upgrade, alembic_config(discours_url), "head")  # `discours migrate`
    assert await _fingerprint(discours_url) == adopted
    capsys.readouterr()
    assert await _adopt(discours_url, check_only=False, fanout=1000) == 0
    assert "nothing to adopt" in capsys.readouterr().out
    assert await _fingerprint(discours_url) == adopted


async def test_check_lists_every_blocker_and_adopt_then_changes_nothing(
        discours_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    await _run(discours_url,
               "UPDATE author SET name = repeat('я', 300) WHERE id = 2",
               "UPDATE reaction SET kind = 'SHRUG' WHERE id = 10",
               "ALTER TABLE author ADD COLUMN karma INTEGER",
               "CREATE TABLE legacy_stats (shout INTEGER, views INTEGER)",
               "UPDATE author SET \"user\" = 'auth0|a1' WHERE id = 4")
    before = await _fingerprint(discours_url)
    assert await _adopt(discours_url, check_only=True, fanout=1000) == 1
    shown = capsys.readouterr().out
    blockers = shown.split("Blockers:", 1)[1]
    for expected in ("`author.name`: 1 values longer than our 255", "SHRUG", "`author.karma`", "`legacy_stats`",
                     "'auth0|a1' ×2"):
        assert expected in blockers, expected
    assert await _adopt(discours_url, check_only=False, fanout=1000) == 1
    assert await _fingerprint(discours_url) == before


async def test_a_missing_table_or_an_unknown_column_is_a_blocker_line_not_an_error(
        discours_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A version of the schema the adopter does not know: the check names what differs and exits 1, having
    read no value by a column that is not there; the adoption refuses the same, changing nothing."""
    await _run(discours_url, "DROP TABLE notification_seen", "ALTER TABLE reaction DROP COLUMN quote",
               "ALTER TABLE topic ADD COLUMN karma INTEGER")
    before = await _fingerprint(discours_url)
    assert await _adopt(discours_url, check_only=True, fanout=1000) == 1
    shown = capsys.readouterr().out
    assert shown.startswith("a Discours database: 20 tables") and "it lacks notification_seen" in shown
    blockers = shown.split("Blockers:", 1)[1]
    for expected in ("table `notification_seen` is missing", "column `reaction.quote` is missing",
                     "column `topic.karma` is not one this adopter knows", "the values are checked once"):
        assert expected in blockers, expected
    assert "Traceback" not in shown
    assert await _adopt(discours_url, check_only=False, fanout=1000) == 1
    assert await _fingerprint(discours_url) == before


async def test_the_backend_before_2025_is_told_apart_by_blocker_lines(capsys: pytest.CaptureFixture[str]) -> None:
    """The 2021-2024 backend's own models (devtools/discours_schemas/, commit fbd0e03a): a Discours database
    the adopter does not carry over; the check says which tables and columns differ, exit 1."""
    async with scratch_database(prefix="discours2024") as url:
        engine = create_async_engine(url)
        async with engine.begin() as conn:
            await load_dump(conn, FEB_2024)
        await engine.dispose()
        before = await _fingerprint(url)
        assert await _adopt(url, check_only=True, fanout=1000) == 1
        shown = capsys.readouterr().out
        assert shown.startswith("a Discours database: 18 tables, 0 rows; not of the version the adopter knows")
        blockers = shown.split("Blockers:", 1)[1]
        for expected in ("table `author` is missing", "table `draft` is missing", "table `user` (0 rows) is not one",
                         "column `shout.createdAt` is not one this adopter knows"):
            assert expected in blockers, expected
        assert await _adopt(url, check_only=False, fanout=1000) == 1
        assert await _fingerprint(url) == before
        refused = await asyncio.to_thread(refuse_migrating_a_discours_database, url)
        assert refused is not None and "discours adopt --check" in refused


def test_each_discours_schema_names_the_commit_its_models_came_from() -> None:
    """The fixtures are dumps of what Discours' own models create, each naming its source; the Feb 2025 one
    has the notification of those models (no status, kind or update time)."""
    for dump, repository, commit in ((FEB_2025, "Discours/discours-backend-next", "8cd0c8ea4c656dd014d3b72d88e675e6afbd064e"),
                                     (FEB_2024, "Discours/discours-backend", "fbd0e03a3396ec5d1e8c5a0cc658467cec566a6c")):
        header = dump.read_text().split("\n\n", 1)[0]
        assert f"github.com/{repository}" in header and f"commit {commit}" in header, dump.name
        assert "pg_dump --schema-only" in header
    tables = [s for s in dump_statements(FEB_2025) if s.startswith("CREATE TABLE")]
    assert len(tables) == 21
    notification = next(s for s in tables if s.startswith("CREATE TABLE public.notification ("))
    assert [line.split()[0] for line in notification.splitlines()[1:-1]] == [
        "id", "created_at", "entity", "action", "payload"]


async def test_a_database_it_does_not_know_is_refused_untouched(capsys: pytest.CaptureFixture[str]) -> None:
    async with scratch_database(prefix="unknown") as url:
        await _run(url, "CREATE TABLE author (id INTEGER PRIMARY KEY, name TEXT)", "CREATE TABLE posts (id INTEGER)")
        before = await _fingerprint(url)
        assert await _adopt(url, check_only=False, fanout=1000) == 3
        shown = capsys.readouterr().out.strip().splitlines()
        assert len(shown) == 1 and shown[0].startswith("not a database this server knows: 2 tables")
        assert await _fingerprint(url) == before
        assert await asyncio.to_thread(refuse_migrating_a_discours_database, url) is None


def test_migrate_on_a_discours_database_says_to_check_the_adoption(discours_url: str) -> None:
    refused = refuse_migrating_a_discours_database(discours_url)
    assert refused is not None and "discours adopt --check" in refused


async def test_the_adopted_rows_answer_the_api_notifications_included(
        discours_url: str, settings: Settings, mailer: Any) -> None:
    assert await _adopt(discours_url, check_only=False, fanout=1000) == 0
    engine = make_engine(discours_url)
    async with RedisServer() as server:
        redis = make_redis(server.url)
        adopted = settings.model_copy(update={"database_url": discours_url})
        deps = wire(adopted, engine, Cache(redis), auth=build_auth(adopted, redis, mailer=mailer))
        app = create_app(adopted, deps=deps)
        maria = await deps.auth.sessions.create(1, "maria")  # type: ignore[union-attr]
        headers = {"authorization": f"Bearer {maria.token}"}
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            async def gql(query: str, variables: dict[str, Any] | None = None, **extra: Any) -> Any:
                response = await client.post("/graphql", json={"query": query, "variables": variables or {}}, **extra)
                body = response.json()
                assert "errors" not in body, body
                return body["data"]

            shout = (await gql('{ get_shout(slug: "first") { id title authors { slug } topics { slug } } }'))
            assert shout["get_shout"] == {"id": 1, "title": "Первая публикация",
                                          "authors": [{"slug": "maria"}, {"slug": "petr"}],
                                          "topics": [{"slug": "culture"}, {"slug": "cinema"}]}
            listed = await gql("{ load_shouts_by(options: {limit: 10}) { id slug } }")
            assert sorted(s["id"] for s in listed["load_shouts_by"]) == [1, 2, 5]  # published, not deleted
            topics = await gql("{ get_topics_all { slug } }")
            assert "topic-3" in {t["slug"] for t in topics["get_topics_all"]}
            comments = await gql('{ load_reactions_by(by: {shout: "first", kinds: [COMMENT]}, limit: 20) { id kind } }')
            assert {8, 9} <= {r["id"] for r in comments["load_reactions_by"]}

            load = ("query($after: Int!) { load_notifications(after: $after, limit: 20) { "
                    "notifications { id reactions authors { slug } } unread total } }")
            listed_notes = (await gql(load, {"after": 0}, headers=headers))["load_notifications"]
            assert listed_notes["total"] == 3 and listed_notes["unread"] == 1  # 1 and 3 were seen in Discours
            mark = "mutation($n: Int!) { mark_seen(notification_id: $n) { error } }"
            assert (await gql(mark, {"n": 2}, headers=headers))["mark_seen"]["error"] is None
            assert (await gql(load, {"after": 0}, headers=headers))["load_notifications"]["unread"] == 0

            # `discours rebuild` over the adopted rows: the live structures equal what SQL says
            await rebuild_all(deps.live, deps.cache, deps.db)
            stat = await gql('{ get_shout(slug: "first") { stat { rating comments_count } } '
                             'get_author(slug: "maria") { stat { followers shouts } } }')
            assert stat["get_shout"]["stat"] == {"rating": 1, "comments_count": 5}  # 1 like; COMMENT/QUOTE, live
            assert stat["get_author"]["stat"] == {"followers": 2, "shouts": 1}
        await redis.aclose()
    await engine.dispose()


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


async def test_views_carry_over_exactly_and_importing_again_changes_nothing(
        discours_url: str, tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """A views.json and a Discours Redis (seed 000 section 5) give each shout its imported views (the higher
    of the two); a second import changes nothing; views this server counted since stay on top; a running
    server's counters move with the totals."""
    from app.cli.adopt import _import_views
    from cache import keys

    assert await _adopt(discours_url, check_only=False, fanout=1000) == 0
    views = tmp_path / "views.json"
    views.write_text(json.dumps({"first": 100, "second": 50, "no-such-shout": 7}))
    async with RedisServer() as old_server, RedisServer() as ours_server:
        old = make_redis(old_server.url)
        await old.hset("migrated_views_1700000000", mapping={"1": 80, "2": 70, "_timestamp": 1700000000, "_total": 2})
        await old.hset("migrated_views_1600000000", mapping={"1": 999})  # an older migration: not current
        await old.set("viewed:1", 5)  # counted on top of the migrated views
        await old.set("viewed:5", 3)
        before_old = sorted(await old.keys("*"))

        async def imported() -> dict[int, int]:
            rows = await _rows(discours_url, "SELECT shout, views FROM shout_views")
            return {r["shout"]: r["views"] for r in rows}

        async def run(**extra: Any) -> str:
            capsys.readouterr()
            assert await _import_views(discours_url, views=views, views_redis=old_server.url, **extra) == 0
            return capsys.readouterr().out

        shown = await run(redis=None)
        assert await imported() == {1: 100, 2: 70, 5: 3}  # 1: the file's 100 over 80 + 5; 2: Redis' 70 over 50
        assert "3 shouts changed, +173 views" in shown and "no-such-shout" in shown
        assert "0 shouts changed" in await run(redis=None)
        assert await imported() == {1: 100, 2: 70, 5: 3}
        assert sorted(await old.keys("*")) == before_old  # the old Redis is only read

        await _run(discours_url, "UPDATE shout_views SET views = views + 10 WHERE shout = 1")  # counted here since
        ours = make_redis(ours_server.url)
        await ours.set(keys.viewed(1), 110)  # a running server's counter of shout 1
        views.write_text(json.dumps({"first": 120}))
        await run(redis=ours_server.url)
        assert (await imported())[1] == 130  # moved by what the import moved by: our 10 stay on top
        assert int(await ours.get(keys.viewed(1))) == 130
        await old.aclose()
        await ours.aclose()


async def test_a_database_made_by_discours_start_alone_is_adopted_too(capsys: pytest.CaptureFixture[str]) -> None:
    """Its start makes 17 tables (no invite, collection, shout_collection, author_bookmark): those start
    empty here."""
    async with scratch_database(prefix="discours17") as url:
        engine = create_async_engine(url)
        async with engine.begin() as conn:
            await create_discours_schema(conn, full=False)
            await fill_discours_rows(conn, full=False)
        await engine.dispose()
        assert await _adopt(url, check_only=True, fanout=1000) == 0
        assert "- invite: no `invite` table here" in capsys.readouterr().out
        assert await _adopt(url, check_only=False, fanout=1000) == 0
        counts = (await _rows(url, "SELECT (SELECT count(*) FROM invite) AS invites, "
                                   "(SELECT count(*) FROM shout) AS shouts"))[0]
        assert counts == {"invites": 0, "shouts": 5}


async def test_accounts_carried_over_sign_in_with_their_bcrypt_hash_rehashed_and_import_again_changes_nothing(
        discours_url: str, settings: Settings, mailer: Any, tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The auth service's export gives authors their addresses, hashes, identities and roles; a row that
    cannot be carried over whole is a line of the report; a bcrypt hash signs in and is replaced by argon2id;
    importing again changes nothing; authors left with no way to sign in are listed."""
    import bcrypt

    from app.cli.adopt import _import_accounts

    assert await _adopt(discours_url, check_only=False, fanout=1000) == 0
    maria_hash = bcrypt.hashpw(b"long password one", bcrypt.gensalt(rounds=4)).decode()
    accounts = tmp_path / "accounts.csv"
    accounts.write_text(
        "user,email,email_verified,password_hash,provider,subject,roles\n"
        f"auth0|a1,Maria@Example.org,true,{maria_hash},google,g-123,\"editor,expert\"\n"
        "auth0|a2,petr@example.org,false,,github,gh-9,\n"
        "auth0|zz,ghost@example.org,true,,,,\n"
        "auth0|a4,dup@example.org,true,,,,\n"
        "auth0|a6,dup@example.org,true,,,,\n"
        "auth0|a3,,,md5$deadbeef,,,\n")
    capsys.readouterr()
    assert await _import_accounts(discours_url, accounts) == 0
    report = capsys.readouterr().out
    assert report.startswith("Accounts: 2 authors updated, 0 already as the file says, 4 rows not carried over.")
    for line in ("line 4 (auth0|zz): no author has this user", "line 5 (auth0|a4): the address dup@example.org is "
                 "on several rows", "line 6 (auth0|a6)", "line 7 (auth0|a3): a hash this server cannot verify"):
        assert line in report, line
    assert "3 authors have neither an address nor a provider identity" in report and "anna" in report
    rows = {r["id"]: r for r in await _rows(discours_url, "SELECT id, email, email_verified, password, oauth FROM author")}
    assert (rows[1]["email"], rows[1]["email_verified"], rows[1]["password"]) == ("maria@example.org", True, maria_hash)
    assert _json(rows[1]["oauth"]) == {"google": "g-123"} and _json(rows[2]["oauth"]) == {"github": "gh-9"}
    assert rows[4]["email"] is None and rows[6]["email"] is None  # the shared address given to neither
    roles = await _rows(discours_url, "SELECT roles FROM community_author WHERE author = 1 AND community = 1")
    assert roles == [{"roles": "reader,author,editor,expert"}]

    engine = make_engine(discours_url)
    async with RedisServer() as server:
        redis = make_redis(server.url)
        adopted = settings.model_copy(update={"database_url": discours_url})
        deps = wire(adopted, engine, Cache(redis), auth=build_auth(adopted, redis, mailer=mailer))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(adopted, deps=deps)),
                                     base_url="http://test") as client:
            login = ('mutation($e: String!, $p: String!) { login(email: $e, password: $p) { success error '
                     'author { slug } } }')
            for _ in range(2):  # with the bcrypt hash, then with the argon2id hash that replaced it
                signed = (await client.post("/graphql", json={"query": login, "variables": {
                    "e": "maria@example.org", "p": "long password one"}})).json()["data"]["login"]
                assert signed["success"] and signed["author"]["slug"] == "maria", signed
                stored = (await _rows(discours_url, "SELECT password FROM author WHERE id = 1"))[0]["password"]
                assert stored.startswith("$argon2id$")
            wrong = (await client.post("/graphql", json={"query": login, "variables": {
                "e": "maria@example.org", "p": "not her password"}})).json()["data"]["login"]
            assert not wrong["success"]
        await redis.aclose()
    await engine.dispose()

    before = await _fingerprint(discours_url)
    capsys.readouterr()
    assert await _import_accounts(discours_url, accounts) == 0
    assert capsys.readouterr().out.startswith("Accounts: 0 authors updated, 2 already as the file says")
    assert await _fingerprint(discours_url) == before  # the argon2id hash stays; nothing moves
