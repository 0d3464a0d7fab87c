"""Redis at `maxmemory` with an eviction policy (issue 12): the server keeps answering and never serves a
stale value while Redis evicts whatever it likes (values, generation keys, live counters, thread sets,
response-cache entries).

The cache runs on a redis-server of the test's own with 2 MB (about 1 MB above an empty server's own use)
and `allkeys-lru`, the state that must not be evicted (sessions, queues) on another (REDIS_STATE_URL), as
docs/operations.md advises; each round other tenants' keys push the cache over its limit, a signed-in author
renames themselves and comments, and anonymous reads (through the response cache and the entity caches)
must show both at once, with the shout's comment counter not behind SQL. The controls: Redis evicted; and
the same rounds on one evicting Redis for everything go wrong.

With one Redis for both, `allkeys-lru` evicts sessions too (the first run of this test, on one server,
signed its author out in the first round): hence REDIS_STATE_URL."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
import pytest
from redis.exceptions import ResponseError
from sqlalchemy import func, select

from app.main import create_app, wire
from auth.services import build_auth
from cache.redis.client import make_redis
from cache.store import Cache
from config.settings import Settings
from devtools.services import RedisServer
from orm import Reaction
from tests.helpers import Api

ROUNDS = 60
TENANT_BYTES = 150_000  # what other tenants write each round: more than the server can keep


@pytest.fixture
async def squeezed(engine: Any, settings: Settings, mailer: Any) -> AsyncIterator[tuple[Api, Any, Any]]:
    squeezed = RedisServer(options=("--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru"))
    async with squeezed as server, RedisServer(options=("--maxmemory-policy", "noeviction")) as state_server:
        redis, state = make_redis(server.url), make_redis(state_server.url)
        deps = wire(settings, engine, Cache(redis, state=state), auth=build_auth(settings, state, mailer=mailer))
        app = create_app(settings, deps=deps)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            yield Api(client, deps), deps, redis
        await redis.aclose()
        await state.aclose()


async def test_no_stale_reads_and_no_errors_while_redis_evicts(squeezed: tuple[Api, Any, Any]) -> None:
    api, deps, redis = squeezed
    stale = await _rounds(api, deps, redis)
    memory = await redis.info("memory")
    evicted = (await redis.info("stats"))["evicted_keys"]
    print(f"memory pressure: {ROUNDS} rounds, {len(stale)} stale reads, {evicted} keys evicted, "
          f"{memory['used_memory']} bytes used")
    assert stale == [], stale[:10]
    assert evicted > 1000, evicted  # the control: Redis did evict, again and again
    assert memory["used_memory"] <= 2 * 1024 * 1024 * 1.05


async def test_the_control_one_evicting_redis_for_everything_signs_people_out(
        engine: Any, settings: Settings, mailer: Any) -> None:
    """What the split avoids: the same rounds on one `allkeys-lru` Redis holding the sessions too. Eviction
    takes sessions (a signed-in write refused) or live structures; if this saw nothing go wrong, the
    test above could not tell the split at work."""
    async with RedisServer(options=("--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru")) as server:
        redis = make_redis(server.url)
        deps = wire(settings, engine, Cache(redis), auth=build_auth(settings, redis, mailer=mailer))
        app = create_app(settings, deps=deps)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            problems = await _rounds(Api(client, deps), deps, redis)
        await redis.aclose()
    print(f"one evicting Redis: {ROUNDS} rounds, {len(problems)} problems: {problems[:3]}")
    assert problems, "one evicting Redis for sessions and cache lost nothing: the control cannot tell"


async def test_one_full_redis_that_refuses_writes_is_answered_from_the_database(
        engine: Any, settings: Settings, mailer: Any) -> None:
    """One Redis for everything, `noeviction` (as docs/operations.md advises for a single Redis): once it is full
    it refuses writes (OOM), the breaker sends the writer's reads to the database, and nothing stale is
    served, by the writer or by a second worker whose own calls Redis never refused (it only reads): a
    write whose invalidation was refused forgets the epochs (UNLINK, which a full Redis takes) before it
    answers (cache/store.py `Cache.lose_write`)."""
    async with RedisServer(options=("--maxmemory", "2mb", "--maxmemory-policy", "noeviction")) as server:
        redis, other = make_redis(server.url), make_redis(server.url)
        deps = wire(settings, engine, Cache(redis, breaker_seconds=0.2),
                    auth=build_auth(settings, redis, mailer=mailer))
        second = wire(settings, engine, Cache(other, breaker_seconds=0.2),
                      auth=build_auth(settings, other, mailer=mailer))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(settings, deps=deps)),
                                     base_url="http://test") as client, \
                httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(settings, deps=second)),
                                  base_url="http://test") as reader:
            stale = await _rounds(Api(client, deps), deps, redis, readers=[Api(reader, second)], rounds=ROUNDS // 2)
        refused = (await redis.info("errorstats")).get("errorstat_OOM", {}).get("count", 0)
        await redis.aclose()
        await other.aclose()
    print(f"full noeviction Redis: {ROUNDS // 2} rounds, {len(stale)} stale reads, {refused} writes refused (OOM)")
    assert stale == [], stale[:10]
    assert refused > 100, refused  # the control: Redis was full and said so


async def _rounds(api: Api, deps: Any, redis: Any, readers: Sequence[Api] = (), rounds: int = ROUNDS) -> list[str]:
    """Each round: other tenants fill Redis, a signed-in write of a name and a comment, then anonymous
    reads that must show both, by the writer's worker and by `readers` (other workers); returns what went
    wrong (a refused write, a stale read)."""
    user = await api.user()
    shout = (await api("{ load_shouts_by(options: {limit: 1}) { id } }"))[0]["id"]
    read = ("query($s: String, $id: Int!) { get_author(slug: $s) { name } "
            "load_shouts_by(options: {limit: 50}) { id stat { comments_count } } "
            "load_comments_branch(shout: $id, limit: 100) { body } }")
    stale: list[str] = []
    for n in range(rounds):
        with contextlib.suppress(ResponseError):  # a full `noeviction` Redis refuses them
            async with redis.pipeline(transaction=False) as pipe:
                for k in range(15):
                    pipe.set(f"tenant:{n}:{k}", b"x" * (TENANT_BYTES // 15), ex=3600)
                await pipe.execute()
        name, body = f"squeezed-{n}", f"comment under pressure {n}"
        refused = [error for query, variables in (
            ("mutation($n: String) { update_author(profile: {name: $n}) { error } }", {"n": name}),
            ("mutation($s: Int!, $b: String) { create_reaction(reaction: {kind: COMMENT, shout: $s, body: $b}) "
             "{ error } }", {"s": shout, "b": body}))
            for error in (await api.raw(query, variables, user=user)).get("errors", [])]
        if refused:  # a signed-in write refused: the author was signed out (their session evicted)
            stale.append(f"round {n}: write refused: {refused[0].get('extensions', {}).get('code')}")
            continue
        async with deps.db() as session:
            comments = (await session.scalar(select(func.count()).select_from(Reaction).where(
                Reaction.shout == shout, Reaction.kind == "COMMENT", Reaction.deleted_at.is_(None),
                Reaction.reply_to.is_(None)))) or 0
        for reader in (api, api, *readers):  # the writer's second read may be a response-cache hit
            data = await reader(read, {"s": user.slug, "id": shout})
            if data["get_author"]["name"] != name:
                stale.append(f"round {n}: name {data['get_author']['name']!r}")
            if body not in {c["body"] for c in data["load_comments_branch"]}:
                stale.append(f"round {n}: comment missing")
            counted = {s["id"]: s["stat"]["comments_count"] for s in data["load_shouts_by"]}
            if shout in counted and counted[shout] < comments:
                stale.append(f"round {n}: comments_count {counted[shout]} < {comments}")
    return stale
