"""What one GraphQL request may ask, checked before any resolver runs.

A document is refused, with a GraphQL error whose `extensions.code` names the limit, when it has more
tokens than `tokens` (the parser stops counting there, so a huge document costs little to refuse),
nests deeper than `depth`, uses more aliases than `aliases`, or costs more than `cost`. The depth and
alias checks are Strawberry's own rules (`QueryDepthLimiter`, `MaxAliasesLimiter`); they run *before*
graphql-core's validation, whose overlapping-fields rule is quadratic in the number of fields, so the
hostile document never reaches it. The cost is priced on valid documents only.

Cost: a scalar is free, an object field costs 1 plus its selection, and a list field multiplies that by
the number of items it may return: its `limit` argument (top level or in `options`, variables
resolved, clamped to the page size by the resolvers' own rule, `resolvers.paging.clamped`), else
`list_size`. Nesting multiplies, so `load_shouts_by(limit: 100) { authors { shouts ... } }` is priced
as what it would read.

One input check rides along, because it too must come before any resolver: no string, in a variable or
a literal, may hold a NUL character (PostgreSQL cannot store one in text): BAD_USER_INPUT."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLInterfaceType,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLSyntaxError,
    InlineFragmentNode,
    SelectionSetNode,
    StringValueNode,
    ValueNode,
    Visitor,
    get_named_type,
    get_nullable_type,
    get_operation_ast,
    is_list_type,
    parse,
    validate,
    value_from_ast_untyped,
    visit,
)
from graphql.validation import ASTValidationRule
from strawberry.extensions import MaxAliasesLimiter, QueryDepthLimiter, SchemaExtension

from config.settings import LimitSettings
from resolvers.paging import clamped
from schema.engine.seam import graphql_schema, over_token_limit, validate_document

# extensions.code of each refusal (and of plain parse and validation errors, as Apollo names them).
PARSE_FAILED = "GRAPHQL_PARSE_FAILED"
VALIDATION_FAILED = "GRAPHQL_VALIDATION_FAILED"
TOO_MANY_TOKENS = "TOO_MANY_TOKENS"
TOO_DEEP = "QUERY_TOO_DEEP"
TOO_MANY_ALIASES = "TOO_MANY_ALIASES"
TOO_COSTLY = "QUERY_TOO_COSTLY"
BAD_USER_INPUT = "BAD_USER_INPUT"


@dataclass(frozen=True)
class Limits:
    """What one request may ask; the defaults live in the settings (`Limits.of`)."""

    tokens: int
    depth: int
    aliases: int
    cost: int
    page_size: int  # a `limit` argument counts up to this (the resolvers clamp to it)
    list_size: int  # a list field with no `limit` argument counts as this many items
    parsed_documents: int  # parsed documents kept per worker, by their text
    batch: int  # operations in one batched HTTP request

    @classmethod
    def of(cls, settings: LimitSettings) -> Limits:
        return cls(tokens=settings.max_query_tokens, depth=settings.max_query_depth,
                   aliases=settings.max_query_aliases, cost=settings.max_query_cost,
                   page_size=settings.max_page_size, list_size=settings.query_cost_list_size,
                   parsed_documents=settings.parsed_documents_cache, batch=settings.max_batch_operations)


# A NUL character can only enter a document's string literal as an escape.
NUL_ESCAPE = re.compile(r"\\u(?:0000|\{0+\})")


def refusal(message: str, code: str, **extensions: Any) -> GraphQLError:
    return GraphQLError(message, extensions={"code": code, **extensions})


class LimitChecks:
    """The per-worker part of the checks. A document's text always parses to the same tree and validates
    to the same errors, so both are cached by the text (`parsed_documents` of each): a document seen before
    costs neither a parse nor a validation, only the checks that depend on the variables (NUL, cost)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.parse = lru_cache(maxsize=limits.parsed_documents)(self._parse)
        self._static_errors = lru_cache(maxsize=limits.parsed_documents)(self._validate)
        # A document's cost without variables is its text's alone: worked out once, like its validation.
        self._cost_without_variables = lru_cache(maxsize=limits.parsed_documents)(self._cost_of_text)
        self._depth_rules = QueryDepthLimiter(max_depth=limits.depth).validation_rules
        self._alias_rules = MaxAliasesLimiter(max_alias_count=limits.aliases).validation_rules

    def _parse(self, query: str) -> DocumentNode:
        try:
            return parse(query, max_tokens=self.limits.tokens)
        except GraphQLSyntaxError as exc:
            too_long = over_token_limit(exc)
            raise GraphQLError(exc.message, source=exc.source, positions=exc.positions, extensions={
                "code": TOO_MANY_TOKENS if too_long else PARSE_FAILED}) from None
        except RecursionError:  # nesting deep enough to exhaust the parser's stack, within the tokens
            raise refusal(f"The document nests deeper than {self.limits.depth} levels", TOO_DEEP) from None

    def _validate(self, schema: GraphQLSchema, query: str, rules: tuple[type[ASTValidationRule], ...],
                  ) -> tuple[GraphQLError, ...]:
        """Depth and aliases first (cheap, linear), so a hostile document never reaches graphql-core's
        validation proper (`rules`, Strawberry's), whose overlapping-fields rule is quadratic."""
        document = self.parse(query)
        for limit_rules, code in ((self._depth_rules, TOO_DEEP), (self._alias_rules, TOO_MANY_ALIASES)):
            try:
                errors = validate(schema, document, limit_rules)
            except KeyError:  # a spread of an unknown fragment: validation proper refuses it
                break
            if errors:
                return (refusal(errors[0].message, code),)
        return tuple(validate_document(schema, document, rules))

    def _cost_of_text(self, schema: GraphQLSchema, query: str, operation_name: str | None) -> int:
        return query_cost(schema, self.parse(query), operation_name, {}, self.limits)

    def errors(self, schema: GraphQLSchema, query: str, rules: tuple[type[ASTValidationRule], ...],
               operation_name: str | None, variables: Mapping[str, Any]) -> list[GraphQLError]:
        """Why this request may not run (an empty list when it may): its document's limits and validation
        (cached), then the NUL check and the cost, which depend on the variables."""
        if errors := self._static_errors(schema, query, rules):
            return list(errors)
        document = self.parse(query)
        if _has_nul(variables) or (NUL_ESCAPE.search(query) and _has_nul(_string_literals(document))):
            return [refusal("Strings may not contain the NUL character (U+0000)", BAD_USER_INPUT)]
        cost = query_cost(schema, document, operation_name, variables, self.limits) if variables \
            else self._cost_without_variables(schema, query, operation_name)
        if cost > self.limits.cost:
            return [refusal(f"The query costs {cost}, more than the {self.limits.cost} allowed; ask for "
                            "smaller pages or fewer nested lists", TOO_COSTLY, cost=cost, limit=self.limits.cost)]
        return []


