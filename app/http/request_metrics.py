"""A request's outcome as the metrics count it: hit, ok, error, refused or timeout, with its duration."""

from __future__ import annotations

import time
from typing import Any

from starlette.responses import Response

from app.http.exchange import Exchange
from telemetry import metrics


def count_request(outcome: str, operation: str | None, started: float) -> None:
    label = metrics.operation_label(operation)
    metrics.child(metrics.REQUESTS, label, outcome).inc()
    metrics.child(metrics.REQUEST_SECONDS, label, outcome).observe(time.perf_counter() - started)


def outcome_of(response: Any, exchange: Exchange) -> str:
    """hit (the response cache's bytes), error (GraphQL errors), refused (an HTTP error) or ok."""
    if not isinstance(response, Response):
        return "ok"
    if response.headers.get("x-cache") == "HIT":
        return "hit"
    if exchange.answer.errors:
        return "error"
    return "refused" if response.status_code >= 400 else "ok"
