"""Root fields answered from their rendered JSON (cache/response/rendered.py) instead of being executed.

Which fields: a root field that declares `rendered=True` (schema/engine/cache_control.py), a public answer read
often and costly to execute field by field (all topics, a community's topics, pages of shouts and of
reactions: twenty shouts with their authors, topics and counters are hundreds of fields). When: the view
sets `Context.rendered` for a single query whose policy is public; the in-process executions (the CLI, the
precache, tests) never have it, so their results hold only plain values.

The key of an answer names everything it is computed from: the field node as written (its arguments, its
selection, its directives), the document's fragment definitions, and the operation's variables as
execution coerced them (defaults applied). Two documents that ask the same field the same way share it;
any difference gives another key.

A hit is placed in the result as an `orjson.Fragment`, which the view's orjson encoder writes as it is;
when the field is the whole query, the view sends the response without executing anything
(`answer_without_executing`: Strawberry's parse, validation and execution were most of the CPU such an
answer cost, with the response cache off or before the response is kept). A miss executes the field as
usual under a capture of its own (cache/response_capture.py, which hands what it saw on to the
response's) and keeps the answer rendered when the operation asks for that field alone. With other fields
beside it, their loads share batches (DataLoaders) whose reads report to the capture of
whichever field's task ran the batch, so one field's capture could miss a read it depended on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    GraphQLError,
    GraphQLObjectType,
    GraphQLSchema,
    OperationType,
    get_operation_ast,
    get_variable_values,
    print_ast,
)
from graphql.pyutils import Undefined

from cache import keys, response_capture
from cache.response.rendered import ToKeep, keep_all, keep_rendered, read_rendered
from cache.response.responses import etag_of
from cache.store import Cache
from schema.engine.cache_control import hint_of
from schema.engine.item_fragments import rendering_items
from schema.engine.limits import LimitChecks
from schema.engine.node_memo import NodeMemo
from schema.engine.seam import coerced_variables, field_errors, fragment_definitions, request_validation_rules


@dataclass(frozen=True, slots=True)
class RenderedAnswers:
    """A request's permission to answer root fields from rendered JSON (set on its context by the view)."""

    cache: Cache
    ttl: int  # seconds a rendered answer is kept at most (and at most its field's max age)
    missed: str | None = None  # a key looked up already for this request (`answer_without_executing`), absent
    # Set by a caller that stores the whole response afterwards (the view, with the response cache on): an
    # answer to keep is handed over here, and kept in the round trip that stores the response.
    handed: list[ToKeep] | None = None


def rendered_ttl(parent_type: GraphQLObjectType, node: FieldNode, answers: RenderedAnswers) -> int:
    """How long the answer of root field `node` may be kept rendered; 0 when it is not."""
    hint = hint_of(parent_type.fields.get(node.name.value))
    if hint is None or not hint.rendered or not hint.max_age:
        return 0
    return min(hint.max_age, answers.ttl)


def selection_key(executor: Any, nodes: list[FieldNode]) -> str | None:
    """The key of a root field's answer to this request; None when its variables have no JSON form."""
    return _key(nodes, fragment_definitions(executor), coerced_variables(executor))


def _key(nodes: list[FieldNode], fragments: Mapping[str, FragmentDefinitionNode],
         variables: Mapping[str, Any]) -> str | None:
    try:
        encoded = orjson.dumps(dict(variables), option=orjson.OPT_SORT_KEYS)
    except TypeError:  # a value orjson cannot write: not kept rather than keyed by a lossy form
        return None
    digest = hashlib.blake2b(_printed(nodes, fragments) + b"\0" + encoded, digest_size=16).hexdigest()
    return keys.rendered(digest)


def _printed(nodes: list[FieldNode], fragments: Mapping[str, FragmentDefinitionNode]) -> bytes:
    """The field as written and the document's fragment definitions, printed: once per field of a parsed
    document (printing them on each request was 2-3% of the CPU a list read costs right after a write
    moved it)."""
    def work_out() -> bytes:
        return "\n".join([*(print_ast(node) for node in nodes),
                          *(print_ast(fragments[name]) for name in sorted(fragments))]).encode()

    return _PRINTED.get(nodes, work_out)


_PRINTED: NodeMemo[bytes] = NodeMemo()


