"""Execution shortcuts (schema/engine/execution.py): plain fields read and serialized directly, marked relations
resolved without Strawberry's wrapper. Both must answer exactly what graphql-core and Strawberry answer,
errors included; the schema refuses a marked field that needs more than its context."""

from __future__ import annotations

import asyncio
import enum
from typing import Any

import pytest
import strawberry
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.types import Info

from schema.engine.execution import DIRECT, PlainFieldsFirst, prepare_execution


@strawberry.enum
class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@strawberry.type
class Leaf:
    name: str
    count: int
    share: float | None
    colour: Colour
    maybe: int | None
    required: str  # None on one object: the non-null error, as graphql-core reports it
    big: int  # out of GraphQL's Int range on one object: the serialization error
    later: str | None  # an awaitable on one object: not a value to serialize
    ident: strawberry.ID  # a str returned as it is; an int serialized
    flag: bool


class Named(str):
    """A str subclass: serialized by graphql-core, not taken as it is."""


@strawberry.type
class Node:
    items: list[Leaf | None]

    @strawberry.field(metadata=DIRECT)
    def first(self, info: Info) -> Leaf | None:
        return info.context["leaves"][0] if info.context["leaves"] else None

    @strawberry.field
    def size(self) -> int:  # takes its object alone: resolved without Strawberry's wrapper, unmarked
        return len(self.items)

    @strawberry.field
    def broken(self) -> int | None:  # an error raised directly is reported as Strawberry's wrapper reports it
        raise ValueError("no such thing")


@strawberry.type
class Query:
    @strawberry.field
    def node(self, info: Info) -> Node:
        return Node(items=info.context["leaves"])


async def _later() -> str:
    return "awaited"


def _fine() -> Leaf:
    return Leaf(name="a", count=1, share=0.5, colour=Colour.RED, maybe=None, required="r", big=5, later=None,
                ident=strawberry.ID("a1"), flag=True)


def _leaves() -> list[Leaf]:
    null = Leaf(name="b", count=2, share=None, colour=Colour.BLUE, maybe=7, required=None,  # type: ignore[arg-type]
                big=1, later=None, ident=strawberry.ID("b"), flag=False)
    too_big = Leaf(name="c", count=3, share=None, colour=Colour.BLUE, maybe=None, required="r", big=2**31,
                   later=None, ident=strawberry.ID("c"), flag=False)
    # a bool in an Int, a str subclass, the largest Int, an int in an ID: each serialized by its scalar
    awaiting = Leaf(name=Named("d"), count=True, share=1e300, colour=Colour.RED, maybe=0, required="r",
                    big=2**31 - 1, later=_later(), ident=7, flag=False)  # type: ignore[arg-type]
    return [_fine(), null, too_big, awaiting]


@strawberry.type
class Wrong:
    @strawberry.field(metadata=DIRECT)
    def with_argument(self, info: Info, n: int) -> int:
        return n


@strawberry.type
class WrongQuery:
    @strawberry.field
    def wrong(self) -> Wrong:
        return Wrong()


@strawberry.type
class Later:
    @strawberry.field(metadata=DIRECT)
    async def awaited(self, info: Info) -> int:
        await asyncio.sleep(0)
        return 1


@strawberry.type
class LaterQuery:
    @strawberry.field
    def later(self) -> Later:
        return Later()


def _schema(context_class: type) -> strawberry.Schema:
    schema = strawberry.Schema(query=Query, execution_context_class=context_class)
    if context_class is PlainFieldsFirst:
        prepare_execution(schema)
    return schema


QUERY = ("{ node { items { name count share colour maybe required big later ident flag } "
         "first { name colour } size broken } }")


