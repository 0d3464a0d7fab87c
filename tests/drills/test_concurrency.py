"""No stale reads across worker processes, and a control run that shows the test can find them.

Two uvicorn worker processes on the test PostgreSQL and a Redis database of their own; writers change
author names, comment threads and follows; readers read them through the cache at the same time (the
response cache included: anonymous reads of public queries). A read is checked when no write of the same
user overlaps it: it must then show the state of the last write whose response had arrived before the
read started. Every response names its worker (X-Worker), and enough checked reads must come from another
worker than the write they check. Counters are not checked (they may lag).

The control runs the same load with CACHE_INVALIDATION=off (commits leave the cache as it was) and must
find stale reads: the zero above is the invalidation's doing, not the test's blindness.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.live import two_workers

USERS = 6
READERS_PER_USER = 2
OPERATIONS = 2400
KINDS = ("names", "comments", "follows")


@dataclass
class Writes:
    """One user's writes: their intervals and the state each one leaves."""

    intervals: list[tuple[float, float]] = field(default_factory=list)
    states: list[Any] = field(default_factory=list)
    workers: list[str] = field(default_factory=list)
    in_flight_since: float | None = None

    def expected(self, started: float, ended: float) -> tuple[bool, Any, str | None, float]:
        """(checkable, state, the worker that wrote it, when its answer came): not checkable when a write
        overlaps the read."""
        if self.in_flight_since is not None and self.in_flight_since <= ended:
            return False, None, None, 0.0
        state, worker, answered = None, None, 0.0
        for (sent, acked), value, writer in zip(self.intervals, self.states, self.workers, strict=True):
            if sent <= ended and acked >= started:
                return False, None, None, 0.0
            if acked < started:
                state, worker, answered = value, writer, acked
        return True, state, worker, answered


@dataclass
class Tally:
    operations: int = 0
    checked: int = 0
    crossed: int = 0  # checked reads served by another worker than the write they check
    hits: int = 0  # checked reads answered from the response cache
    stale: list[str] = field(default_factory=list)
    checked_by_kind: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    stale_by_kind: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    began: float = field(default_factory=time.monotonic)
    began_wall: float = field(default_factory=time.time)
    events: list[str] = field(default_factory=list)  # what a drill did, and when (`note`)

    def at(self, monotonic: float) -> str:
        """A moment of the run as the servers' log lines spell it, to place a stale read among them."""
        wall = self.began_wall + monotonic - self.began
        return time.strftime("%H:%M:%S", time.localtime(wall)) + f",{int(wall % 1 * 1000):03d}"

    def note(self, event: str) -> None:
        self.events.append(f"{event} at {self.at(time.monotonic())}")


async def _call(http: httpx.AsyncClient, query: str, variables: dict[str, Any],
                token: str | None = None) -> tuple[Any, httpx.Headers]:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    response = await http.post("/graphql", json={"query": query, "variables": variables}, headers=headers)
    body = response.json()
    assert "errors" not in body, body
    return body["data"], response.headers


async def _gql(http: httpx.AsyncClient, query: str, variables: dict[str, Any], token: str | None = None) -> Any:
    return (await _call(http, query, variables, token))[0]


async def test_no_stale_reads_across_two_workers(engine: Any) -> None:
    async with two_workers() as (server_url, pids, _redis):
        tally = await freshness_run(server_url)
    print(f"\nconcurrency: {tally.operations} operations on {len(pids)} worker processes; {tally.checked} reads "
          f"checked {tally.checked_by_kind} ({tally.crossed} served by another worker than the write, "
          f"{tally.hits} response-cache hits), {len(tally.stale)} stale reads")
    assert len(pids) >= 2, "both worker processes served requests"
    assert tally.operations >= 2000
    assert tally.checked >= 300
    assert tally.crossed >= 100, "too few checked reads crossed workers to show anything"
    assert min(tally.checked_by_kind.values()) >= 50, tally.checked_by_kind
    assert tally.hits >= 50, f"{tally.hits} checked reads were response-cache hits: the front was not tested"
    assert tally.stale == [], tally.stale[:5]


async def test_control_without_invalidation_finds_stale_reads(engine: Any) -> None:
    drill = {"CACHE_INVALIDATION": "off", "ENVIRONMENT": "development"}
    async with two_workers(env=drill) as (server_url, _pids, _redis):
        tally = await freshness_run(server_url)
    print(f"\ncontrol (CACHE_INVALIDATION=off): {tally.checked} reads checked, {len(tally.stale)} stale reads "
          f"{tally.stale_by_kind}")
    assert tally.checked >= 300
    for kind, stale in tally.stale_by_kind.items():  # each kind of read, not just some
        assert stale >= 10, f"with the invalidation off, {kind} reads must be stale: {tally.stale_by_kind}"


