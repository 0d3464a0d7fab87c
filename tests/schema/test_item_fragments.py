"""Items of a page kept rendered one by one (schema/engine/item_fragments.py): after a comment moves a page of
reactions, only the new item is executed and the others are placed as the JSON they were sent as, the
same bytes a full execution gives; an item whose author is renamed is executed again, the others not;
a selection that reads past what an item's stamp covers keeps no item; and a page computed cold (its list
absent, or kept before the epoch moved) neither looks for items nor keeps any."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest
from prometheus_client import REGISTRY
from redis.asyncio import Redis

from app.main import create_app
from cache import keys
from config.settings import Settings
from resolvers.deps import Deps
from schema.engine.execution import PlainFieldsFirst
from tests.helpers import Api, User

PAGE = ("query { load_reactions_by(by: {}, limit: 6) { id kind body created_at created_by { id slug name } "
        "shout { id slug } stat { rating comments_count } } }")
COMMENT = "mutation($r: ReactionInput!) { create_reaction(reaction: $r) { error } }"
RENAME = "mutation($n: String) { update_author(profile: {name: $n}) { error } }"


@pytest.fixture(params=[0, None], ids=["response-cache-off", "response-cache-on"])
async def http(request: pytest.FixtureRequest, deps: Deps, settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The app with the response cache off (items kept on their own) and on (kept with the response)."""
    changed = {} if request.param is None else {"response_cache_ttl": request.param}
    app = create_app(settings.model_copy(update=changed), deps=deps)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        yield client


def _item_reads() -> tuple[float, float]:
    """Rendered items read so far: (current, missing or outdated)."""
    def sample(result: str) -> float:
        return REGISTRY.get_sample_value("discours_cache_reads_total",
                                         {"layer": "value", "family": "rendered item", "result": result}) or 0.0

    return sample("hit"), sample("miss")


async def _page(http: httpx.AsyncClient, query: str = PAGE) -> tuple[bytes, tuple[float, float]]:
    """The page's body, and how many of its items were read kept and not."""
    hits, misses = _item_reads()
    response = await http.post("/graphql", json={"query": query})
    assert response.status_code == 200 and b'"errors"' not in response.content, response.text
    after = _item_reads()
    return response.content, (after[0] - hits, after[1] - misses)


async def _items_kept(redis: Redis) -> int:
    return len([key async for key in redis.scan_iter(match="item:*", count=1000)])


async def _commented(api: Api, shout: int, *by: User) -> None:
    for n, user in enumerate(by):
        await api(COMMENT, {"r": {"kind": "COMMENT", "shout": shout, "body": f"comment {n}"}}, user)


async def _forget(redis: Redis, *patterns: str) -> None:
    for pattern in patterns:
        async for key in redis.scan_iter(match=pattern, count=1000):
            await redis.unlink(key)


async def _fresh(http: httpx.AsyncClient, redis: Redis) -> bytes:
    """The page executed whole: nothing rendered kept (answers, items, responses)."""
    await _forget(redis, "item:*", "rendered:*", "response:*")
    return (await _page(http))[0]


async def _six_comments(api: Api) -> tuple[User, int]:
    """A shout's author and the shout, which another reader commented on six times: the page's six items."""
    author, reader = await api.user(), await api.user()
    shout = await api.published(author)
    await _commented(api, shout, *[reader] * 6)
    return author, shout


async def _kept(http: httpx.AsyncClient, redis: Redis) -> bytes:
    """The page read cold (its list kept, no item), then computed again from its kept list: its items kept."""
    await _page(http)
    return await _fresh(http, redis)


async def test_a_page_computed_cold_neither_looks_for_nor_keeps_items(http: httpx.AsyncClient, deps: Deps,
                                                                      redis: Redis) -> None:
    api = Api(http, deps)
    author, shout = await _six_comments(api)
    _, reads = await _page(http)
    assert reads == (0, 0) and await _items_kept(redis) == 0, "its list absent: cold"
    _, reads = await _page(http, PAGE.replace("id kind", "kind id"))  # another root key, the same list, kept
    assert reads == (0, 6) and await _items_kept(redis) == 6, "its list kept: items looked for, and kept"

    await _forget(redis, "item:*")
    await deps.cache.invalidate_tags([keys.GLOBAL_TAG])  # a bulk change, a recovery: the epoch moves
    _, reads = await _page(http)
    assert reads == (0, 0) and await _items_kept(redis) == 0, "its list kept before the epoch moved: cold"

    await _commented(api, shout, author)  # moves the list's own tag: a page read under writes
    _, reads = await _page(http)
    assert reads == (0, 6) and await _items_kept(redis) == 6


