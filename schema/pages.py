"""Pages of shouts with their relations loaded first, together.

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
from schema.types import Shout


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


def _loads(loaders: Loaders, shouts: list[dict[str, Any]], wanted: set[str]) -> list[Awaitable[Any]]:
    """The loads a page's selection asks for; all started before any is awaited, so each loader batches."""
    ids = [s["id"] for s in shouts]
    authors = list(dict.fromkeys(a for s in shouts for a in s.get("author_ids") or ()))
    topics = list(dict.fromkeys(
        t for s in shouts for t in (*(s.get("topic_ids") or ()), s.get("main_topic_id")) if t is not None))
    loads: list[Awaitable[Any]] = []
    if "stat" in wanted:
        loads.append(loaders.counters["shout"].load_many(ids))
    if "stat.viewed" in wanted or "stat.views_count" in wanted:
        loads.append(loaders.views.load_many(ids))
    if "authors" in wanted:
        loads.append(loaders.authors.load_many(authors))
    if "authors.stat" in wanted:
        loads.append(loaders.counters["author"].load_many(authors))
    if "topics" in wanted or "main_topic" in wanted:
        loads.append(loaders.topics.load_many(topics))
    if "topics.stat" in wanted or "main_topic.stat" in wanted:
        loads.append(loaders.counters["topic"].load_many(topics))
    return loads


async def shouts_page(info: Info, items: list[dict[str, Any]]) -> list[Shout | None]:
    shouts = [s for s in items if s]
    if shouts:
        loads = _loads(info.context.loaders, shouts, selected_paths(info))
        if loads:
            # A failed load stays in its loader: the nested field that needs it awaits it and fails alone.
            await asyncio.gather(*loads, return_exceptions=True)
    return [Shout.of(s) for s in items]