def request_limits(checks: LimitChecks) -> type[SchemaExtension]:
    """The schema extension (one instance per request, as Strawberry wants) over one worker's checks."""

    class RequestLimits(SchemaExtension):
        def on_parse(self) -> Iterator[None]:
            context = self.execution_context
            if context.graphql_document is None and context.query:
                context.graphql_document = checks.parse(context.query)
            yield

        def on_validate(self) -> Iterator[None]:
            context = self.execution_context
            if context.query and context.pre_execution_errors is None:
                # Set, even to [], so Strawberry's own validation step does not validate again.
                context.pre_execution_errors = checks.errors(
                    graphql_schema(context.schema), context.query, tuple(context.validation_rules),
                    context.operation_name, context.variables or {})
            yield

    return RequestLimits


def _has_nul(value: Any) -> bool:
    """Whether a NUL character is in any string of `value` (PostgreSQL cannot store one in text)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def _string_literals(document: DocumentNode) -> list[str]:
    found: list[str] = []

    class Strings(Visitor):
        def enter_string_value(self, node: StringValueNode, *_: Any) -> None:
            found.append(node.value)

    visit(document, Strings())
    return found


def query_cost(schema: GraphQLSchema, document: DocumentNode, operation_name: str | None,
               variables: Mapping[str, Any], limits: Limits) -> int:
    """The cost of the operation that would run (0 when there is none to pick: validation says why)."""
    operation = get_operation_ast(document, operation_name)
    root = schema.get_root_type(operation.operation) if operation else None
    if operation is None or root is None:
        return 0
    fragments = {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}
    return _Pricer(schema, fragments, dict(variables), limits).selection(operation.selection_set, root, frozenset())


@dataclass
class _Pricer:
    schema: GraphQLSchema
    fragments: dict[str, FragmentDefinitionNode]
    variables: dict[str, Any]
    limits: Limits

    def selection(self, selection_set: SelectionSetNode, parent: Any, seen: frozenset[str]) -> int:
        total = 0
        for node in selection_set.selections:
            if isinstance(node, FieldNode):
                total += self.field(node, parent, seen)
            elif isinstance(node, InlineFragmentNode):
                on = self.schema.get_type(node.type_condition.name.value) if node.type_condition else parent
                total += self.selection(node.selection_set, on or parent, seen)
            elif isinstance(node, FragmentSpreadNode) and node.name.value not in seen:
                fragment = self.fragments.get(node.name.value)
                if fragment is not None:
                    on = self.schema.get_type(fragment.type_condition.name.value) or parent
                    total += self.selection(fragment.selection_set, on, seen | {node.name.value})
        return total

    def field(self, node: FieldNode, parent: Any, seen: frozenset[str]) -> int:
        if node.selection_set is None or not isinstance(parent, GraphQLObjectType | GraphQLInterfaceType):
            return 0  # a scalar, or a field validation will refuse
        definition = parent.fields.get(node.name.value)
        if definition is None:
            return 0
        inner = 1 + self.selection(node.selection_set, get_named_type(definition.type), seen)
        if not is_list_type(get_nullable_type(definition.type)):
            return inner
        return self.items(node) * inner

    def items(self, node: FieldNode) -> int:
        arguments = {a.name.value: a.value for a in node.arguments or ()}
        limit = self.value(arguments.get("limit"))
        if limit is None:
            options = self.value(arguments.get("options"))
            limit = options.get("limit") if isinstance(options, dict) else None
        if isinstance(limit, int) and not isinstance(limit, bool):
            return max(1, clamped(limit, self.limits.page_size))
        return self.limits.list_size

    def value(self, node: ValueNode | None) -> Any:
        return None if node is None else value_from_ast_untyped(node, self.variables)

