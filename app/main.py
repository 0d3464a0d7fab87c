"""The ASGI app factory and its lifespan, which owns every client, engine and background task."""

from __future__ import annotations

import contextlib
import gc
import logging
import time
from collections.abc import AsyncIterator, Sequence

import anyio
from redis.exceptions import RedisError
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route, WebSocketRoute

from app.graceful import drain_on_sigterm
from app.http.cors import cors
from app.http.graphiql import assets_route
from app.http.graphql_view import DiscoursGraphQL
from app.http.guards import BodySizeLimit
from app.http.hit_reads import HitReads, stop_hit_reads
from app.http.request_ids import RequestIds
from app.http.response_front import ResponseCacheFront
from app.http.served_by import WorkerHeader
from app.http.stream_turns import StreamsInTurn
from app.routes import admin_panel, connect, mail_links, observability
from app.routes import oauth as oauth_routes
from app.routes.observability import metrics_route
from auth.services import AuthServices, build_auth
from cache.containment import LOST_WRITE_RECOVERY
from cache.failover import RedisTooOld, check_data_owner
from cache.live.structures import LiveStore
from cache.live.views import ViewCounter
from cache.messaging.delayed import DelayedQueue
from cache.messaging.pubsub import Hub
from cache.periodic import Periodic
from cache.precache import precache_data
from cache.redis.client import RedisGuard, clients_of
from cache.redis.client import open_connections as open_redis_connections
from cache.redis_metrics import RedisMetrics
from cache.response.responses import ResponseCache
from cache.revalidator import CacheRevalidationManager
from cache.store import Cache
from cache.wal_floor import WalFloor
from config.settings import Settings, SettingsError, get_settings
from orm.engine import engines_of, make_session_factory
from orm.engine import open_connections as open_database_connections
from orm.pooler import shares_server_connections
from orm.replicas import ReadRouting, primary_position
from resolvers import digests, scheduled
from resolvers.deps import DEFERRED_QUEUE, Deps, SearchLimits
from schema.engine.limits import Limits
from schema.engine.stream_starts import StreamStarts
from schema.schema import build_schema
from triggers.listeners import register as register_triggers
from triggers.listeners import writing_sessions
from triggers.sink import CacheSink

log = logging.getLogger(__name__)


async def check_services(settings: Settings, deps: Deps, *, database: bool = True) -> None:
    """Fail the start with a message that names the setting when a service does not answer."""
    if database:
        try:
            async with deps.db() as session:
                await session.execute(text("SELECT 1"))
        except Exception as exc:
            raise SettingsError(f"DATABASE_URL: cannot connect to {settings.database_url!r}: {exc}") from exc
    try:
        await deps.cache.redis.ping()
    except RedisTooOld as exc:
        raise SettingsError(f"REDIS_URL: {settings.redis_url!r} answers, but {exc}") from exc
    except Exception as exc:
        raise SettingsError(f"REDIS_URL: cannot connect to {settings.redis_url!r}: {exc}") from exc
    if deps.state is not deps.cache.redis:
        try:
            await deps.state.ping()
        except Exception as exc:
            raise SettingsError(f"REDIS_STATE_URL: cannot connect to {settings.redis_state_url!r}: {exc}") from exc


async def check_pooling(settings: Settings, engines: Sequence[AsyncEngine]) -> None:
    """Stop the start when a database answers through a transaction pooler and DB_TRANSACTION_POOLER is not
    set (orm/pooler.py): its writes would fail on prepared statements under load."""
    if settings.db_transaction_pooler:
        return
    for n, engine in enumerate(engines):
        if await shares_server_connections(engine):
            name = "DATABASE_REPLICA_URLS" if n else "DATABASE_URL"
            raise SettingsError(f"{name}: {engine.url.render_as_string()} answers through a transaction pooler "
                                "(PgBouncer with pool_mode = transaction: server connections shared between "
                                "transactions); set DB_TRANSACTION_POOLER=true so that the server prepares no "
                                "statement a pooler cannot keep")