async def test_the_shortcuts_answer_what_graphql_core_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = []
    for context_class in (StrawberryGraphQLCoreExecutionContext, PlainFieldsFirst):
        result = await _schema(context_class).execute(QUERY, context_value={"leaves": _leaves()})
        answers.append((result.data, sorted((e.message, tuple(e.path or ())) for e in result.errors or [])))
    assert answers[0] == answers[1]
    data, errors = answers[1]
    assert data == {"node": {"items": [{"name": "a", "count": 1, "share": 0.5, "colour": "RED", "maybe": None,
                                        "required": "r", "big": 5, "later": None, "ident": "a1", "flag": True},
                                       None, None,
                                       {"name": "d", "count": 1, "share": 1e300, "colour": "RED", "maybe": 0,
                                        "required": "r", "big": 2**31 - 1, "later": "awaited", "ident": "7",
                                        "flag": False}],
                             "first": {"name": "a", "colour": "RED"}, "size": 4, "broken": None}}
    assert sorted(path for _, path in errors) == [("node", "broken"), ("node", "items", 1, "required"),
                                                  ("node", "items", 2, "big")]
    assert type(data["node"]["items"][3]["count"]) is int  # the bool serialized, not passed on


async def test_plain_fields_build_no_resolve_info(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    build = PlainFieldsFirst.build_resolve_info

    def counted(self: Any, field_def: Any, field_nodes: Any, *args: Any) -> Any:
        built.append(field_nodes[0].name.value)
        return build(self, field_def, field_nodes, *args)

    monkeypatch.setattr(PlainFieldsFirst, "build_resolve_info", counted)
    leaves = [_fine() for _ in range(3)]
    result = await _schema(PlainFieldsFirst).execute("{ node { items { name count colour } } }",
                                                     context_value={"leaves": leaves})
    assert result.errors is None and len(result.data["node"]["items"]) == 3  # type: ignore[index]
    assert built == ["node", "items"]  # the nine plain fields took the shortcut


async def test_a_resolver_given_its_object_alone_is_called_without_strawberrys_wrapper(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`size` takes only `self`: it is called directly (no Strawberry info, no argument conversion); the
    root field `node`, whose `self` is no object of ours, keeps the wrapper, as do the marked ones' rules."""
    from strawberry.types.field import StrawberryField

    wrapped: list[str] = []
    get_result = StrawberryField.get_result

    def counted(self: StrawberryField, *args: Any, **kwargs: Any) -> Any:
        wrapped.append(self.python_name)
        return get_result(self, *args, **kwargs)

    monkeypatch.setattr(StrawberryField, "get_result", counted)
    result = await _schema(PlainFieldsFirst).execute("{ node { size first { name } } }",
                                                     context_value={"leaves": [_fine(), _fine()]})
    assert result.errors is None and result.data == {"node": {"size": 2, "first": {"name": "a"}}}
    assert wrapped == ["node"]


def test_a_marked_field_that_needs_more_than_its_context_is_refused() -> None:
    with pytest.raises(TypeError, match="withArgument cannot be resolved directly"):
        prepare_execution(strawberry.Schema(query=WrongQuery))
    with pytest.raises(TypeError, match="awaited cannot be resolved directly"):
        prepare_execution(strawberry.Schema(query=LaterQuery))


async def test_resolvers_are_wrapped_only_when_an_extension_resolves_fields() -> None:
    """The schema hands graphql-core no middleware manager unless an extension implements `resolve`
    (schema/schema.py); one that does still sees every resolved field."""
    from strawberry.extensions import SchemaExtension

    from schema.schema import DiscoursSchema

    seen: list[str] = []

    class Watching(SchemaExtension):
        def resolve(self, _next: Any, root: Any, info: Any, *args: Any, **kwargs: Any) -> Any:
            seen.append(info.field_name)
            return _next(root, info, *args, **kwargs)

    assert DiscoursSchema(query=Query)._get_middleware_manager([]) is None
    schema = DiscoursSchema(query=Query, extensions=[Watching], execution_context_class=PlainFieldsFirst)
    prepare_execution(schema)
    result = await schema.execute("{ node { first { name } } }", context_value={"leaves": [_fine()]})
    assert result.errors is None and result.data == {"node": {"first": {"name": "a"}}}
    assert seen == ["node", "first"]  # `name` is plain: read, not resolved


class Refused(strawberry.permission.BasePermission):
    message = "not yours"

    def has_permission(self, source: Any, info: Info, **kwargs: Any) -> bool:
        return False


class Shouted(strawberry.extensions.FieldExtension):
    def resolve(self, next_: Any, source: Any, info: Info, **kwargs: Any) -> Any:
        return next_(source, info, **kwargs).upper()


@strawberry.type
class Guarded:
    open: str
    secret: str = strawberry.field(permission_classes=[Refused])
    loud: str = strawberry.field(extensions=[Shouted()])


@strawberry.type
class GuardedQuery:
    @strawberry.field
    def guarded(self) -> Guarded:
        return Guarded(open="o", secret="s", loud="l")


async def test_a_field_with_a_permission_class_or_an_extension_is_never_read_plainly() -> None:
    """A field without a resolver of its own is plain only when Strawberry calls it basic: a permission
    class or an extension on it must run (reading it plainly would serve it without its check)."""
    from schema.engine.execution import PLAIN
    from schema.engine.seam import graphql_schema

    schema = strawberry.Schema(query=GuardedQuery, execution_context_class=PlainFieldsFirst)
    prepare_execution(schema)
    assert set(graphql_schema(schema).type_map["Guarded"].extensions[PLAIN]) == {"open"}
    result = await schema.execute("{ guarded { open loud secret } }")
    assert result.data is None and [e.message for e in result.errors or []] == ["not yours"]
    result = await schema.execute("{ guarded { open loud } }")
    assert result.errors is None and result.data == {"guarded": {"open": "o", "loud": "L"}}


# --- relations executed straight (schema/engine/seam.py `FieldLoop.execute_relation`) ----------------------

@strawberry.type
class Pair:
    name: str
    required: str  # None in one pair: an error inside the relation, nulling it or, non-null, its holder


async def _pair_later(pair: Pair | None) -> Pair | None:
    await asyncio.sleep(0)
    return pair


@strawberry.type
class Holder:
    key: strawberry.Private[str]

    @strawberry.field(metadata=DIRECT)
    def needed(self, info: Info) -> Pair:  # non-null: a missing pair nulls the holder
        return info.context["pairs"].get(self.key)  # type: ignore[no-any-return]

    @strawberry.field(metadata=DIRECT)
    def maybe(self, info: Info) -> Pair | None:
        return info.context["pairs"].get(self.key)  # type: ignore[no-any-return]

    @strawberry.field
    def own(self) -> Pair | None:  # given its object alone
        return None if self.key == "none" else Pair(name=self.key.upper(), required="r")

    @strawberry.field(metadata=DIRECT, graphql_type=Pair | None)
    def later(self, info: Info) -> Any:  # an awaitable from a plain function, as a loader's future
        return _pair_later(info.context["pairs"].get(self.key))

    @strawberry.field(metadata=DIRECT)
    def failing(self, info: Info) -> Pair | None:
        raise ValueError(f"no pair for {self.key}")


def _holder(key: str) -> Any:
    """A list's item by its key: none, an error, an awaitable, or a holder."""
    if key == "null":
        return None
    if key == "error":
        return ValueError("no holder")
    if key == "later":
        return _holder_later()
    return Holder(key=key)


async def _holder_later() -> Holder:
    await asyncio.sleep(0)
    return Holder(key="ok")


@strawberry.type
class HolderQuery:
    @strawberry.field
    def holders(self, info: Info) -> list[Holder | None]:
        return [_holder(key) for key in info.context["keys"]]

    @strawberry.field
    def strict_holders(self, info: Info) -> list[Holder] | None:  # a null or an error item nulls the list
        return [_holder(key) for key in info.context["keys"]]


PAIRS = {"ok": Pair(name="ok", required="r"), "bad": Pair(name="bad", required=None)}  # type: ignore[arg-type]
HOLDER_QUERIES = (
    "{ holders { maybe { name required } own { name } later { name required } failing { name } } }",
    "{ holders { needed { name required } own { name } } }",
    "{ holders { needed { name } maybe { __typename name } m: maybe { required } } }",
)


def _holders_schema() -> strawberry.Schema:
    """As the server runs it: no middleware manager (schema/engine/seam.py `FieldResolversUnwrapped`), which the
    straight path requires (with one, every resolved field goes through it)."""
    from schema.schema import DiscoursSchema

    schema = DiscoursSchema(query=HolderQuery, execution_context_class=PlainFieldsFirst)
    prepare_execution(schema)
    return schema


@pytest.mark.parametrize("query", HOLDER_QUERIES)
async def test_relations_answer_what_graphql_core_answers(query: str) -> None:
    """Objects at once, nulls (nullable and not), awaitables, a resolver's error and an error inside the
    relation's selection: the same data and the same errors at the same paths as graphql-core's own path."""
    context = {"pairs": PAIRS, "keys": ["ok", "bad", "none", "missing"]}
    answers = []
    for schema in (strawberry.Schema(query=HolderQuery), _holders_schema()):
        result = await schema.execute(query, context_value=context)
        answers.append((result.data, sorted((e.message, tuple(e.path or ())) for e in result.errors or [])))
    assert answers[0] == answers[1]
    assert answers[1][0] is not None and answers[1][0]["holders"][0] is not None  # "ok" answered in each
    assert answers[1][1]  # and each has its errors


@pytest.mark.parametrize(("query", "keys"), [
    ("{ holders { own { name } needed { name } } }", ["ok", "null", "error", "later", "missing", "ok"]),
    ("{ strictHolders { own { name } } }", ["ok", "later", "ok"]),
    ("{ strictHolders { own { name } } }", ["ok", "null", "ok"]),
    ("{ strictHolders { own { name } } }", ["ok", "error"]),
    ("{ strictHolders { needed { name } } }", ["ok", "missing"]),
    ("{ strictHolders { later { name } } }", ["ok", "bad", "missing"]),
])
async def test_list_items_answer_what_graphql_core_answers(query: str, keys: list[str]) -> None:
    """Items of a list that are objects, executed straight, beside nulls, errors and awaitables, in lists
    whose items may be null or not: the same data and errors at the same paths as graphql-core's own."""
    context = {"pairs": PAIRS, "keys": keys}
    answers = []
    for schema in (strawberry.Schema(query=HolderQuery), _holders_schema()):
        result = await schema.execute(query, context_value=context)
        answers.append((result.data, sorted((e.message, tuple(e.path or ())) for e in result.errors or [])))
    assert answers[0] == answers[1]
    assert answers[1][0] is not None  # the control: each answers something


async def test_a_relation_given_its_object_at_once_is_executed_straight(monkeypatch: pytest.MonkeyPatch) -> None:
    """No graphql-core `execute_field` or `complete_value` for a relation whose resolver gives an object at
    once, nor `complete_value` for a list's item that is an object, and no resolve info for a relation that
    takes its object alone; control: a null goes the ordinary way."""
    calls: list[str] = []
    for name in ("execute_field", "complete_value", "build_resolve_info"):
        original = getattr(PlainFieldsFirst, name)

        def counted(self: Any, *args: Any, _name: str = name, _original: Any = original, **kwargs: Any) -> Any:
            calls.append(_name)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(PlainFieldsFirst, name, counted)
    schema = _holders_schema()
    context = {"pairs": PAIRS, "keys": ["ok", "ok"]}
    result = await schema.execute("{ holders { needed { name } own { name } } }", context_value=context)
    assert result.errors is None
    assert result.data == {"holders": [{"needed": {"name": "ok"}, "own": {"name": "OK"}}] * 2}
    # the root field and its list only; `needed` is given the context alone, `own` nothing
    assert calls.count("execute_field") == 1 and calls.count("build_resolve_info") == 1
    assert calls.count("complete_value") == 2  # the root's non-null list; its two items are objects
    calls.clear()
    result = await schema.execute("{ holders { own { name } } }", context_value={"pairs": PAIRS, "keys": ["none"]})
    assert result.errors is None and result.data == {"holders": [{"own": None}]}
    assert calls.count("complete_value") == 2 + 1 and calls.count("build_resolve_info") == 1 + 1
