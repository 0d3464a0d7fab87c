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
CODE_CONSTANTS = {"kind", "entity_type", "name", "order", "resource", "board", "tag", "owner_kind", "action"}
# Helpers of the module that build parts of keys, not keys.
NOT_KEYS = {"digest", "normalize_query", "params", "member", "week_of", "board_kind"}
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


def _strategy(parameter: inspect.Parameter) -> st.SearchStrategy[Any]:
    annotation = str(parameter.annotation)
    if parameter.name in CODE_CONSTANTS:
        return constant
    if parameter.name.endswith("digest") or parameter.name == "token_id":
        return hex_digest
    if parameter.name == "week":  # validated by the resolver before it names a board
        return st.from_regex(keys.WEEK_NAME, fullmatch=True)
    if annotation.startswith("int"):
        return ints | st.none() if "None" in annotation else ints
    if annotation.startswith("float"):
        return st.floats(min_value=0, max_value=4e9)
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
