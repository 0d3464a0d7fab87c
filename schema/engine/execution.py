"""Plain fields executed plainly: the execution context Strawberry runs graphql-core with, with one shortcut.

A page of twenty shouts is about five hundred fields, four in five of them *plain*: an attribute of the
object, a scalar or an enum, no arguments, no resolver of ours (`title`, `slug`, `stat.rating`). For each,
graphql-core builds a resolve info, looks for arguments, calls Strawberry's default resolver (three calls
deep) and completes the value through its type checks, which together cost more than everything else a
warm read does. Here such a field is read from its object and serialized by its type directly.

Only what is certain takes the shortcut: a value that is there and that its type serializes to something.
A missing value (null), an awaitable, or a value its type refuses goes the ordinary way, which raises or
nulls exactly as graphql-core does. Which fields are plain is decided once, when the schema is built
(`prepare_execution`): a field Strawberry calls basic (`is_basic_field`: no resolver, no extension, so no
permission class) whose type is a scalar or an enum; its definition's `python_name` is the attribute.
The loop itself is graphql-core's, copied into the one module that leans on library internals
(`schema/engine/seam.py` `FieldLoop`).

A relation resolved directly (`resolve_directly`: a reaction's author, shout and stat, an author's stat)
whose type is an object type is executed the same way, without graphql-core's general path: its resolver
is called (given the request's context alone where it takes an info, no resolve info per object), and when
it gives an object at once, the object's selection is executed; `complete_value` would get there only after
checking the type for non-null, list, leaf, abstract and object. A null, an awaitable or an error is
completed the ordinary way (`FieldLoop.execute_relation`). So is each item of a list that is an object
(`FieldLoop.complete_list_item_value`).

The loop over an object's fields (`execute_fields`) follows a plan made once per selection of a request
(the twenty shouts of a page share one): for a plain field, its attribute and serializer, so that it is
read in the loop itself, without a path, a call of `execute_field` or a look-up of its name; and when the
value is of the Python type its scalar returns as it is (a `str` for a String or an ID, a `bool` for a
Boolean, an `int` in range for an Int), without calling the serializer either: that is what it returns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import orjson
from graphql import (
    GraphQLBoolean,
    GraphQLEnumType,
    GraphQLID,
    GraphQLInt,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLSchema,
    GraphQLString,
)
from graphql.pyutils import Path, Undefined

from schema.engine.item_fragments import OWN_FIELD, PLAIN, kept_when_done
from schema.engine.rendered import answer_root_field
from schema.engine.seam import FieldLoop, PlainField, PlannedField, Relation, field_definition, graphql_schema

if TYPE_CHECKING:
    import strawberry

# Field metadata of a relation resolved directly (`resolve_directly`).
DIRECT = {"direct": True}
# The plain fields of an object type, by name, kept under PLAIN in its extensions (schema/engine/item_fragments.py
# reads them too).
Plain = dict[str, PlainField]
_NONE: Plain = {}
# Set on a resolver `resolve_directly` made: what it takes besides the object ("info" or "object").
_TAKES = "discours_resolver_takes"
# graphql-core's own scalars return a value of these types as it is (an Int only within 32 bits).
_RETURNED_AS_IS: dict[GraphQLScalarType | GraphQLEnumType, type] = {
    GraphQLString: str, GraphQLID: str, GraphQLBoolean: bool, GraphQLInt: int}


def plain_fields(object_type: GraphQLObjectType) -> Plain:
    """The fields of a type that are an attribute holding a scalar or an enum, with no arguments, and that
    Strawberry itself calls basic (no resolver, no extension: a permission class is an extension), so no
    check of anyone's is skipped by reading them plainly."""
    plain: Plain = {}
    for name, field in object_type.fields.items():
        leaf = field.type.of_type if isinstance(field.type, GraphQLNonNull) else field.type
        definition = field_definition(field)
        if (not field.args and isinstance(leaf, (GraphQLScalarType, GraphQLEnumType)) and definition is not None
                and definition.is_basic_field and not definition.permission_classes):
            plain[name] = (definition.python_name, _RETURNED_AS_IS.get(leaf), leaf.serialize)
    return plain


