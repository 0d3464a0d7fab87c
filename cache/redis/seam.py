"""redis-py (and fakeredis) past their public API: every such use of the project is here, and only here.

Coalescing (cache/redis/coalesce.py) queues the commands of many callers into one pipeline and splits the replies
back, which needs a pipeline's queue and flags; packing commands in C needs redis-py's hiredis serializer;
sending them without a task each needs a connection's stream; reading a round trip's replies under one timer
needs a connection's read without a timer of its own, and taking them straight from hiredis needs its
parser's reader;
pub/sub on a cluster needs the nodes a cluster client was started with. None of this is promised by
redis-py's documentation. The embedded default's in-process Redis (fakeredis) lacks a function of Redis's Lua
that the cache's scripts call: it is given it here, through fakeredis' internals (`lua_with_sha1hex`).
Each reliance is a named function or class below, and `tests/schema/test_seams.py` has a canary for each that
fails naming the library, the internal and what to do. The rest of the project uses these names and
redis-py's public API (including subclassing its clients and pipelines and overriding their public methods).

The redis-py versions these were written against are the bounds in `pyproject.toml`.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import inspect
import math
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

import hiredis
from redis._parsers.hiredis import NOT_ENOUGH_DATA, _AsyncHiredisParser
from redis._parsers.socket import SERVER_CLOSED_CONNECTION_ERROR
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import RedisCluster
from redis.client import EMPTY_RESPONSE, NEVER_DECODE
from redis.connection import HiredisRespSerializer
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.utils import HIREDIS_AVAILABLE

# (args, options): a command as redis-py's pipelines queue it
Command = tuple[tuple[Any, ...], Mapping[str, Any]]


def queued_commands(pipe: Pipeline) -> list[Command]:
    """The commands a pipeline has queued, as (args, options) (redis-py's `command_stack`)."""
    return pipe.command_stack


def runs_on_its_own(pipe: Pipeline) -> bool:
    """Whether a pipeline needs a connection to itself: a MULTI/EXEC transaction, a WATCH, or Script
    objects, which redis-py loads before sending the pipeline (its `is_transaction`,
    `explicit_transaction`, `watching` and `scripts`)."""
    return bool(pipe.is_transaction or pipe.explicit_transaction or pipe.watching or pipe.scripts)


def raise_first_error(pipe: Pipeline, commands: list[Command], replies: list[Any]) -> None:
    """Raise the first error among `replies` as the pipeline's `execute` would, annotated with its command."""
    pipe.raise_first_error(commands, replies)


class HeldConnections:
    """Connections one user of a pool keeps between its round trips (at most `cap`), instead of giving each
    back to the pool and asking for one again: redis-py's `get_connection` and `release` (a lock or a
    condition, a timer, a readiness check of the socket, its observability counters, and a shielded task
    to release) were about 40% of the CPU of a round trip to a Redis on loopback, paid by every hit and
    several times by every miss. Only a connection whose round trip read every reply is kept, and it is
    made ready again before each use, as the pool makes those it lends (`make_ready`); one whose round trip
    failed or was cancelled goes back to the pool. To the pool they are in use: its `disconnect` (the
    client's close) closes them too, and a connection closed so connects again at its next round trip."""

    def __init__(self, cap: int = 2) -> None:
        self.cap = cap
        self._idle: list[Any] = []

    def __len__(self) -> int:
        return len(self._idle)

    def take(self) -> Any | None:
        return self._idle.pop() if self._idle else None

    def keep(self, connection: Any) -> bool:
        """Keep `connection` for the next round trip, if there is room and it is fit for one (connected, and
        not asked by its server to reconnect, which the pool's release would act on)."""
        if len(self._idle) >= self.cap or not connection.is_connected or _should_reconnect(connection):
            return False
        self._idle.append(connection)
        return True


async def make_ready(connection: Any) -> None:
    """A connection made fit for a round trip: connected, and connected again if its server closed it
    meanwhile (a Redis restarted, a server's idle timeout, a killed client) or left something unread on it.
    redis-py's pool means to do this when it lends a connection (`ensure_connection`), but skips its check
    whenever maintenance notifications may be on, which its default ("auto") says they are: a closed
    connection was found only by the round trip that failed on it, and the breaker took that for an outage.
    Uses a connection's `can_read` (something to read, or the end of the stream)."""
    if not connection.is_connected:
        await connection.connect()
    elif await connection.can_read():
        await connection.disconnect()
        await connection.connect()


@functools.cache
def ready_on_lend(pool_class: type[Any]) -> type[Any]:
    """`pool_class` that makes each connection it lends ready (`make_ready`, in place of its own
    `ensure_connection`, which its `get_connection` calls); one class per pool class."""

    class ReadyOnLend(pool_class):
        async def ensure_connection(self, connection: Any) -> None:
            await make_ready(connection)

    ReadyOnLend.__name__ = ReadyOnLend.__qualname__ = f"ReadyOnLend{pool_class.__name__}"
    return ReadyOnLend


async def _ready(pool: Any, connection: Any) -> None:
    """A held connection made ready as the pool makes those it lends; if it cannot be, it goes back to the
    pool, as `get_connection` gives back one it could not make ready."""
    try:
        await make_ready(connection)
    except BaseException:
        await asyncio.shield(pool.release(connection))
        raise


def _should_reconnect(connection: Any) -> bool:
    should = getattr(connection, "should_reconnect", None)  # redis-py's maintenance notifications
    return bool(should()) if should is not None else False


async def execute_pipelined(client: Any, commands: Sequence[Command], *,
                            deliver: Callable[[list[Any]], None] | None = None,
                            held: HeldConnections | None = None) -> list[Any]:
    """What redis-py's non-transactional pipeline on `client`'s pool answers for `commands` with
    `raise_on_error=False` (each reply through the client's response callbacks, an error reply as the
    command's reply), sent the same way (the commands packed into one write, on a connection of the pool,
    under the connection's retry policy; the connection dropped on any failure), but without what that
    pipeline adds to each round trip: a timer for every reply it reads, and for the round trip its HIMPORT
    bookkeeping and operation metrics (neither used here). One timer bounds the reading of all the
    replies instead, at the connection's socket timeout: a round trip of one reply as before, a stalled
    one of many sooner. It was about 40% of the CPU of a round trip to a Redis on loopback (70 -> 47 us
    for one command, 100 -> 58 us for three), paid by every hit and several times by every miss and write.

    `deliver`, when given, has the replies as soon as they are read, before the connection goes back to the
    pool (a shielded release is a task of its own, two turns of the loop that a caller need not wait for).
    `held`, when given, lends a connection kept from an earlier round trip and keeps this one's afterwards
    (`HeldConnections`), the pool asked only when it has none.

    Uses a connection's `read_response(timeout=math.inf)` (redis-py's way to read without its own timer),
    its `retry`, and the pool's `get_connection` / `release`."""
    pool = client.connection_pool
    connection = held.take() if held is not None else None
    if connection is None:
        connection = await pool.get_connection()
    else:
        await _ready(pool, connection)
    kept = False
    try:
        replies: list[Any] = await connection.retry.call_with_retry(
            lambda: _round_trip(client.response_callbacks, connection, commands),
            lambda _error: connection.disconnect())
        if deliver is not None:
            deliver(replies)
        kept = held is not None and held.keep(connection)
        return replies
    finally:
        if not kept:
            # shielded, as redis-py's pipeline releases: a second cancellation must not split the pool's
            # bookkeeping of connections in use and available
            await asyncio.shield(pool.release(connection))


async def _round_trip(callbacks: Mapping[Any, Any], connection: Any, commands: Sequence[Command]) -> list[Any]:
    await connection.send_packed_command(connection.pack_commands([args for args, _ in commands]))
    replies: list[Any] = []
    try:
        async with asyncio.timeout(connection.socket_timeout):
            reader = _hiredis_reader(connection)
            if reader is None:
                for args, options in commands:
                    replies.append(await _reply(callbacks, connection, args[0], options))
            else:
                for (args, options), raw in zip(commands, await _read_all(connection, reader, commands), strict=True):
                    reply = _answered(callbacks, args[0], options, raw)
                    replies.append(await reply if inspect.isawaitable(reply) else reply)
    except TimeoutError:  # the read was cancelled by the timer: redis-py has dropped the connection
        raise RedisTimeoutError(f"Timeout reading from {_address(connection)}") from None
    return replies


def _hiredis_reader(connection: Any) -> Any:
    """The hiredis reader of a connection's parser, when it reads with hiredis (redis-py's
    `_AsyncHiredisParser`, its `_reader`); None for any other parser, read reply by reply."""
    parser = getattr(connection, "_parser", None)
    return getattr(parser, "_reader", None) if isinstance(parser, _AsyncHiredisParser) else None


async def _read_all(connection: Any, reader: Any, commands: Sequence[Command]) -> list[Any]:
    """The raw replies to `commands`, taken from the connection's hiredis reader as they are parsed, the
    socket read only when the reader holds no whole reply. redis-py reads a reply through four coroutines
    (the connection's `read_response`, its parser's, their checks), a third of a round trip's CPU more
    (bench/RESULTS.md, figures behind the code's rules).
    What `read_response` does around a reply is done here too: a reply that is a connection error is
    raised, a push notification goes to the parser's handler and the reply after it is the command's, the
    health check is moved after the read, and the connection is dropped on any failure
    (`disconnect_on_error`)."""
    parser = connection._parser
    if not parser._connected:
        raise RedisConnectionError(SERVER_CLOSED_CONNECTION_ERROR)
    push_type = parser._hiredis_PushNotificationType
    raws: list[Any] = []
    try:
        for _args, options in commands:
            undecoded = (False,) if NEVER_DECODE in options else ()  # `gets(False)`: bytes as they came
            while True:
                raw = reader.gets(*undecoded)
                while raw is NOT_ENOUGH_DATA:
                    await parser.read_from_socket()
                    raw = reader.gets(*undecoded)
                if push_type is not None and isinstance(raw, push_type):
                    await parser.handle_push_response(raw)
                    continue
                break
            # an error reply that is redis-py's ConnectionError (LOADING, MASTERDOWN...) is raised, as it raises it
            if isinstance(raw, RedisConnectionError):
                raise raw
            if isinstance(raw, list) and raw and isinstance(raw[0], RedisConnectionError):
                raise raw[0]
            raws.append(raw)
    except OSError as error:
        await connection.disconnect(nowait=True)
        raise RedisConnectionError(f"Error while reading from {_address(connection)} : {error.args}") from None
    except BaseException:
        await connection.disconnect(nowait=True)
        raise
    if connection.health_check_interval:
        connection.next_health_check = asyncio.get_running_loop().time() + connection.health_check_interval
    return raws


def _answered(callbacks: Mapping[Any, Any], command: Any, options: Mapping[str, Any], raw: Any) -> Any:
    """A raw reply as redis-py's `Redis.parse_response` gives it (its options: NEVER_DECODE, EMPTY_RESPONSE
    and `keys` are its own, the rest go to the command's callback), or an awaitable of it (an async
    callback's); an error reply as the reply."""
    if isinstance(raw, ResponseError):
        return options[EMPTY_RESPONSE] if EMPTY_RESPONSE in options else raw
    callback = callbacks.get(command)
    if callback is None:
        return raw
    if options:
        options = {name: value for name, value in options.items() if name not in _NOT_FOR_CALLBACKS}
    return callback(raw, **options)


def _address(connection: Any) -> str:
    """Where a connection goes, for an error: a Unix socket's path, else host:port."""
    return getattr(connection, "path", None) or f"{getattr(connection, 'host', '')}:{getattr(connection, 'port', '')}"


async def _reply(callbacks: Mapping[Any, Any], connection: Any, command: Any, options: Mapping[str, Any]) -> Any:
    """One command's reply as redis-py's `Redis.parse_response` gives it, read through the connection."""
    try:
        reply = await connection.read_response(disable_decoding=NEVER_DECODE in options, timeout=math.inf)
    except ResponseError as error:
        reply = error
    answered = _answered(callbacks, command, options, reply)
    return await answered if inspect.isawaitable(answered) else answered


_NOT_FOR_CALLBACKS = frozenset({NEVER_DECODE, EMPTY_RESPONSE, "keys"})


def startup_nodes(cluster: RedisCluster) -> list[Any]:
    """The nodes a cluster client was given at start (its `nodes_manager.startup_nodes`)."""
    return list(cluster.nodes_manager.startup_nodes.values())


class _PackedByHiredis:
    """Commands packed by hiredis's C packer, as redis-py's synchronous client packs them: its asyncio
    connection packs in Python, argument by argument, and a page's reads send a few hundred arguments
    (keys). The same bytes either way; an argument of a type Redis has no form for (None, a bool) is
    refused alike, as a DataError (redis-py's `HiredisRespSerializer`, for what hiredis refuses)."""

    _packer = HiredisRespSerializer()

    def pack_command(self, *args: Any) -> list[bytes]:
        if isinstance(args[0], str) and " " not in args[0]:  # a command without a subcommand in its name
            try:
                return [hiredis.pack_command(args)]
            except TypeError:  # a bytearray or memoryview, converted there, or a type Redis has no form for
                pass
        packed: list[bytes] = self._packer.pack(*args)
        return packed


class SentWithoutATask:
    """Commands written to the connection's stream at once. With a socket timeout (ours: two seconds),
    redis-py sends each command inside `asyncio.wait_for`, which makes a task and a timer for it: about a
    quarter of the CPU of a round trip to a Redis on loopback, paid by every hit and several times by every
    miss and write. Writing never waits unless the stream holds more than the kernel took (its buffer over the
    high-water mark, when `drain` waits): only that wait is bounded by the timeout, as redis-py bounds the
    whole send, and a send that times out or fails is handled as redis-py handles it (the connection
    dropped; a TimeoutError, or a ConnectionError naming the errno). Uses redis-py's `_writer` (the
    connection's asyncio StreamWriter) and its error wording."""

    async def send_packed_command(self, command: bytes | str | Iterable[bytes], check_health: bool = True) -> None:
        if not self.is_connected or not self.socket_timeout:  # type: ignore[attr-defined]
            await super().send_packed_command(command, check_health)  # type: ignore[misc]
            return
        if check_health:
            await self.check_health()  # type: ignore[attr-defined]
        if isinstance(command, str):
            command = command.encode()
        if isinstance(command, bytes):
            command = [command]
        try:
            writer: asyncio.StreamWriter = self._writer  # type: ignore[attr-defined]
            writer.writelines(command)
            if writer.transport.get_write_buffer_size():
                await asyncio.wait_for(writer.drain(), self.socket_timeout)  # type: ignore[attr-defined]
        except TimeoutError:
            await self.disconnect(nowait=True)  # type: ignore[attr-defined]
            raise RedisTimeoutError("Timeout writing to socket") from None
        except OSError as error:
            await self.disconnect(nowait=True)  # type: ignore[attr-defined]
            number, message = ("UNKNOWN", error.args[0]) if len(error.args) == 1 else error.args[:2]
            raise RedisConnectionError(f"Error {number} while writing to socket. {message}.") from error
        except BaseException:
            await self.disconnect(nowait=True)  # type: ignore[attr-defined]
            raise


def fast_connection(connection_class: type[Any]) -> type[Any]:
    """`connection_class` packing its commands in C (`_PackedByHiredis`, where hiredis is installed) and
    sending them without a task each (`SentWithoutATask`); one class per connection class. A connection's
    `pack_command` and `send_packed_command` are redis-py's, overridden here."""
    fast = _FAST.get(connection_class)
    if fast is None:
        mixins = (SentWithoutATask, _PackedByHiredis) if HIREDIS_AVAILABLE else (SentWithoutATask,)
        fast = _FAST[connection_class] = type(f"Fast{connection_class.__name__}", (*mixins, connection_class), {})
    return fast


_FAST: dict[type[Any], type[Any]] = {}


def checked_on_connect(connection_class: type[Any], check: Callable[[Any], Awaitable[Any]]) -> type[Any]:
    """`connection_class` running `check(connection)` on each new connection, after redis-py's own set-up
    (HELLO, AUTH, SELECT) and before the connection carries anything else (redis-py's
    `on_connect_check_health`, which its `connect` calls)."""

    class Checked(connection_class):
        async def on_connect_check_health(self, *args: Any, **kwargs: Any) -> None:
            try:
                await super().on_connect_check_health(*args, **kwargs)
                await check(self)
            except AttributeError as error:
                if not lost_connection(error):
                    raise
                raise RedisConnectionError("the connection was closed while it was being set up") from error

    Checked.__name__ = f"Checked{connection_class.__name__}"
    return Checked


def connect_cluster_nodes_with(cluster: RedisCluster, connection_class: type[Any]) -> None:
    """Make `cluster`'s connections to every node, found already or later, of `connection_class`. redis-py's
    cluster client sets the class itself (its constructor takes no `connection_class`) in the keyword
    arguments it hands each node it makes (`connection_kwargs`, shared with its nodes manager), and the
    nodes it started from were made with them already."""
    cluster.connection_kwargs["connection_class"] = connection_class
    for node in (*cluster.startup_nodes, *cluster.nodes_manager.startup_nodes.values(),
                 *cluster.nodes_manager.nodes_cache.values()):
        node.connection_class = connection_class


def lost_connection(error: BaseException) -> bool:
    """Whether `error` is redis-py using a connection that another task closed meanwhile: a cluster client
    that learns of a new topology (a failover, moved slots) disconnects the node's connections, some in use
    or being set up, and their next write meets asyncio's closed transport (a RuntimeError, "the handler is
    closed") or the stream redis-py dropped (an AttributeError on None). Seen under a killed master and a
    CLUSTER FAILOVER with load; a lost connection, as redis-py's other errors say."""
    if isinstance(error, RuntimeError):
        return "closed" in str(error)
    return isinstance(error, AttributeError) and "NoneType" in str(error)


def lua_with_sha1hex() -> None:
    """Every fake server's Lua given `redis.sha1hex`, which Redis gives every script and fakeredis (2.40,
    2.41) does not: without it the cache's fill-lock script (cache/lua/read_or_lease.lua) fails on the
    embedded default. Added as fakeredis makes a server's Lua runtime, on its first script
    (`ScriptingCommandsMixin._get_server_runtime`); a fakeredis that has the function keeps its own."""
    from fakeredis.commands_mixins.scripting_mixin import ScriptingCommandsMixin  # only the embedded default

    made = ScriptingCommandsMixin._get_server_runtime
    if getattr(made, "gives_sha1hex", False):
        return

    def runtime_with_sha1hex(self: Any, server: Any) -> Any:
        new = not hasattr(server, "_lua_runtime")
        runtime = made(self, server)
        if new:
            functions = runtime.globals()[b"redis"]
            if functions[b"sha1hex"] is None:
                functions[b"sha1hex"] = _sha1hex
        return runtime

    runtime_with_sha1hex.gives_sha1hex = True  # type: ignore[attr-defined]
    ScriptingCommandsMixin._get_server_runtime = runtime_with_sha1hex  # type: ignore[method-assign]


def _sha1hex(data: Any) -> bytes:
    """Redis's `redis.sha1hex`: the lower-case hex SHA-1 of its argument as a string."""
    raw = data if isinstance(data, bytes) else str(data).encode()
    return hashlib.sha1(raw, usedforsecurity=False).hexdigest().encode()
