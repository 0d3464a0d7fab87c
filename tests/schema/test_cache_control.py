"""Cache policies declared next to the types (schema/engine/cache_control.py): an answer's policy is the smallest
max age of its fields and private if any field is; undeclared root fields, mutations and introspection are
never kept."""

from __future__ import annotations

import pytest

from schema.engine.cache_control import Policy, PolicyCache
from schema.schema import build_schema

SCHEMA = build_schema()


@pytest.fixture(scope="module")
def policies() -> PolicyCache:
    return PolicyCache(SCHEMA, size=4)


@pytest.mark.parametrize(("document", "expected"), [
    ("{ load_shouts_by(options: {limit: 5}) { id authors { slug } } }", Policy(60, False)),
    ('{ get_author(slug: "a") { name } get_topics_all { slug } }', Policy(60, False)),
    # a private field anywhere makes the whole answer private, through fragments too
    ('{ get_author(slug: "a") { name email } }', Policy(60, True)),
    ('query { get_author(slug: "a") { ...F } } fragment F on Author { roles }', Policy(60, True)),
    ('{ get_author(slug: "a") { ... on Author { email_verified } } }', Policy(60, True)),
    ("{ load_shouts_feed(options: {limit: 5}) { id } }", Policy(60, True)),
    ("{ get_my_rates_shouts(shouts: [1]) { my_rate } }", Policy(60, True)),
    # never kept: an undeclared root field beside a declared one, random answers, introspection, writes
    ("{ load_shouts_random_top(options: {limit: 3}) { id } }", Policy(0, False)),
    ('{ get_author(slug: "a") { name } load_shouts_random_top { id } }', Policy(0, False)),
    ("{ me { token } }", Policy(0, False)),
    ("{ __schema { types { name } } }", Policy(0, False)),
    ("{ __typename }", Policy(0, False)),
    ('mutation { requestPasswordReset(email: "x@example.org") { success } }', Policy(0, False)),
    ('query A { get_topics_all { slug } } mutation B { logout { success } }', Policy(0, False)),
    ("{ not_a_field }", Policy(0, False)),
    ("{ broken", Policy(0, False)),
])
def test_policy_of_a_document(policies: PolicyCache, document: str, expected: Policy) -> None:
    assert policies.get(document) == expected


def test_the_policy_cache_is_bounded(policies: PolicyCache) -> None:
    for n in range(10):
        policies.get(f'{{ get_author(slug: "a{n}") {{ name }} }}')
    assert len(policies._found) == 4
