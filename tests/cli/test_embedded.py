"""The embedded default: no DATABASE_URL and no REDIS_URL -> a SQLite file and an in-process Redis,
through the same code path (migrations, seeder, lifespan, resolvers) as production."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from alembic import command
from sqlalchemy import event, select
from sqlalchemy.engine import Engine

from app.cli.seed import SIZES, seed_database
from app.main import check_services, create_app, open_deps
from cache import keys
from cache.stamps import part_keys
from config.settings import Settings, SettingsError, load_settings
from orm import Author, CommunityAuthor
from orm.migrations import alembic_config
from orm.shout import Shout
from resolvers import digests
from resolvers.deps import DEFERRED_QUEUE
from resolvers.writes import transaction


def test_defaults_are_embedded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("REDIS_URL", raising=False)
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.database_url.startswith("sqlite+aiosqlite://")
    assert settings.redis_url is None


@pytest.mark.parametrize("name, value", [
    ("DATABASE_URL", "mysql://root@localhost/x"),
    ("REDIS_URL", "http://localhost:6379"),
    ("PORT", "not-a-port"),
])
def test_wrong_setting_names_the_variable(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError, match=name):
        load_settings()


async def test_unreachable_servers_stop_the_start_naming_the_setting() -> None:
    settings = load_settings(database_url="postgresql://postgres@127.0.0.1:1/nothing", jwt_secret="x" * 32)
    async with open_deps(settings) as deps:
        with pytest.raises(SettingsError, match="DATABASE_URL"):
            await check_services(settings, deps)
    settings = load_settings(database_url="sqlite:///:memory:", redis_url="redis://127.0.0.1:1/0",
                             redis_breaker_seconds=0)
    async with open_deps(settings) as deps:
        with pytest.raises(SettingsError, match="REDIS_URL"):
            await check_services(settings, deps)


async def test_sqlite_and_fakeredis_serve_the_api(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'embedded.db'}"
    # alembic's env runs its own event loop: give it a thread of its own
    await asyncio.to_thread(command.upgrade, alembic_config(url), "head")
    assert await seed_database(url, SIZES["test"], progress=False)
    assert not await seed_database(url, SIZES["test"], only_if_empty=True, progress=False)
    settings = load_settings(database_url=url, redis_url=None)
    async with open_deps(settings) as deps:
        await check_services(settings, deps)
        app = create_app(settings, deps=deps)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as http:
            query = ("{ load_shouts_by(options: {limit: 3, order_by: rating}) "
                     "{ slug authors { slug } stat { rating } } }")
            first = (await http.post("/graphql", json={"query": query})).json()
            assert "errors" not in first and len(first["data"]["load_shouts_by"]) == 3
            assert (await http.post("/graphql", json={"query": query})).json() == first
            assert app.state.responses.hits == 1  # the second one came whole from the response cache
            page = await http.get("/graphql", headers={"accept": "text/html"})
            assert page.status_code == 200 and "graphiql" in page.text.lower()
            # search on SQLite: a substring match (no word forms), title matches first, nothing refused
            searched = (await http.post("/graphql", json={"query": (
                '{ load_shouts_search(text: "город", options: {limit: 10}) { title score } '
                'load_authors_search(text: "author-1") { slug } '
                'load_reactions_by(by: {search: "город"}, limit: 3) { body } }')})).json()
            assert "errors" not in searched, searched
            shouts = searched["data"]["load_shouts_search"]
            assert shouts and all(s["score"] in (1.0, 0.5) for s in shouts)
            assert [s["score"] for s in shouts] == sorted((s["score"] for s in shouts), reverse=True)
            assert all("город" in s["title"].lower() for s in shouts if s["score"] == 1.0)
            assert {a["slug"] for a in searched["data"]["load_authors_search"]} >= {"author-1"}
            assert all("город" in r["body"].lower() for r in searched["data"]["load_reactions_by"])
            # a write: a reader signs up and comments (joining the discussion in a savepoint, on SQLite too)
            signed_up = (await http.post("/graphql", json={"query": (
                'mutation { registerUser(email: "e@example.org", password: "embedded password", name: "E") '
                "{ success } }")})).json()
            assert signed_up["data"]["registerUser"]["success"], signed_up
            login = (await http.post("/graphql", json={"query": (
                'mutation { login(email: "e@example.org", password: "embedded password") { token } }')})).json()
            token = login["data"]["login"]["token"]
            shout = (await http.post("/graphql", json={"query": "{ load_shouts_by(options: {limit: 1}) { id } }"}
                                     )).json()["data"]["load_shouts_by"][0]["id"]
            comment = ("mutation($s: Int!) { create_reaction(reaction: {kind: COMMENT, shout: $s, body: \"hi\"}) "
                       "{ error reaction { id } } }")
            for _ in range(2):  # the second finds the follow the first made
                answer = (await http.post("/graphql", json={"query": comment, "variables": {"s": shout}},
                                          headers={"authorization": f"Bearer {token}"})).json()
                assert "errors" not in answer and answer["data"]["create_reaction"]["error"] is None, answer
            # moderation on SQLite: the reader made an editor hides their comment, which the trail records
            comment_id = answer["data"]["create_reaction"]["reaction"]["id"]
            async with transaction(deps) as session:
                member = (await session.scalars(select(CommunityAuthor).join(Author, Author.id == CommunityAuthor.author)
                                                .where(Author.email == "e@example.org"))).one()
                member.roles = "reader,author,artist,expert,editor"
            moderated = (await http.post("/graphql", json={"query": (
                "mutation($i: Int!) { adminDeleteReaction(reaction_id: $i) { success } } "), "variables": {
                    "i": comment_id}}, headers={"authorization": f"Bearer {token}"})).json()
            assert moderated == {"data": {"adminDeleteReaction": {"success": True}}}, moderated
            listed = (await http.post("/graphql", json={"query": (
                '{ adminGetReactions(status: "deleted", search: "hi", limit: 5) { total reactions { id } } }')},
                headers={"authorization": f"Bearer {token}"})).json()
            assert listed["data"]["adminGetReactions"]["reactions"][0]["id"] == comment_id, listed
            # a search's `_` and `%` are the text's own on SQLite too (it has no default LIKE escape)
            snake = ("mutation($s: Int!) { create_reaction(reaction: {kind: COMMENT, shout: $s, body: \"snake_case 5%\"}) "
                     "{ error } }")
            await http.post("/graphql", json={"query": snake, "variables": {"s": shout}},
                            headers={"authorization": f"Bearer {token}"})
            for text, total in (("snake_case 5%", 1), ("snake_cas_", 0)):
                found = (await http.post("/graphql", json={"query": "query($t: String) { adminGetReactions(search: $t) "
                                                                    "{ total } }", "variables": {"t": text}},
                                         headers={"authorization": f"Bearer {token}"})).json()
                assert found["data"]["adminGetReactions"]["total"] == total, (text, found)
            # the digests pending in the database are found through SQLite's JSON as through PostgreSQL's
            queued = await deps.delayed.redis.zrange(keys.delayed_queue(DEFERRED_QUEUE), 0, -1)
            await deps.delayed.redis.delete(keys.delayed_queue(DEFERRED_QUEUE))
            assert await digests.sweep(deps, time.time()) >= 1
            assert set(await deps.delayed.redis.zrange(keys.delayed_queue(DEFERRED_QUEUE), 0, -1)) >= set(queued)
            assert queued


READ = "query($o: LoadShoutsOptions) { load_shouts_by(options: $o) { id title authors { slug } stat { rating } } }"


async def test_the_embedded_default_runs_the_caches_read_and_write_paths(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Miss, fill lock, hit and invalidation on SQLite and the in-process Redis, with the response cache off so
    every read goes through the entity and list caches: a hit reads no SQL, and the breaker stays closed."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'embedded.db'}"
    await asyncio.to_thread(command.upgrade, alembic_config(url), "head")
    await seed_database(url, SIZES["test"], progress=False)
    settings = load_settings(database_url=url, redis_url=None, response_cache_ttl=0, rendered_answer_ttl=0)
    statements = [0]

    def count(*_: object) -> None:
        statements[0] += 1

    async def read(http: httpx.AsyncClient, offset: int) -> tuple[Any, int]:
        before = statements[0]
        answer = (await http.post("/graphql", json={"query": READ, "variables": {"o": {"limit": 3, "offset": offset}}}
                                  )).json()
        assert "errors" not in answer, answer
        return answer["data"]["load_shouts_by"], statements[0] - before

    event.listen(Engine, "before_cursor_execute", count)
    try:
        async with open_deps(settings) as deps:
            app = create_app(settings, deps=deps)
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as http:
                first, cold = await read(http, 0)
                again, warm = await read(http, 0)
                assert cold > 0 and warm == 0 and again == first
                # a second list under the same tags: its miss takes the fill lock in the read's script
                _, cold = await read(http, 3)
                _, warm = await read(http, 3)
                assert cold > 0 and warm == 0
                # a write invalidates what it changed at its commit: the next read is computed again, and shows it
                # (written as resolvers write: the block ends once the invalidation has reached the cache)
                async with transaction(deps) as session:
                    shout = await session.get(Shout, first[0]["id"])
                    assert shout is not None
                    shout.title = "Новое название"
                changed, cold = await read(http, 0)
                assert cold > 0 and changed[0]["title"] == "Новое название"
                assert (await read(http, 0))[1] == 0
                # a hundred mixed reads, as a newcomer's first clicks make them
                for n in range(25):
                    for query in (READ, "{ get_topics_all { slug } }", "{ load_authors_by(by: {}) { slug } }",
                                  '{ get_author(slug: "author-1") { slug stat { shouts } } }'):
                        answer = (await http.post("/graphql", json={
                            "query": query, "variables": {"o": {"limit": 3, "offset": n % 5 * 3}}})).json()
                        assert "errors" not in answer, answer
                # a value past seed 004's 10 KB a string, kept in parts by the in-process Redis as by a real one
                big, computed = {"text": os.urandom(40_000).hex()}, []

                async def compute() -> dict[str, str]:
                    computed.append(1)
                    return big

                for _ in range(2):
                    assert await deps.cache.cached_query("test:embedded:big", compute) == big
                assert computed == [1] and part_keys(await deps.cache.redis.get("test:embedded:big") or b"")
            assert deps.cache.guard.available and deps.cache.stats.errors == 0
    finally:
        event.remove(Engine, "before_cursor_execute", count)
    assert not [r for r in caplog.records if "redis unavailable" in r.getMessage()]


async def test_the_embedded_default_serves_the_panel_the_event_stream_and_mail_templates(tmp_path: Path) -> None:
    """What a newcomer's `make run` offers beside the API works on SQLite and the in-process Redis too: the
    editors' panel, the web client's event stream (pub/sub through fakeredis) and the mail's templates."""
    from tests.live import serve

    url = f"sqlite+aiosqlite:///{tmp_path / 'embedded.db'}"
    await asyncio.to_thread(command.upgrade, alembic_config(url), "head")
    assert await seed_database(url, SIZES["test"], progress=False)  # the default community, among the rest
    settings = load_settings(database_url=url, redis_url=None, registrations_per_address=0, logins_per_address=0,
                             mails_per_address=0)
    async with open_deps(settings) as deps:
        app = create_app(settings, deps=deps)
        async with serve(app) as base, httpx.AsyncClient(base_url=base, timeout=httpx.Timeout(10, read=None)) as http:
            panel = await http.get("/admin/", headers={"accept-language": "ru"})
            assert panel.status_code == 200 and '<html lang="ru"' in panel.text
            tokens = []
            for name in ("one", "two"):
                email = f"{name}@example.org"
                await http.post("/graphql", json={"query": "mutation($e: String!) { registerUser(email: $e, "
                                                           'password: "embedded password") { success } }',
                                                  "variables": {"e": email}}, headers={"accept-language": "en"})
                login = (await http.post("/graphql", json={"query": "mutation($e: String!) { login(email: $e, "
                                                                    'password: "embedded password") { error token author { slug } } }',
                                                           "variables": {"e": email}})).json()["data"]["login"]
                assert login["token"], login
                tokens.append((login["token"], login["author"]["slug"]))
            mailed = deps.accounts.mailer.sent[-1]  # written from the templates, in the language asked
            assert mailed.subject == "Confirm your email" and mailed.html and "/confirm?token=" in mailed.body
            (mine, my_slug), (theirs, _) = tokens
            async with http.stream("GET", "/connect", headers={"authorization": f"Bearer {mine}"}) as stream:
                assert stream.status_code == 200
                lines = stream.aiter_lines()
                assert (await anext(lines)).startswith("retry:")
                await http.post("/graphql", json={"query": 'mutation($s: String!) { follow(what: AUTHOR, slug: $s) '
                                                           "{ error } }", "variables": {"s": my_slug}},
                                headers={"authorization": f"Bearer {theirs}"})
                data = await asyncio.wait_for(_first_data(lines), 5)
            assert data["entity"] == "follower" and data["action"] == "follow"


async def _first_data(lines: Any) -> dict[str, Any]:
    import orjson

    async for line in lines:
        if line.startswith("data: "):
            return dict(orjson.loads(line[6:]))
    raise AssertionError("the stream ended")
