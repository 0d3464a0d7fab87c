"""Signed-in GraphQL calls for tests: users with roles, one call helper; live structures against SQL; waiting
for a condition instead of for a time; the project's root, for tests in any folder."""

from __future__ import annotations

import asyncio
import inspect
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from app.http.hit_reads import hit_reads_of
from cache import keys
from cache.live.boards import COMPLETE, FLOOR, board_query
from cache.redis import coalesce
from cache.redis.seam import Command, queued_commands
from orm import CommunityAuthor
from resolvers.deps import Deps
from resolvers.writes import transaction
from triggers.listeners import INFO_SINK
from triggers.sink import CacheSink

ROOT = Path(__file__).resolve().parent.parent  # the project's root

PASSWORD = "correct horse battery"


def sink_of(deps: Deps) -> CacheSink:
    """The sink the commits of `deps.db`'s sessions hand their invalidations to."""
    return deps.db.kw["info"][INFO_SINK]  # type: ignore[attr-defined, no-any-return]


async def until(condition: Callable[[], bool | Awaitable[bool]], what: str, *, deadline: float = 30.0,
                every: float = 0.02) -> None:
    """Wait until `condition()` holds (it may be a coroutine function), checking every `every` seconds;
    fail naming `what` after `deadline` seconds. A test waits for what it needs, never for a fixed time:
    on a slow machine it waits longer, on a fast one not at all."""
    give_up = time.monotonic() + deadline
    while True:
        held = condition()
        if inspect.isawaitable(held):
            held = await held
        if held:
            return
        if time.monotonic() > give_up:
            raise AssertionError(f"waited {deadline:.0f} s for: {what}")
        await asyncio.sleep(every)


@dataclass
class User:
    id: int
    slug: str
    token: str


class Api:
    def __init__(self, client: Any, deps: Deps) -> None:
        self.client = client
        self.deps = deps

    async def count_hit_reads(self) -> int:
        """Count now the reads that response-cache hits noted (app/http/hit_reads.py), instead of on its timer."""
        return await hit_reads_of(self.client._transport.app).flush()

    async def raw(self, query: str, variables: dict[str, Any] | None = None, user: User | None = None,
                  headers: dict[str, str] | None = None) -> Any:
        self.client.cookies.clear()
        headers = {**(headers or {}), **({"authorization": f"Bearer {user.token}"} if user else {})}
        response = await self.client.post("/graphql", json={"query": query, "variables": variables or {}},
                                          headers=headers)
        assert response.status_code == 200, response.text
        return response.json()

    async def __call__(self, query: str, variables: dict[str, Any] | None = None, user: User | None = None,
                       headers: dict[str, str] | None = None) -> Any:
        body = await self.raw(query, variables, user, headers)
        assert "errors" not in body, body["errors"]
        data = body["data"]
        return next(iter(data.values())) if len(data) == 1 else data

    async def error(self, query: str, variables: dict[str, Any] | None = None, user: User | None = None) -> str:
        body = await self.raw(query, variables, user)
        assert body.get("errors"), body
        return str(body["errors"][0]["extensions"]["code"])

    async def published(self, author: User, topic: int | None = None) -> int:
        """A shout `author` drafted and published now (in `topic`, its main one, if given): its id."""
        draft: dict[str, Any] = {"title": "Событие", "body": "<p>b</p>", "slug": f"ev-{uuid.uuid4().hex[:10]}"}
        if topic is not None:
            draft["topic_ids"], draft["main_topic_id"] = [topic], topic
        created = await self("mutation($d: DraftInput!) { create_draft(draft_input: $d) { draft { id } } }",
                             {"d": draft}, author)
        result = await self("mutation($id: Int!) { publish_draft(draft_id: $id) { shout { id } } }",
                            {"id": created["draft"]["id"]}, author)
        return int(result["shout"]["id"])

    async def user(self, *roles: str, email: str | None = None) -> User:
        email = email or f"u-{uuid.uuid4().hex[:12]}@example.org"
        await self("mutation($e: String!, $p: String!) { registerUser(email: $e, password: $p, name: $e) "
                   "{ success } }", {"e": email, "p": PASSWORD})
        login = await self("mutation($e: String!, $p: String!) { login(email: $e, password: $p) "
                           "{ token author { id slug } } }", {"e": email, "p": PASSWORD})
        user = User(id=login["author"]["id"], slug=login["author"]["slug"], token=login["token"])
        if roles:
            async with transaction(self.deps) as session:
                await session.execute(update(CommunityAuthor).where(
                    CommunityAuthor.author == user.id, CommunityAuthor.community == 1).values(
                    roles=",".join(("reader", "author", *roles))))
        return user


async def built_ids(redis: Redis, kind: str, ids: Iterable[int], name: str) -> list[int]:
    epoch = await redis.get(keys.live_epoch(kind))
    flags = [await redis.hget(keys.live_meta(kind, i), name) for i in ids]
    return [i for i, flag in zip(ids, flags, strict=True) if flag is not None and flag == epoch]


async def board_equals_sql(session: AsyncSession, redis: Redis, board: str) -> int:
    """A built board holds exactly the top of SQL above its floor, and nothing below it scores more;
    returns 1 if it was built, 0 if not."""
    if not await built_ids(redis, keys.board_kind(board), [0], board):
        return 0
    stored = [(m.decode(), score) for m, score in await redis.zrevrange(keys.leaderboard(board), 0, -1,
                                                                         withscores=True)]
    floor_at = [m for m, _ in stored].index(FLOOR)
    floor = stored[floor_at][1]
    truth = (await session.execute(board_query(board)(10**6))).all()
    above = [(int(m), int(score)) for m, score in stored[:floor_at]]
    assert above == [(i, int(sc)) for i, sc in truth[:len(above)]], board
    assert len(truth) == len(above) if floor <= COMPLETE else truth[len(above)][1] <= floor, board
    return 1


@contextmanager
def pipelines_sent() -> Iterator[list[list[tuple[Any, ...]]]]:
    """Each pipeline sent meanwhile, as its commands' arguments, in order: the coalescer's round trips
    (cache/redis/coalesce.py) and the pipelines that keep their own (one server's: a cluster pipeline is another
    class, hence `single_redis` on the tests that count them)."""
    sent: list[list[tuple[Any, ...]]] = []
    execute, execute_pipelined = Pipeline.execute, coalesce.execute_pipelined

    async def recorded(self: Pipeline, *args: Any, **kwargs: Any) -> Any:
        sent.append([command for command, _options in queued_commands(self)])
        return await execute(self, *args, **kwargs)

    async def recorded_coalesced(client: Any, commands: list[Command], **options: Any) -> list[Any]:
        sent.append([command for command, _options in commands])
        return await execute_pipelined(client, commands, **options)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Pipeline, "execute", recorded)
        patch.setattr(coalesce, "execute_pipelined", recorded_coalesced)
        yield sent


async def inside_one_window(window: int, needed: float = 15.0) -> None:
    """Rate limits count in fixed windows of `window` seconds (auth/throttle.py: a counter per
    `time // window`). A test whose attempts must fall in one window waits, when less than `needed`
    seconds of the current one are left, for the next: a window that turned between two attempts started
    their count again, and a cold search test once saw its third search allowed so."""
    left = window - time.time() % window
    if left < needed:
        await asyncio.sleep(left + 0.05)
