"""Pages of shouts and of reactions with their relations loaded first, together.

A page's nested fields (each shout's authors, topics and counters, each author's counters) would each
await their loader: a coroutine, a future and a task per field, about a hundred for a page of twenty.
Instead the root field reads its own selection, asks the request's loaders for everything it names in
one go (the loaders batch it: one Redis round trip per kind, all of them concurrent), and the nested
fields then take their values at once (schema/context.py `at_once`). What the selection does not name is
not loaded; what fails to load is left to the nested field, which awaits its loader and reports the error
where it belongs, as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import Any

from strawberry.types.nodes import FragmentSpread, InlineFragment, SelectedField

from schema.context import Info, Loaders
from schema.types import Reaction, Shout


def selected_paths(info: Info) -> set[str]:
    """The dotted paths of the fields selected under the current one (`authors.stat.shouts`), fragments
    included."""
    paths: set[str] = set()

    def walk(selections: Iterable[Any], prefix: str) -> None:
        for selection in selections:
            if isinstance(selection, SelectedField):
                path = prefix + selection.name
                paths.add(path)
                walk(selection.selections, path + ".")
            elif isinstance(selection, (InlineFragment, FragmentSpread)):
                walk(selection.selections, prefix)

    for field in info.selected_fields:
        walk(field.selections, "")
    return paths


def _unique(values: Iterable[Any]) -> list[Any]:
    return [v for v in dict.fromkeys(values) if v is not None]


def _author_loads(loaders: Loaders, authors: list[int], wanted: set[str], *fields: str) -> list[Awaitable[Any]]:
    """The authors named by any of `fields`, and their counters when a `stat` under one is selected."""
    loads: list[Awaitable[Any]] = []
    if authors and any(f in wanted for f in fields):
        loads.append(loaders.authors.load_many(authors))
        if any(f + ".stat" in wanted for f in fields):
            loads.append(loaders.counters["author"].load_many(authors))
    return loads


def _shout_loads(loaders: Loaders, shouts: list[dict[str, Any]], wanted: set[str]) -> list[Awaitable[Any]]:
    """The loads a page's selection asks for; all started before any is awaited, so each loader batches."""
    ids = [s["id"] for s in shouts]
    authors = _unique(a for s in shouts for a in (*(s.get("author_ids") or ()), s.get("created_by")))
    topics = _unique(t for s in shouts for t in (*(s.get("topic_ids") or ()), s.get("main_topic_id")))
    loads = _author_loads(loaders, authors, wanted, "authors", "created_by")
    if "stat" in wanted:
        loads.append(loaders.counters["shout"].load_many(ids))
    if "stat.viewed" in wanted or "stat.views_count" in wanted:
        loads.append(loaders.views.load_many(ids))
    if "community" in wanted:
        loads.append(loaders.communities.load_many(_unique(s.get("community") for s in shouts)))
    if "topics" in wanted or "main_topic" in wanted:
        loads.append(loaders.topics.load_many(topics))
    if "topics.stat" in wanted or "main_topic.stat" in wanted:
        loads.append(loaders.counters["topic"].load_many(topics))
    return loads


def _reaction_loads(loaders: Loaders, reactions: list[dict[str, Any]], wanted: set[str]) -> list[Awaitable[Any]]:
    loads = _author_loads(loaders, _unique(r.get("created_by") for r in reactions), wanted, "created_by")
    if "shout" in wanted:
        loads.append(loaders.shouts.load_many(_unique(r.get("shout") for r in reactions)))
    return loads


async def _load(loads: list[Awaitable[Any]]) -> None:
    if loads:
        # A failed load stays in its loader: the nested field that needs it awaits it and fails alone.
        await asyncio.gather(*loads, return_exceptions=True)


async def shouts_page(info: Info, items: list[dict[str, Any]]) -> list[Shout | None]:
    shouts = [s for s in items if s]
    if shouts:
        await _load(_shout_loads(info.context.loaders, shouts, selected_paths(info)))
    return [Shout.of(s) for s in items]


async def reactions_page(info: Info, items: list[dict[str, Any]]) -> list[Reaction | None]:
    reactions = [r for r in items if r]
    if reactions:
        await _load(_reaction_loads(info.context.loaders, reactions, selected_paths(info)))
    return [Reaction.of(r) for r in items]
