"""What a request works out from its parsed document, kept for the next request of the same document.

The parser cache hands back the same document, so the same node objects, for each request of it: what is
worked out from a node (the paths a field selects, a field printed for its key) is the same each time, and
is kept by the node's identity. Bounded: past `size` entries the oldest goes. A node that was freed and whose
id another took is not taken for it: the entry keeps the nodes themselves and is used only for those.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from graphql import Node

T = TypeVar("T")

KEPT = 2048  # entries a memo keeps (the parser cache holds 512 documents)


class NodeMemo(Generic[T]):
    def __init__(self, size: int = KEPT) -> None:
        self.size = size
        self._kept: dict[int, tuple[tuple[Node, ...], T]] = {}

    def get(self, nodes: Sequence[Node], work_out: Callable[[], T]) -> T:
        """What `work_out()` gives for `nodes`: worked out once, then kept."""
        known = self._kept.get(id(nodes[0]))
        if known is not None and len(known[0]) == len(nodes) and all(
                kept is node for kept, node in zip(known[0], nodes, strict=True)):
            return known[1]
        value = work_out()
        self._kept[id(nodes[0])] = (tuple(nodes), value)
        if len(self._kept) > self.size:
            del self._kept[next(iter(self._kept))]  # the oldest
        return value
