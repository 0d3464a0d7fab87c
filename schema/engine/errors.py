"""The one place where exceptions become GraphQL errors.

An `ApiError` keeps its message and gets `extensions.code`; anything else is logged with its
traceback and reaches the client only as "Internal server error" (no internals leak)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from graphql import GraphQLError, GraphQLSyntaxError
from redis.exceptions import RedisError
from strawberry.extensions import SchemaExtension

from orm.errors import is_unavailable
from resolvers.errors import ApiError
from schema.engine.limits import PARSE_FAILED, VALIDATION_FAILED


def is_client_error(error: GraphQLError) -> bool:
    """Parse and validation errors, refused limits, variables that do not fit, and ApiErrors."""
    original = error.original_error
    return original is None or isinstance(original, GraphQLError | ApiError)


def _mapped(error: GraphQLError) -> GraphQLError:
    original = error.original_error
    if original is None:  # parse and validation errors and refused limits: the client's doing
        if (error.extensions or {}).get("code"):
            return error
        code = PARSE_FAILED if isinstance(error, GraphQLSyntaxError) else VALIDATION_FAILED
        return GraphQLError(error.message, nodes=error.nodes, source=error.source, positions=error.positions,
                            path=error.path, extensions={**(error.extensions or {}), "code": code})
    if isinstance(original, GraphQLError):  # a variable that does not fit its type: the client's doing
        return GraphQLError(error.message, nodes=error.nodes, path=error.path,
                            extensions={**(error.extensions or {}), "code": "BAD_USER_INPUT"})
    if isinstance(original, ApiError):
        extensions = {**(error.extensions or {}), "code": original.code}
        if original.field:
            extensions["field"] = original.field
        return GraphQLError(str(original), nodes=error.nodes, path=error.path, extensions=extensions,
                            original_error=original)
    if isinstance(original, RedisError) or is_unavailable(original):
        # Redis: only what truly lives in Redis (sessions, tokens) gets here. PostgreSQL: out of reach or
        # changing roles (a failover): a write in that gap is not done, and says so.
        return GraphQLError("Service temporarily unavailable, try again shortly", nodes=error.nodes,
                            path=error.path, extensions={"code": "SERVICE_UNAVAILABLE"}, original_error=original)
    # Logged with its traceback by the schema's process_errors; the client sees no internals.
    return GraphQLError("Internal server error", nodes=error.nodes, path=error.path,
                        extensions={"code": "INTERNAL_SERVER_ERROR"}, original_error=original)


def _map_errors(result: Any) -> None:
    errors = getattr(result, "errors", None)
    if result is not None and errors:
        result.errors = [_mapped(e) for e in errors]


class ErrorMapping(SchemaExtension):
    def on_operation(self) -> Iterator[None]:
        yield
        _map_errors(self.execution_context.result)

    def on_stream_result(self, result: Any) -> Iterator[None]:
        """Each result of a subscription (and its refusal) goes out mapped too."""
        _map_errors(result)
        yield
