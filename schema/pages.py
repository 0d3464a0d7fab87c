"""Pages of shouts and of reactions with their relations loaded first, together; lists of authors, topics
and communities with their counters (`entities_list`).

A page's nested fields (each shout's authors, topics and counters, each author's counters) would each
await their loader: a coroutine, a future and a task per field, about a hundred for a page of twenty.
Instead the root field reads its own selection, asks the request's loaders for everything it names in
one go (each kind by its loader's batch function, all of them concurrent: one Redis round trip together,
cache/redis/coalesce.py), and the nested fields then take their values at once (schema/context.py `at_once`).
What the selection does not name is not loaded; what fails to load is left to the nested field, which
asks its loader and reports the error where it belongs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from graphql import FieldNode, FragmentSpreadNode, InlineFragmentNode, SelectionSetNode

from resolvers.shout_query import Along, ShoutPage
from resolvers.shout_reads import author_ids_of, topic_ids_of, unique
from schema.context import Info, Loader, Loaders
from schema.engine.item_fragments import loaded_then_placed
from schema.engine.node_memo import NodeMemo
from schema.engine.seam import resolve_info
from schema.types import Reaction, Shout


def selected_paths(info: Info) -> frozenset[str]:
    """The dotted paths of the fields selected under the current one (`authors.stat.shouts`), fragments
    included. Walked once per field of a parsed document (the parser cache keeps documents, so the same
    nodes come back with each request of it), from graphql-core's nodes: Strawberry's `selected_fields`
    would convert every argument and directive on the way, on every request."""
    raw = resolve_info(info)

    def work_out() -> frozenset[str]:
        paths: set[str] = set()

        def walk(selection_set: SelectionSetNode | None, prefix: str) -> None:
            for selection in selection_set.selections if selection_set is not None else ():
                if isinstance(selection, FieldNode):
                    path = prefix + selection.name.value
                    paths.add(path)
                    walk(selection.selection_set, path + ".")
                elif isinstance(selection, InlineFragmentNode):
                    walk(selection.selection_set, prefix)
                elif isinstance(selection, FragmentSpreadNode) and selection.name.value in raw.fragments:
                    walk(raw.fragments[selection.name.value].selection_set, prefix)

        for field_node in raw.field_nodes:
            walk(field_node.selection_set, "")
        return frozenset(paths)

    return _PATHS.get(raw.field_nodes, work_out)


_PATHS: NodeMemo[frozenset[str]] = NodeMemo()


def _author_loads(loaders: Loaders, authors: list[int], wanted: frozenset[str], *fields: str) -> list[Awaitable[Any]]:
    """The authors named by any of `fields`, and their counters when a `stat` under one is selected."""
    loads: list[Awaitable[Any]] = []
    if authors and any(f in wanted for f in fields):
        loads.append(_primed(loaders.authors, authors))
        if any(f + ".stat" in wanted for f in fields):
            loads.append(_primed(loaders.counters["author"], authors))
    return loads


def _shout_loads(loaders: Loaders, shouts: list[dict[str, Any]], wanted: frozenset[str]) -> list[Awaitable[Any]]:
    """The loads a page's selection asks for; all started before any is awaited, so each loader batches."""
    ids = [s["id"] for s in shouts]
    authors, topics = author_ids_of(shouts), topic_ids_of(shouts)
    loads = _author_loads(loaders, authors, wanted, "authors", "created_by")
    if "stat" in wanted:
        loads.append(_primed(loaders.counters["shout"], ids))
    if "stat.viewed" in wanted or "stat.views_count" in wanted:
        loads.append(_primed(loaders.views, ids))
    if "community" in wanted:
        loads.append(_primed(loaders.communities, unique(s.get("community") for s in shouts)))
    if "topics" in wanted or "main_topic" in wanted:
        loads.append(_primed(loaders.topics, topics))
    if "topics.stat" in wanted or "main_topic.stat" in wanted:
        loads.append(_primed(loaders.counters["topic"], topics))
    return loads


def _reaction_loads(loaders: Loaders, reactions: list[dict[str, Any]], wanted: frozenset[str]) -> list[Awaitable[Any]]:
    loads = _author_loads(loaders, unique(r.get("created_by") for r in reactions), wanted, "created_by")
    if "shout" in wanted:
        loads.append(_primed(loaders.shouts, unique(r.get("shout") for r in reactions)))
    return loads


async def _primed(loader: Loader[Any, Any], keys: list[Any]) -> None:
    """What the loader does not have yet of `keys`, loaded by its batch function at once and held by it:
    the nested fields find it there, and no future per key is made or awaited."""
    wanted = [key for key in keys if not loader.has(key)]
    if wanted:
        loader.hold(dict(zip(wanted, await loader.fetch(wanted), strict=True)))


async def _load(loads: list[Awaitable[Any]]) -> None:
    if loads:
        # A failed load is not kept: the nested field that needs it asks its loader, and fails alone.
        await asyncio.gather(*loads, return_exceptions=True)


def along(info: Info) -> Along:
    """The relations a page of shouts should bring along with its cards: those its selection reads."""
    wanted = selected_paths(info)
    return Along(authors="authors" in wanted or "created_by" in wanted,
                 topics="topics" in wanted or "main_topic" in wanted)


async def shouts_page(info: Info, page: ShoutPage) -> list[Shout | None]:
    """A page's shouts, with what its selection reads loaded first: the relations that came along are put
    in the request's loaders, so that nothing loads them again; the rest is loaded together."""
    loaders = info.context.loaders
    if page.authors is not None:
        loaders.authors.hold({author["id"]: author for author in page.authors})
    if page.topics is not None:
        loaders.topics.hold({topic["id"]: topic for topic in page.topics})
    shouts = [s for s in page.shouts if s]
    if shouts:
        await _load(_shout_loads(loaders, shouts, selected_paths(info)))
    return [Shout.of(s) for s in page.shouts]


async def shouts_list(info: Info, shouts: Sequence[dict[str, Any] | None]) -> list[Shout | None]:
    """`shouts_page` of shouts that brought nothing along."""
    return await shouts_page(info, ShoutPage(shouts))


# The relations of a reaction whose entities an item kept rendered is stamped by (schema/engine/item_fragments.py).
_REACTION_RELATIONS = {"created_by": ("author", "created_by"), "shout": ("shout", "shout")}


T = TypeVar("T")


async def entities_list(info: Info, kind: str, items: Sequence[dict[str, Any] | None],
                        make: Callable[[dict[str, Any] | None], T]) -> list[T]:
    """Authors, topics or communities a root field lists, with their counters loaded first, together, when
    its selection reads a `stat`: each item's `stat` is then answered at once, where three hundred topics
    would each make a future and a task, and the list would be gathered."""
    if "stat" in selected_paths(info):
        await _load([_primed(info.context.loaders.counters[kind], unique(item["id"] for item in items if item))])
    return [make(item) for item in items]


async def reactions_page(info: Info, items: list[dict[str, Any]]) -> list[Reaction | None]:
    """A page's reactions: those kept rendered as their JSON, the others with what they read loaded first."""
    async def load(reactions: list[dict[str, Any]]) -> None:
        await _load(_reaction_loads(info.context.loaders, reactions, selected_paths(info)))

    return await loaded_then_placed(info, items, _REACTION_RELATIONS, load, Reaction.of)
