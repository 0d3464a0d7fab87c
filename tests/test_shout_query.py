"""The shout-list query at its boundary (resolvers/shout_query.py, made in schema/inputs.py `shouts_query`):
what it accepts, clamps and refuses, that equal queries have equal cache keys whatever order their
filters came in, and which leaderboard answers it. Over HTTP, bad options are answered as before."""

from __future__ import annotations

from typing import Any

import pytest

from resolvers.errors import BadInput
from resolvers.paging import MAX_OFFSET
from resolvers.shout_query import (
    DEFAULT_LIMIT,
    NO_FILTERS,
    Along,
    ShoutFilters,
    ShoutsQuery,
)
from schema.enums import ShoutsOrderBy
from schema.inputs import LoadShoutsFilters, LoadShoutsOptions, shouts_query


class _Deps:
    max_page_size = 100


def test_the_defaults_are_a_first_page_of_the_newest() -> None:
    query = shouts_query(None, _Deps())  # type: ignore[arg-type]
    assert query == ShoutsQuery() and query.limit == DEFAULT_LIMIT and query.offset == 0
    assert query.order_by is None and query.order_by_desc and query.filters == NO_FILTERS


def test_options_become_one_typed_query() -> None:
    options = LoadShoutsOptions(limit=5000, offset=20, order_by=ShoutsOrderBy.rating, order_by_desc=False,
                                filters=LoadShoutsFilters(topic="t", layouts=["video", None, "article", "video"],
                                                          featured=True, reacted=True))
    query = shouts_query(options, _Deps())  # type: ignore[arg-type]
    assert query.limit == 100 and query.offset == 20  # clamped to the page size, never refused
    assert query.order_by == "rating" and not query.order_by_desc and query.reacted
    assert query.filters == ShoutFilters(topic="t", layouts=("article", "video"), featured=True)


@pytest.mark.parametrize("arguments, field", [
    ({"limit": -1}, "limit"), ({"offset": -3}, "offset"), ({"offset": MAX_OFFSET + 1}, "offset"),
    ({"order_by": "title"}, "order_by"),
])
def test_what_is_refused_names_its_field(arguments: dict[str, Any], field: str) -> None:
    with pytest.raises(BadInput) as refused:
        ShoutsQuery.of(maximum=100, **arguments)
    assert refused.value.field == field


def test_equal_queries_have_equal_keys_and_different_ones_do_not() -> None:
    one = ShoutsQuery.of(maximum=100, limit=5, filters=ShoutFilters.of(layouts=["b", "a", "b"], topic="t"))
    other = ShoutsQuery.of(maximum=100, limit=5, filters=ShoutFilters.of(topic="t", layouts=["a", "b"]))
    assert one.digest() == other.digest()
    assert one.digest() != ShoutsQuery.of(maximum=100, limit=5, offset=5, filters=one.filters).digest()
    assert one.digest() != ShoutsQuery.of(maximum=100, limit=5, filters=ShoutFilters.of(topic="u")).digest()
    assert one.filters.digest() != NO_FILTERS.digest()


def test_a_leaderboard_answers_unfiltered_lists_best_first_only() -> None:
    assert ShoutsQuery(order_by="rating").board == "shouts:rating"
    assert ShoutsQuery(order_by="views_count").board == "shouts:views"
    assert ShoutsQuery(order_by="last_commented_at").board is None  # no board keeps that order
    assert ShoutsQuery().board is None  # newest first: SQL
    assert ShoutsQuery(order_by="rating", order_by_desc=False).board is None
    assert ShoutsQuery(order_by="rating", filters=ShoutFilters(topic="t")).board is None
    assert ShoutsQuery(order_by="rating", filters=ShoutFilters(layouts=())).board is None


def test_narrowed_and_default_orders() -> None:
    query = ShoutsQuery(filters=ShoutFilters(featured=True))
    assert query.narrowed(topic="t").filters == ShoutFilters(topic="t", featured=True)
    assert query.narrowed(author="a").filters == ShoutFilters(author="a", featured=True)
    assert query.narrowed() == query
    assert query.ordered_by_default("last_commented_at").order_by == "last_commented_at"
    assert ShoutsQuery(order_by="rating").ordered_by_default("last_commented_at").order_by == "rating"


def test_what_comes_along_names_the_page_composite() -> None:
    assert Along().shape == "cards"
    assert Along(authors=True).shape == "cards-authors"
    assert Along(authors=True, topics=True).shape == "cards-authors-topics"


async def test_bad_options_over_http_are_answered_as_before(gql: Any) -> None:
    for options, field in (("{limit: -1}", "limit"), ("{limit: 5, offset: -3}", "offset")):
        for name in ("load_shouts_by", "load_shouts_search(text: \"город\", ", "load_shouts_random_top"):
            call = f"{name}options: {options})" if name.endswith(", ") else f"{name}(options: {options})"
            answer = await gql(f"{{ {call} {{ __typename }} }}")
            error = answer["errors"][0]
            assert error["extensions"]["code"] == "BAD_USER_INPUT" and error["extensions"]["field"] == field, answer
