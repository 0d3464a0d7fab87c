"""Rendered answers (schema/engine/rendered.py, cache/response/rendered.py): a root field that declares it is answered from
its rendered JSON, with the response cache off as with it on, and a write to anything the answer was made
of makes it a miss, as it makes each value one."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import orjson
import pytest
from prometheus_client import REGISTRY
from redis.asyncio import Redis

from ambient import SENT_AT_ONCE
from app.main import create_app
from cache import keys
from cache.redis.client import RedisUnavailable, make_redis
from cache.redis.coalesce import Coalescer
from cache.response.rendered import keep_rendered, read_rendered
from cache.response.responses import ResponseCache
from cache.response_capture import Capture
from cache.store import Cache
from config.settings import Settings
from resolvers import reaction_reads, shout_reads
from resolvers import topic_reads as topics
from resolvers.deps import Deps
from schema.engine import rendered as rendered_answers
from tests.conftest import single_redis
from tests.helpers import Api

ALL = "query { get_topics_all { id slug title stat { shouts followers } } }"
UPDATE = "mutation($t: TopicInput!) { update_topic(topic_input: $t) { error } }"


@pytest.fixture
async def http(deps: Deps, settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The app with the response cache off: what is not executed was answered rendered."""
    app = create_app(settings.model_copy(update={"response_cache_ttl": 0}), deps=deps)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        yield client


def _recorded(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str,
              note: Callable[..., Any] | None = None) -> list[Any]:
    """A list that grows each time the coroutine function `owner.name` runs: by `note(*its arguments)`,
    or by `name`."""
    calls: list[Any] = []
    original = getattr(owner, name)

    async def recorded(*args: Any, **kwargs: Any) -> Any:
        calls.append(note(*args) if note else name)
        return await original(*args, **kwargs)

    monkeypatch.setattr(owner, name, recorded)
    return calls


@pytest.fixture
def executed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """How many times `get_topics_all` was executed."""
    return _recorded(monkeypatch, topics, "get_topics_all")


async def _post(http: httpx.AsyncClient, query: str, variables: dict[str, Any] | None = None,
                token: str | None = None) -> bytes:
    response = await http.post("/graphql", json={"query": query, "variables": variables or {}},
                               headers={"authorization": f"Bearer {token}"} if token else {})
    assert response.status_code == 200 and b'"errors"' not in response.content, response.text
    return response.content


async def _rendered_keys(redis: Redis) -> list[bytes]:
    return [key async for key in redis.scan_iter(match="rendered:*", count=1000)]


async def test_an_answer_is_executed_once_then_sent_as_rendered(http: httpx.AsyncClient, redis: Redis,
                                                                executed: list[str], sql_counter: Any) -> None:
    first = await _post(http, ALL)
    assert executed == ["get_topics_all"] and len(kept := await _rendered_keys(redis)) == 1
    assert 0 < await redis.ttl(kept[0]) <= 66  # RENDERED_ANSWER_TTL (60 s), jittered by at most 10%
    sql_counter.reset()
    second = await _post(http, ALL)
    assert executed == ["get_topics_all"], "the second answer was executed again"
    assert second == first and sql_counter.count == 0
    topics_seen = orjson.loads(second)["data"]["get_topics_all"]
    assert len(topics_seen) >= 10 and all(t["stat"] is not None for t in topics_seen)


