"""What is worked out from a parsed document's nodes is kept by their identity (schema/engine/node_memo.py)."""

from __future__ import annotations

from graphql import parse

from schema.engine.node_memo import NodeMemo


def _field(text: str = "{ a { b } }") -> list:
    return [parse(text).definitions[0].selection_set.selections[0]]  # type: ignore[attr-defined]


def test_the_same_nodes_are_worked_out_once() -> None:
    memo: NodeMemo[int] = NodeMemo()
    calls: list[int] = []
    nodes = _field()
    for _ in range(3):
        assert memo.get(nodes, lambda: calls.append(1) or len(calls)) == 1
    assert calls == [1]


def test_equal_nodes_of_another_document_are_worked_out_again() -> None:
    # the same text parsed twice: equal nodes, but another document (its fragments may differ)
    memo: NodeMemo[str] = NodeMemo()
    first, second = _field(), _field()
    assert memo.get(first, lambda: "first") == "first"
    assert memo.get(second, lambda: "second") == "second"
    assert memo.get(first, lambda: "again") == "first"


def test_a_field_asked_with_other_nodes_beside_it_is_another_entry() -> None:
    memo: NodeMemo[int] = NodeMemo()
    nodes = _field("{ a { b } a { c } }")
    alone = nodes[:1]
    both = [nodes[0], parse("{ a { c } }").definitions[0].selection_set.selections[0]]  # type: ignore[attr-defined]
    assert memo.get(alone, lambda: 1) == 1
    assert memo.get(both, lambda: 2) == 2  # its first node is the same, but not all of them


def test_it_keeps_at_most_its_size_the_oldest_going_first() -> None:
    memo: NodeMemo[str] = NodeMemo(size=2)
    fields = [_field() for _ in range(3)]
    for n, nodes in enumerate(fields):
        memo.get(nodes, lambda n=n: f"v{n}")
    assert memo.get(fields[2], lambda: "new") == "v2"
    assert memo.get(fields[1], lambda: "new") == "v1"
    assert memo.get(fields[0], lambda: "new") == "new"  # the oldest went
