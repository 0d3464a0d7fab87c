"""Error reports to Sentry, or to GlitchTip (which speaks Sentry's protocol), through sentry-sdk: on only when
a DSN is set. What is reported: an unhandled error of the ASGI app (Starlette's integration) or of a task
(asyncio's), and a GraphQL operation's failure of ours (INTERNAL_SERVER_ERROR, `report_failure`, called by
the schema where it logs one) tagged with the operation's name. A client's error (BAD_USER_INPUT,
UNAUTHENTICATED, a refused limit) is an answer, not an incident, and is never reported.

Nothing secret leaves: the SDK's own data collection is off for cookies, bodies, query strings, user
identity and frame variables, and every event passes `scrub` last, which removes, wherever they appear in
it, the values of keys that name a secret or an address (token, password, cookie, authorization, email, …),
e-mail addresses, JSON web tokens, bearer tokens and `token=`/`code=` parameters of URLs."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from telemetry.version import VERSION

if TYPE_CHECKING:
    from sentry_sdk._types import KeyValueCollectionBehaviour

FILTERED = "[Filtered]"
# Whether reports go anywhere: without a DSN sentry-sdk is never imported, and a failure costs one test.
STARTED = False
# A key whose value is never sent, as part of any key's name (case-insensitive).
SECRET_KEYS = re.compile(r"auth|token|secret|passw|pwd|cookie|session|e-?mail|jwt|bearer|csrf|dsn|api.?key|"
                         r"private|credential|signature|^code$|^state$", re.I)
# Values that are secrets or addresses whatever key holds them.
SECRET_TEXT = (
    (re.compile(r"[\w.+'-]+@[\w-]+(?:\.[\w-]+)+"), "[email]"),
    (re.compile(r"\beyJ[\w-]{5,}\.[\w-]{5,}\.[\w-]{5,}"), "[token]"),  # a JSON web token
    (re.compile(r"(?i)\bbearer\s+[^\s\"',;]+"), "Bearer [token]"),
    (re.compile(r"(?i)\b(token|code|state|password|secret|key)=[^&\s\"']+"), r"\1=[Filtered]"),
)


def start(dsn: str | None, *, environment: str, sample_rate: float = 1.0) -> bool:
    """Start reporting to `dsn` (nothing when None); whether it started."""
    global STARTED
    if not dsn:
        return False
    import sentry_sdk
    from sentry_sdk.integrations.asyncio import AsyncioIntegration
    from sentry_sdk.integrations.logging import LoggingIntegration
    from sentry_sdk.integrations.redis import RedisIntegration
    from sentry_sdk.integrations.sqlalchemy import SqlalchemyIntegration
    from sentry_sdk.integrations.starlette import StarletteIntegration

    off: KeyValueCollectionBehaviour = {"mode": "off"}
    sentry_sdk.init(
        dsn=dsn, release=f"discours-core@{VERSION}", environment=environment, sample_rate=sample_rate,
        # Traces are OpenTelemetry's (telemetry/tracing.py): Sentry gets errors only.
        traces_sample_rate=None,
        # Only the integrations named here: no others enabled because a library happens to be installed.
        auto_enabling_integrations=False,
        integrations=[StarletteIntegration(), SqlalchemyIntegration(), RedisIntegration(), AsyncioIntegration(),
                      # log records are breadcrumbs only: an error's event is ours (report_failure), never a log
                      # line's, whose text may quote a GraphQL document and its literals; and the lines themselves
                      # go to the server's log, not to Sentry's
                      LoggingIntegration(level=None, event_level=None)],
        data_collection={"user_info": False, "cookies": off, "http_bodies": [], "url_query_params": off,
                         "stack_frame_variables": False, "database_query_data": False},
        before_send=scrub_event, before_breadcrumb=scrub_event)
    STARTED = True
    return True


def report_failure(error: BaseException, operation: str | None) -> None:
    """A failure of ours while executing `operation` (a GraphQL operation's name, or None): an event with
    the operation as a tag. Nothing when reporting is off."""
    if not STARTED:
        return
    import sentry_sdk

    with sentry_sdk.new_scope() as scope:
        scope.set_tag("graphql.operation", operation or "anonymous")
        scope.set_transaction_name(f"graphql {operation or 'anonymous'}")
        sentry_sdk.capture_exception(error)


def scrub_event(event: Any, _hint: Any) -> Any:
    """The event (or breadcrumb) with every secret and address removed: the last step before it is sent."""
    return scrub(event)


def scrub(value: Any, key: str = "") -> Any:
    if key and SECRET_KEYS.search(key) and value not in (None, "", [], {}):
        return FILTERED
    if isinstance(value, dict):
        return {k: scrub(v, k if isinstance(k, str) else "") for k, v in value.items()}
    if isinstance(value, list | tuple):
        # [name, value] pairs (headers, cookies, query parameters as Sentry lists them): the name decides
        if len(value) == 2 and isinstance(value[0], str) and SECRET_KEYS.search(value[0]):
            return [value[0], FILTERED]
        return [scrub(item) for item in value]
    if isinstance(value, str):
        for pattern, replacement in SECRET_TEXT:
            value = pattern.sub(replacement, value)
    return value


def stop(timeout: float = 2.0) -> None:
    """Send what is queued (within `timeout` seconds) and stop reporting."""
    global STARTED
    if not STARTED:
        return
    import sentry_sdk

    STARTED = False
    client = sentry_sdk.get_client()
    if client.is_active():
        client.close(timeout=timeout)
    sentry_sdk.get_global_scope().set_client(None)