class PlainFieldsFirst(FieldLoop):
    """Runs a schema that `prepare_execution` prepared (each type carries its plain fields)."""

    _plans: dict[int, tuple[Any, tuple[PlannedField, ...]]]

    def plan(self, parent_type: GraphQLObjectType, grouped_field_set: Any) -> tuple[PlannedField, ...]:
        """Each selected field with its plain reading, if it has one; made once per selection of the
        request (graphql-core collects a selection once and hands the same grouped field set to every
        object of its type it completes with it; the set is kept with its plan, so its id stays its own)."""
        try:
            plans = self._plans
        except AttributeError:
            plans = self._plans = {}
        known = plans.get(id(grouped_field_set))
        if known is not None:
            return known[1]
        plain = parent_type.extensions.get(PLAIN, _NONE)
        plan = tuple((response_name, details, plain.get(details[0].node.name.value),
                      self._relation(parent_type, details[0].node.name.value))
                     for response_name, details in grouped_field_set.items())
        plans[id(grouped_field_set)] = (grouped_field_set, plan)
        return plan

    def _relation(self, parent_type: GraphQLObjectType, name: str) -> Relation | None:
        """A field resolved directly (`resolve_directly`: no arguments, no permission, no extension) whose
        type is an object type without `is_type_of`, when no middleware wraps resolvers: executed by
        `execute_relation`, which takes the common case (an object at once) straight."""
        field = parent_type.fields.get(name)
        if field is None or self.middleware_manager is not None:
            return None
        takes = getattr(field.resolve, _TAKES, None)
        object_type = field.type.of_type if isinstance(field.type, GraphQLNonNull) else field.type
        if takes is None or not isinstance(object_type, GraphQLObjectType) or object_type.is_type_of is not None:
            return None
        return field, object_type, takes == "info"

    def complete_list_item_value(self, item: Any, complete_results: list[Any], item_type: Any,
                                 field_details_list: Any, info: Any, item_path: Path, position_context: Any) -> bool:
        """An item of a page placed as its rendered JSON is its answer as it is: not a selection to collect
        and execute, which nineteen of the twenty items of a page computed again after a comment are."""
        if type(item) is orjson.Fragment:
            complete_results.append(item)
            return False
        return super().complete_list_item_value(item, complete_results, item_type, field_details_list, info,
                                                item_path, position_context)

    def execute_fields(self, parent_type: GraphQLObjectType, source_value: Any, path: Path | None,
                       grouped_field_set: Any, position_context: Any) -> Any:
        """An item of a page may be placed as its rendered JSON, which is its answer as it is (a list's item
        is answered so before this, by `complete_list_item_value`; a streamed one, which graphql-core completes
        apart, here); an item placed to be executed is kept rendered once it is (schema/engine/item_fragments.py)."""
        if type(source_value) is orjson.Fragment:
            return source_value
        results = super().execute_fields(parent_type, source_value, path, grouped_field_set, position_context)
        return kept_when_done(self, source_value, path, results)

    def execute_field(self, parent_type: GraphQLObjectType, source: Any, field_details_list: Any, path: Path,
                      position_context: Any) -> Any:
        """A root field may be answered by its rendered JSON (schema/engine/rendered.py); any other as usual."""
        if path.prev is not None:
            return super().execute_field(parent_type, source, field_details_list, path, position_context)
        return answer_root_field(
            self, parent_type, [details.node for details in field_details_list], str(path.key),
            lambda: super(PlainFieldsFirst, self).execute_field(parent_type, source, field_details_list, path,
                                                                position_context))

    def serialized(self, value: Any, serialize: Callable[[Any], Any]) -> Any:
        """A plain field's value serialized, or Undefined where the ordinary way must decide (a null, an
        awaitable, a value the scalar refuses: it raises or nulls as graphql-core does, with the error in
        its place)."""
        if value is None or self.is_awaitable(value):
            return Undefined
        try:
            serialized = serialize(value)
        except Exception:
            return Undefined
        return Undefined if serialized is None else serialized


def prepare_execution(strawberry_schema: strawberry.Schema) -> None:
    """Once, when the schema is built: marked relations resolved directly (`resolve_directly`), then each
    object type's plain fields kept in its extensions, where `PlainFieldsFirst` finds them."""
    schema = graphql_schema(strawberry_schema)
    resolve_directly(schema)
    for named in schema.type_map.values():
        if isinstance(named, GraphQLObjectType):
            named.extensions[PLAIN] = plain_fields(named)


def resolve_directly(schema: GraphQLSchema) -> None:
    """Relations resolved by their function itself, given graphql-core's resolve info: Strawberry's wrapper
    around a resolver (its own info object, argument conversion, the extension chain) costs more than these
    resolvers. Two kinds qualify:

    - a field marked `metadata=DIRECT` (an author's `stat`, a shout's `authors`): its resolver takes `self`
      and `info` and reads nothing of the info but its context (a relation executed straight is given the
      context alone, `seam.ContextOnly`). A marked field that needs more is refused here, when the schema is
      built;
    - without a mark, a synchronous resolver of an object type (not a root) that takes `self` alone (a
      reaction's `stat`, an author's `pic`): given nothing but its object, it cannot need the wrapper.

    Neither may have arguments, a permission class or an extension."""
    roots = {root for root in (schema.query_type, schema.mutation_type, schema.subscription_type) if root}
    for named in schema.type_map.values():
        if not isinstance(named, GraphQLObjectType):
            continue
        for name, field in named.fields.items():
            definition = field_definition(field)
            if definition is None:
                continue
            resolver, marked = definition.base_resolver, definition.metadata.get("direct")
            if resolver is None:
                if marked:
                    raise TypeError(f"{named.name}.{name} cannot be resolved directly: it has no resolver")
                continue
            plain_call = (not field.args and not definition.permission_classes and not definition.extensions
                          and not resolver.is_async)
            parameters = [p.name for p in resolver.signature.parameters.values()]
            if marked:
                if not plain_call or parameters != ["self", "info"]:
                    raise TypeError(f"{named.name}.{name} cannot be resolved directly: it needs Strawberry's wrapper")
                field.resolve = _calling(cast(Callable[[Any, Any], Any], resolver.wrapped_func))
            elif plain_call and parameters == ["self"] and named not in roots:
                field.resolve = _given_the_object(cast(Callable[[Any], Any], resolver.wrapped_func))


def _calling(func: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def resolve(source: Any, info: Any) -> Any:
        return func(source, info)

    setattr(resolve, _TAKES, "info")
    return resolve


def _given_the_object(func: Callable[[Any], Any]) -> Callable[..., Any]:
    def resolve(source: Any, info: Any) -> Any:
        return func(source)

    setattr(resolve, OWN_FIELD, True)  # answers from its object alone (schema/engine/item_fragments.py)
    setattr(resolve, _TAKES, "object")  # the info it is given is not read: none is built (`execute_relation`)
    return resolve
