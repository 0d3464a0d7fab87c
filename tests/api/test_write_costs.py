"""What a comment, a vote and a follow cost: SQL statements, and Redis round trips before and after the answer,
counted over HTTP (the README says these numbers). The test fails when a write grows; the control shows the
count sees the statements a write adds (a vote's, beside a comment's)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from app.main import create_app
from resolvers.deps import Deps
from tests.cache.test_cache_read_path import ANSWERED, marking_answers
from tests.conftest import Counter, single_redis
from tests.helpers import Api, pipelines_sent

pytestmark = single_redis  # counts one Redis server's round trips

COMMENT = ("mutation($s: Int!, $r: Int) { create_reaction(reaction: {kind: COMMENT, shout: $s, body: \"a comment\", "
           "reply_to: $r}) { error reaction { id } } }")
VOTE = "mutation($s: Int!, $k: ReactionKind!) { create_reaction(reaction: {kind: $k, shout: $s}) { error } }"
FOLLOW = "mutation($t: String!) { follow(what: TOPIC, slug: $t) { error } }"
UNFOLLOW = "mutation($t: String!) { unfollow(what: TOPIC, slug: $t) { error } }"


@dataclass(frozen=True)
class Cost:
    statements: int  # SQL statements sent (BEGIN and COMMIT are not statements of the driver's cursor)
    before: int  # Redis round trips before the answer went out
    after: int  # ... and after it


# At most what each write costs; a write that grows fails here. A comment on PostgreSQL is two statements, each its
# own transaction (resolvers/comment_driver.py): no BEGIN or COMMIT either; the first of a reader on a shout joins
# its discussion in the same statement. Answered right after its invalidation, it sets no grace and its live
# messages go out with its moves (cache/refresh.py `closing`). It queues its shout's authors' digest, which a
# later comment of the same hour finds queued by this worker already (cache/messaging/delayed.py `enqueue_once`).
# The first vote has no vote to replace.
BUDGET = {
    "first comment on a shout": Cost(statements=2, before=3, after=1),
    "comment": Cost(statements=2, before=3, after=0),
    "vote": Cost(statements=5, before=4, after=1),
    "vote replaced": Cost(statements=6, before=4, after=1),
    "follow": Cost(statements=5, before=4, after=0),
    "unfollow": Cost(statements=3, before=4, after=0),
}


async def _costs(deps: Deps, settings: Any, api: Api, sql_counter: Counter, warm_on: int,
                 writes: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Cost]:
    user = await api.user()
    app = create_app(settings, deps=deps)
    measured: dict[str, Cost] = {}
    recording: list[Any] = []  # the round trips being recorded, where the answer's mark goes
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=marking_answers(app, lambda: recording)),
                                 base_url="http://test", headers={"authorization": f"Bearer {user.token}"}) as http:
        # as on a live site: the viewer's session and account read once, the scripts loaded into Redis
        for query, variables in ((FOLLOW, {"t": "culture"}), (UNFOLLOW, {"t": "culture"}),
                                 (COMMENT, {"s": warm_on, "r": None})):
            await http.post("/graphql", json={"query": query, "variables": variables})
        for name, query, variables in writes:
            sql_counter.reset()
            with pipelines_sent() as sent:
                recording = sent
                answer = (await http.post("/graphql", json={"query": query, "variables": variables})).json()
            assert "errors" not in answer and next(iter(answer["data"].values()))["error"] is None, answer
            answered = sent.index([ANSWERED])
            measured[name] = Cost(sql_counter.count, answered, len(sent) - answered - 1)
            if name == "comment":
                variables["r"] = answer["data"]["create_reaction"]["reaction"]["id"]
    return measured


async def _page(api: Api) -> list[int]:
    return [s["id"] for s in await api("{ load_shouts_by(options: {limit: 4}) { id } }")]


async def test_a_comment_a_vote_and_a_follow_cost_no_more_than_their_budget(
        deps: Deps, settings: Any, api: Api, sql_counter: Counter) -> None:
    shouts = await _page(api)
    comment = {"s": shouts[0], "r": None}
    measured = await _costs(deps, settings, api, sql_counter, shouts[3], [
        ("first comment on a shout", COMMENT, dict(comment)), ("comment", COMMENT, comment),
        ("vote", VOTE, {"s": shouts[1], "k": "LIKE"}), ("vote replaced", VOTE, {"s": shouts[1], "k": "DISLIKE"}),
        ("follow", FOLLOW, {"t": "music"}), ("unfollow", UNFOLLOW, {"t": "music"})])
    grown = {name: (cost, BUDGET[name]) for name, cost in measured.items()
             if cost.statements > BUDGET[name].statements or cost.before > BUDGET[name].before
             or cost.after > BUDGET[name].after}
    assert not grown, grown


@pytest.mark.parametrize("case", ["control: a vote"])
async def test_the_count_sees_a_statement_more(deps: Deps, settings: Any, api: Api, sql_counter: Counter,
                                              case: str) -> None:
    shouts = await _page(api)
    measured = await _costs(deps, settings, api, sql_counter, shouts[3], [
        ("comment", COMMENT, {"s": shouts[2], "r": None}), ("vote", VOTE, {"s": shouts[2], "k": "LIKE"})])
    # a vote reads the votes it may replace and takes their lock in its transaction: more than a comment sends
    assert measured["vote"].statements > BUDGET["comment"].statements