@single_redis
async def test_the_look_up_of_an_answer_goes_out_at_once_and_an_execution_after_a_miss_waits_to_share(
        http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sent as rendered, the answer's look-up is the request's only command: it goes out at the next turn
    of the loop, as a response-cache hit's does (cache/redis/coalesce.py `at_once`; warm rendered reads did
    11-27% more a second so, bench/RESULTS.md), not after quiet turns. An execution after a miss sends its
    commands as before, once the loop is quiet, so that a page's loaders share their round trips."""
    submitted: list[tuple[bool, bool]] = []  # (a look-up of a rendered answer, sent at once)
    submit = Coalescer.submit

    def noted(self: Coalescer, commands: Any) -> Any:
        looks_up = any((arg.decode() if isinstance(arg, bytes) else str(arg)).startswith("rendered:")
                       for args, _ in commands for arg in args)
        submitted.append((looks_up, SENT_AT_ONCE.get()))  # the flag `at_once` sets
        return submit(self, commands)

    monkeypatch.setattr(Coalescer, "submit", noted)
    await _post(http, ALL)  # a miss: looked up, executed, kept
    assert submitted[0] == (True, True) and any(not looks_up and not sent_at_once
                                                for looks_up, sent_at_once in submitted[1:]), submitted
    submitted.clear()
    await _post(http, ALL)
    assert submitted == [(True, True)]


async def test_the_same_field_asked_the_same_way_shares_it_and_any_difference_does_not(
        http: httpx.AsyncClient, redis: Redis, executed: list[str]) -> None:
    first = await _post(http, ALL)
    # another operation name, another layout of the same document: the same field node, so the same answer
    named = await _post(http, "query Everything {\n  get_topics_all { id slug title stat { shouts followers } }\n}")
    assert executed == ["get_topics_all"] and named == first
    await _post(http, "query { get_topics_all { id slug } }")  # another selection
    await _post(http, "query { all: get_topics_all { id slug title stat { shouts followers } } }")  # an alias
    await _post(http, "query { ...T } fragment T on Query { get_topics_all { id slug title stat { shouts followers } } }")
    # a spread at the root may hold several fields: executed, not kept
    assert len(executed) == 4 and len(await _rendered_keys(redis)) == 3


async def test_variables_are_part_of_the_key_with_their_defaults(http: httpx.AsyncClient, redis: Redis) -> None:
    """Two documents whose field nodes are the same text, with other defaults for the variable: other answers."""
    by_community = "get_topics_by_community(community_id: 1, limit: $n) { slug }"
    two = orjson.loads(await _post(http, f"query($n: Int = 2) {{ {by_community} }}"))["data"]
    three = orjson.loads(await _post(http, f"query($n: Int = 3) {{ {by_community} }}"))["data"]
    assert len(two["get_topics_by_community"]) == 2 and len(three["get_topics_by_community"]) == 3
    given = orjson.loads(await _post(http, f"query($n: Int = 3) {{ {by_community} }}", {"n": 2}))["data"]
    assert given == two  # the variable as given, default or not, is what keys it
    assert len(await _rendered_keys(redis)) == 2


async def test_a_write_to_what_the_answer_was_made_of_makes_it_a_miss(http: httpx.AsyncClient, deps: Deps,
                                                                       executed: list[str]) -> None:
    """A topic renamed (its own tag) and a topic created (the list's): each a miss at once. Counters are
    not tagged: like a kept response, a rendered answer shows them as they were for at most its max age."""
    api = Api(http, deps)
    editor = await api.user("editor")
    topic = orjson.loads(await _post(http, ALL))["data"]["get_topics_all"][0]
    title = f"renamed {uuid.uuid4().hex[:6]}"
    await api(UPDATE, {"t": {"slug": topic["slug"], "title": title}}, editor)
    after_rename = {t["slug"]: t for t in orjson.loads(await _post(http, ALL))["data"]["get_topics_all"]}
    assert after_rename[topic["slug"]]["title"] == title

    slug = f"t-{uuid.uuid4().hex[:8]}"
    await api("mutation($t: TopicInput!) { create_topic(topic_input: $t) { error } }", {"t": {"slug": slug}}, editor)
    assert slug in [t["slug"] for t in orjson.loads(await _post(http, ALL))["data"]["get_topics_all"]]
    assert len(executed) == 3  # each write made the rendered answer a miss, and nothing else did
    await _post(http, ALL)
    assert len(executed) == 3


