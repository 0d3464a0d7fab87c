"""The Redis client factory and the one guard every Redis call goes through.

`make_redis` gives a real server's client from a URL, a Redis Cluster client (`cluster=True`), or an
in-process fakeredis for the embedded default; all answer the same calls (the cluster client hides what a
cluster does differently, see GuardedRedisCluster), so everything above this module runs the same code.
Every command and
every pipeline of either client passes through one `RedisGuard`: the error mapping (a connection failure,
a timeout or a Redis Cluster error becomes `RedisUnavailable`, a `RedisError`), the circuit breaker that
such a failure opens, and the metrics. The cache, sessions, sign-in tokens, rate limits, the settings
store, the queues and pub/sub therefore share one view of whether Redis answers.

What a store does while the breaker is open is its own decision, made by reading `guard.available`: the
cache skips Redis for reads (the database answers), while invalidations, live updates and session checks
always try, since a lost invalidation costs more than a failed attempt and a revocation must win as soon
as Redis answers again.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from redis.asyncio import BlockingConnectionPool, ConnectionPool, Redis
from redis.asyncio.client import Pipeline, PubSub
from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import (
    AuthenticationError,
    ClusterDownError,
    NoPermissionError,
    NoScriptError,
    OutOfMemoryError,
    ReadOnlyError,
    RedisClusterException,
    RedisError,
    ResponseError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

if TYPE_CHECKING:
    from config.settings import RedisSettings

from cache.redis.coalesce import Coalescer, batchable
from cache.redis.limits import BATCH
from cache.redis.seam import (
    checked_on_connect,
    connect_cluster_nodes_with,
    fast_connection,
    lost_connection,
    lua_with_sha1hex,
    queued_commands,
    raise_first_error,
    ready_on_lend,
    runs_on_its_own,
    startup_nodes,
)
from config.settings import SENTINEL_SCHEME, parse_sentinel_url
from telemetry import metrics

log = logging.getLogger(__name__)

POOL_WAIT = 2.0  # seconds a command may wait for a free connection
# What a Redis call may raise: a cluster client's errors do not derive from RedisError.
REDIS_ERRORS: tuple[type[Exception], ...] = (RedisError, RedisClusterException)
# Errors that say Redis cannot be reached (the breaker opens); any other error is an answer (a script's
# error, a full server refusing a write) that the caller judges (`cannot_serve`: the cache trips the breaker
# for a server that says it cannot serve now).
_UNREACHABLE: tuple[type[Exception], ...] = (RedisConnectionError, RedisTimeoutError, RedisClusterException,
                                             OSError)
# RuntimeError and AttributeError: what a connection another task closed meanwhile raises (cache/redis/seam.py
# `lost_connection`); any other passes through the guard unchanged.
_CAUGHT: tuple[type[Exception], ...] = (*REDIS_ERRORS, OSError, RuntimeError, AttributeError)


class RedisUnavailable(RedisConnectionError):
    """Redis did not answer (or a cluster could not route the command)."""


def unreachable(error: BaseException) -> bool:
    """Whether `error` says no server answered, as opposed to one that answered with a refusal."""
    return isinstance(error, _UNREACHABLE) or lost_connection(error)


# Refusals that say what the server is now (full, a replica, busy, failing over, not ours to use), not what
# was asked. redis-py strips the code of a reply it has a class for (ClusterDownError covers MASTERDOWN,
# BusyLoadingError is a ConnectionError): those are known by class, the rest by the code the message keeps.
_STATE_REFUSALS: tuple[type[Exception], ...] = (OutOfMemoryError, ReadOnlyError, TryAgainError, ClusterDownError,
                                                AuthenticationError, NoPermissionError)
_STATE_CODES = ("BUSY ", "NOREPLICAS ", "MISCONF ")


def cannot_serve(error: BaseException) -> bool:
    """Whether `error` says Redis cannot serve now (unreachable, or answering that it is full, read-only,
    busy...), as opposed to an error reply to what was asked (a script's error, a wrong type): a bug."""
    return unreachable(error) or isinstance(error, _STATE_REFUSALS) or (
        isinstance(error, RedisError) and str(error).startswith(_STATE_CODES))


class RedisGuard:
    """One circuit breaker for a process's Redis clients."""

    def __init__(self, breaker_seconds: float = 5.0) -> None:
        self.breaker_seconds = breaker_seconds
        self._open_until = 0.0

    @property
    def available(self) -> bool:
        if self._open_until and time.monotonic() >= self._open_until:
            self._open_until = 0.0  # the window passed: Redis is tried again
            metrics.BREAKER_OPEN.set(0)
        return not self._open_until

    def trip(self, exc: BaseException, what: str) -> None:
        """Redis failed during `what`: readers skip it for `breaker_seconds`."""
        metrics.REDIS_ERRORS.labels(what).inc()
        if self.available:
            log.warning("redis unavailable during %s, skipping it for %.0fs: %s", what, self.breaker_seconds, exc)
            metrics.BREAKER_TRIPS.inc()
            metrics.BREAKER_OPEN.set(1)
        self._open_until = time.monotonic() + self.breaker_seconds

    def failed(self, exc: Exception, what: str) -> Exception:
        """What to raise for `exc`: unreachable Redis trips the breaker and becomes RedisUnavailable."""
        if isinstance(exc, RedisUnavailable):
            return exc
        if unreachable(exc):
            self.trip(exc, what)
            unavailable = RedisUnavailable(f"{type(exc).__name__}: {exc}")
            unavailable.__cause__ = exc
            return unavailable
        return exc


class _Guarded:
    """Mixed into a Redis client: every command it sends passes the guard, and, when the client has a
    coalescer (cache/redis/coalesce.py), goes out with the other commands of the same moment."""

    guard: RedisGuard
    coalescer: Coalescer | None = None

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        try:
            if self.coalescer is not None and batchable([(args, options)]):
                reply = (await self.coalescer.submit([(args, options)]))[0]
                if isinstance(reply, ResponseError):
                    raise reply
                return reply
            return await super().execute_command(*args, **options)  # type: ignore[misc]
        except _CAUGHT as exc:
            raise self.guard.failed(exc, str(args[0]).lower() if args else "command") from exc

    def pipeline(self, transaction: bool = True, shard_hint: str | None = None) -> Pipeline:
        pipe = GuardedPipeline(self.connection_pool, self.response_callbacks,  # type: ignore[attr-defined]
                               transaction, shard_hint)
        pipe.guard = self.guard
        pipe.coalescer = self.coalescer
        return pipe


class GuardedPipeline(Pipeline):
    guard: RedisGuard
    coalescer: Coalescer | None = None

    async def execute(self, raise_on_error: bool = True) -> list[Any]:
        try:
            if self._coalesced():
                return await self._execute_coalesced(raise_on_error)
            return await super().execute(raise_on_error)
        except _CAUGHT as exc:
            raise self.guard.failed(exc, "pipeline") from exc

    def _coalesced(self) -> bool:
        """Whether this pipeline goes out with others: not a transaction, not watching, running no Script
        objects (redis-py loads those first), and nothing in it that needs a connection of its own."""
        queued = queued_commands(self)
        return self.coalescer is not None and bool(queued) and not runs_on_its_own(self) and batchable(queued)

    async def _execute_coalesced(self, raise_on_error: bool) -> list[Any]:
        assert self.coalescer is not None
        stack = list(queued_commands(self))
        try:
            replies = await self.coalescer.submit(stack)
        finally:
            await self.reset()
        if raise_on_error:
            raise_first_error(self, stack, replies)
        return replies


class GuardedRedis(_Guarded, Redis):  # type: ignore[misc]
    pass


class GuardedRedisCluster(_Guarded, RedisCluster):  # type: ignore[misc]
    """A Redis Cluster client that the code written for one server can use unchanged:

    - MGET over keys of several slots is split by slot (redis-py's `mget_nonatomic`); every caller reads
      values that are independent of each other, so nothing relied on MGET's atomicity;
    - in a pipeline, MGET becomes one GET per key whose replies are joined back into MGET's list; a script
      in a pipeline is queued as EVAL of its text (`cache.live.structures.queue_script`: redis-py refuses EVALSHA in
      cluster pipelines, and a node that restarted would not know the SHA anyway);
    - keys that one command, script or MULTI uses together share a hash tag (cache/keys.py).
    """

    async def mget(self, keys: Any, *args: Any) -> list[Any]:
        return await self.mget_nonatomic(keys, *args)

    def pubsub(self, **kwargs: Any) -> PubSub:  # type: ignore[override]
        """Pub/sub on one master: a cluster passes every PUBLISH to every node, so any node hears all
        channels. A new pub/sub (the hub's reconnection) may take another node, so a node that went away
        is left behind."""
        nodes = self.get_primaries() or startup_nodes(self)
        node = random.choice(nodes)
        passed_on: dict[str, Any] = {k: v for k, v in self.get_connection_kwargs().items()  # TLS, credentials
                                     if k in ("connection_class", "username", "password", "credential_provider")
                                     or k.startswith("ssl_")}
        pool = ConnectionPool(host=node.host, port=node.port, socket_connect_timeout=2.0, **passed_on)
        return _NodePubSub(pool, **kwargs)

    def pipeline(self, transaction: bool | None = None, shard_hint: str | None = None) -> Any:
        pipe = GuardedClusterPipeline(self, transaction)  # type: ignore[abstract]
        pipe.guard = self.guard
        return pipe


class _NodePubSub(PubSub):
    """A pub/sub with a connection pool of its own, closed with it."""

    async def aclose(self) -> None:
        await super().aclose()
        await self.connection_pool.disconnect()


class GuardedClusterPipeline(ClusterPipeline):
    """A cluster pipeline through the guard, with MGET as GuardedRedisCluster describes."""

    guard: RedisGuard

    def __init__(self, client: GuardedRedisCluster, transaction: bool | None = None) -> None:
        super().__init__(client, transaction)
        self.queued = 0
        self.mget_groups: list[tuple[int, int]] = []  # (first reply, how many) of each emulated MGET

    async def initialize(self) -> ClusterPipeline:
        try:  # entering the pipeline may have to find the cluster's nodes first
            return await super().initialize()
        except _CAUGHT as exc:
            raise self.guard.failed(exc, "pipeline") from exc

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        self.queued += 1
        return super().execute_command(*args, **kwargs)

    def mget(self, keys: Any, *args: Any) -> Any:
        names = [keys, *args] if isinstance(keys, (str, bytes)) else [*keys, *args]
        self.mget_groups.append((self.queued, len(names)))
        for name in names:
            self.get(name)
        return self

    def publish(self, channel: Any, message: Any, **kwargs: Any) -> Any:
        return self.execute_command("PUBLISH", channel, message, **kwargs)

    # redis-py's cluster pipeline makes these coroutines that split keys by slot, which a pipeline never
    # awaits (the command would be lost): here they are queued as they are, their keys in one slot.
    def delete(self, *names: Any) -> Any:
        return self.execute_command("DEL", *names)

    def unlink(self, *names: Any) -> Any:
        return self.execute_command("UNLINK", *names)

    def exists(self, *names: Any) -> Any:
        return self.execute_command("EXISTS", *names)

    async def execute(self, raise_on_error: bool = True, allow_redirections: bool = True) -> list[Any]:
        try:
            replies = await super().execute(raise_on_error, allow_redirections)
            # With raise_on_error=False redis-py leaves a node's lost connection in the place of each of
            # its commands' replies: that is no answer to hand a caller (it would unpack an error as a
            # value), but the pipeline's failure, as it is when redis-py raises it.
            unanswered = next((reply for reply in replies if isinstance(reply, _UNREACHABLE)), None)
            if unanswered is not None:
                raise unanswered
        except _CAUGHT as exc:
            raise self.guard.failed(exc, "pipeline") from exc
        finally:
            groups, self.mget_groups, self.queued = self.mget_groups, [], 0
        for first, count in reversed(groups):
            replies[first:first + count] = [replies[first:first + count]]
        return replies


def clients_of(settings: RedisSettings, guard: RedisGuard,
               on_connect: Callable[[Any], Awaitable[Any]] | None = None) -> tuple[Redis, Redis]:
    """The cache's client (REDIS_URL) and the state's (REDIS_STATE_URL; the same client when unset), their
    calls through `guard`, each new connection checked by `on_connect`."""
    def client(url: str | None) -> Redis:
        return make_redis(url, max_connections=settings.redis_max_connections, guard=guard,
                          cluster=settings.redis_cluster, coalesce=settings.redis_coalesce,
                          coalesce_max_commands=settings.redis_coalesce_max_commands, on_connect=on_connect)

    redis = client(settings.redis_url)
    return redis, client(settings.redis_state_url) if settings.redis_state_url else redis


def make_redis(url: str | None, *, max_connections: int = 64, guard: RedisGuard | None = None,
               cluster: bool = False, coalesce: bool = True, coalesce_max_commands: int = BATCH,
               on_connect: Callable[[Any], Awaitable[Any]] | None = None) -> Redis:
    """A client whose calls pass `guard` (a new one when not given: share one between the clients of a
    process so that they agree on whether Redis answers). `cluster`: `url` names any node of a Redis
    Cluster, and the client finds the others. `coalesce`: a server's (or a Sentinel master's) client
    sends the commands of one moment together, at most `coalesce_max_commands` a round trip
    (cache/redis/coalesce.py); a cluster client splits by node
    anyway, and the in-process fake has no round trips to save. `on_connect`: run on each new connection (to a
    server, a Sentinel master or a cluster node) before it is used (cache/failover.py)."""
    guard = guard or RedisGuard()
    if cluster and url is not None:
        nodes: GuardedRedisCluster = GuardedRedisCluster.from_url(  # type: ignore[assignment]
            url, max_connections=max_connections, socket_connect_timeout=2.0, socket_timeout=2.0)
        nodes.guard = guard
        if on_connect is not None:
            connect_cluster_nodes_with(nodes, checked_on_connect(nodes.connection_kwargs["connection_class"],
                                                                 on_connect))
        return nodes  # type: ignore[return-value]
    if url is None:
        # Imported here: production never loads fakeredis.
        from fakeredis import FakeServer
        from fakeredis.aioredis import FakeRedis

        lua_with_sha1hex()  # the cache's scripts call it

        class GuardedFakeRedis(_Guarded, FakeRedis):  # type: ignore[misc]
            pass

        fake = GuardedFakeRedis(server=FakeServer(), decode_responses=False)
        fake.guard = guard
        return fake
    if url.startswith(SENTINEL_SCHEME):
        master = _sentinel_master(url, max_connections=max_connections, guard=guard, on_connect=on_connect)
        master.coalescer = Coalescer(master, coalesce_max_commands) if coalesce else None  # type: ignore[attr-defined]
        return master
    # A burst of more concurrent commands than connections waits for one (up to POOL_WAIT) instead of
    # failing at once: a plain pool raises "Too many connections", which the breaker would take for an
    # outage and send every read to the database.
    pool = ready_on_lend(BlockingConnectionPool).from_url(
        url,
        max_connections=max_connections,
        timeout=POOL_WAIT,
        socket_connect_timeout=2.0,
        socket_timeout=2.0,
        health_check_interval=30,
    )
    pool.connection_class = _connection_class(pool.connection_class, on_connect)
    # No retries: a command that fails trips the breaker (cache/redis/client.py RedisGuard), and a connection
    # its server closed while it was idle is connected again before it is used (cache/redis/seam.py
    # `make_ready`). A client given its pool takes the pool's connections' retry policy (none), not the
    # `retry` it is given, which this once was.
    client = GuardedRedis(connection_pool=pool)
    client.guard = guard
    client.coalescer = Coalescer(client, coalesce_max_commands) if coalesce else None
    return client


async def open_connections(redis: Redis, count: int) -> None:
    """Open `count` connections of `redis`'s pool now (at most its `max_connections`) and give them back to
    it: redis-py opens a pool's connections as concurrency first asks for them and keeps each, so a pool
    left to itself grows at each new peak of load (bench/soak.py saw it step up minutes into a run) and
    the request that meets the peak pays the handshake. Those its coalescer holds between round trips
    (cache/redis/coalesce.py) are of the count. A cluster's node pools are left to open as needed."""
    if is_cluster(redis) or count <= 0:
        return
    pool = redis.connection_pool
    coalescer = getattr(redis, "coalescer", None)
    holding = coalescer.holding if coalescer is not None else 0
    held: list[Any] = []
    try:
        for _ in range(min(count, pool.max_connections) - holding):  # held together: each one of its own
            held.append(await pool.get_connection())
    finally:
        for connection in held:
            await pool.release(connection)


def _connection_class(base: type[Any], on_connect: Callable[[Any], Awaitable[Any]] | None) -> type[Any]:
    fast = fast_connection(base)
    return fast if on_connect is None else checked_on_connect(fast, on_connect)


def _sentinel_master(url: str, *, max_connections: int, guard: RedisGuard,
                     on_connect: Callable[[Any], Awaitable[Any]] | None) -> Redis:
    """A client of the master the Sentinels name for the service; after a failover its connections go to
    the new master (redis-py's SentinelConnectionPool asks the Sentinels again)."""
    from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool

    sentinels, service, db, password = parse_sentinel_url(url)
    sentinel = Sentinel(sentinels, socket_timeout=2.0, sentinel_kwargs={"socket_timeout": 2.0})
    client: GuardedRedis = sentinel.master_for(service, redis_class=GuardedRedis, db=db, password=password,
                                 connection_pool_class=ready_on_lend(SentinelConnectionPool),
                                 socket_timeout=2.0, socket_connect_timeout=2.0, max_connections=max_connections)
    client.connection_pool.connection_class = _connection_class(client.connection_pool.connection_class,
                                                                on_connect)
    client.guard = guard
    return client


def is_cluster(redis: Redis) -> bool:
    return isinstance(redis, RedisCluster)


def guard_of(redis: Redis) -> RedisGuard:
    """The guard of a client made by `make_redis`, or a guard of its own for a plain client (tests)."""
    guard = getattr(redis, "guard", None)
    if guard is None:
        guard = RedisGuard()
        redis.guard = guard  # type: ignore[attr-defined]
    return guard


def queue_set(pipe: Pipeline, key: str, value: bytes, ex: int | None) -> None:
    """SET key value [EX ex] queued as the command itself. redis-py's `set` weighs a dozen options and its
    experimental ones (`experimental_args`) on every call: several times the cost of queueing the command,
    and a cold page stores some seventy values (its entities, its list, its items rendered)."""
    if ex is None:
        pipe.execute_command("SET", key, value)
    else:
        pipe.execute_command("SET", key, value, "EX", ex)


# A script run in a pipeline with other commands, by its hash (`queue_script`): the coalescer sends it with the
# other commands of the moment, where a Script object would first ask whether Redis has it. Its reply, read
# with `raise_on_error=False`, goes through `script_reply`, which runs it again, loaded, when Redis did not
# have it (restarted, or its scripts flushed).

def queue_script(pipe: Pipeline, script: AsyncScript, script_keys: Sequence[Any], args: Sequence[Any]) -> None:
    pipe.evalsha(script.sha, len(script_keys), *script_keys, *args)


async def script_reply(reply: Any, script: AsyncScript, script_keys: Sequence[Any], args: Sequence[Any]) -> Any:
    """What the script `queue_script` queued answered: run again (loaded first) if Redis did not have it; an
    error raised."""
    if isinstance(reply, NoScriptError):
        return await script(keys=script_keys, args=args)
    if isinstance(reply, Exception):
        raise reply
    return reply
