"""`/metrics` (Prometheus text format), `/healthz` and `/readyz`.

/metrics shows the instruments of telemetry/metrics.py (every worker's, in multiprocess mode) and, read
when scraped, what lives in Redis: the revalidation queue and the delayed queue, the same from any worker.
It answers loopback clients only, unless METRICS_TOKEN is set: then a bearer token from anywhere.

/healthz: the process answers, with its version. /readyz: PostgreSQL and Redis answer and the database's
migrations are at head (or past it, a newer version's); 503 with the failing checks otherwise, so a load
balancer stops sending traffic to this worker.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import os
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from redis.exceptions import RedisError
from sqlalchemy import text
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from app.graceful import DRAINING
from config.settings import Settings
from orm.migrations import head_revisions, known_revisions
from resolvers.deps import Deps
from telemetry.version import VERSION

READY_TIMEOUT = 2.0  # seconds each readiness check may take


def _loopback(request: Request) -> bool:
    host = request.client.host if request.client else ""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _allowed(request: Request, token: str | None) -> bool:
    if token is None:
        return _loopback(request)
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.encode(), token.encode())


def _registry(settings: Settings) -> CollectorRegistry:
    """Every worker's instruments in multiprocess mode, this process's otherwise."""
    directory = settings.prometheus_multiproc_dir
    if not directory:
        return REGISTRY
    forget_dead_workers(directory)
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=directory)
    return registry


def forget_dead_workers(directory: str) -> None:
    """Drop the live gauges (connections in use, breaker state) of worker processes that are gone: uvicorn
    restarts a dead worker without telling prometheus-client."""
    for path in Path(directory).glob("gauge_live*_*.db"):
        pid = int(path.stem.rsplit("_", 1)[1])
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            mark_process_dead(pid, directory)
        except PermissionError:  # alive, another user's
            continue


class _Snapshot:
    """Values read for one scrape, as a collector of a registry of their own."""

    def __init__(self, metrics: Iterable[Metric]) -> None:
        self.metrics = list(metrics)

    def collect(self) -> Iterable[Metric]:
        return self.metrics


async def _shared_state(deps: Deps) -> list[Metric]:
    """What lives in Redis, and this worker's Redis connections; nothing if Redis does not answer."""
    revalidation = GaugeMetricFamily("discours_revalidation_queue", "Entities marked for revalidation and not "
                                     "yet processed, by entity type", labels=["entity_type"])
    delayed = GaugeMetricFamily("discours_delayed_queue", "Delayed-queue messages by state (queued, leased: "
                                "being handled, parked: failed every attempt)", labels=["state"])
    in_use = GaugeMetricFamily("discours_redis_pool_in_use", "Redis connections in use, by worker process",
                               labels=["worker"])
    pool = deps.cache.redis.connection_pool
    in_use.add_metric([str(os.getpid())], len(list(getattr(pool, "_get_in_use_connections", list)())))
    try:
        for entity_type, depth in (await deps.revalidator.queue_depth()).items() if deps.revalidator else ():
            revalidation.add_metric([entity_type], depth)
        for state, count in (await deps.delayed.stats()).items():
            delayed.add_metric([state], count)
    except RedisError:
        return [in_use]
    return [revalidation, delayed, in_use]


def metrics_route(settings: Settings) -> Route:
    async def scrape(request: Request) -> Response:
        if not _allowed(request, settings.metrics_token):
            return PlainTextResponse("metrics are open to loopback clients, or with METRICS_TOKEN as a bearer "
                                     "token\n", status_code=403 if settings.metrics_token is None else 401)
        shared = CollectorRegistry()
        shared.register(_Snapshot(await _shared_state(request.app.state.deps)))
        body = generate_latest(_registry(settings)) + generate_latest(shared)
        return Response(body, media_type=CONTENT_TYPE_LATEST)

    return Route("/metrics", scrape)


async def _check(check: Callable[[], Awaitable[Any]]) -> str:
    try:
        async with asyncio.timeout(READY_TIMEOUT):
            outcome = await check()
    except TimeoutError:
        return f"no answer within {READY_TIMEOUT:g}s"
    except Exception as exc:  # whatever the driver raises: the check's answer is its first line
        return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
    return outcome if isinstance(outcome, str) else "ok"


async def _database(deps: Deps) -> str:
    async with deps.db() as session:
        current = set((await session.scalars(text("SELECT version_num FROM alembic_version"))).all())
    expected = head_revisions()
    # A database ahead of this code (revisions it does not know: a newer version's, migrated during a rolling
    # upgrade) serves it, since migrations only expand while older servers run (docs/upgrading.md); one
    # behind it does not.
    if current != expected and (not current or current & known_revisions()):
        return f"migrations not at head: database at {sorted(current)}, code at {sorted(expected)}"
    return "ok"


async def _redis(deps: Deps) -> str:
    await deps.cache.redis.ping()
    if deps.state is not deps.cache.redis:
        await deps.state.ping()
    return "ok"


async def healthz(_request: Request) -> Response:
    return JSONResponse({"status": "ok", "version": VERSION, "worker": os.getpid()})


async def readyz(request: Request) -> Response:
    if DRAINING.active:  # told to stop (app/graceful.py): a load balancer sends new requests elsewhere
        return JSONResponse({"status": "draining", "worker": os.getpid()}, status_code=503)
    deps: Deps = request.app.state.deps
    database, redis = await asyncio.gather(_check(lambda: _database(deps)), _check(lambda: _redis(deps)))
    ready = database == "ok" and redis == "ok"
    body = {"status": "ready" if ready else "not ready", "checks": {"database": database, "redis": redis},
            "worker": os.getpid()}
    return JSONResponse(body, status_code=200 if ready else 503)


routes = [Route("/healthz", healthz), Route("/readyz", readyz)]
