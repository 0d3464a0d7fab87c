"""A page of shouts loads what its selection asks of their relations first, together (schema/pages.py):
the nested fields then answer from the request's loaders at once, without awaiting; a load that fails
leaves its error to the nested fields that need it."""

from __future__ import annotations

from typing import Any

import pytest

import schema.context
from schema.context import _held

PAGE = """query($o: LoadShoutsOptions) { load_shouts_by(options: $o) { id title
    main_topic { slug stat { shouts } } topics { slug } authors { id slug stat { shouts followers } }
    created_by { slug } community { slug } stat { rating comments_count viewed views_count } } }"""


@pytest.fixture
def misses(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The relation fields that had to await their loader (the page had not loaded their value)."""
    found: list[Any] = []

    def counted(loader: Any, key: Any) -> tuple[bool, Any]:
        held, value = _held(loader, key)
        if not held:
            found.append(key)
        return held, value

    monkeypatch.setattr(schema.context, "_held", counted)
    return found


async def test_a_pages_relations_are_loaded_before_its_fields_ask(uncached_client: Any, misses: list[Any]) -> None:
    response = await uncached_client.post("/graphql", json={"query": PAGE, "variables": {"o": {"limit": 20}}})
    body = response.json()
    assert "errors" not in body and len(body["data"]["load_shouts_by"]) == 20
    shout = body["data"]["load_shouts_by"][0]
    assert shout["authors"] and shout["authors"][0]["stat"]["shouts"] >= 1 and shout["stat"]["viewed"] is not None
    assert misses == []  # every relation the selection names was loaded by the page, in one go


async def test_fragments_name_relations_as_fields_do(uncached_client: Any, misses: list[Any]) -> None:
    """The selection is read through named and inline fragments too (and, once per parsed document,
    kept: the second request of the same text is read from what the first one found)."""
    query = """query($o: LoadShoutsOptions) { load_shouts_by(options: $o) { ...card } }
        fragment card on Shout { id ... on Shout { authors { ...who stat { rating } } } }
        fragment who on Author { slug stat { shouts } }"""
    for _ in range(2):
        body = (await uncached_client.post("/graphql", json={"query": query, "variables": {"o": {"limit": 10}}})).json()
        assert "errors" not in body and body["data"]["load_shouts_by"][0]["authors"][0]["stat"]["shouts"] >= 1
    assert misses == []


async def test_a_page_of_reactions_too(uncached_client: Any, misses: list[Any]) -> None:
    query = ("{ load_reactions_by(by: {}, limit: 20) { id created_by { slug stat { shouts } } "
             "shout { slug created_by { slug } } } }")
    body = (await uncached_client.post("/graphql", json={"query": query})).json()
    assert "errors" not in body and len(body["data"]["load_reactions_by"]) == 20
    # the reactions' authors and shouts at once; the shouts' own authors (a level further) are awaited
    assert 0 < len(misses) <= 20, misses


async def test_a_failed_load_fails_only_the_fields_that_need_it(uncached_client: Any, deps: Any,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("counters are unavailable")

    monkeypatch.setattr(schema.context, "get_counters", broken)
    query = "{ load_shouts_by(options: {limit: 3}) { id title stat { rating } } }"
    body = (await uncached_client.post("/graphql", json={"query": query})).json()
    assert [s["stat"] for s in body["data"]["load_shouts_by"]] == [None, None, None]
    assert all(s["title"] for s in body["data"]["load_shouts_by"])
    assert body["errors"] and all(e["path"][-1] == "stat" for e in body["errors"])


@pytest.mark.parametrize(("query", "field"), [
    ("{ get_topics_all { slug stat { shouts authors followers } } }", "get_topics_all"),
    ("{ get_authors_all { slug stat { shouts followers } } }", "get_authors_all"),
    ("{ get_communities_all { slug stat { shouts } } }", "get_communities_all"),
])
async def test_listed_entities_have_their_counters_loaded_first(uncached_client: Any, misses: list[Any],
                                                               query: str, field: str) -> None:
    """Authors, topics and communities a root field lists: their `stat`s answered at once, from counters
    loaded together before the list is executed (schema/pages.py `entities_list`)."""
    body = (await uncached_client.post("/graphql", json={"query": query})).json()
    assert "errors" not in body and len(body["data"][field]) >= 3
    assert sum(item["stat"]["shouts"] for item in body["data"][field]) > 0
    assert misses == []


async def test_a_listed_entity_without_a_stat_loads_no_counters(uncached_client: Any, deps: Any,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: without a `stat` in the selection, no counter is read."""
    read: list[str] = []
    original = schema.context.get_counters

    async def counted(kind: str, *args: Any, **kwargs: Any) -> Any:
        read.append(kind)
        return await original(kind, *args, **kwargs)

    monkeypatch.setattr(schema.context, "get_counters", counted)
    body = (await uncached_client.post("/graphql", json={"query": "{ get_topics_all { slug } }"})).json()
    assert "errors" not in body and body["data"]["get_topics_all"]
    assert read == []
    body = (await uncached_client.post("/graphql", json={"query": "{ get_topics_all { stat { shouts } } }"})).json()
    assert "errors" not in body and read == ["topic"]  # one batch for the whole list
