"""Plain fields executed plainly: the execution context Strawberry runs graphql-core with, with one shortcut.

A page of twenty shouts is about five hundred fields, four in five of them *plain*: an attribute of the
object, a scalar or an enum, no arguments, no resolver of ours (`title`, `slug`, `stat.rating`). For each,
graphql-core builds a resolve info, looks for arguments, calls Strawberry's default resolver (three calls
deep) and completes the value through its type checks, which together cost more than everything else a
warm read does. Here such a field is read from its object and serialized by its type directly.

Only what is certain takes the shortcut: a value that is there and that its type serializes to something.
A missing value (null), an awaitable, or a value its type refuses goes the ordinary way, which raises or
nulls exactly as graphql-core does. Which fields are plain is decided once, when the schema is built
(`prepare_execution`): Strawberry marks the resolvers it makes for attribute fields (`_is_default`), and
keeps each field's definition, whose `python_name` is the attribute.

The loop over an object's fields (`execute_fields`) follows a plan made once per selection of a request
(the twenty shouts of a page share one): for a plain field, its attribute and serializer, so that it is
read in the loop itself, without a path, a call of `execute_field` or a look-up of its name; and when the
value is of the Python type its scalar returns as it is (a `str` for a String or an ID, a `bool` for a
Boolean, an `int` in range for an Int), without calling the serializer either: that is what it returns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
from graphql.pyutils import Path, Undefined, gather_with_cancel
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.schema.schema_converter import GraphQLCoreConverter

# Field metadata of a relation resolved directly (`resolve_directly`).
DIRECT = {"direct": True}
# A plain field: its attribute, the Python type its scalar returns unchanged (None: always serialize), and
# the scalar's serialize. Kept per field name under PLAIN in each object type's extensions.
PlainField = tuple[str, type | None, Callable[[Any], Any]]
Plain = dict[str, PlainField]
PLAIN = "discours-plain-fields"
_MISSING = object()
_NONE: Plain = {}
# graphql-core's own scalars return a value of these types as it is (an Int only within 32 bits).
_RETURNED_AS_IS: dict[GraphQLScalarType | GraphQLEnumType, type] = {
    GraphQLString: str, GraphQLID: str, GraphQLBoolean: bool, GraphQLInt: int}
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


def plain_fields(object_type: GraphQLObjectType) -> Plain:
    """The fields of a type that are an attribute holding a scalar or an enum, with no arguments."""
    plain: Plain = {}
    for name, field in object_type.fields.items():
        leaf = field.type.of_type if isinstance(field.type, GraphQLNonNull) else field.type
        definition = (field.extensions or {}).get(GraphQLCoreConverter.DEFINITION_BACKREF)
        if (not field.args and isinstance(leaf, (GraphQLScalarType, GraphQLEnumType)) and definition is not None
                and getattr(field.resolve, "_is_default", False)):
            plain[name] = (definition.python_name, _RETURNED_AS_IS.get(leaf), leaf.serialize)
    return plain


class PlainFieldsFirst(StrawberryGraphQLCoreExecutionContext):
    """Runs a schema that `prepare_execution` prepared (each type carries its plain fields)."""

    _plans: dict[int, tuple[Any, tuple[tuple[str, Any, PlainField | None], ...]]]

    def execute_fields(self, parent_type: GraphQLObjectType, source_value: Any, path: Path | None,
                       grouped_field_set: Any, position_context: Any) -> Any:
        """graphql-core's `execute_fields` (the same loop, errors and gathering of awaitables), with plain fields
        read in the loop itself. Fields executed serially (a mutation's root fields) have
        resolvers: none is plain."""
        results: dict[str, Any] = {}
        is_awaitable = self.is_awaitable
        execute_field = self.execute_field
        awaitable_fields: list[str] = []
        try:
            for response_name, field_details_list, plain in self._plan(parent_type, grouped_field_set):
                if plain is not None:
                    value: Any = getattr(source_value, plain[0], _MISSING)
                    kind = type(value)
                    # what its scalar returns as it is (the exact type, not a subclass; an Int in range)
                    if kind is plain[1] and (kind is not int or _INT_MIN <= value <= _INT_MAX):
                        results[response_name] = value
                        continue
                    value = self._serialized(value, plain[2])
                    if value is not Undefined:
                        results[response_name] = value
                        continue
                result = execute_field(parent_type, source_value, field_details_list,
                                       Path(path, response_name, parent_type.name), position_context)
                if result is not Undefined:
                    results[response_name] = result
                    if is_awaitable(result):
                        awaitable_fields.append(response_name)
        except Exception:
            if awaitable_fields:  # settled, as they may fail too
                self.settle_in_background([results[field] for field in awaitable_fields])
            raise
        if not awaitable_fields:
            return results

        async def get_results() -> dict[str, Any]:
            if len(awaitable_fields) == 1:
                results[awaitable_fields[0]] = await results[awaitable_fields[0]]
            else:
                awaited = await gather_with_cancel(*(results[field] for field in awaitable_fields))
                results.update(zip(awaitable_fields, awaited, strict=True))
            return results

        return get_results()

    def _plan(self, parent_type: GraphQLObjectType, grouped_field_set: Any
              ) -> tuple[tuple[str, Any, PlainField | None], ...]:
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
        plan = tuple((response_name, details, plain.get(details[0].node.name.value))
                     for response_name, details in grouped_field_set.items())
        plans[id(grouped_field_set)] = (grouped_field_set, plan)
        return plan

    def _serialized(self, value: Any, serialize: Callable[[Any], Any]) -> Any:
        """A plain field's value serialized, or Undefined where the ordinary way must decide (a null, a
        missing attribute, an awaitable, a value the scalar refuses: it raises or nulls as graphql-core
        does, with the error in its place)."""
        if value is None or value is _MISSING or self.is_awaitable(value):
            return Undefined
        try:
            serialized = serialize(value)
        except Exception:
            return Undefined
        return Undefined if serialized is None else serialized


def prepare_execution(schema: GraphQLSchema) -> None:
    """Once, when the schema is built: marked relations resolved directly (`resolve_directly`), then each
    object type's plain fields kept in its extensions, where `PlainFieldsFirst` finds them."""
    resolve_directly(schema)
    for named in schema.type_map.values():
        if isinstance(named, GraphQLObjectType):
            named.extensions[PLAIN] = plain_fields(named)


def resolve_directly(schema: GraphQLSchema) -> None:
    """Relation fields marked `metadata=DIRECT` (an author's `stat`, a shout's `authors`) are resolved by
    their function itself, given graphql-core's resolve info: Strawberry's wrapper around a resolver (its
    own info object, argument conversion, the extension chain) costs more than these resolvers, which take
    no arguments and read nothing of the info but its context. A marked field that needs more is refused
    here, when the schema is built."""
    for named in schema.type_map.values():
        if not isinstance(named, GraphQLObjectType):
            continue
        for name, field in named.fields.items():
            definition = (field.extensions or {}).get(GraphQLCoreConverter.DEFINITION_BACKREF)
            if definition is None or not definition.metadata.get("direct"):
                continue
            resolver = definition.base_resolver
            if (resolver is None or resolver.is_async or field.args or definition.permission_classes
                    or definition.extensions or [p.name for p in resolver.signature.parameters.values()]
                    != ["self", "info"]):
                raise TypeError(f"{named.name}.{name} cannot be resolved directly: it needs Strawberry's wrapper")
            field.resolve = _calling(resolver.wrapped_func)


def _calling(func: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def resolve(source: Any, info: Any) -> Any:
        return func(source, info)

    return resolve