@contextlib.asynccontextmanager
async def open_deps(settings: Settings, *, serving: bool = False) -> AsyncIterator[Deps]:
    """Create the engine, session factory, Redis client and cache; close them on exit. `serving`: for a
    server's lifespan, which first checks that each service answers (`check_services`) and then opens
    the connections each pool keeps, before the first request rather than at the peaks of load that
    would ask for them (DB_CONNECTIONS_AT_START, REDIS_CONNECTIONS_AT_START)."""
    engine, *replicas = engines_of(settings)
    # One guard (circuit breaker, error mapping) for every Redis call of this process, on either Redis.
    guard = RedisGuard(settings.redis_breaker_seconds)
    # Each new connection checks that its Redis still holds the data it wrote (cache/failover.py).
    on_connect = check_data_owner if settings.redis_owner_check else None
    redis, state = clients_of(settings, guard, on_connect)
    cache = Cache.of(redis, settings, state=state)
    deps = wire(settings, engine, cache, auth=build_auth(settings, state), replicas=replicas)
    try:
        if serving:
            await check_services(settings, deps)
            await check_pooling(settings, (engine, *replicas))
            await open_database_connections(engine, settings.db_connections_at_start)
            for client in (redis,) if state is redis else (redis, state):
                await open_redis_connections(client, settings.redis_connections_at_start)
        yield deps
    finally:
        if deps.revalidator is not None:
            await deps.revalidator.stop()
        await deps.views.stop()
        await deps.delayed.stop()
        await deps.hub.close()
        await redis.aclose()
        if state is not redis:
            await state.aclose()
        if deps.routing is not None:
            await deps.routing.dispose()
        await engine.dispose()


def wire(settings: Settings, engine: AsyncEngine, cache: Cache, *, auth: AuthServices | None,
         replicas: Sequence[AsyncEngine] = ()) -> Deps:
    """Sessions whose commits invalidate the cache (triggers) and the revalidation manager behind them;
    with `replicas` (of `engine`, the primary), sessions whose reads may go to them, and the WAL floor
    that keeps those reads from missing a commit (orm/replicas.py, cache/wal_floor.py)."""
    register_triggers()
    state = cache.state  # what must not be evicted (REDIS_STATE_URL): queues here, sessions in `auth`
    live = LiveStore.of(cache, settings)
    revalidator = CacheRevalidationManager(cache, make_session_factory(engine), live,
                                           interval=settings.cache_revalidation_interval)
    if not settings.cache_invalidation:
        log.warning("CACHE_INVALIDATION=off: committed writes do not invalidate the cache (stale reads ahead)")
    routing, wal_floor = None, None
    if replicas:
        wal_floor = WalFloor(cache, lambda: primary_position(engine))
        if not settings.replica_floor:
            log.warning("REPLICA_FLOOR=off: reads take replicas whatever they have replayed (stale reads ahead)")
        routing = ReadRouting(engine, replicas, floor=wal_floor.read if settings.replica_floor else _anywhere,
                              max_lag=settings.replica_max_lag,
                              check_interval=settings.replica_check_interval)
    sink = CacheSink(cache, revalidator, live, invalidation=settings.cache_invalidation, wal_floor=wal_floor)
    db = writing_sessions(engine, sink, routing=routing)
    views = ViewCounter.of(cache, make_session_factory(engine), live, settings)
    delayed = DelayedQueue.of(state, DEFERRED_QUEUE, settings)
    deps = Deps(cache=cache, db=db, max_page_size=settings.max_page_size, ttl_shouts=settings.cache_ttl_shouts,
                ttl_search=settings.cache_ttl_search, board_weeks=settings.board_weeks,
                search=SearchLimits.of(settings),
                digest_window=settings.notification_digest_window, notify_fanout=settings.notify_fanout_cap,
                auth=auth,
                revalidator=revalidator, live=live, views=views, delayed=delayed, routing=routing,
                primary=writing_sessions(engine, sink) if routing is not None else db,
                hub=Hub.of(cache.redis, settings))
    scheduled.register(deps)
    if auth is not None:  # digests are mailed through the auth services' mailer
        digests.register(deps)
    return deps


async def sweep_pending(deps: Deps) -> None:
    """Queue again, from the database, every message the delayed queue should hold (the queue's rule,
    cache/messaging/delayed.py): scheduled drafts, and the current window's digests where they are sent."""
    await scheduled.sweep(deps)
    if digests.DIGEST in deps.delayed.handlers:
        await digests.sweep(deps, time.time())


async def _anywhere() -> int:
    """The floor of a replica-unaware server (REPLICA_FLOOR=off): any replica has replayed position 0."""
    return 0


