"""The list queries at their boundary (resolvers/shout_query.py, reaction_query.py, author_query.py, made in
schema/inputs.py): what each accepts, clamps and refuses, that equal queries have equal cache keys whatever
order their filters came in, and which leaderboard answers a shout list. Over HTTP, bad options are
answered as before."""

from __future__ import annotations

from typing import Any

import pytest

from resolvers.author_query import WINDOW_STEP, AuthorsQuery, Window
from resolvers.errors import BadInput
from resolvers.paging import MAX_OFFSET
from resolvers.reaction_query import ReactionsQuery
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


def test_a_reaction_query_checks_its_order_and_keys_its_kinds_as_a_set() -> None:
    with pytest.raises(BadInput) as refused:
        ReactionsQuery.of(maximum=100, sort="loudest")
    assert refused.value.field == "sort"
    one = ReactionsQuery.of(maximum=100, kinds=["QUOTE", "COMMENT", "QUOTE"], shout="s")
    assert one.kinds == ("COMMENT", "QUOTE") and one.sort == "newest" and one.limit == 50
    assert one.digest() == ReactionsQuery.of(maximum=100, kinds=["COMMENT", "QUOTE"], shout="s").digest()
    assert one.digest() != ReactionsQuery.of(maximum=100, kinds=["COMMENT"], shout="s").digest()
    assert one.digest() != ReactionsQuery.of(maximum=100, kinds=["COMMENT", "QUOTE"], shout="s", sort="oldest").digest()
    assert one.only_filters("shout", "kinds") and not one.only_filters("shout")
    assert ReactionsQuery.of(maximum=100, limit=500).limit == 100


def test_an_author_query_fixes_its_window_to_the_minute() -> None:
    now = 1_800_000_030.0
    query = AuthorsQuery.of(maximum=100, last_seen=3600, created_at=60, now=now)
    assert query.window == Window("last_seen", int(now) // WINDOW_STEP * WINDOW_STEP - 3600)  # last_seen wins
    assert query.digest() == AuthorsQuery.of(maximum=100, last_seen=3600, now=now + 20).digest()  # same minute
    assert query.digest() != AuthorsQuery.of(maximum=100, last_seen=3600, now=now + 40).digest()  # the next
    assert AuthorsQuery.of(maximum=100, created_at=0).window is None  # 0 asks for no window
    assert AuthorsQuery.of(maximum=100, stat="followers").order == "followers"
    assert AuthorsQuery.of(maximum=100, order="name", stat="followers").order == "name"
    for arguments, field in (({"order": "height"}, "order"), ({"last_seen": -5}, "last_seen"),
                             ({"limit": -1}, "limit")):
        with pytest.raises(BadInput) as refused:
            AuthorsQuery.of(maximum=100, **arguments)
        assert refused.value.field == field