async def test_after_a_comment_only_the_new_item_is_executed(http: httpx.AsyncClient, deps: Deps,
                                                              redis: Redis) -> None:
    api = Api(http, deps)
    author, shout = await _six_comments(api)
    first = await _kept(http, redis)
    assert await _items_kept(redis) == 6

    await _commented(api, shout, author)  # moves the page's list: the page is computed again
    body, (hits, misses) = await _page(http)
    assert (hits, misses) == (5, 1), "the five items the comment left as they were are placed as kept"
    newest = orjson.loads(body)["data"]["load_reactions_by"]
    assert newest[0]["created_by"]["id"] == author.id
    assert newest[1:] == orjson.loads(first)["data"]["load_reactions_by"][:5]
    assert body == await _fresh(http, redis), "the same bytes as the page executed whole"


async def test_an_item_placed_rendered_has_no_selection_collected(http: httpx.AsyncClient, deps: Deps, redis: Redis,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The list's loop hands a placed item on as it is: only the new item's selection is collected and
    executed (control: the page executed whole collects all six)."""
    api = Api(http, deps)
    author, shout = await _six_comments(api)
    await _kept(http, redis)
    collected: list[str] = []
    original = PlainFieldsFirst.collect_subfields

    def counted(self: PlainFieldsFirst, return_type: Any, field_details_list: Any) -> Any:
        collected.append(return_type.name)
        return original(self, return_type, field_details_list)

    monkeypatch.setattr(PlainFieldsFirst, "collect_subfields", counted)
    await _commented(api, shout, author)
    collected.clear()
    _, reads = await _page(http)
    assert reads == (5, 1) and collected.count("Reaction") == 1
    collected.clear()
    await _fresh(http, redis)
    assert collected.count("Reaction") == 6


async def test_an_item_whose_author_is_renamed_is_executed_again(http: httpx.AsyncClient, deps: Deps,
                                                                  redis: Redis) -> None:
    api = Api(http, deps)
    author, renamed, kept = await api.user(), await api.user(), await api.user()
    shout = await api.published(author)
    await _commented(api, shout, renamed, kept, renamed, kept, renamed, kept)
    await _kept(http, redis)

    await api(RENAME, {"n": "a new name"}, renamed)  # the author's tag moves; the list's does not
    body, (hits, misses) = await _page(http)
    assert (hits, misses) == (3, 3), "the renamed author's three items executed again, the others placed"
    items = orjson.loads(body)["data"]["load_reactions_by"]
    assert [item["created_by"]["name"] for item in items if item["created_by"]["id"] == renamed.id] == [
        "a new name"] * 3
    assert body == await _fresh(http, redis)


async def test_a_selection_reading_more_than_an_items_stamp_covers_keeps_no_item(
        http: httpx.AsyncClient, deps: Deps, redis: Redis) -> None:
    """An author's counters are not of the author's entity: a page that reads them is executed as ever."""
    api = Api(http, deps)
    author, reader = await api.user(), await api.user()
    await _commented(api, await api.published(author), reader, reader)
    counted = "query { load_reactions_by(by: {}, limit: 2) { id created_by { id stat { comments } } } }"
    for query in (counted, counted.replace("stat { comments }", "... on Author { stat { comments } }")):
        _, reads = await _page(http, query)
        assert reads == (0, 0) and await _items_kept(redis) == 0
    _, reads = await _page(http, "query { load_reactions_by(by: {}, limit: 2) { id ...A } } "
                                 "fragment A on Reaction { created_by { id name } shout { slug } }")
    assert reads == (0, 2) and await _items_kept(redis) == 2


async def test_not_beside_a_private_field(deps: Deps, redis: Redis, http: httpx.AsyncClient) -> None:
    """A signed-in reader's private field beside the page: not a public answer, so nothing rendered."""
    api = Api(http, deps)
    author, reader = await api.user(), await api.user()
    await _commented(api, await api.published(author), reader)
    await api("query { me { author { id } } load_reactions_by(by: {}, limit: 1) { id body } }", user=reader)
    assert await _items_kept(redis) == 0