async def answered(executor: Any, answers: RenderedAnswers, key: str, ttl: int, response_name: str,
                   execute: Callable[[], Any], *, keep: bool) -> Any:
    """The field's rendered answer, or its answer executed (and, when `keep`, kept rendered)."""
    found = None if key == answers.missed else await read_rendered(answers.cache, key)
    if found is not None:
        return orjson.Fragment(found.body)
    capture, token = response_capture.begin()
    try:
        with rendering_items(key, ttl) as items:  # its page's items answered, and kept, one by one
            result = execute()
            if executor.is_awaitable(result):
                result = await result
    finally:
        response_capture.end(token)
    if items.computed:
        if answers.handed is not None:
            answers.handed.extend(items.computed)
        else:
            await keep_all(answers.cache, items.computed)
    if not keep or result is Undefined or any(
            error.path and error.path[0] == response_name for error in field_errors(executor)):
        return result
    body = orjson.dumps(result)
    if answers.handed is not None:
        answers.handed.append(ToKeep(key, body, capture, ttl))
    else:
        await keep_rendered(answers.cache, key, body, capture, ttl)
    return orjson.Fragment(body)  # encoded once: the response writes these bytes


def answer_root_field(executor: Any, parent_type: GraphQLObjectType, nodes: list[FieldNode], response_name: str,
                      execute: Callable[[], Any]) -> Any:
    """What the field loop places for a root field: its rendered answer (an awaitable) when the request
    allows it and the field declares it, else `execute()` as usual."""
    answers: RenderedAnswers | None = getattr(executor.context_value, "rendered", None)
    if answers is None or executor.operation.operation is not OperationType.QUERY:
        return execute()
    ttl = rendered_ttl(parent_type, nodes[0], answers)
    key = selection_key(executor, nodes) if ttl else None
    if key is None:
        return execute()
    selections = executor.operation.selection_set.selections
    alone = len(selections) == 1 and isinstance(selections[0], FieldNode)
    return answered(executor, answers, key, ttl, response_name, execute, keep=alone)


@dataclass(frozen=True, slots=True)
class WholeAnswer:
    """A response made of one rendered answer: its bytes and their ETag (cache/response/responses.py `etag_of`, the
    same an executed answer of these bytes gets)."""

    body: bytes
    etag: str


async def answer_without_executing(schema: GraphQLSchema, checks: LimitChecks, answers: RenderedAnswers,
                                   query: str, operation_name: str | None,
                                   variables: Mapping[str, Any] | None, *, look: bool = True
                                   ) -> tuple[str | None, WholeAnswer | None]:
    """A whole response, when the query asks one rendered root field alone and its rendered answer is
    current: `{"data":{<name>:<answer>}}` as execution would have written it, with nothing executed.
    Returned with the key looked up (None when the request is not of that shape: execution answers it as
    ever, with its errors if it has any).

    What execution would check first is checked the same way and from the same caches: the document's
    limits and validation, the variables' NUL check and cost (schema/engine/limits.py), the variables' coercion.
    Anything else (a spread at the root, fields beside it, several operations and no name, variables that
    do not coerce) is left to execution, which keeps the answer for the next time. `look` False: the key
    alone, nothing read (the caller knows the answer under it is stale)."""
    variables = variables or {}
    try:
        if checks.errors(schema, query, request_validation_rules(), operation_name, variables):
            return None, None
        document = checks.parse(query)
    except GraphQLError:
        return None, None
    operation = get_operation_ast(document, operation_name)
    if operation is None or operation.operation is not OperationType.QUERY or schema.query_type is None:
        return None, None
    selections = operation.selection_set.selections
    # A directive on the field (@skip, @include) is in its printed form, and its variables in the key: a
    # rendered answer under that key was executed, so not skipped, with those very values.
    if len(selections) != 1 or not isinstance(selections[0], FieldNode):
        return None, None
    node = selections[0]
    if not rendered_ttl(schema.query_type, node, answers):
        return None, None
    coerced = get_variable_values(schema, operation.variable_definitions or (), dict(variables))
    if isinstance(coerced, list):  # execution reports them
        return None, None
    fragments = {definition.name.value: definition for definition in document.definitions
                 if isinstance(definition, FragmentDefinitionNode)}
    key = _key([node], fragments, coerced.coerced)
    if key is None or not look:
        return key, None
    found = await read_rendered(answers.cache, key)
    if found is None:
        return key, None
    if found.whole is None:
        whole = b"".join((b'{"data":{', orjson.dumps((node.alias or node.name).value), b":", found.body, b"}}"))
        found.whole = whole, etag_of(whole)
    return key, WholeAnswer(*found.whole)