async def test_beside_other_fields_it_is_read_but_not_kept(http: httpx.AsyncClient, redis: Redis,
                                                            executed: list[str]) -> None:
    both = "query { get_topics_all { id slug title stat { shouts followers } } get_communities_all { slug } }"
    await _post(http, both)
    assert executed == ["get_topics_all"] and await _rendered_keys(redis) == []
    alone = orjson.loads(await _post(http, ALL))["data"]["get_topics_all"]
    answer = orjson.loads(await _post(http, both))["data"]
    assert executed == ["get_topics_all"] * 2, "beside another field, the rendered answer was not used"
    assert answer["get_topics_all"] == alone and answer["get_communities_all"]


async def test_a_signed_in_reader_of_public_fields_gets_the_same_bytes(http: httpx.AsyncClient, deps: Deps,
                                                                        executed: list[str]) -> None:
    user = await Api(http, deps).user()
    anonymous = await _post(http, ALL)
    signed_in = await _post(http, ALL, token=user.token)
    assert signed_in == anonymous and executed == ["get_topics_all"]


async def test_an_answer_with_an_error_in_it_is_not_kept(http: httpx.AsyncClient, redis: Redis,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from schema import types

    def failing(info: Any, kind: str, entity_id: int, cls: Any) -> Any:
        raise RuntimeError("counters unavailable")

    monkeypatch.setattr(types, "_stat", failing)
    response = await http.post("/graphql", json={"query": ALL})
    body = response.json()
    assert body["errors"] and body["data"]["get_topics_all"][0]["stat"] is None
    assert await _rendered_keys(redis) == []


async def test_off_when_its_ttl_is_zero(deps: Deps, settings: Settings, redis: Redis, executed: list[str]) -> None:
    app = create_app(settings.model_copy(update={"response_cache_ttl": 0, "rendered_answer_ttl": 0}), deps=deps)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as http:
        first, second = await _post(http, ALL), await _post(http, ALL)
    assert first == second and executed == ["get_topics_all"] * 2 and await _rendered_keys(redis) == []


# --- a query of one rendered field, answered without executing (schema/engine/rendered.py answer_without_executing)

@pytest.fixture
def strawberry_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each time Strawberry executed a request (parse, validation and execution: its schema's `execute`)."""
    from schema.schema import DiscoursSchema

    return _recorded(monkeypatch, DiscoursSchema, "execute", lambda _schema, query, *_: query or "")


@pytest.fixture
def rendered_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The keys of the rendered answers looked up."""
    from schema.engine import rendered

    return _recorded(monkeypatch, rendered, "read_rendered", lambda _cache, key: key)


@pytest.mark.parametrize("accept", ["application/json", "application/graphql-response+json"])
async def test_a_query_of_one_rendered_field_is_sent_without_executing_as_execution_would(
        http: httpx.AsyncClient, strawberry_runs: list[str], rendered_reads: list[str], sql_counter: Any,
        accept: str) -> None:
    """Headers and bytes as the executed answer's, ETag included (a 304 for it), one rendered read each."""
    def ask(**headers: str) -> Any:
        return http.post("/graphql", json={"query": ALL}, headers={"accept": accept, **headers})

    executed = await ask()
    assert len(strawberry_runs) == 1 and len(rendered_reads) == 1, "a miss read the rendered answer twice"
    sql_counter.reset()
    sent = await ask()
    assert strawberry_runs == [ALL] and sql_counter.count == 0, "the second answer was executed"
    assert rendered_reads == [rendered_reads[0]] * 2
    assert sent.status_code == executed.status_code == 200 and sent.content == executed.content
    assert {k: v for k, v in sent.headers.items()} == {k: v for k, v in executed.headers.items()}
    assert sent.headers["etag"] and sent.headers["cache-control"].startswith("public, max-age=")
    unchanged = await ask(**{"if-none-match": sent.headers["etag"]})
    assert unchanged.status_code == 304 and unchanged.content == b"" and len(strawberry_runs) == 1


async def test_an_alias_is_sent_under_its_own_name_and_a_stream_is_streamed(
        http: httpx.AsyncClient, strawberry_runs: list[str]) -> None:
    """The response name is the alias; a client that asks for server-sent events gets its events, executed."""
    aliased = "query { all: get_topics_all { id slug title stat { shouts followers } } }"
    first, second = await _post(http, aliased), await _post(http, aliased)
    assert second == first and list(orjson.loads(second)["data"]) == ["all"] and len(strawberry_runs) == 1
    for _ in range(2):
        streamed = await http.post("/graphql", json={"query": aliased}, headers={"accept": "text/event-stream"})
        assert streamed.headers["content-type"].startswith("text/event-stream") and b"event: next" in streamed.content


async def test_the_response_made_of_a_rendered_answer_is_made_once_while_the_answer_stays(
        http: httpx.AsyncClient, deps: Deps, strawberry_runs: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker keeps the whole response (`{"data":{name:answer}}`) with the rendered answer it read: sent
    again, it is the same bytes, not put together again; an alias is another key, with a response of its
    own; once the answer moves, the response is made again from the new one."""
    from app.http import documents

    sent: list[bytes] = []  # each response's bytes as the view got them (held: no id is reused)
    answer = documents.answer_without_executing

    async def noted(*args: Any, **kwargs: Any) -> Any:
        key, whole = await answer(*args, **kwargs)
        if whole is not None:
            sent.append(whole.body)
        return key, whole

    monkeypatch.setattr(documents, "answer_without_executing", noted)
    aliased = ALL.replace("get_topics_all", "all: get_topics_all")
    await _post(http, ALL), await _post(http, aliased)  # executed, kept rendered
    for query in (ALL, aliased, ALL, aliased, ALL):
        await _post(http, query)
    assert len(strawberry_runs) == 2 and len(sent) == 5, "the five were sent rendered"
    assert sent[2] is sent[0] and sent[4] is sent[0] and sent[3] is sent[1], "made once each"
    assert list(orjson.loads(sent[0])["data"]) == ["get_topics_all"] and list(orjson.loads(sent[1])["data"]) == ["all"]
    await deps.cache.invalidate_tags([keys.GLOBAL_TAG])  # every answer moves
    await _post(http, ALL)  # executed again, kept rendered again
    assert await _post(http, ALL) == sent[-1] and sent[-1] is not sent[0] and len(strawberry_runs) == 3


async def test_what_execution_would_refuse_or_cannot_key_is_executed(
        http: httpx.AsyncClient, strawberry_runs: list[str], rendered_reads: list[str]) -> None:
    """Variables that do not coerce, a directive on the field, two operations and no name: each executed
    (and answered as ever), never taken from a rendered answer."""
    by_community = "query($n: Int) { get_topics_by_community(community_id: 1, limit: $n) { slug } }"
    await _post(http, by_community, {"n": 2})
    await _post(http, by_community, {"n": 2})
    assert len(strawberry_runs) == 1
    refused = (await http.post("/graphql", json={"query": by_community, "variables": {"n": "two"}})).json()
    assert refused["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT" and refused["data"] is None
    # a NUL in any variable given, used or not, is refused though the answer for {"n": 2} is kept
    nul = (await http.post("/graphql", json={"query": by_community, "variables": {"n": 2, "note": "a\u0000"}})).json()
    assert nul["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT" and len(strawberry_runs) == 3
    skipped = "query($s: Boolean!) { get_topics_all @skip(if: $s) { id slug title stat { shouts followers } } }"
    assert orjson.loads(await _post(http, skipped, {"s": True})) == {"data": {}}
    both = "query A { get_topics_all { slug } } query B { get_communities_all { slug } }"
    for _ in range(2):  # Strawberry runs the first operation; the shortcut leaves the choice to it
        assert "get_topics_all" in (await http.post("/graphql", json={"query": both})).json()["data"]
    assert len(strawberry_runs) == 6
    reads = len(rendered_reads)
    await _post(http, "query { get_communities_all { slug } }")  # a field that is not rendered: not looked up
    assert len(rendered_reads) == reads and len(strawberry_runs) == 7


async def test_documents_declaring_the_same_variables_in_another_order_share_the_answer(
        http: httpx.AsyncClient, strawberry_runs: list[str]) -> None:
    field = "get_topics_by_community(community_id: $c, limit: $n) { slug }"
    first = await _post(http, f"query($c: Int!, $n: Int) {{ {field} }}", {"c": 1, "n": 2})
    second = await _post(http, f"query($n: Int, $c: Int!) {{ {field} }}", {"n": 2, "c": 1})
    assert second == first and len(strawberry_runs) == 1


async def test_over_the_limits_it_is_refused_as_executed(deps: Deps, settings: Settings,
                                                          strawberry_runs: list[str]) -> None:
    """A rendered answer stored under a page's key is not sent once the limits refuse that page (the
    operation the request names is the one priced)."""
    page = ("query Other { get_communities_all { slug } } "
            "query Page($n: Int) { get_topics_by_community(community_id: 1, limit: $n) { slug } }")
    body = {"query": page, "variables": {"n": 3}, "operationName": "Page"}
    app = create_app(settings.model_copy(update={"response_cache_ttl": 0}), deps=deps)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as http:
        for _ in range(2):  # executed, then sent rendered: the operation named is the one looked at
            assert len((await http.post("/graphql", json=body)).json()["data"]["get_topics_by_community"]) == 3
        assert len(strawberry_runs) == 1
    strict = create_app(settings.model_copy(update={"response_cache_ttl": 0, "max_query_cost": 2}), deps=deps)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=strict), base_url="http://test") as http:
        refused = (await http.post("/graphql", json=body)).json()
    assert refused["errors"][0]["extensions"]["code"] == "QUERY_TOO_COSTLY" and len(strawberry_runs) == 2


async def test_with_the_response_cache_on_a_miss_sent_rendered_is_kept_whole(
        deps: Deps, settings: Settings, strawberry_runs: list[str], executed: list[str]) -> None:
    """Another document asking the same field: no response of its own yet, its rendered answer sent, and
    the response kept under what that answer was made of (a write makes both a miss)."""
    app = create_app(settings, deps=deps)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as http:
        await _post(http, ALL)
        named = "query Named { get_topics_all { id slug title stat { shouts followers } } }"
        first = await http.post("/graphql", json={"query": named})
        again = await http.post("/graphql", json={"query": named})
        assert [first.headers["x-cache"], again.headers["x-cache"]] == ["MISS", "HIT"]
        assert first.content == again.content and len(strawberry_runs) == 1
        editor = await Api(http, deps).user("editor")
        slug = f"t-{uuid.uuid4().hex[:8]}"
        await Api(http, deps)("mutation($t: TopicInput!) { create_topic(topic_input: $t) { error } }",
                              {"t": {"slug": slug}}, editor)
        after = await http.post("/graphql", json={"query": named})
    assert after.headers["x-cache"] == "MISS" and slug in after.text and executed == ["get_topics_all"] * 2


async def test_with_the_response_cache_on_the_rendered_answer_is_kept_in_the_responses_round_trip(
        deps: Deps, settings: Settings, redis: Redis, executed: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A miss stores its rendered field with its response, in the response's transaction: nothing is kept
    apart, and another document asking the same field is sent it without executing."""
    kept_apart = _recorded(monkeypatch, rendered_answers, "keep_rendered")
    stored: list[bool] = []
    keep = ResponseCache.keep

    async def storing(self: ResponseCache, *args: Any, **kwargs: Any) -> Any:
        stored.append(kwargs.get("also") is not None)  # with something queued beside the response
        return await keep(self, *args, **kwargs)

    monkeypatch.setattr(ResponseCache, "keep", storing)
    app = create_app(settings, deps=deps)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as http:
        first = await http.post("/graphql", json={"query": ALL})
        assert first.headers["x-cache"] == "MISS" and kept_apart == [] and stored == [True]
        assert len(await _rendered_keys(redis)) == 1
        named = await http.post("/graphql", json={"query": "query Named { get_topics_all { id slug title stat { "
                                                           "shouts followers } } }"})
    assert named.headers["x-cache"] == "MISS" and named.content == first.content and executed == ["get_topics_all"]


async def test_a_response_a_write_made_stale_is_recomputed_without_reading_its_rendered_field(
        deps: Deps, settings: Settings, redis: Redis, executed: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The rendered answer was stored with the response, under the same reads: when the response is found
    stale its rendered field is too, and is not read. A response that is merely gone (expired) still has
    its rendered field read and sent."""
    read = _recorded(monkeypatch, rendered_answers, "read_rendered")
    app = create_app(settings, deps=deps)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as http:
        api = Api(http, deps)
        editor = await api.user("editor")
        first = await http.post("/graphql", json={"query": ALL})
        assert first.headers["x-cache"] == "MISS" and read == ["read_rendered"] and executed == ["get_topics_all"]
        slug = f"t-{uuid.uuid4().hex[:8]}"
        await api("mutation($t: TopicInput!) { create_topic(topic_input: $t) { error } }", {"t": {"slug": slug}},
                  editor)
        after = await http.post("/graphql", json={"query": ALL})
        assert after.headers["x-cache"] == "MISS" and slug in after.text
        assert read == ["read_rendered"] and executed == ["get_topics_all"] * 2  # recomputed, nothing read
        async for key in redis.scan_iter(match="response:*", count=1000):  # gone, as on expiry
            await redis.delete(key)
        gone = await http.post("/graphql", json={"query": ALL})
    assert gone.headers["x-cache"] == "MISS" and gone.content == after.content
    assert read == ["read_rendered"] * 2 and executed == ["get_topics_all"] * 2  # sent as rendered


# --- pages of shouts and reactions ----------------------------------------------------------------------

SHOUTS = ("query($o: LoadShoutsOptions) { load_shouts_by(options: $o) { id title slug "
          "main_topic { slug title } authors { id slug name } stat { comments_count } } }")
REACTIONS = "query { load_reactions_by(by: {}, limit: 5) { id body created_by { id name } shout { id slug } } }"
NEWEST = {"o": {"limit": 5, "offset": 0}}


async def test_a_page_of_shouts_is_sent_rendered_until_a_write_to_any_of_its_parts(
        http: httpx.AsyncClient, deps: Deps, sql_counter: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The newest shouts with their authors and main topics: executed once, then the same bytes without
    executing it; an author renamed, a topic renamed and a shout published each make it a miss at once."""
    executed = _recorded(monkeypatch, shout_reads, "load_shouts_by")
    api = Api(http, deps)
    author, editor = await api.user(), await api.user("editor")
    topic = orjson.loads(await _post(http, ALL))["data"]["get_topics_all"][0]
    shout = await api.published(author, int(topic["id"]))
    first = await _post(http, SHOUTS, NEWEST)
    assert orjson.loads(first)["data"]["load_shouts_by"][0]["id"] == shout
    sql_counter.reset()
    assert await _post(http, SHOUTS, NEWEST) == first and sql_counter.count == 0 and len(executed) == 1

    def newest(body: bytes) -> dict[str, Any]:
        return orjson.loads(body)["data"]["load_shouts_by"][0]  # type: ignore[no-any-return]

    name = f"Renamed {uuid.uuid4().hex[:6]}"
    await api("mutation($n: String) { update_author(profile: {name: $n}) { error } }", {"n": name}, author)
    assert newest(await _post(http, SHOUTS, NEWEST))["authors"][0]["name"] == name
    title = f"retitled {uuid.uuid4().hex[:6]}"
    await api(UPDATE, {"t": {"slug": topic["slug"], "title": title}}, editor)
    assert newest(await _post(http, SHOUTS, NEWEST))["main_topic"]["title"] == title
    later = await api.published(author, int(topic["id"]))
    assert newest(await _post(http, SHOUTS, NEWEST))["id"] == later
    assert len(executed) == 4  # each write made it a miss, and nothing else did


async def test_a_page_of_reactions_is_sent_rendered_until_a_comment(
        http: httpx.AsyncClient, deps: Deps, sql_counter: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    executed = _recorded(monkeypatch, reaction_reads, "load_reactions_by")
    api = Api(http, deps)
    author, reader = await api.user(), await api.user()
    topic = orjson.loads(await _post(http, ALL))["data"]["get_topics_all"][0]
    shout = await api.published(author, int(topic["id"]))
    first = await _post(http, REACTIONS)
    sql_counter.reset()
    assert await _post(http, REACTIONS) == first and sql_counter.count == 0 and len(executed) == 1
    await api("mutation($r: ReactionInput!) { create_reaction(reaction: $r) { error } }",
              {"r": {"kind": "COMMENT", "shout": shout, "body": "rendered no more"}}, reader)
    newest = orjson.loads(await _post(http, REACTIONS))["data"]["load_reactions_by"][0]
    assert newest["body"] == "rendered no more" and newest["created_by"]["id"] == reader.id
    assert len(executed) == 2


# --- the store itself (cache/response/rendered.py) ------------------------------------------------------------

def _capture(**seen: Any) -> Capture:
    capture = Capture(generations={"topics": b"7"})
    for name, value in seen.items():
        setattr(capture, name, value)
    return capture


def _sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_an_answer_is_kept_with_a_jittered_ttl_and_read_back_as_the_same_bytes(cache: Cache,
                                                                                     redis: Redis) -> None:
    await redis.set(keys.generation("topics"), b"7")
    kept = [await keep_rendered(cache, f"rendered:t{n}", b'[{"id":1}]', _capture(), 60) for n in range(20)]
    assert kept == [True] * 20
    ttls = [await redis.ttl(f"rendered:t{n}") for n in range(20)]
    assert all(55 <= ttl <= 66 for ttl in ttls) and max(ttls) > 60, ttls  # seed 004: expiries spread
    hits = _sample("discours_cache_reads_total", layer="value", family="rendered", result="hit")
    first = await read_rendered(cache, "rendered:t0")
    assert first is not None and first.body == b'[{"id":1}]'
    assert await read_rendered(cache, "rendered:t0") is first  # not decoded again
    assert _sample("discours_cache_reads_total", layer="value", family="rendered", result="hit") == hits + 2
    await redis.set(keys.generation("topics"), b"8")
    assert await read_rendered(cache, "rendered:t0") is None  # a write to what it was made of


@pytest.mark.parametrize("seen", [{"read_viewer": True}, {"views": [5]}, {"generations": {}}, {"storable": False}])
async def test_what_read_the_viewer_counted_a_view_or_read_nothing_trustworthy_is_not_kept(
        cache: Cache, redis: Redis, seen: dict[str, Any]) -> None:
    assert await keep_rendered(cache, "rendered:x", b"[]", _capture(**seen), 60) is False
    assert await redis.exists("rendered:x") == 0


async def test_nothing_is_kept_while_redis_is_skipped_and_a_failed_write_trips_the_breaker(cache: Cache,
                                                                                            redis: Redis) -> None:
    cache.trip(RedisUnavailable("a test"), "a test")
    assert await keep_rendered(cache, "rendered:y", b"[]", _capture(), 60) is False
    assert await redis.exists("rendered:y") == 0

    broken = Cache(make_redis("redis://127.0.0.1:1/0"), breaker_seconds=30)  # nothing listens there
    failed = _sample("discours_redis_errors_total", during="rendered write")
    try:
        assert await keep_rendered(broken, "rendered:y", b"[]", _capture(), 60) is False
    finally:
        await broken.redis.aclose()
    assert not broken.available
    assert _sample("discours_redis_errors_total", during="rendered write") == failed + 1