def create_app(settings: Settings | None = None, deps: Deps | None = None) -> Starlette:
    """`deps` lets a test hand in its own engine and Redis; otherwise the lifespan creates them."""
    settings = settings or get_settings()
    starts = StreamStarts.of(settings)
    graphql = DiscoursGraphQL(build_schema(Limits.of(settings), starts), answers=settings, subscriptions=settings,
                              max_json_depth=settings.max_variables_depth, session_cookie=settings.session_cookie)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if deps is not None:
            yield
            return
        async with open_deps(settings, serving=True) as own:
            attach_shared(app, settings, own)
            if settings.precache_on_start:
                await precache_data(own.cache, own.db)
            if own.revalidator is not None:
                await own.revalidator.start()
            if own.routing is not None:  # replicas in use once checked
                await own.routing.check()
                own.routing.start()
            await own.views.start()
            sweeper = Periodic("pending messages sweep", settings.queue_sweep_interval, lambda: sweep_pending(own))
            try:
                await sweep_pending(own)
            except RedisError as exc:  # the periodic sweep catches up when Redis is back
                log.warning("pending messages sweep failed at start: %s", exc)
            own.delayed.start(settings.queue_poll_interval)
            sweeper.start()
            redis_metrics = RedisMetrics(own.cache, interval=settings.metrics_flush_interval)
            redis_metrics.start()
            recovery = Periodic("recovery after lost writes", LOST_WRITE_RECOVERY, own.cache.recover_quietly)
            recovery.start()
            # anyio loads its event loop backend on first use, the first stream's (Starlette runs a streamed
            # response in an anyio task group): sixteen modules imported in the middle of a request.
            anyio.current_time()
            # What start-up made (the schema, models, clients, the warmed caches' structures) lives as long
            # as the process: moved out of the collector's reach, a full collection does not walk it, and
            # does not stall every request in flight (bench/RESULTS.md, figures behind the code's rules).
            gc.collect()
            gc.freeze()
            drain_on_sigterm(settings.shutdown_drain_seconds)
            try:
                yield
            finally:  # what a graceful restart leaves behind (app/graceful.py)
                await stop_hit_reads(app)  # the hits' reads counted, before the views are written
                await own.views.stop(flush=True)
                await own.delayed.stop(finish_round=settings.shutdown_timeout)
                await sweeper.stop()
                await redis_metrics.stop()
                await recovery.stop()

    async def root(_request: Request) -> Response:
        return RedirectResponse("/graphql")

    app = Starlette(
        debug=settings.debug,
        # Request ids are for JSON log lines only: plain lines do not show them, and the hits pay nothing.
        middleware=[*([Middleware(RequestIds)] if settings.log_format == "json" else []),
                    *([Middleware(WorkerHeader)] if settings.expose_worker else []), cors(settings),
                    Middleware(BodySizeLimit, max_bytes=settings.max_body_bytes),
                    # An event stream's request waits for its start's turn before it is read (app/http/stream_turns.py).
                    Middleware(StreamsInTurn, starts=starts, view=graphql),
                    # Every GraphQL request read once, and hits answered, before routing and before Strawberry
                    # (app/http/response_front.py).
                    Middleware(ResponseCacheFront, view=graphql, ttl=settings.response_cache_ttl)],
        routes=[
            Route("/", root),
            *observability.routes,
            metrics_route(settings),
            Route("/graphql", graphql, methods=["GET", "POST"]),
            WebSocketRoute("/graphql", graphql),
            assets_route(),
            *oauth_routes.routes,
            *mail_links.routes,
            *connect.routes(settings),
            *admin_panel.routes(settings),
        ],
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.streams = connect.Streams(settings)  # the web client's event streams open on this worker
    if deps is not None:  # given (tests, scripts): no lifespan may run, so everything is made now
        attach_shared(app, settings, deps)
    return app


def attach_shared(app: Starlette, settings: Settings, deps: Deps) -> None:
    """What every request of the app uses, made once its dependencies exist (at start, or with the app when
    they are given): the dependencies, the response cache and the hits' reads waiting to be counted."""
    app.state.deps = deps
    app.state.responses = ResponseCache(deps.cache, ttl=settings.response_cache_ttl,
                                        plain_kept_bytes=settings.plain_bodies_kept_bytes)
    app.state.hit_reads = HitReads(deps, interval=settings.hit_reads_interval,
                                   max_pending=settings.hit_reads_max_pending)
