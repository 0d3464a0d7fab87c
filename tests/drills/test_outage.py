"""A Redis outage under signed-in load (issue 9): two workers on a Redis server of the test's own, which is
shut down for 10 seconds (saving its data, as a restart would) and started again, while signed-in users
read and write. Every request must succeed, every acknowledged write must be in the database, and once
Redis is back no read may be stale."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from devtools.services import RedisServer
from orm import Reaction
from tests.helpers import until
from tests.live import two_workers

USERS = 4
OUTAGE = 10.0
ME = "{ me { author { id } } }"
COMMENT = "mutation($s: Int!, $b: String) { create_reaction(reaction: {kind: COMMENT, shout: $s, body: $b}) { error } }"
COMMENTS = "query($s: Int!) { load_shout_comments(shout: $s, limit: 100) { id } }"


@pytest.mark.parametrize("grace", [None, "0"], ids=["with-the-session-grace", "control-without-it"])
async def test_a_ten_second_redis_outage_fails_no_signed_in_request(engine: Any, redis_server: RedisServer,
                                                                    grace: str | None) -> None:
    """With the session grace (the default), no request fails. The control runs the same outage with
    `SESSION_OUTAGE_GRACE=0`: signed-in requests must then fail, or the test could not tell."""
    url = redis_server.url
    failures: list[str] = []
    acknowledged: dict[int, int] = {}
    rounds = [0] * USERS
    marker = f"outage comment {grace or 'graced'}-{time.time_ns()}"  # this run's comments, not another's
    async with two_workers(url, {"SESSION_OUTAGE_GRACE": grace} if grace is not None else {}) as (base, pids, redis):
        assert len(pids) == 2
        # A fresh connection per request, so each user's requests reach both workers.
        fresh = httpx.Limits(max_keepalive_connections=0)
        async with httpx.AsyncClient(base_url=base, limits=fresh, timeout=30) as http:
            async def call(query: str, variables: dict[str, Any], token: str | None = None) -> Any:
                headers = {"authorization": f"Bearer {token}"} if token else {}
                response = await http.post("/graphql", json={"query": query, "variables": variables},
                                           headers=headers)
                body = response.json() if response.status_code < 500 else {"errors": [response.text]}
                if response.status_code != 200 or body.get("errors"):
                    failures.append(f"{response.status_code} {str(body.get('errors'))[:200]}")
                    return None
                return body["data"]

            users = []
            for n in range(USERS):
                email = f"outage-{n}-{time.time_ns()}@example.org"
                await call('mutation($e: String!) { registerUser(email: $e, password: "long password") '
                           "{ success } }", {"e": email})
                login = await call('mutation($e: String!) { login(email: $e, password: "long password") '
                                   "{ token } }", {"e": email})
                page = await call("query($o: Int) { load_shouts_by(options: {limit: 1, offset: $o}) { id } }",
                                  {"o": 10 + n})
                users.append((login["login"]["token"], page["load_shouts_by"][0]["id"]))
            assert not failures, failures

            stop = asyncio.Event()

            async def load(user: int, token: str, shout: int) -> None:
                n = 0
                while not stop.is_set():
                    n += 1
                    rounds[user] = n
                    await call(ME, {}, token)
                    if await call(COMMENT, {"s": shout, "b": f"{marker} {n}"}, token) is not None:
                        acknowledged[shout] = acknowledged.get(shout, 0) + 1
                    await call(COMMENTS, {"s": shout}, token)
                    await asyncio.sleep(0.02)

            loads = [asyncio.create_task(load(user, token, shout)) for user, (token, shout) in enumerate(users)]
            # every token checked by both workers: a few rounds each over fresh connections
            await until(lambda: min(rounds) >= 10, "every user has made ten rounds of requests")
            assert not failures, failures
            await redis.shutdown(save=True)  # its data comes back, as after a restart
            redis_server.stop()
            outage_started = time.monotonic()
            await asyncio.sleep(OUTAGE)
            redis_server.start()
            await redis_server.ready()
            outage = time.monotonic() - outage_started
            await asyncio.sleep(8)  # past the breaker's 5 s: the cache is used again
            stop.set()
            await asyncio.gather(*loads)
            if grace is None:
                assert not failures, f"{len(failures)} failed requests: {failures[:5]}"
            else:  # the control: without the grace, the outage signs people out or fails them
                assert failures, "the control saw no failed request: the test cannot tell the grace at work"
                assert all("SERVICE_UNAVAILABLE" in f or "UNAUTHENTICATED" in f for f in failures), failures[:5]

            async with engine.connect() as conn:
                for _token, shout in users:
                    stored = await conn.scalar(select(func.count()).select_from(Reaction).where(
                        Reaction.shout == shout, Reaction.kind == "COMMENT", Reaction.deleted_at.is_(None),
                        Reaction.body.like(f"{marker} %")))
                    assert stored == acknowledged[shout], (shout, stored, acknowledged[shout])  # 0 lost
                    newest = list((await conn.scalars(select(Reaction.id).where(
                        Reaction.shout == shout, Reaction.kind.in_(["COMMENT", "QUOTE"]),
                        Reaction.deleted_at.is_(None)).order_by(Reaction.created_at.desc(), Reaction.id.desc())
                        .limit(100))).all())
                    for _ in range(4):  # 0 stale: every worker serves what the database holds
                        served = await call(COMMENTS, {"s": shout})
                        assert [r["id"] for r in served["load_shout_comments"]] == newest
        print(f"\noutage {outage:.1f} s, {sum(acknowledged.values())} comments written, "
              f"{len(failures)} failed requests")
