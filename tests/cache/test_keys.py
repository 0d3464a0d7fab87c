"""Seed 004's key rules hold for any input: every key and channel builder of cache/keys.py, given any
values a client could send, returns a key of at most 64 characters with no spaces or control characters
(a property test: hypothesis generates the inputs)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cache import keys

MAX_KEY = 64
# Parameters the code fills from its own constants (a kind, a structure's name), not from clients.
CODE_CONSTANTS = {"kind", "entity_type", "name", "order", "resource", "board", "tag", "owner_kind", "action",
                  "period", "timeframe", "entity"}
# Helpers of the module that build parts of keys, not keys.
NOT_KEYS = {"digest", "normalize_query", "params", "member", "week_of", "board_kind", "family"}
# GraphQL's Int and the id columns are 32-bit.
ints = st.integers(min_value=-(2**31), max_value=2**31 - 1)
# Digests the code computes: keys.digest 20 hex, request keys 32, throttle.email_digest 32, tokens.token_id 40.
hex_digest = st.sampled_from([20, 32, 40]).flatmap(
    lambda size: st.text(alphabet="0123456789abcdef", min_size=size, max_size=size))
client_text = st.text(min_size=0, max_size=300)
constant = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=20)


def _builders() -> list[tuple[str, Callable[..., Any]]]:
    found = []
    for name, function in inspect.getmembers(keys, inspect.isfunction):
        if name.startswith("_") or name in NOT_KEYS or function.__module__ != keys.__name__:
            continue
        if inspect.signature(function).return_annotation not in ("str", str):
            continue
        found.append((name, function))
    return found


def _strategy(parameter: inspect.Parameter, constants: st.SearchStrategy[str] = constant) -> st.SearchStrategy[Any]:
    annotation = str(parameter.annotation)
    if parameter.name in CODE_CONSTANTS:
        return constants
    if parameter.name.endswith("digest") or parameter.name == "token_id":
        return hex_digest
    if parameter.name == "slot":  # a node's first slot, from CLUSTER NODES
        return st.sampled_from([0, 5461, keys.CLUSTER_SLOTS - 1])
    if parameter.name == "week":  # validated by the resolver before it names a board
        return st.from_regex(keys.WEEK_NAME, fullmatch=True)
    if annotation.startswith("int"):
        return ints | st.none() if "None" in annotation else ints
    if annotation.startswith("float"):
        return st.floats(min_value=0, max_value=4e9)
    if annotation.startswith("bytes"):  # a stamp of generations: hashed into the key, whatever it holds
        return client_text.map(str.encode)
    if annotation == "object":
        return client_text | ints
    return client_text | st.none() if "None" in annotation else client_text


BUILDERS = _builders()


def test_every_builder_is_checked() -> None:
    assert len(BUILDERS) > 60


@pytest.mark.parametrize("name, builder", BUILDERS, ids=[name for name, _ in BUILDERS])
def test_keys_stay_short_and_clean_for_any_input(name: str, builder: Callable[..., Any]) -> None:
    parameters = inspect.signature(builder).parameters.values()
    arguments = st.fixed_dictionaries({p.name: _strategy(p) for p in parameters})

    @settings(max_examples=150, deadline=None, database=None, derandomize=True)
    @given(arguments)
    def check(values: dict[str, Any]) -> None:
        key = builder(**values)
        assert len(key) <= MAX_KEY, (name, values, key)
        assert not any(c.isspace() or ord(c) < 32 for c in key), (name, values, key)

    check()


def test_key_families_never_hold_client_input() -> None:
    """Metrics label cache reads by `keys.family(key)`: whatever clients send, the families stay a small
    set fixed by the code (with the code's own constants held fixed, client text never widens it)."""
    families: set[str] = set()
    for name, builder in BUILDERS:
        families |= _families(name, builder)
    assert len(families) <= len(BUILDERS), sorted(families)


def _families(name: str, builder: Callable[..., Any]) -> set[str]:
    found: set[str] = set()
    parameters = inspect.signature(builder).parameters.values()
    arguments = st.fixed_dictionaries({p.name: _strategy(p, st.just("shout")) for p in parameters})

    @settings(max_examples=60, deadline=None, database=None, derandomize=True)
    @given(arguments)
    def collect(values: dict[str, Any]) -> None:
        family = keys.family(builder(**values))
        assert all(c.islower() or c in "_:" for c in family), (name, values, family)
        found.add(family)

    collect()
    return found
