"""Strawberry and graphql-core past their public API: every such use of the project is here, and only here.

The server is fast because it goes around parts of these libraries (schema/engine/execution.py reads plain fields in
graphql-core's own field loop; pages read their selection from graphql-core's nodes; no middleware manager
is built per request; a field's arguments are converted by a plan made once). What it relies on for that is
not promised by their documentation, so an upgrade may change it without notice. Each reliance is a named
function or class below; `tests/schema/test_seams.py` has a canary for each, which fails naming the library,
the internal and what to do. The rest of the project uses these names and the libraries' public API only.

The versions these were written against are the upper bounds in `pyproject.toml`; raising a bound means
running the canaries first (`make upgrade` does).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from graphql import (
    ASTValidationRule,
    DocumentNode,
    FragmentDefinitionNode,
    GraphQLError,
    GraphQLField,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLResolveInfo,
    GraphQLSchema,
    GraphQLSyntaxError,
    MiddlewareManager,
)
from graphql.pyutils import Path, Undefined, gather_with_cancel
from strawberry.asgi import ASGIWebSocketAdapter as ASGIWebSocketAdapter  # re-exported for app/http/graphql_view.py
from strawberry.asgi import GraphQL
from strawberry.asgi import HTTPException as HTTPException  # re-exported: what Strawberry's view raises

# The adapter Strawberry's ASGI view wraps each Starlette request in (its `request_adapter_class`, from the
# `cross_web` package Strawberry depends on): app/http/exchange.py's adapter extends it.
from strawberry.asgi import StarletteRequestAdapter as StarletteRequestAdapter
from strawberry.extensions import SchemaExtension
from strawberry.http.exceptions import WebSocketDisconnected as WebSocketDisconnected  # re-exported
from strawberry.http.ides import get_graphql_ide_html
from strawberry.relay.types import GlobalID
from strawberry.schema import schema_converter
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.schema.schema import StreamResult as StreamResult  # re-exported: what a schema's stream yields
from strawberry.schema.schema import validate_document as _strawberry_validate
from strawberry.schema.schema_converter import GraphQLCoreConverter

# Strawberry's WebSocket protocol handlers, whose per-message `handle_message` app/http/subscription_messages.py
# overrides to hold each message to its protocol before the library indexes it.
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import BaseGraphQLTransportWSHandler
from strawberry.subscriptions.protocols.graphql_ws.handlers import BaseGraphQLWSHandler
from strawberry.types.arguments import _is_leaf_type, _is_optional_leaf_type, convert_argument, convert_arguments
from strawberry.types.base import StrawberryList, StrawberryMaybe, StrawberryOptional, has_object_definition
from strawberry.types.enum import has_enum_definition
from strawberry.types.execution import ExecutionContext
from strawberry.types.execution import PreExecutionError as PreExecutionError  # re-exported
from strawberry.types.lazy_type import LazyType
from strawberry.types.unset import UNSET

if TYPE_CHECKING:
    import strawberry
    from strawberry.http import GraphQLRequestProtocol
    from strawberry.schema.config import StrawberryConfig
    from strawberry.types import Info
    from strawberry.types.field import StrawberryField

# --- Strawberry ------------------------------------------------------------------------------------

# The key under which Strawberry keeps a field's definition (`StrawberryField`) in graphql-core's field
# extensions: how a graphql-core field leads back to its metadata (cache policy, state change, DIRECT).
DEFINITION_KEY: str = GraphQLCoreConverter.DEFINITION_BACKREF


def field_definition(field: GraphQLField | None) -> StrawberryField | None:
    """The Strawberry definition of a graphql-core field (None for a field Strawberry did not make)."""
    if field is None or not field.extensions:
        return None
    return field.extensions.get(DEFINITION_KEY)


def graphql_schema(schema: strawberry.Schema) -> GraphQLSchema:
    """The graphql-core schema a Strawberry schema runs (Strawberry's `_schema`)."""
    return schema._schema


def resolve_info(info: Info) -> GraphQLResolveInfo[Any]:
    """graphql-core's resolve info behind Strawberry's (`_raw_info`): its field nodes and fragments, which
    Strawberry's public `selected_fields` only gives converted, at a cost per request."""
    return info._raw_info


def validate_document(schema: GraphQLSchema, document: DocumentNode,
                      rules: tuple[type[ASTValidationRule], ...]) -> list[GraphQLError]:
    """graphql-core's validation with the rules Strawberry adds to it (`@oneOf`, `Maybe`), as Strawberry's
    own validation step runs it: the limits extension validates in its place."""
    return _strawberry_validate(schema, document, rules)


def request_validation_rules() -> tuple[type[ASTValidationRule], ...]:
    """The rules Strawberry validates a request's document with when nothing adds to them (the default of
    its `ExecutionContext.validation_rules`): an answer given without executing (schema/engine/rendered.py
    `answer_without_executing`) must have passed the same validation."""
    return _REQUEST_RULES


_REQUEST_RULES: tuple[type[ASTValidationRule], ...] = next(
    field for field in dataclasses.fields(ExecutionContext) if field.name == "validation_rules"
).default_factory()  # type: ignore[operator]  # a field with a factory: its default_factory is set


def graphql_ide_page() -> str:
    """Strawberry's GraphiQL page, as its view serves it."""
    return get_graphql_ide_html(graphql_ide="graphiql")


# Strawberry's ASGI view (app/http/graphql_view.py subclasses it): the methods it overrides beyond the documented
# ones (get_context, get_root_value, process_result, encode_json, decode_json), each still called by the
# view's request path (tests/schema/test_seams.py checks), and what it imports from Strawberry's HTTP internals.
VIEW_HOOKS = ("run", "parse_http_body", "get_sub_response", "should_render_graphql_ide", "graphql_ide_html",
              "request_adapter_class")



def stream_protocol(view: GraphQL[Any, Any], headers: Mapping[str, str]) -> GraphQLRequestProtocol:
    """The protocol a request's Accept header asks its answer in: "http", or a stream's (server-sent
    events, multipart), as Strawberry's own `parse_http_body` finds it (`_get_stream_transport_from_headers`)."""
    transport = view._get_stream_transport_from_headers(headers)
    return transport.protocol if transport else "http"


class FieldResolversUnwrapped:
    """A `strawberry.Schema` mixin: no middleware manager when no extension resolves fields (none of ours
    does), so graphql-core calls each resolver as it is. Strawberry builds a manager per request anyway
    (`_get_middleware_manager`), and graphql-core asks it for every resolved field's resolver, to get the
    same one back."""

    def _get_middleware_manager(self, extensions: list[SchemaExtension]) -> MiddlewareManager:
        if not any(extension._implements_resolve() for extension in extensions):
            return None  # type: ignore[return-value]  # graphql-core takes None for no middleware
        manager: MiddlewareManager = super()._get_middleware_manager(extensions)  # type: ignore[misc]
        return manager


# A field's arguments as Strawberry converts them for its resolver (`convert_arguments`, called by
# `get_arguments` for every resolved field with arguments): Strawberry asks each time, of every argument and
# of every field of every input, what its type is (annotations resolved, generics checked, names converted),
# ten times the value's own work for a page's inputs (`python -m bench.argument_cost`). `PlannedArguments`
# asks those questions once per field, with Strawberry's own predicates, and keeps the answer as a plan that
# does only the value's work; a type it does not plan (Maybe, GlobalID, an input that builds its own value)
# is converted by Strawberry's `convert_argument`. `tests/schema/test_argument_plans.py` converts every
# argument of the schema both ways and compares.

Convert = Callable[[Any], Any]
PLANS_KEPT = 4096  # fields whose plans are kept (a schema has a few hundred with arguments)


class _Unplanned(Exception):
    """A type whose values Strawberry's own `convert_argument` converts."""


def _kept(value: Any) -> Any:
    return value


def _none_and_unset_kept(convert: Convert) -> Convert:
    """`convert` for a value, None and UNSET kept as they are (`convert_argument` checks both first)."""
    def converted(value: Any) -> Any:
        return value if value is None or value is UNSET else convert(value)
    return converted


def _planned(type_: Any, registry: Mapping[object, Any], config: StrawberryConfig, inputs: dict[Any, Convert],
             ) -> Convert:
    """What `convert_argument(value, type_)` does to a value, its branches taken in its order."""
    if isinstance(type_, StrawberryMaybe):
        raise _Unplanned
    if isinstance(type_, StrawberryOptional):
        return _planned(type_.of_type, registry, config, inputs)
    if isinstance(type_, StrawberryList):
        of = type_.of_type
        if _is_leaf_type(of, registry, skip_classes=(GlobalID,)) or _is_optional_leaf_type(
                of, registry, skip_classes=(GlobalID,)):
            return _none_and_unset_kept(list)  # copied: graphql-core shares a default between requests
        item = _planned(of, registry, config, inputs)
        return _none_and_unset_kept(lambda values: [item(value) for value in values])
    if _is_leaf_type(type_, registry):
        if type_ is GlobalID:
            raise _Unplanned
        return _kept
    if isinstance(type_, LazyType):
        return _planned(type_.resolve_type(), registry, config, inputs)
    if has_enum_definition(type_):
        return _planned(type_.__strawberry_definition__, registry, config, inputs)
    if has_object_definition(type_):
        return _planned_input(type_, registry, config, inputs)
    raise _Unplanned  # Strawberry raises its UnsupportedTypeError


def _planned_input(type_: Any, registry: Mapping[object, Any], config: StrawberryConfig,
                   inputs: dict[Any, Convert]) -> Convert:
    """An input object's conversion: its fields with no default None, the fields given converted."""
    if type_ in inputs:  # an input nested in itself
        return inputs[type_]
    definition = type_.__strawberry_definition__
    if definition.from_input is not None:
        raise _Unplanned
    defaults = {field.python_name: None for field in definition.fields
                if field.default_value is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
                } if definition.is_input else {}
    fields: list[tuple[str, str, Convert]] = []

    def build(value: Any) -> Any:
        kwargs = dict(defaults)
        for name, python_name, convert in fields:
            if name in value:
                kwargs[python_name] = convert(value[name])
        return type_(**kwargs)

    inputs[type_] = planned = _none_and_unset_kept(build)
    fields.extend((config.name_converter.from_field(field), field.python_name,
                   _planned(field.resolve_type(type_definition=definition), registry, config, inputs))
                  for field in definition.fields)
    return planned


class PlannedArguments:
    """Strawberry's `convert_arguments`, each field's arguments planned once (`plan_argument_conversion`)."""

    def __init__(self, size: int = PLANS_KEPT) -> None:
        self.size = size
        # id of a field's argument list -> the list, the registry and config planned for, and its plan:
        # (argument's GraphQL name, Python name, its conversion or None for Strawberry's)
        self._plans: dict[int, tuple[Any, Any, Any, list[tuple[str, str, Convert | None, Any]]]] = {}

    def __call__(self, value: dict[str, Any], arguments: list[Any], scalar_registry: Mapping[object, Any],
                 config: StrawberryConfig, info: Info | None = None) -> dict[str, Any]:
        if not arguments:
            return {}
        kwargs = {}
        for name, python_name, convert, argument in self._plan_of(arguments, scalar_registry, config):
            if name in value:
                kwargs[python_name] = convert(value[name]) if convert is not None else convert_argument(
                    value=value[name], type_=argument.type, config=config, scalar_registry=scalar_registry,
                    info=info, path=(name,))
        return kwargs

    def _plan_of(self, arguments: list[Any], registry: Mapping[object, Any], config: StrawberryConfig,
                 ) -> list[tuple[str, str, Convert | None, Any]]:
        """The plan kept for these arguments, made now if none is (or one for another schema's converter)."""
        known = self._plans.get(id(arguments))
        if known is None or known[0] is not arguments or known[1] is not registry or known[2] is not config:
            known = (arguments, registry, config, self._plan(arguments, registry, config))
            self._plans[id(arguments)] = known
            if len(self._plans) > self.size:
                del self._plans[next(iter(self._plans))]  # the oldest
        return known[3]

    @staticmethod
    def _plan(arguments: list[Any], registry: Mapping[object, Any], config: StrawberryConfig,
              ) -> list[tuple[str, str, Convert | None, Any]]:
        plan: list[tuple[str, str, Convert | None, Any]] = []
        for argument in arguments:
            try:
                convert: Convert | None = _planned(argument.type, registry, config, {})
            except _Unplanned:
                convert = None
            plan.append((config.name_converter.from_argument(argument), argument.python_name, convert, argument))
        return plan


ArgumentConversion = Callable[..., dict[str, Any]]  # `convert_arguments(value, arguments, scalar_registry, config)`
STRAWBERRYS_CONVERSION: ArgumentConversion = convert_arguments  # Strawberry's own, unplanned


def argument_conversion() -> ArgumentConversion:
    """What Strawberry's resolvers convert their arguments with, in this process."""
    converter: ArgumentConversion = schema_converter.convert_arguments
    return converter


def use_argument_conversion(convert: ArgumentConversion) -> None:
    """Strawberry's resolvers convert their arguments with `convert` from now on, in this process."""
    schema_converter.convert_arguments = convert


def plan_argument_conversion() -> None:
    """Strawberry's resolvers convert their arguments by plan (`PlannedArguments`), in this process."""
    if not isinstance(argument_conversion(), PlannedArguments):
        use_argument_conversion(PlannedArguments())


def conversion_of(schema: strawberry.Schema) -> tuple[Mapping[object, Any], StrawberryConfig]:
    """The scalar registry and the config a schema's resolvers convert their arguments under."""
    return schema.schema_converter.scalar_registry, schema.config


TransportWSHandler = BaseGraphQLTransportWSHandler
LegacyWSHandler = BaseGraphQLWSHandler

# --- graphql-core --------------------------------------------------------------------------------

# The end of the message graphql-core's parser gives when a document has more tokens than allowed.
_TOKEN_LIMIT_WORDING = "tokens. Parsing aborted."


def over_token_limit(error: GraphQLSyntaxError) -> bool:
    """Whether the parser refused a document for its number of tokens (graphql-core tells only in words)."""
    return error.message.endswith(_TOKEN_LIMIT_WORDING)


# What a field loop knows of the request it executes (schema/engine/rendered.py keys a root field's answer by them):
# `ExecutionContext` attributes, not documented as API.

def fragment_definitions(executor: Any) -> Mapping[str, FragmentDefinitionNode]:
    """The document's fragment definitions, by name (`fragment_definitions`)."""
    fragments: Mapping[str, FragmentDefinitionNode] = executor.fragment_definitions
    return fragments


def coerced_variables(executor: Any) -> Mapping[str, Any]:
    """The operation's variables as execution uses them: coerced, defaults applied (`variable_values`)."""
    variables: Mapping[str, Any] = executor.variable_values.coerced
    return variables


def field_errors(executor: Any) -> list[GraphQLError]:
    """The errors collected so far (`collected_errors`): a nullable field's error leaves null in its place."""
    errors: list[GraphQLError] = executor.collected_errors.errors
    return errors


# A plain field's reading (schema/engine/execution.py): its attribute, the Python type its scalar returns unchanged
# (None: always serialize), and the scalar's serialize.
PlainField = tuple[str, type | None, Callable[[Any], Any]]
# A relation resolved given its object (schema/engine/execution.py `resolve_directly`), whose type is an object type
# with no `is_type_of`: its field, that object type, and whether its resolver takes a resolve info.
Relation = tuple[GraphQLField, GraphQLObjectType, bool]
PlannedField = tuple[str, Any, PlainField | None, Relation | None]
_MISSING = object()
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


class ContextOnly:
    """What a relation executed straight (`FieldLoop.execute_relation`) gives a resolver that takes an info:
    the request's context, all such a resolver reads of it (schema/engine/execution.py `resolve_directly`),
    made once per request where a resolve info would be built for every object of a page."""

    __slots__ = ("context",)

    def __init__(self, context: Any) -> None:
        self.context = context


class FieldLoop(StrawberryGraphQLCoreExecutionContext):
    """graphql-core's `ExecutionContext.execute_fields` (marked private there), copied, with two branches
    added: a field its plan reads plainly (`plan`, in the subclass) is read in the loop itself, and a relation
    its plan names is executed by `execute_relation`. The copies follow graphql-core 3.3 (`tests/schema/test_seams.py`
    keeps the hash of each source copied from)."""

    def plan(self, parent_type: GraphQLObjectType, grouped_field_set: Any) -> tuple[PlannedField, ...]:
        raise NotImplementedError

    def serialized(self, value: Any, serialize: Callable[[Any], Any]) -> Any:
        raise NotImplementedError

    def execute_fields(self, parent_type: GraphQLObjectType, source_value: Any, path: Path | None,
                       grouped_field_set: Any, position_context: Any) -> Any:
        """The same loop, errors and gathering of awaitables as graphql-core's. Fields executed serially (a
        mutation's root fields) have resolvers: none is plain."""
        results: dict[str, Any] = {}
        is_awaitable = self.is_awaitable
        execute_field = self.execute_field
        awaitable_fields: list[str] = []
        try:
            for response_name, field_details_list, plain, relation in self.plan(parent_type, grouped_field_set):
                if relation is not None:
                    result = self.execute_relation(parent_type, source_value, field_details_list,
                                                   Path(path, response_name, parent_type.name), relation,
                                                   position_context)
                    results[response_name] = result
                    if is_awaitable(result):
                        awaitable_fields.append(response_name)
                    continue
                if plain is not None:
                    value: Any = getattr(source_value, plain[0], _MISSING)
                    kind = type(value)
                    # what its scalar returns as it is (the exact type, not a subclass; an Int in range)
                    if kind is plain[1] and (kind is not int or _INT_MIN <= value <= _INT_MAX):
                        results[response_name] = value
                        continue
                    value = self.serialized(value, plain[2]) if value is not _MISSING else Undefined
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

    def complete_list_item_value(self, item: Any, complete_results: list[Any], item_type: Any, field_details_list: Any,
                                 info: GraphQLResolveInfo[Any], item_path: Path, position_context: Any) -> bool:
        """graphql-core's, with the common case of a list taken straight: an item that is an object, of an
        object type without `is_type_of` (null allowed or not), has its selection executed, as `complete_value`
        and `complete_object_value` would end up doing after their checks of the type, for every item of a
        page. Anything else (null, an error, another type) is completed the ordinary way; errors are handled
        in the same place."""
        object_type = item_type.of_type if isinstance(item_type, GraphQLNonNull) else item_type
        if (item is None or item is Undefined or isinstance(item, Exception)
                or not isinstance(object_type, GraphQLObjectType) or object_type.is_type_of is not None):
            return super().complete_list_item_value(item, complete_results, item_type, field_details_list, info,
                                                    item_path, position_context)
        try:
            completed = self._selection_of(object_type, item, field_details_list, item_path, position_context)
        except Exception as raw_error:
            self.handle_field_error(raw_error, item_type, field_details_list, item_path)
            complete_results.append(None)
            return False
        if not self.is_awaitable(completed):
            complete_results.append(completed)
            return False

        async def await_completed() -> Any:
            try:
                return await completed
            except Exception as raw_error:
                self.handle_field_error(raw_error, item_type, field_details_list, item_path)
                return None

        complete_results.append(await_completed())
        return True

    def _selection_of(self, object_type: GraphQLObjectType, obj: Any, field_details_list: Any, path: Path,
                      position_context: Any) -> Any:
        """An object's selection executed, where `complete_object_value` ends up for a type without `is_type_of`."""
        grouped_field_set, new_defer_usages, _ = self.collect_subfields(object_type, field_details_list)
        return self.execute_collected_subfields(object_type, obj, path, grouped_field_set, new_defer_usages,
                                                position_context)

    @functools.cached_property
    def _context_only(self) -> ContextOnly:
        return ContextOnly(self.context_value)

    def _info_of(self, field: Any, field_details_list: Any, parent_type: GraphQLObjectType,
                 path: Path) -> GraphQLResolveInfo[Any]:
        """The resolve info of a relation (a method, not a closure made on every relation executed)."""
        return self.build_resolve_info(field, [details.node for details in field_details_list], parent_type, path)

    def execute_relation(self, parent_type: GraphQLObjectType, source: Any, field_details_list: Any, path: Path,
                         relation: Relation, position_context: Any) -> Any:
        """graphql-core's `execute_field` for a relation its plan vouches for (no arguments, no middleware, an
        object type with no `is_type_of`), with the common case taken straight: a resolver that gives an object
        at once has its selection executed, as `complete_value` would end up doing after its checks of the
        type (non-null, list, leaf, abstract, object). Anything else (null, an awaitable, an error) is completed
        the ordinary way, with the same errors in the same places."""
        field, object_type, wants_info = relation
        try:
            result = field.resolve(source, self._context_only if wants_info else None)  # type: ignore[misc]
            if result is not None and not isinstance(result, Exception) and not self.is_awaitable(result):
                completed = self._selection_of(object_type, result, field_details_list, path, position_context)
            else:
                info = self._info_of(field, field_details_list, parent_type, path)
                if self.is_awaitable(result):
                    return self.complete_awaitable_value(field.type, field_details_list, info, path, result,
                                                         position_context)
                completed = self.complete_value(field.type, field_details_list, info, path, result,
                                                position_context)
            if self.is_awaitable(completed):
                async def await_completed() -> Any:
                    try:
                        return await completed
                    except Exception as raw_error:
                        self.handle_field_error(raw_error, field.type, field_details_list, path)
                        return None

                return await_completed()
        except Exception as raw_error:
            self.handle_field_error(raw_error, field.type, field_details_list, path)
            return None
        return completed
