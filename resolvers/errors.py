"""The project's error hierarchy. Resolvers raise these; the schema's error extension maps them to
GraphQL errors with `extensions.code` (one place), and anything else to a masked internal error."""

from __future__ import annotations


class ApiError(Exception):
    code = "INTERNAL_SERVER_ERROR"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class BadInput(ApiError):
    code = "BAD_USER_INPUT"


class NotFound(ApiError):
    code = "NOT_FOUND"


class Unauthenticated(ApiError):
    code = "UNAUTHENTICATED"


class Forbidden(ApiError):
    code = "FORBIDDEN"


class InvalidTokenError(ApiError):
    code = "INVALID_TOKEN"


class Conflict(ApiError):
    code = "CONFLICT"


class RateLimited(ApiError):
    code = "RATE_LIMITED"


class Busy(ApiError):
    code = "SERVICE_UNAVAILABLE"
