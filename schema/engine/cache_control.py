"""How long an answer may be kept and by whom, declared next to the types (Apollo's `@cacheControl`, kept as
field metadata so the SDL stays the contract's):

    @strawberry.field(metadata=cache_control(60))                 # a public root field, kept 60 s
    @strawberry.field(metadata=cache_control(60, private=True))   # the viewer's own list
    @strawberry.field(metadata=cache_control(private=True))       # a private field of a public type
    @strawberry.field(metadata=cache_control(60, rendered=True))  # also kept as rendered JSON (engine/rendered.py)

An answer's policy is the smallest `max_age` over its fields and PRIVATE if any of them is. A root field
without a declaration has no max age: its answers are never kept. A nested field without one inherits.

The response cache (app/http/graphql_view.py) stores PUBLIC answers once for everyone, signed in or not, and
PRIVATE answers per viewer; `Cache-Control` carries the same policy to browsers and CDNs. What makes the
declaration safe to get wrong in one direction: an answer whose computation read the viewer
(`Context.viewer()`) is never stored for everyone, whatever its declaration says.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    GraphQLError,
    GraphQLSchema,
    OperationDefinitionNode,
    TypeInfo,
    TypeInfoVisitor,
    Visitor,
    visit,
)

from schema.engine.seam import field_definition, graphql_schema

METADATA_KEY = "cache_control"
# The public reads' max age: what they show that no invalidation covers (view counters, counts that the
# revalidator corrects) may lag this much; everything else is invalidated at once, kept or not.
READ_MAX_AGE = 60


@dataclass(frozen=True, slots=True)
class CacheHint:
    max_age: int | None = None  # seconds; None: as the enclosing field
    private: bool = False
    rendered: bool = False  # a root field whose answer is kept as rendered JSON too (schema/engine/rendered.py)


def cache_control(max_age: int | None = None, *, private: bool = False, rendered: bool = False) -> dict[str, Any]:
    """Field metadata declaring its cache policy."""
    return {METADATA_KEY: CacheHint(max_age, private, rendered)}


@dataclass(frozen=True, slots=True)
class Policy:
    max_age: int  # 0: never kept
    private: bool

    @property
    def cacheable(self) -> bool:
        return self.max_age > 0


NOT_CACHEABLE = Policy(0, False)


def hint_of(field: Any) -> CacheHint | None:
    """A graphql-core field's declared policy, if it has one."""
    definition = field_definition(field)
    metadata = getattr(definition, "metadata", None) or {}
    hint = metadata.get(METADATA_KEY)
    return hint if isinstance(hint, CacheHint) else None


class _Collector(Visitor):
    def __init__(self, type_info: TypeInfo, query_type: Any) -> None:
        super().__init__()
        self.type_info = type_info
        self.query_type = query_type
        self.max_age: int | None = None
        self.private = False
        self.not_a_query = False  # a mutation or a subscription: never kept

    def enter_operation_definition(self, node: OperationDefinitionNode, *_args: Any) -> None:
        if node.operation.value != "query":
            self.not_a_query = True

    def enter_field(self, node: FieldNode, *_args: Any) -> None:
        if node.name.value == "__typename":
            return
        field = self.type_info.get_field_def()
        hint = hint_of(field) if field is not None else None
        root = self.type_info.get_parent_type() is self.query_type
        if root and (hint is None or hint.max_age is None):
            self.max_age = 0  # an undeclared root field (introspection included) is never kept
        if hint is not None and hint.max_age is not None:
            self.max_age = hint.max_age if self.max_age is None else min(self.max_age, hint.max_age)
        if hint is not None and hint.private:
            self.private = True


def policy_of(schema: GraphQLSchema, document: DocumentNode) -> Policy:
    """The policy of every operation and fragment of a document together (a document with several
    operations gets the strictest of them)."""
    type_info = TypeInfo(schema)
    collector = _Collector(type_info, schema.query_type)
    visit(document, TypeInfoVisitor(type_info, collector))
    if collector.not_a_query or not collector.max_age:
        return Policy(0, collector.private)
    return Policy(collector.max_age, collector.private)


class PolicyCache:
    """Policies by document text, for the documents a worker saw last (a bounded LRU)."""

    def __init__(self, schema: Any, size: int = 1000) -> None:
        self.schema = schema  # Strawberry's: its parse() has a cache of its own
        self.size = size
        self._found: OrderedDict[str, Policy] = OrderedDict()

    def get(self, document: str) -> Policy:
        policy = self._found.get(document)
        if policy is not None:
            self._found.move_to_end(document)
            return policy
        try:
            policy = policy_of(graphql_schema(self.schema), self.schema.parse(document))
        except GraphQLError:
            policy = NOT_CACHEABLE
        self._found[document] = policy
        if len(self._found) > self.size:
            self._found.popitem(last=False)
        return policy
