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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphql import GraphQLEnumType, GraphQLNonNull, GraphQLObjectType, GraphQLScalarType, GraphQLSchema
from graphql.pyutils import Undefined
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.schema.schema_converter import GraphQLCoreConverter

# Field metadata of a relation resolved directly (`resolve_directly`).
DIRECT = {"direct": True}
# field name -> (attribute, the leaf type's serialize), under PLAIN in an object type's extensions
Plain = dict[str, tuple[str, Callable[[Any], Any]]]
PLAIN = "discours-plain-fields"
_MISSING = object()
_NONE: Plain = {}


def plain_fields(object_type: GraphQLObjectType) -> Plain:
    """The fields of a type that are an attribute holding a scalar or an enum, with no arguments."""
    plain: Plain = {}
    for name, field in object_type.fields.items():
        leaf = field.type.of_type if isinstance(field.type, GraphQLNonNull) else field.type
        definition = (field.extensions or {}).get(GraphQLCoreConverter.DEFINITION_BACKREF)
        if (not field.args and isinstance(leaf, (GraphQLScalarType, GraphQLEnumType)) and definition is not None
                and getattr(field.resolve, "_is_default", False)):
            plain[name] = (definition.python_name, leaf.serialize)
    return plain


class PlainFieldsFirst(StrawberryGraphQLCoreExecutionContext):
    """Runs a schema that `prepare_execution` prepared (each type carries its plain fields)."""

    def execute_field(self, parent_type: GraphQLObjectType, source: Any, field_details_list: Any, path: Any,
                      position_context: Any) -> Any:
        found = parent_type.extensions.get(PLAIN, _NONE).get(field_details_list[0].node.name.value)
        if found is not None:
            value = getattr(source, found[0], _MISSING)
            if value is not None and value is not _MISSING and not self.is_awaitable(value):
                try:
                    serialized = found[1](value)
                except Exception:  # the ordinary way reports it where it belongs
                    serialized = Undefined
                if serialized is not Undefined and serialized is not None:
                    return serialized
        return super().execute_field(parent_type, source, field_details_list, path, position_context)


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
