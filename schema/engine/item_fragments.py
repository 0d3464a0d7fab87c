"""The items of a page answered by their rendered JSON, kept one by one (the issue's item fragments).

A page of reactions is a list (one cached value, moved by every comment) of items that mostly did not
change: after a comment, nineteen of the twenty are what they were. Executed field by field again, those
nineteen were most of what such a page cost (graphql-core completing each field of each item and its
author and shout: about 60% of a `load_reactions_by(20)` recomputed after its list's tag moved). So each
item's answer is kept as the JSON bytes it is sent as, and placed in the page as it is (`orjson.Fragment`,
which the field loop passes through without executing it, schema/engine/execution.py).

What an item's answer is made of, and so what keeps it current:
- the item itself as the page's list gave it (its columns and counters): it is part of the key, with the
  root field's selection, arguments and variables (the rendered answer's key, schema/engine/rendered.py);
- the entities its selected relations load (a reaction's author and shout): its stamp names the
  generations their values were read under, as the value's own stamp does, so that a write to either makes
  it a miss. Taken from what the page's loads read (a capture of their own), item by item: the loads are
  batched for the whole page, so the request's capture could not tell which item read what.

Items are kept for pages read under writes, not for pages computed cold. When what the root field read
before its items (its list, a slug's id) was not kept under the current epoch (absent, or kept before the
epoch last moved: a new list, a flushed or recovered Redis, a bulk change), the root was not computed since,
so none of its items is kept under the epoch (they are keyed by the root's answer and stamped with the
epoch): the page neither looks for them nor keeps them, and is executed as ever. Keeping them was a sixth
of the CPU of a cold page of reactions (20 keys, stamps and stores), for a page that may never be read
under a write. The first time a write moves its list, the page is computed again, its items kept.

Only a selection made of the item's own fields, and of the plain fields of the entities its relations
load, is kept so (`_relations_of`): a field that reads anything else (an author's counters, a shout's
topics, the viewer) has no generation here to be stamped by, and the page is executed as before. As for
rendered answers, only within a public query that may be answered rendered (schema/engine/rendered.py
`answered`), never on a Redis Cluster (the script checks the generations where they live), and nothing is
kept of an item whose execution reported an error.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import orjson
from graphql import (
    FieldNode,
    FragmentSpreadNode,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    InlineFragmentNode,
    SelectionSetNode,
)

from ambient import ROOT_RENDERING
from cache import keys, response_capture
from cache.entities import ENTITY_KINDS
from cache.response.rendered import ToKeep, read_rendered_items
from cache.response_capture import Capture
from schema.engine.node_memo import NodeMemo
from schema.engine.seam import field_errors, resolve_info

# Kept here, read by the field loop (schema/engine/execution.py): an object type's plain fields, and the mark of a
# resolver given its object alone, which answers from what the object holds.
PLAIN = "discours-plain-fields"
OWN_FIELD = "discours_own_field"
_NO_DIRECTIVES = ("defer", "stream")  # delivered apart: an item whose parts arrive later is not one answer


@dataclass(slots=True)
class RootRendering:
    """A root field being computed to be answered rendered: its key and how long its items may be kept, the
    items it placed to be executed (by their object's id: their key and what their loads read), and the
    items computed so far, to keep."""

    key: str
    ttl: int
    pending: dict[int, tuple[str, Capture]] = field(default_factory=dict)
    computed: list[ToKeep] = field(default_factory=list)


@contextmanager
def rendering_items(key: str, ttl: int) -> Iterator[RootRendering]:
    """Within, pages under the root field keyed `key` answer their items by their rendered JSON."""
    root = RootRendering(key, ttl)
    token = ROOT_RENDERING.set(root)
    try:
        yield root
    finally:
        ROOT_RENDERING.reset(token)


# --- a page's items ----------------------------------------------------------------------------------

# A relation of an item: the entity kind it loads, and the item's column holding the entity's id.
Relations = Mapping[str, tuple[str, str]]


@dataclass(slots=True)
class ItemPage:
    """One page's items as found kept, and, once the missed ones' relations are loaded, what those loads
    read (`loading`), which each missed item's stamp is taken from (`placed`)."""

    root: RootRendering
    keys: list[str]  # of each item, in the page's order
    found: list[bytes | None]  # each item's rendered JSON, if kept and current
    relations: list[tuple[str, str]]  # those the selection reads: (entity kind, column)
    loads: Capture | None = None

    @property
    def missed(self) -> list[int]:
        return [index for index, body in enumerate(self.found) if body is None]

    @contextmanager
    def loading(self) -> Iterator[None]:
        """Around the loads of the missed items: what they read, item by item, stamps what is kept of them."""
        capture, token = response_capture.begin()
        try:
            yield
        finally:
            response_capture.end(token)  # the response's capture saw it all too
            self.loads = capture

    def placed(self, items: Sequence[dict[str, Any]], build: Callable[[dict[str, Any]], Any]) -> list[Any]:
        """The page's items: the kept ones as their JSON, the others built to be executed, and kept once
        they are when every generation their relations' entities were read under is known."""
        placed: list[Any] = []
        for item, key, body in zip(items, self.keys, self.found, strict=True):
            if body is not None:
                placed.append(orjson.Fragment(body))
                continue
            built = build(item)
            stamp = self._stamp_of(item)
            if built is not None and stamp is not None:
                self.root.pending[id(built)] = (key, stamp)
            placed.append(built)
        return placed

    def _stamp_of(self, item: dict[str, Any]) -> Capture | None:
        loads = self.loads
        if loads is None or not loads.storable or loads.read_viewer or loads.views:
            return None
        tags = [keys.GLOBAL_TAG]
        for kind, column in self.relations:
            if item.get(column) is not None:
                tags += ENTITY_KINDS[kind].tags(item[column])
        if any(tag not in loads.generations for tag in tags):  # held from before, or not read: unknown
            return None
        return Capture(generations={tag: loads.generations[tag] for tag in tags})


async def item_page(info: Any, items: Sequence[dict[str, Any]], relations: Relations) -> ItemPage | None:
    """The page's items as kept (one round trip), when the request answers its root field rendered, the
    selection is made of what an item's stamp covers and the root's reads were not cold; None otherwise (the
    page is executed as ever)."""
    root = ROOT_RENDERING.get()
    if root is None or not items or response_capture.cold():  # cold: see the module's docstring
        return None
    selected = _relations_of(info, relations)
    if selected is None:
        return None
    try:
        item_keys = [_item_key(root.key, item) for item in items]
    except TypeError:  # a value orjson cannot write: not keyed by a lossy form
        return None
    found = await read_rendered_items(info.context.deps.cache, item_keys)
    return ItemPage(root, item_keys, found, [relations[name] for name in selected])


def _item_key(root_key: str, item: dict[str, Any]) -> str:
    digest = hashlib.blake2b(root_key.encode() + b"\0" + orjson.dumps(item, option=orjson.OPT_SORT_KEYS),
                             digest_size=16).hexdigest()
    return keys.rendered_item(digest)


def _relations_of(info: Any, relations: Relations) -> tuple[str, ...] | None:
    """The relations the items' selection reads, when it reads nothing but the items' own fields and the
    own fields of those relations' entities (`_own_field`); None when it reads anything else."""
    raw = resolve_info(info)

    def work_out() -> tuple[str, ...] | None:
        item_type = _object_type(raw.return_type)
        if item_type is None:
            return None
        read: set[str] = set()
        try:
            for node in raw.field_nodes:
                for name, sub in _fields(node.selection_set, raw.fragments):
                    if name in relations:
                        related = _object_type(item_type.fields[name].type)
                        if related is None or not _own_selection(related, sub, raw.fragments):
                            return None
                        read.add(name)
                    elif not _own_field(item_type, name, sub, raw.fragments):
                        return None
        except _NotKept:
            return None
        return tuple(sorted(read))

    return _RELATIONS.get(raw.field_nodes, work_out)


_RELATIONS: NodeMemo[tuple[str, ...] | None] = NodeMemo()


class _NotKept(Exception):
    """A selection no item's stamp covers (a directive delivered apart, a fragment not in the document)."""


def _fields(selection_set: SelectionSetNode | None, fragments: Mapping[str, Any]
            ) -> Iterator[tuple[str, SelectionSetNode | None]]:
    """The fields of a selection (fragments walked), each with its own selection."""
    for selection in selection_set.selections if selection_set is not None else ():
        if any(directive.name.value in _NO_DIRECTIVES for directive in selection.directives or ()):
            raise _NotKept
        if isinstance(selection, FieldNode):
            yield selection.name.value, selection.selection_set
        elif isinstance(selection, InlineFragmentNode):
            yield from _fields(selection.selection_set, fragments)
        elif isinstance(selection, FragmentSpreadNode):
            definition = fragments.get(selection.name.value)
            if definition is None:
                raise _NotKept
            yield from _fields(definition.selection_set, fragments)


def _own_selection(object_type: GraphQLObjectType, selection_set: SelectionSetNode | None,
                   fragments: Mapping[str, Any]) -> bool:
    return all(_own_field(object_type, name, sub, fragments) for name, sub in _fields(selection_set, fragments))


def _own_field(object_type: GraphQLObjectType, name: str, sub: SelectionSetNode | None,
               fragments: Mapping[str, Any]) -> bool:
    """Whether the field answers from what its object holds (a plain field, or a resolver given the object
    alone, schema/engine/execution.py), and so does everything selected under it."""
    if name == "__typename":
        return True
    found = object_type.fields.get(name)
    if found is None or not (name in object_type.extensions.get(PLAIN, {}) or getattr(found.resolve, OWN_FIELD, False)):
        return False
    if sub is None:
        return True
    inner = _object_type(found.type)
    return inner is not None and _own_selection(inner, sub, fragments)


def _object_type(kind: Any) -> GraphQLObjectType | None:
    while isinstance(kind, (GraphQLNonNull, GraphQLList)):
        kind = kind.of_type
    return kind if isinstance(kind, GraphQLObjectType) else None


# --- an item executed, kept -------------------------------------------------------------------------

def kept_when_done(executor: Any, source: Any, path: Any, results: Any) -> Any:
    """What the field loop returns for an object: for an item its page placed to be executed, its answer
    rendered (and noted, to be kept with the root's) once complete, without an error under it."""
    root = ROOT_RENDERING.get()
    if root is None or not root.pending:
        return results
    pending = root.pending.pop(id(source), None)
    if pending is None:
        return results
    if executor.is_awaitable(results):
        async def rendered_when_done() -> Any:
            return _rendered(executor, root, pending, path, await results)

        return rendered_when_done()
    return _rendered(executor, root, pending, path, results)


def _rendered(executor: Any, root: RootRendering, pending: tuple[str, Capture], path: Any, done: Any) -> Any:
    where = path.as_list()
    if any(error.path and error.path[:len(where)] == where for error in field_errors(executor)):
        return done
    body = orjson.dumps(done)
    key, stamp = pending
    root.computed.append(ToKeep(key, body, stamp, root.ttl))
    return orjson.Fragment(body)  # encoded once: the page's answer writes these bytes


async def loaded_then_placed(info: Any, items: Sequence[dict[str, Any] | None], relations: Relations,
                             load: Callable[[list[dict[str, Any]]], Awaitable[None]],
                             build: Callable[[dict[str, Any] | None], Any]) -> list[Any]:
    """A page's items: those kept answered by their JSON, the others loaded (`load`) and built (`build`)."""
    present = [item for item in items if item]
    page = await item_page(info, present, relations) if len(present) == len(items) else None
    if page is None:
        if present:
            await load(present)
        return [build(item) for item in items]
    missed = [present[index] for index in page.missed]
    if missed:
        with page.loading():
            await load(missed)
    return page.placed(present, build)
