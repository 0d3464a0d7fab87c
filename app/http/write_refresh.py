"""The view's side of hot responses computed again by the write that made them stale (cache/refresh.py): which
computed answers are noted for writes to refresh, and a write's refreshes, run as requests of no one's.

A refresh is the request the noted answer was computed for, served by the view as any request is, after the
write's answer: not looked up (the write made it stale; only the invalidation clock is read, which a
computation's waiters are given its answer by), joining the computation of the same answer under way in this
worker or claimed by another (a hot page's readers miss as soon as the write is answered: the refresh and they
compute it once; a reader's answer kept meanwhile is found by the claim, which looks before it claims), kept by
the response cache's store script (only if its reads are still current). It counts as no one's read
(`refreshing`: no view of a shout it shows, no request in the metrics: `discours_response_refreshes_total`
counts it)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from app.http.exchange import Exchange
from app.http.graphql_request import GraphQLRequest, Operation
from app.http.response_front import responses_of
from cache import keys
from cache.refresh import Refresh, Refreshing, queue_noted, request_record
from cache.response.responses import LookUp
from telemetry import metrics

log = logging.getLogger(__name__)

# A computed answer stale by the moves of more tags than this is not noted for writes to refresh (a bulk change).
MOVES_NOTED_MOST = 4


class Serve(Protocol):
    """The view's `serve` (app/http/graphql_view.py)."""

    def __call__(self, scope: Any, receive: Any, send: Any, request: GraphQLRequest, *,
                 looked: LookUp | None = None, refreshing: bool = False) -> Awaitable[None]: ...


def noted_for_refresh(exchange: Exchange, key: str, *, ttl: int) -> Callable[[Any], None] | None:
    """The commands that note a public answer computed because writes made it stale (it is read under writes) in
    the refresh index of the tags whose moves did, with its request, for the next write that moves one of them to
    compute it again after its answer; None when it is not to be noted: stale by more than a few moves, or
    by the epoch's (a bulk change, a recovery: no write over HTTP makes those), kept for one viewer, computed by a
    write already, or not a single operation with its document."""
    asked, answer = exchange.asked, exchange.answer
    single, moved = asked.graphql.single, answer.looked.moved
    if (not answer.looked.stale or not moved or len(moved) > MOVES_NOTED_MOST or keys.GLOBAL_TAG in moved
            or asked.refreshing or answer.private or key != asked.graphql.public_key
            or single is None or not single.document):
        return None
    record = request_record(key, single.document, single.operation_name, single.variables)
    return lambda pipe: queue_noted(pipe, key, record, moved, ttl)


async def refresh(serve: Serve, app: Any, refreshing: Refreshing) -> None:
    """Compute again, side by side, the responses a write's invalidations found to refresh; given up past half
    the graces' time (their readers then compute them as ever)."""
    try:
        async with asyncio.timeout(refreshing.grace_ms / 2000):
            # Stale by the write, each (as its rendered root field: not looked up either); the clock is what a
            # look-up would read, read once for all of them.
            clock = await responses_of(app).clock()
            await asyncio.gather(*(_refresh_one(serve, app, request, LookUp(None, stale=True, clock=clock))
                                   for request in refreshing.requests))
    except TimeoutError:
        metrics.child(metrics.RESPONSE_REFRESHES, "late").inc()


async def _refresh_one(serve: Serve, app: Any, refresh: Refresh, looked: LookUp) -> None:
    request = GraphQLRequest("POST", (Operation(refresh.document, refresh.operation, refresh.variables),),
                             accept="application/json", accept_encoding="gzip", public_key=refresh.key)
    if request.response_key() != refresh.key:  # not a request of this server's: nothing to compute
        return
    # no client, no headers: a guest's request, as every noted one was (a public answer, read by no viewer)
    scope = {"type": "http", "method": "POST", "path": "/graphql", "headers": [], "query_string": b"",
             "app": app, "client": None, "scheme": "http", "root_path": ""}
    statuses: list[int] = []

    async def nothing_to_receive() -> Any:
        return {"type": "http.disconnect"}

    async def sent_to_no_one(message: Any) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    try:
        await serve(scope, nothing_to_receive, sent_to_no_one, request, looked=looked, refreshing=True)
    except Exception:  # a read's failure never fails the write that asked for it
        log.exception("computing a response again after a write failed")
        statuses.append(0)
    metrics.child(metrics.RESPONSE_REFRESHES, "computed" if statuses == [200] else "failed").inc()