async def freshness_run(server_url: str, registered: Callable[[], Awaitable[None]] | None = None,
                        during: Callable[[Tally], Awaitable[None]] | None = None) -> Tally:
    """`registered`: awaited once the users are registered, before they sign in (a control whose server
    reads a lagging replica without care waits there until the replica has the accounts). `during`: run
    beside the load, with its tally (a drill that breaks something once the load is under way)."""
    rng = random.Random(5)
    tally = Tally()
    limits = httpx.Limits(max_connections=40, max_keepalive_connections=40)
    async with httpx.AsyncClient(base_url=server_url, limits=limits, timeout=30) as http:
        users = []
        emails = [f"conc-{n}-{time.time_ns()}@example.org" for n in range(USERS)]
        for email in emails:
            await _gql(http, "mutation($e: String!) { registerUser(email: $e, password: \"long password\") "
                             "{ success } }", {"e": email})
        if registered is not None:
            await registered()
        for n, email in enumerate(emails):
            login = await _gql(http, "mutation($e: String!) { login(email: $e, password: \"long password\") "
                                     "{ token author { id } } }", {"e": email})
            token, author_id = login["login"]["token"], login["login"]["author"]["id"]
            shout = await _gql(http, "query($o: Int) { load_shouts_by(options: {limit: 1, offset: $o}) { id } }",
                               {"o": n})
            users.append({"token": token, "id": author_id, "shout": shout["load_shouts_by"][0]["id"],
                          "target": f"author-{n + 2}", "names": Writes(), "comments": Writes(),
                          "follows": Writes()})
        budget = {"left": OPERATIONS}

        def take() -> bool:
            if budget["left"] <= 0:
                return False
            budget["left"] -= 1
            tally.operations += 1
            return True

        async def write(own: httpx.AsyncClient, user: dict[str, Any], kind: str, query: str,
                        variables: dict[str, Any], state: Any) -> None:
            log: Writes = user[kind]
            sent = time.monotonic()
            log.in_flight_since = sent
            _data, headers = await _call(own, query, variables, user["token"])
            log.intervals.append((sent, time.monotonic()))
            log.states.append(state)
            log.workers.append(headers["x-worker"])
            log.in_flight_since = None

        async def writer(user: dict[str, Any]) -> None:
            # each task has its own connection, so writers and readers land on different workers
            async with httpx.AsyncClient(base_url=server_url, timeout=30) as own:
                await writes_of(own, user)

        async def writes_of(own: httpx.AsyncClient, user: dict[str, Any]) -> None:
            seq, following, comments = 0, False, []
            while take():
                seq += 1
                choice = rng.random()
                if choice < 0.4:
                    await write(own, user, "names", "mutation($n: String) { update_author(profile: {name: $n}) "
                                "{ error } }", {"n": f"name-{seq}"}, f"name-{seq}")
                elif choice < 0.7:
                    body = f"comment-{user['id']}-{seq}"
                    comments.append(body)
                    await write(own, user, "comments", "mutation($s: Int!, $b: String) { create_reaction(reaction: "
                                "{kind: COMMENT, shout: $s, body: $b}) { error } }",
                                {"s": user["shout"], "b": body}, tuple(comments))
                else:
                    following = not following
                    mutation = "follow" if following else "unfollow"
                    await write(own, user, "follows", f"mutation($t: String!) {{ {mutation}(what: AUTHOR, slug: $t) "
                                "{ error } }", {"t": user["target"]}, following)

        async def reader(user: dict[str, Any]) -> None:
            # a fresh connection per read: the kernel hands each to either worker, so many reads cross
            fresh = httpx.Limits(max_keepalive_connections=0)
            async with httpx.AsyncClient(base_url=server_url, timeout=30, limits=fresh) as own:
                await reads_of(own, user)

        async def reads_of(http: httpx.AsyncClient, user: dict[str, Any]) -> None:
            while take():
                choice = rng.random()
                started = time.monotonic()
                if choice < 0.4:
                    data, headers = await _call(http, "query($id: Int) { get_author(author_id: $id) { name } }",
                                                {"id": user["id"]})
                    seen: Any = data["get_author"]["name"]
                    kind = "names"
                elif choice < 0.7:
                    data, headers = await _call(http, "query($s: Int!) { load_comments_branch(shout: $s, "
                                                "limit: 100) { body } }", {"s": user["shout"]})
                    seen = {c["body"] for c in data["load_comments_branch"]}
                    kind = "comments"
                else:
                    data, headers = await _call(http, "query($id: Int) { get_author_follows_authors("
                                                "author_id: $id) { slug } }", {"id": user["id"]})
                    seen = user["target"] in [a["slug"] for a in data["get_author_follows_authors"]]
                    kind = "follows"
                checkable, expected, writer, answered = user[kind].expected(started, time.monotonic())
                if not checkable or expected is None:
                    continue
                tally.checked += 1
                tally.checked_by_kind[kind] += 1
                tally.crossed += headers["x-worker"] != writer
                tally.hits += headers.get("x-cache") == "HIT"
                if kind == "comments":
                    fresh = set(expected[-100:]) <= seen if isinstance(seen, set) else False
                    stale = not fresh
                else:
                    stale = seen != expected
                if stale:
                    tally.stale_by_kind[kind] += 1
                    # where and when: enough to place it beside a drill's events (Tally.note)
                    tally.stale.append(f"{kind} of user {user['id']}: read {seen!r}, expected {expected!r} "
                                       f"(read at {tally.at(started)} by worker {headers['x-worker']}, x-cache "
                                       f"{headers.get('x-cache')}; written by worker {writer}, answered at "
                                       f"{tally.at(answered)})")

        tasks = [writer(u) for u in users] + [reader(u) for u in users for _ in range(READERS_PER_USER)]
        await asyncio.gather(*tasks, *([during(tally)] if during is not None else []))
    return tally
