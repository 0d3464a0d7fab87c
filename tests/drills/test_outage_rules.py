"""The rules a Redis outage is held to, end to end against a real redis-server that is stopped and started
again (docs/accounts.md, "Sessions"): a session this worker checked within the grace stays signed in; any other
is answered SERVICE_UNAVAILABLE, never UNAUTHENTICATED; past the grace (a moved clock, not a minute's
wait) it is SERVICE_UNAVAILABLE too; a revocation made while this worker could not see it wins as soon as
Redis answers. And the revalidation interval set in the settings is the one the started server's loop
waits between rounds (seed 002: 300 s)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from app.main import create_app, wire
from auth.services import build_auth
from auth.sessions import SessionStore
from cache import keys
from cache.periodic import Periodic
from cache.redis.client import make_redis
from cache.store import Cache
from config.settings import Settings, load_settings
from devtools.services import RedisServer
from tests.conftest import TEST_DATABASE_URL, single_redis
from tests.helpers import Api, User, until

pytestmark = single_redis  # a redis-server of the test's own, stopped and started

ME = "{ me { author { id } } }"


@pytest.fixture
async def on_own_redis(engine: Any, settings: Settings, mailer: Any,
                       redis_server: RedisServer) -> AsyncIterator[tuple[Api, Any]]:
    redis = make_redis(redis_server.url)
    deps = wire(settings, engine, Cache(redis, breaker_seconds=0.1), auth=build_auth(settings, redis, mailer=mailer))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(settings, deps=deps)),
                                 base_url="http://test") as client:
        yield Api(client, deps), redis
    await redis.aclose()


async def _me(api: Api, user: User) -> tuple[int | None, str | None]:
    """(the signed-in author's id, or None; the error's code, or None)."""
    body = await api.raw(ME, user=user)
    errors = body.get("errors") or []
    me = (body.get("data") or {}).get("me") or {}
    return (me.get("author") or {}).get("id"), (errors[0]["extensions"]["code"] if errors else None)


async def test_a_checked_session_survives_an_outage_within_the_grace_and_no_other_is_signed_out(
        on_own_redis: tuple[Api, Any], redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch) -> None:
    api, redis = on_own_redis
    checked, unchecked = await api.user(), await api.user()
    assert await _me(api, checked) == (checked.id, None)  # this worker has now checked it

    await redis.shutdown(save=True)  # its data comes back, as after a restart
    redis_server.stop()
    assert await _me(api, checked) == (checked.id, None), "a session checked within the grace is signed out"
    assert await _me(api, unchecked) == (None, "SERVICE_UNAVAILABLE"), "an unchecked session must not be " \
        "taken for signed out while Redis cannot say"

    real = time.monotonic
    monkeypatch.setattr(SessionStore, "clock", staticmethod(lambda: real() + 61))  # past the 60 s grace
    assert await _me(api, checked) == (None, "SERVICE_UNAVAILABLE")
    monkeypatch.setattr(SessionStore, "clock", staticmethod(real))

    redis_server.start()
    await redis_server.ready()  # a session is checked in Redis first whatever the cache's breaker says
    assert await _me(api, unchecked) == (unchecked.id, None)
    assert await _me(api, checked) == (checked.id, None)


async def test_a_revocation_made_during_the_outage_wins_once_redis_answers(
        on_own_redis: tuple[Api, Any], redis_server: RedisServer) -> None:
    api, redis = on_own_redis
    user = await api.user()
    assert await _me(api, user) == (user.id, None)
    # Another worker signs the user out everywhere; this one has not seen it when Redis goes away.
    sessions = [m.decode() for m in await redis.smembers(keys.user_sessions(user.id))]
    await redis.delete(*[keys.session(user.id, s) for s in sessions], keys.user_sessions(user.id))
    await redis.shutdown(save=True)
    redis_server.stop()
    assert await _me(api, user) == (user.id, None)  # within the grace: it cannot know
    redis_server.start()
    await redis_server.ready()
    assert await _me(api, user) == (None, "UNAUTHENTICATED"), "a revoked session is served once Redis is back"


@pytest.mark.parametrize("configured", [None, 42.0], ids=["the-default-300-s", "as-set"])
async def test_the_revalidation_interval_set_is_what_the_running_loop_waits(
        redis_server: RedisServer, engine: Any, monkeypatch: pytest.MonkeyPatch, configured: float | None) -> None:
    """The whole path: the setting, the lifespan opening its own connections, the manager's loop. The loop's
    wait is replaced by one that notes what it was asked to wait and lets the first round run at once."""
    waits: dict[str, list[float]] = {}
    forever = asyncio.Event()

    async def noted(self: Periodic, seconds: float) -> None:
        waits.setdefault(self.name, []).append(seconds)
        if self.name != "cache revalidation" or len(waits[self.name]) > 1:
            await forever.wait()  # one round is enough; the other loops wait as they would

    monkeypatch.setattr(Periodic, "sleep", noted)
    chosen = {"cache_revalidation_interval": configured} if configured is not None else {}
    settings = load_settings(database_url=TEST_DATABASE_URL, redis_url=redis_server.url, jwt_secret="t" * 40,
                             precache_on_start=False, **chosen)
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        revalidator = app.state.deps.revalidator
        await until(lambda: revalidator.rounds >= 1, "the revalidation loop runs a round")
    assert waits["cache revalidation"][0] == (configured or 300.0)
