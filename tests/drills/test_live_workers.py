"""Live events across worker processes: two uvicorn workers on PostgreSQL and Redis; a client subscribed
on one worker receives, within a second, what mutations handled by the other cause."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from cache import keys
from tests.live import GqlWs, subscribed, two_workers

# Mutations over fresh connections, which the kernel spreads over both workers, though not evenly on a busy
# machine: at least MIN_WRITES, and on until both workers have handled some (at most MAX_WRITES).
MIN_WRITES, MAX_WRITES = 12, 200


@pytest.fixture
async def workers(engine: Any) -> Any:
    async with two_workers() as (base, pids, redis):
        assert len(pids) == 2, "both workers answer"
        yield base, redis


async def _call(base: str, query: str, variables: dict[str, Any], token: str | None = None) -> tuple[int, Any]:
    """(the worker that answered, data), over one fresh connection."""
    headers = {"authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        pid = int((await http.get("/healthz")).json()["worker"])
        body = (await http.post("/graphql", json={"query": query, "variables": variables}, headers=headers)).json()
    assert "errors" not in body, body
    return pid, next(iter(body["data"].values()))


async def _user(base: str, name: str) -> tuple[str, int, str]:
    email = f"{name}-{time.time_ns()}@example.org"
    await _call(base, 'mutation($e: String!) { registerUser(email: $e, password: "long password") { success } }',
                {"e": email})
    _, login = await _call(base, 'mutation($e: String!) { login(email: $e, password: "long password") '
                                 '{ token author { id slug } } }', {"e": email})
    return login["token"], login["author"]["id"], login["author"]["slug"]


async def test_a_subscriber_on_one_worker_hears_mutations_handled_by_the_other(workers: Any) -> None:
    base, redis = workers
    author_token, author_id, _ = await _user(base, "live-author")
    reader_token, _, _ = await _user(base, "live-reader")
    _, draft = await _call(base, 'mutation { create_draft(draft_input: {title: "Через воркеры", body: "<p>b</p>"}) '
                                 '{ draft { id } } }', {}, author_token)
    _, published = await _call(base, "mutation($id: Int!) { publish_draft(draft_id: $id) { shout { id } } }",
                               {"id": draft["draft"]["id"]}, author_token)
    shout_id = published["shout"]["id"]
    async with GqlWs.connect(base) as personal, GqlWs.connect(base) as watcher:
        await personal.init({"token": author_token})
        await personal.subscribe("n", "subscription { notifications { entity_id action data } }")
        await watcher.init()
        await watcher.subscribe("r", "subscription($s: Int!) { shout_reactions(shout_id: $s) { action "
                                     "reaction { id body } } }", {"s": shout_id})
        await subscribed(redis, keys.channel_user(author_id))
        await subscribed(redis, keys.channel_shout(shout_id))
        handled_by: set[int] = set()
        writes = 0
        for n in range(MAX_WRITES):
            if n >= MIN_WRITES and len(handled_by) == 2:
                break
            pid, created = await _call(base, "mutation($s: Int!, $b: String!) { create_reaction(reaction: "
                                             "{kind: COMMENT, shout: $s, body: $b}) { reaction { id } } }",
                                       {"s": shout_id, "b": f"комментарий {n}"}, reader_token)
            handled_by.add(pid)
            writes += 1
            comment = created["reaction"]["id"]
            heard = (await personal.next_message(wait=1.0))["payload"]["data"]["notifications"]
            assert (heard["entity_id"], heard["action"]) == (comment, "create")
            seen = (await watcher.next_message(wait=1.0))["payload"]["data"]["shout_reactions"]
            assert seen == {"action": "create", "reaction": {"id": comment, "body": f"комментарий {n}"}}
    # Both workers handled some of the mutations, so whichever holds the sockets heard the other's.
    assert len(handled_by) == 2, handled_by
    _, listed = await _call(base, "query($a: Int!) { load_notifications(after: $a, limit: 50) { total unread "
                                  "notifications { reactions } } }", {"a": 0}, author_token)
    assert listed["total"] == 1 and listed["unread"] == 1
    assert len(listed["notifications"][0]["reactions"]) == writes
