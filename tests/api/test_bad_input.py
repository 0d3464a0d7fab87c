"""Bad input: unknown slugs and ids give null or an empty list; negative or huge paging is refused or
clamped with a clear GraphQL error carrying `extensions.code`; never a server error."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.mark.parametrize("query, field, expected", [
    ('{ get_author(slug: "nobody-here") { id } }', "get_author", None),
    ("{ get_author(author_id: 987654) { id } }", "get_author", None),
    ('{ get_topic(slug: "no-such-topic") { id } }', "get_topic", None),
    ('{ get_shout(slug: "no-such-shout") { id } }', "get_shout", None),
    ("{ get_shout(shout_id: -5) { id } }", "get_shout", None),
    ("{ get_shout { id } }", "get_shout", None),
    ('{ get_topic_followers(slug: "no-such-topic") { id } }', "get_topic_followers", []),
    ('{ get_topic_authors(slug: "no-such-topic") { id } }', "get_topic_authors", []),
    ('{ get_author_followers(slug: "nobody") { id } }', "get_author_followers", []),
    ('{ get_author_follows_topics(user: "nobody") { id } }', "get_author_follows_topics", []),
    ('{ load_shouts_by(options: {limit: 5, filters: {topic: "no-such"}}) { id } }', "load_shouts_by", []),
    ('{ load_reactions_by(by: {shout: "no-such"}) { id } }', "load_reactions_by", []),
    ("{ load_comments_branch(shout: 99999999) { id } }", "load_comments_branch", []),
    ('{ load_shouts_search(text: "   ") { slug } }', "load_shouts_search", []),
    ('{ load_shouts_search(text: "%_\\\\\' OR 1=1 --") { slug } }', "load_shouts_search", []),
    ("{ get_topics_by_community(community_id: 424242) { id } }", "get_topics_by_community", []),
])
async def test_unknown_things_give_null_or_empty(gql: Any, query: str, field: str, expected: Any) -> None:
    result = await gql(query)
    assert "errors" not in result, result
    assert result["data"][field] == expected


@pytest.mark.parametrize("query", [
    "{ load_shouts_by(options: {limit: -1}) { id } }",
    "{ load_shouts_by(options: {limit: 5, offset: -3}) { id } }",
    "{ load_authors_by(by: {}, limit: -10) { id } }",
    '{ load_authors_search(text: "a", offset: -1) { id } }',
    "{ load_comments_branch(shout: 1, children_limit: -1) { id } }",
    '{ load_reactions_by(by: {}, limit: -2) { id } }',
    '{ load_authors_by(by: {order: "password"}) { id } }',
])
async def test_negative_paging_is_a_clear_error(gql: Any, query: str) -> None:
    result = await gql(query)
    (error,) = result["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert "Internal" not in error["message"]


async def test_huge_limit_is_clamped(gql: Any) -> None:
    result = await gql("{ load_shouts_by(options: {limit: 1000000}) { id } }")
    assert "errors" not in result
    assert len(result["data"]["load_shouts_by"]) == 100


async def test_wrong_types_are_validation_errors_not_server_errors(client: Any) -> None:
    response = await client.post("/graphql", json={"query": '{ get_author(author_id: "x") { id } }'})
    assert response.status_code in (200, 400)
    body = response.json()
    assert body["errors"] and "Internal" not in body["errors"][0]["message"]
