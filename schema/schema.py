"""Builds the Strawberry schema: snake_case field names as in the contract (no camelCase)."""

from __future__ import annotations

import logging
from typing import Any

import strawberry
from graphql import DocumentNode, GraphQLError, parse
from strawberry.extensions import SchemaExtension
from strawberry.schema.config import StrawberryConfig
from strawberry.types import ExecutionContext

from resolvers.errors import ApiError
from schema import enums, inputs, results
from schema.admin import AdminMutation
from schema.admin_people import AdminPeopleMutation
from schema.auth import AuthMutation
from schema.descriptions import describe
from schema.engine.errors import ErrorMapping, is_client_error
from schema.engine.execution import PlainFieldsFirst, prepare_execution
from schema.engine.limits import LimitChecks, Limits, request_limits
from schema.engine.seam import (
    FieldResolversUnwrapped,
    PreExecutionError,
    StreamResult,
    graphql_schema,
    plan_argument_conversion,
)
from schema.engine.stream_starts import StreamStarts
from schema.mutation import WriteMutation
from schema.query import Query
from schema.subscription import Subscription
from telemetry.error_reports import report_failure

log = logging.getLogger("discours.graphql")
# How much of a refused or failing document a log line quotes: enough to recognise it, never a weapon.
LOGGED_DOCUMENT_CHARS = 200


@strawberry.type
class Mutation(AuthMutation, AdminMutation, AdminPeopleMutation, WriteMutation):
    """Mutations, by area (auth now; the write side adds its own classes to the bases)."""

# Contract types, inputs and enums that no implemented field uses yet: registered so the schema carries
# every one of them from the start (the mutation and auth issues put them to work).
_NOT_YET_REACHABLE = [
    results.AuthorFollowsResult, results.Invite, results.MyRateComment, results.MyRateShout,
    results.Notification, results.AuthResult, results.AuthSuccess, results.NotificationSeenResult,
    results.NotificationsResult, results.OAuthProvider, results.Rating, results.ReactionUpdating, results.RolesInfo,
    results.SecurityUpdateResult, results.SessionInfo,
    inputs.MediaItemInput, inputs.AuthorInput, inputs.TopicInput, inputs.DraftInput, inputs.ProfileInput,
    inputs.ReactionInput, inputs.NotificationSeenInput, inputs.CommunityInput, inputs.CollectionInput,
    inputs.LoginCredentials, inputs.RegisterInput, inputs.ChangePasswordInput, inputs.ResetPasswordInput,
    enums.FollowingEntity, enums.InviteStatus, enums.AuthAction, enums.RoleType, enums.ReactionStatus,
]


class DiscoursSchema(FieldResolversUnwrapped, strawberry.Schema):
    checks: LimitChecks | None = None
    starts: StreamStarts | None = None  # subscriptions started in turns (schema/engine/stream_starts.py)

    def parse(self, query: str) -> DocumentNode:
        """A document as execution will see it (through the limits' cache and token limit, when set)."""
        return self.checks.parse(query) if self.checks is not None else parse(query)

    async def stream(self, query: str | None, *args: Any, **kwargs: Any) -> StreamResult:
        """Strawberry's stream (subscriptions over WebSocket and server-sent events), with a document the
        limits refuse to parse answered as a refusal: the limits' parse hook raises it, which Strawberry's
        `execute` turns into an answer and its `stream` does not (a traceback, the stream cut). Its start
        takes a turn with the worker's other starts (schema/engine/stream_starts.py)."""
        if self.checks is not None and query:
            try:
                self.checks.parse(query)
            except GraphQLError as refused:
                self.process_errors([refused])
                return _one(PreExecutionError(data=None, errors=[refused]))
        source = await super().stream(query, *args, **kwargs)
        return source if self.starts is None else self.starts.paced(source)

    def process_errors(self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None) -> None:
        """One line per request, never the whole document or the variables: a client's mistakes (parse,
        validation, refused limits, bad variables) at INFO; failures of ours at ERROR with the traceback.
        An ApiError is an answer, not an incident, and is not logged."""
        operation = (execution_context.operation_name if execution_context else None) or "anonymous"
        query = (execution_context.query if execution_context else None) or ""
        document = query[:LOGGED_DOCUMENT_CHARS] + ("…" if len(query) > LOGGED_DOCUMENT_CHARS else "")
        failures = [e for e in errors if not is_client_error(e)]
        refused = [e for e in errors if is_client_error(e) and not isinstance(e.original_error, ApiError)]
        if failures:
            log.error("%s failed (%d errors): %s; document: %r", operation, len(failures), failures[0].message,
                      document, exc_info=failures[0].original_error)
            for failure in failures:  # to Sentry or GlitchTip when a DSN is set, by name, without the document
                report_failure(failure.original_error or failure, operation)
        elif refused:
            log.info("%s refused (%d errors): %s; document: %r", operation, len(refused),
                     refused[0].message[:LOGGED_DOCUMENT_CHARS], document)


async def _one(result: PreExecutionError) -> StreamResult:
    yield result


def build_schema(limits: Limits | None = None, starts: StreamStarts | None = None) -> DiscoursSchema:
    """With `limits`, documents are parsed through a cache and refused over them before validation
    (schema/engine/limits.py); without (the exported SDL, contract checks), nothing is limited. With `starts`,
    subscriptions start in turns."""
    checks = LimitChecks(limits) if limits is not None else None
    extensions: list[type[SchemaExtension]] = [ErrorMapping]
    if checks is not None:
        extensions.append(request_limits(checks))
    schema = DiscoursSchema(
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        types=_NOT_YET_REACHABLE,
        config=StrawberryConfig(auto_camel_case=False,
                                batching_config={"max_operations": limits.batch} if limits else None),
        extensions=extensions,
        execution_context_class=PlainFieldsFirst,
    )
    describe(graphql_schema(schema))  # every root field and argument explained, with who may call it
    prepare_execution(schema)
    plan_argument_conversion()
    schema.checks = checks
    schema.starts = starts
    return schema
