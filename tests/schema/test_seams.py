"""Canaries for what the project relies on past its libraries' public API (schema/engine/seam.py for Strawberry and
graphql-core, cache/redis/seam.py for redis-py). Each fails with a message naming the library and its version,
the internal, what depends on it and what to do, so that an upgrade that changes one says so here, in one
line, instead of as a slower server or a silently skipped check somewhere else."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import inspect
import textwrap
from importlib.metadata import version
from typing import Any

import pytest
import strawberry
from graphql import GraphQLSchema, GraphQLSyntaxError, build_schema, execute, parse, specified_rules
from graphql.execution import Executor
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ResponseError
from sqlalchemy.util import greenlet_spawn
from strawberry.extensions import SchemaExtension
from strawberry.schema import schema_converter
from strawberry.subscriptions import GRAPHQL_SSE_PROTOCOL
from strawberry.types import Info

import cache.redis.seam as cache_seam
from cache import keys
from cache.redis.client import make_redis
from cache.redis.seam import (
    execute_pipelined,
    fast_connection,
    queued_commands,
    raise_first_error,
    runs_on_its_own,
    startup_nodes,
)
from schema.context import Loader
from schema.engine.seam import (
    VIEW_HOOKS,
    FieldLoop,
    FieldResolversUnwrapped,
    PlannedArguments,
    StarletteRequestAdapter,
    coerced_variables,
    field_definition,
    field_errors,
    fragment_definitions,
    graphql_ide_page,
    graphql_schema,
    over_token_limit,
    request_validation_rules,
    resolve_info,
    stream_protocol,
    validate_document,
)

STRAWBERRY = f"Strawberry {version('strawberry-graphql')}"
GRAPHQL_CORE = f"graphql-core {version('graphql-core')}"
REDIS_PY = f"redis-py {version('redis')}"
FAKEREDIS = f"fakeredis {version('fakeredis')}"
# The source of graphql-core's `Executor.execute_fields` that schema/engine/seam.py `FieldLoop` copies (3.3.2).
EXECUTE_FIELDS_COPIED = "9a241b5415503bfb50d4a8209b20c9743a972919e40aa3b5de956639825cf45a"
# The sources `FieldLoop.execute_relation` takes a straight path through (3.3.2), in this order.
RELATION_PATH = ("execute_field", "complete_value", "complete_object_value", "collect_and_execute_subfields")
RELATION_PATH_COPIED = "2ebbdbc84ac42414ae17018ace3afa9f07f44ec6393a48d91b498c619c70d238"
# The sources `FieldLoop.complete_list_item_value` takes a straight path through (3.3.2), in this order.
LIST_ITEM_PATH = ("complete_list_item_value", "complete_value", "complete_object_value", "collect_and_execute_subfields")
LIST_ITEM_PATH_COPIED = "77e5647466b5e1908cf11a7c52f5c871852e5798604c9bbe84bb3f575a434c1c"


def canary(condition: bool, library: str, internal: str, depends: str, todo: str) -> None:
    assert condition, f"{library}: {internal} changed. {depends} depends on it. To do: {todo}"


seen_infos: list[Info] = []


@strawberry.type
class Item:
    name: str

    @strawberry.field
    def title(self, info: Info) -> str:
        seen_infos.append(info)
        return self.name.title()


@strawberry.type
class Query:
    @strawberry.field
    def item(self) -> Item:
        return Item(name="one")


# --- Strawberry -----------------------------------------------------------------------------------

def test_graphql_core_fields_lead_back_to_their_strawberry_definition() -> None:
    schema = strawberry.Schema(query=Query)
    field = graphql_schema(schema).type_map["Item"].fields["name"]  # type: ignore[union-attr]
    definition = field_definition(field)
    canary(definition is not None and definition.python_name == "name" and definition.is_basic_field,
           STRAWBERRY, "GraphQLCoreConverter.DEFINITION_BACKREF (a graphql-core field's `StrawberryField`)",
           "Cache policies (schema/engine/cache_control.py), the refusal of state changes over GET (schema/engine/safety.py) "
           "and plain fields (schema/engine/execution.py)",
           "find where Strawberry now keeps a field's definition and change schema/engine/seam.py `field_definition`")


def test_a_strawberry_schema_has_its_graphql_core_schema() -> None:
    canary(isinstance(graphql_schema(strawberry.Schema(query=Query)), GraphQLSchema), STRAWBERRY,
           "`Schema._schema` (the graphql-core schema)", "Every check on a parsed document",
           "find the graphql-core schema's new attribute and change schema/engine/seam.py `graphql_schema`")


async def test_a_resolver_reaches_graphql_cores_resolve_info() -> None:
    seen_infos.clear()
    result = await strawberry.Schema(query=Query).execute("query { item { ...F } } fragment F on Item { title }")
    assert result.errors is None
    raw = resolve_info(seen_infos[0])
    canary(raw.field_nodes[0].name.value == "title"
           and "F" in raw.fragments, STRAWBERRY, "`Info._raw_info` (graphql-core's resolve info)",
           "Pages reading their selection once per document (schema/pages.py `selected_paths`)",
           "find graphql-core's info in Strawberry's Info and change schema/engine/seam.py `resolve_info`")


def test_validation_runs_strawberrys_rules_too() -> None:
    schema = graphql_schema(strawberry.Schema(query=Query))
    rules = tuple(specified_rules)  # what a request's context carries
    refused = validate_document(schema, parse("{ item { nope } }"), rules)
    canary(validate_document(schema, parse("{ item { name } }"), rules) == []
           and len(refused) == 1 and "nope" in refused[0].message, STRAWBERRY,
           "`strawberry.schema.schema.validate_document(schema, document, rules)`",
           "Validation of every request (schema/engine/limits.py validates in Strawberry's place)",
           "validate as Strawberry's own validation step now does, in schema/engine/seam.py `validate_document`")


async def test_a_request_is_validated_with_the_rules_an_answer_without_executing_checks() -> None:
    seen: list[tuple[Any, ...]] = []

    class Rules(SchemaExtension):
        def on_validate(self) -> Any:
            seen.append(tuple(self.execution_context.validation_rules))
            yield

    await strawberry.Schema(query=Query, extensions=[Rules]).execute("{ item { name } }")
    canary(seen == [request_validation_rules()] and len(seen[0]) >= len(specified_rules), STRAWBERRY,
           "`ExecutionContext.validation_rules`' default (the rules a request is validated with)",
           "Rendered answers sent without executing (schema/engine/rendered.py `answer_without_executing` checks a "
           "document as Strawberry would)",
           "take the rules Strawberry now validates with in schema/engine/seam.py `request_validation_rules`")


def test_the_middleware_manager_is_asked_for_per_request() -> None:
    params = list(inspect.signature(strawberry.Schema._get_middleware_manager).parameters)
    canary(params == ["self", "extensions"] and hasattr(SchemaExtension, "_implements_resolve"), STRAWBERRY,
           "`Schema._get_middleware_manager(extensions)` / `SchemaExtension._implements_resolve`",
           "Skipping graphql-core's middleware per resolved field (schema/engine/seam.py `FieldResolversUnwrapped`; "
           "without it, requests are slower, not wrong)",
           "override Strawberry's new hook in `FieldResolversUnwrapped`, or remove the mixin")

    class Unwrapped(FieldResolversUnwrapped, strawberry.Schema):
        pass

    canary(Unwrapped(query=Query)._get_middleware_manager([]) is None, STRAWBERRY,
           "`Schema._get_middleware_manager`", "FieldResolversUnwrapped", "see above")


async def test_the_middleware_manager_is_what_graphql_core_gets(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[Any] = []
    original = strawberry.Schema._get_middleware_manager

    def counted(self: Any, extensions: list[SchemaExtension]) -> Any:
        asked.append(extensions)
        return original(self, extensions)

    monkeypatch.setattr(strawberry.Schema, "_get_middleware_manager", counted)
    await strawberry.Schema(query=Query).execute("{ item { name } }")
    canary(len(asked) == 1, STRAWBERRY, "the call of `_get_middleware_manager` per request",
           "FieldResolversUnwrapped (it overrides a hook Strawberry no longer calls)",
           "find how Strawberry now hands graphql-core its middleware")


@strawberry.input
class Window:
    first: int = 1


@strawberry.type
class Windowed:
    @strawberry.field
    def span(self, window: Window) -> int:
        return window.first


async def test_resolvers_convert_their_arguments_through_the_converters_global(monkeypatch: pytest.MonkeyPatch,
                                                                              ) -> None:
    planned = PlannedArguments()
    planned_for: list[Any] = []
    original_plan = planned._plan

    def plan(arguments: Any, *rest: Any) -> Any:
        planned_for.append(arguments)
        return original_plan(arguments, *rest)

    monkeypatch.setattr(planned, "_plan", plan)
    monkeypatch.setattr(schema_converter, "convert_arguments", planned)
    result = await strawberry.Schema(query=Windowed).execute("{ a: span(window: {first: 3}) b: span(window: {}) }")
    canary(result.errors is None and result.data == {"a": 3, "b": 1} and len(planned_for) == 1, STRAWBERRY,
           "`get_arguments` converting through `schema_converter.convert_arguments`",
           "Arguments converted by plan (schema/engine/seam.py `PlannedArguments`)",
           "find where Strawberry now converts a resolver's arguments and install the plan there")


def test_the_graphiql_page_comes_from_strawberry() -> None:
    page = graphql_ide_page()
    canary("graphiql" in page and "https://unpkg.com/" in page, STRAWBERRY, "`strawberry.http.ides`",
           "The offline GraphiQL page (app/http/graphiql.py, its scripts vendored by scripts/vendor_graphiql.py)",
           "find Strawberry's page and run scripts/vendor_graphiql.py again for its new scripts")


async def test_a_loader_uses_the_cache_map_it_is_given() -> None:
    async def fetch(keys: list[int]) -> list[int]:
        return [key * 2 for key in keys]

    loader = Loader(fetch)
    assert await loader.load(3) == 6
    canary(loader.has(3) and loader.futures.get(3) is not None, STRAWBERRY,
           "DataLoader's `cache_map` argument", "A request's loaders (schema/context.py `Loader`)",
           "keep loaded futures where the DataLoader now does and change `Loader.has`")


# --- graphql-core --------------------------------------------------------------------------------

def _sources_digest(names: tuple[str, ...]) -> str:
    """The sha256 of graphql-core's `Executor` methods' sources, in this order."""
    digest = hashlib.sha256()
    for name in names:
        digest.update(textwrap.dedent(inspect.getsource(getattr(Executor, name))).encode())
    return digest.hexdigest()


def _same_parameters(name: str) -> None:
    """`FieldLoop`'s override of `Executor.name` takes the parameters graphql-core passes it."""
    params = list(inspect.signature(getattr(Executor, name)).parameters)
    canary(params == list(inspect.signature(getattr(FieldLoop, name)).parameters), GRAPHQL_CORE,
           f"the parameters of `Executor.{name}`", "FieldLoop", "follow the new signature")


def test_the_field_loop_copied_is_graphql_cores_own() -> None:
    canary(_sources_digest(("execute_fields",)) == EXECUTE_FIELDS_COPIED, GRAPHQL_CORE,
           "`Executor.execute_fields` (the loop over an object's fields, marked private)",
           "schema/engine/seam.py `FieldLoop.execute_fields`, a copy of it with plain fields read in the loop",
           "compare graphql-core's new loop with the copy, port every change into the copy, run "
           "tests/schema/test_execution.py, then put the new source's sha256 in EXECUTE_FIELDS_COPIED")
    _same_parameters("execute_fields")


def test_the_path_a_relation_takes_straight_is_graphql_cores_own() -> None:
    canary(_sources_digest(RELATION_PATH) == RELATION_PATH_COPIED, GRAPHQL_CORE,
           "`Executor.execute_field`, `complete_value`, `complete_object_value` or `collect_and_execute_subfields`",
           "schema/engine/seam.py `FieldLoop.execute_relation`, which executes a relation given an object at once as "
           "they do, without their checks of the type",
           "compare the new sources with `execute_relation`, port what changed, run tests/schema/test_execution.py, "
           "then put the new sources' sha256 in RELATION_PATH_COPIED")


def test_the_path_a_list_item_takes_straight_is_graphql_cores_own() -> None:
    canary(_sources_digest(LIST_ITEM_PATH) == LIST_ITEM_PATH_COPIED, GRAPHQL_CORE,
           "`Executor.complete_list_item_value`, `complete_value`, `complete_object_value` or "
           "`collect_and_execute_subfields`",
           "schema/engine/seam.py `FieldLoop.complete_list_item_value`, which executes an item that is an object as "
           "they do, without their checks of the type",
           "compare the new sources with `complete_list_item_value`, port what changed, run "
           "tests/schema/test_execution.py, then put the new sources' sha256 in LIST_ITEM_PATH_COPIED")
    _same_parameters("complete_list_item_value")


def test_a_field_loop_sees_the_requests_fragments_variables_and_errors() -> None:
    seen: list[Any] = []

    class Seeing(Executor):
        def execute_field(self, *args: Any) -> Any:
            seen.append(self)
            return super().execute_field(*args)

    def failing(_info: Any) -> int:
        raise ValueError("no b")

    execute(build_schema("type Query { a(n: Int): Int b: Int }"),
            parse("query($n: Int = 7) { a(n: $n) ...F } fragment F on Query { b }"),
            root_value={"a": lambda _info, n: n, "b": failing}, executor_class=Seeing)
    executor = seen[-1]
    depends = "The key of a rendered answer, and whether it is kept (schema/engine/rendered.py)"
    canary(set(fragment_definitions(executor)) == {"F"}, GRAPHQL_CORE, "`ExecutionContext.fragment_definitions`",
           depends, "change schema/engine/seam.py `fragment_definitions` to where the fragments are now")
    canary(dict(coerced_variables(executor)) == {"n": 7}, GRAPHQL_CORE, "`ExecutionContext.variable_values.coerced`",
           depends, "change schema/engine/seam.py `coerced_variables` to where the coerced variables are now")
    canary([error.path for error in field_errors(executor)] == [["b"]], GRAPHQL_CORE,
           "`ExecutionContext.collected_errors.errors`", depends,
           "change schema/engine/seam.py `field_errors` to where the errors collected so far are now")


def test_the_token_limit_is_told_apart_by_its_wording() -> None:
    with pytest.raises(GraphQLSyntaxError) as refused:
        parse("{ a b c d }", max_tokens=3)
    canary(over_token_limit(refused.value), GRAPHQL_CORE, "the parser's message for too many tokens",
           "The TOO_MANY_TOKENS code of a refused document (schema/engine/limits.py)",
           "change schema/engine/seam.py `_TOKEN_LIMIT_WORDING` to the new message")
    with pytest.raises(GraphQLSyntaxError) as wrong:
        parse("{ a ")
    assert not over_token_limit(wrong.value)


# --- redis-py ------------------------------------------------------------------------------------

async def test_a_pipeline_shows_its_queue_and_flags() -> None:
    client = Redis()  # no connection is made: nothing is sent
    pipe = client.pipeline(transaction=False)
    pipe.set("k", 1)
    pipe.get("k")
    queued = queued_commands(pipe)
    canary([args for args, _ in queued] == [("SET", "k", 1), ("GET", "k")], REDIS_PY,
           "`Pipeline.command_stack` ((args, options) per queued command)",
           "Coalescing commands into one round trip (cache/redis/coalesce.py, cache/redis/client.py `GuardedPipeline`)",
           "find the new queue and change cache/redis/seam.py `queued_commands`")
    canary(not runs_on_its_own(pipe) and runs_on_its_own(client.pipeline(transaction=True)), REDIS_PY,
           "`Pipeline.is_transaction` / `explicit_transaction` / `watching` / `scripts`",
           "Which pipelines may be coalesced (a transaction must keep its connection)",
           "change cache/redis/seam.py `runs_on_its_own` to the new flags")
    scripted = client.pipeline(transaction=False)
    await client.register_script("return 1")(client=scripted)  # queued, not sent
    canary(runs_on_its_own(scripted), REDIS_PY, "`Pipeline.scripts`", "Coalescing (scripts are loaded first)",
           "change cache/redis/seam.py `runs_on_its_own`")


def test_a_pipeline_raises_its_first_error_as_execute_would() -> None:
    pipe = Redis().pipeline(transaction=False)
    pipe.set("k", 1)
    with pytest.raises(ResponseError) as raised:
        raise_first_error(pipe, queued_commands(pipe), [ResponseError("WRONGTYPE nope")])
    canary("Command # 1 (SET k 1)" in str(raised.value), REDIS_PY, "`Pipeline.raise_first_error`",
           "A coalesced pipeline's errors (cache/redis/client.py `GuardedPipeline`)",
           "raise as redis-py's `execute` now does, in cache/redis/seam.py `raise_first_error`")


async def test_a_round_trip_of_queued_commands_answers_as_redis_pys_pipeline(redis: Redis) -> None:
    """cache/redis/seam.py `execute_pipelined` (what the coalescer sends): the replies of redis-py's own pipeline
    with `raise_on_error=False`: callbacks and their options applied (awaited when they are coroutines),
    an error reply in its place, an empty MGET's EMPTY_RESPONSE, and DUMP's bytes never decoded by a client
    that decodes."""
    if isinstance(redis, RedisCluster):
        pytest.skip("coalescing is not used on a cluster")
    builder = Redis().pipeline(transaction=False)  # only queues: no connection is made
    builder.set("seam:s", "v", ex=60).get("seam:s").mget(["seam:s", "seam:none"]).incr("seam:n")
    builder.hset("seam:h", mapping={"a": 1, "b": 2}).hgetall("seam:h").expire("seam:h", 60)
    builder.zadd("seam:z", {"x": 1.5, "y": 2}).zrange("seam:z", 0, -1, withscores=True)
    builder.exists("seam:s", "seam:none").lpush("seam:s", "x").eval("return {1, 'two'}", 0)
    builder.sadd("seam:m", "a").smembers("seam:m").mget([])  # a callback given `keys`; EMPTY_RESPONSE
    builder.dump("seam:s").delete("seam:s", "seam:n", "seam:h", "seam:z", "seam:m")
    replies = await _both_ways(redis, queued_commands(builder))
    assert isinstance(replies[10], ResponseError) and "WRONGTYPE" in str(replies[10])
    assert replies[13:15] == [{b"a"}, []]

    # a client that decodes replies, with a callback that must be awaited: DUMP's bytes are never decoded
    decoding = Redis(connection_pool=redis.connection_pool.__class__(**{
        **redis.connection_pool.connection_kwargs, "decode_responses": True}))

    async def echoed(reply: Any, **_options: Any) -> Any:
        return ("echoed", reply)

    decoding.set_response_callback("ECHO", echoed)
    try:
        builder = Redis().pipeline(transaction=False)
        builder.set("seam:d", "текст").get("seam:d").dump("seam:d").echo("hello").delete("seam:d")
        replies = await _both_ways(decoding, queued_commands(builder))
        assert replies[1] == "текст" and isinstance(replies[2], bytes) and replies[3] == ("echoed", "hello")
    finally:
        await decoding.aclose()


async def _both_ways(client: Redis, commands: list[Any]) -> list[Any]:
    """The replies of `execute_pipelined` to `commands`, after the canary that redis-py's own pipeline gives
    the same, whether the replies are taken from the connection's hiredis reader (as they are) or read one
    by one through the connection (as for any other parser)."""
    theirs = Pipeline(client.connection_pool, client.response_callbacks, False, None)
    theirs.command_stack.extend(commands)
    async with theirs:
        expected = await theirs.execute(raise_on_error=False)
    replies = await execute_pipelined(client, commands)
    one_by_one = await _read_one_by_one(client, commands)

    def comparable(replies: list[Any]) -> list[Any]:
        return [(type(reply), str(reply)) if isinstance(reply, Exception) else reply for reply in replies]

    for read in (replies, one_by_one):
        canary(comparable(read) == comparable(expected), REDIS_PY,
               "`Redis.parse_response` (options NEVER_DECODE, EMPTY_RESPONSE, keys; `response_callbacks`)",
               "Coalescing (cache/redis/coalesce.py sends every caller's commands with cache/redis/seam.py `execute_pipelined`)",
               f"make `execute_pipelined` read replies as redis-py's pipeline now does: {read} != {expected}")
    return replies


async def _read_one_by_one(client: Redis, commands: list[Any]) -> list[Any]:
    """`execute_pipelined` reading its replies one by one through the connection, as it does when the
    connection's parser is not hiredis's."""
    reader = cache_seam._hiredis_reader
    cache_seam._hiredis_reader = lambda _connection: None
    try:
        return await execute_pipelined(client, commands)
    finally:
        cache_seam._hiredis_reader = reader


async def test_an_error_reply_that_is_a_connection_error_is_raised_both_ways(redis: Redis) -> None:
    """A reply redis-py's parser turns into its ConnectionError (a LOADING, a MASTERDOWN: here one a script
    returns) is raised, as redis-py raises it, not handed back as the command's reply; an ordinary error
    reply is the reply."""
    from redis.exceptions import BusyLoadingError

    if isinstance(redis, RedisCluster):
        pytest.skip("coalescing is not used on a cluster")
    loading = [(("EVAL", "return redis.error_reply('LOADING the dataset is loading')", 0), {})]
    with pytest.raises(BusyLoadingError):
        await execute_pipelined(redis, loading)
    with pytest.raises(BusyLoadingError):
        await _read_one_by_one(redis, loading)
    [wrong] = await execute_pipelined(redis, [(("EVAL", "return redis.error_reply('WRONG it is not')", 0), {})])
    assert isinstance(wrong, ResponseError) and not isinstance(wrong, BusyLoadingError)


async def test_a_round_trip_takes_its_replies_from_the_hiredis_reader_and_a_push_between_them_is_not_one(
        redis_server: Any) -> None:
    """`execute_pipelined` takes a round trip's replies straight from the connection's hiredis reader
    (redis-py's `_AsyncHiredisParser`: its `_reader`, `read_from_socket`, `handle_push_response`). A push
    the server sends between two round trips (RESP3: here a client-side caching invalidation) goes to the
    parser's handler, as redis-py's `read_response` sends it, and the replies after it are the commands'."""
    from redis.asyncio import ConnectionPool
    from redis.asyncio.connection import Connection

    pool = ConnectionPool.from_url(redis_server.url, connection_class=fast_connection(Connection), max_connections=1)
    client, writer = Redis(connection_pool=pool), Redis.from_url(redis_server.url)
    try:
        assert await execute_pipelined(client, [(("CLIENT", "TRACKING", "ON"), {})]) == [b"OK"]
        connection = await pool.get_connection()
        canary(cache_seam._hiredis_reader(connection) is not None, REDIS_PY,
               "`_AsyncHiredisParser` (its `_reader`) as a connection's `_parser`",
               "Reading a round trip's replies straight from hiredis (cache/redis/seam.py `_read_all`)",
               "find where redis-py now keeps a connection's hiredis reader, or read replies one by one")
        await pool.release(connection)
        assert await execute_pipelined(client, [(("SET", "seam:t", "1"), {}), (("GET", "seam:t"), {})]) == [True, b"1"]
        await writer.set("seam:t", "2")  # the server pushes an invalidation of the key read to the tracking one
        await asyncio.sleep(0.05)
        assert await execute_pipelined(client, [(("GET", "seam:t"), {}), (("PING",), {})]) == [b"2", True]
    finally:
        await writer.aclose()
        await client.aclose()


async def test_a_round_trip_reads_its_replies_under_one_timer_and_a_stalled_one_leaves_nothing_behind(
        redis_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """`execute_pipelined` reads every reply of a round trip without redis-py's timer each
    (`read_response(timeout=math.inf)`), under one timer of the socket timeout; a round trip the server does
    not answer in time (stopped) ends in redis-py's TimeoutError with its connection dropped, so that its
    replies, arriving later, are never read as the next round trip's."""
    from redis.asyncio import ConnectionPool
    from redis.asyncio import connection as redis_connection
    from redis.asyncio.connection import Connection
    from redis.exceptions import TimeoutError as RedisTimeoutError

    pool = ConnectionPool.from_url(redis_server.url, connection_class=fast_connection(Connection), socket_timeout=0.3)
    client = Redis(connection_pool=pool)
    timers: list[float | None] = []
    timer = redis_connection.async_timeout

    def counted(delay: float | None) -> Any:
        timers.append(delay)
        return timer(delay)

    try:
        await client.mset({"seam:a": b"1", "seam:b": b"2"})
        monkeypatch.setattr(redis_connection, "async_timeout", counted)
        reads = [(("GET", "seam:a"), {}), (("GET", "seam:b"), {})] * 10
        assert await execute_pipelined(client, reads) == [b"1", b"2"] * 10
        canary(timers == [], REDIS_PY, "`Connection.read_response(timeout=math.inf)` (no timer of its own)",
               "Reading a round trip's replies under one timer (cache/redis/seam.py `execute_pipelined`)",
               "find how redis-py now reads a reply without its timer, or accept a timer per reply")
        redis_server.pause()
        try:
            with pytest.raises(RedisTimeoutError, match="Timeout reading from"):
                await asyncio.wait_for(execute_pipelined(client, reads), 5)  # without its timer: a failure
        finally:
            redis_server.resume()
        assert not any(c.is_connected for c in pool._in_use_connections | set(pool._available_connections))
        assert await execute_pipelined(client, [(("GET", "seam:b"), {}), (("GET", "seam:a"), {})]) == [b"2", b"1"]
    finally:
        await client.aclose()


async def test_a_held_connection_serves_the_next_round_trips_and_is_connected_again_once_its_server_closed_it(
        redis_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """cache/redis/seam.py `HeldConnections`: the coalescer's round trips one after another ask the pool for a
    connection once; one its server closed between round trips (a killed client, a restart, an idle
    timeout) is connected again before anything is sent on it (`make_ready`). Control: used as it is, the
    round trip fails on the closed connection, which the breaker takes for an outage. A round trip that
    fails keeps nothing."""
    from redis.exceptions import TimeoutError as RedisTimeoutError

    import cache.redis.seam
    from cache.redis.client import RedisGuard, RedisUnavailable, make_redis

    client = make_redis(redis_server.url, guard=RedisGuard(breaker_seconds=0))  # tried again at once
    pool = client.connection_pool
    asked = 0
    get_connection = pool.get_connection

    async def counted() -> Any:
        nonlocal asked
        asked += 1
        return await get_connection()

    monkeypatch.setattr(pool, "get_connection", counted)
    try:
        await client.set("seam:held", b"v")
        for _ in range(10):
            assert await client.get("seam:held") == b"v"
        assert asked == 1

        await _kill_other_clients(redis_server)
        assert await client.get("seam:held") == b"v"  # connected again, not a failure
        assert asked == 1

        with monkeypatch.context() as unchecked:  # the control: the held connection used as it is
            unchecked.setattr(cache.redis.seam, "make_ready", _used_as_it_is)
            await _kill_other_clients(redis_server)
            with pytest.raises(RedisUnavailable, match="closed by server"):
                await client.get("seam:held")

        commands = [(("GET", "seam:held"), {})]
        held = cache.redis.seam.HeldConnections()
        assert await execute_pipelined(client, commands, held=held) == [b"v"]
        connection = held.take()
        assert connection is not None
        held.keep(connection)
        redis_server.pause()
        try:
            with pytest.raises(RedisTimeoutError):
                await execute_pipelined(client, commands, held=held)
        finally:
            redis_server.resume()
        assert held.take() is None and connection in pool._available_connections  # given back, not kept
    finally:
        await client.aclose()


async def test_a_pool_connects_again_a_connection_its_server_closed_before_lending_it(redis_server: Any) -> None:
    """cache/redis/seam.py `ready_on_lend`: the project's pools (cache/redis/client.py) make every connection they lend
    ready, so that a transaction (which takes a connection of its own from the pool) after a Redis restart
    or a killed client does not fail on a closed connection. Canary: redis-py's own pool, with its default
    maintenance notifications ("auto"), lends the closed connection as it is."""
    from redis.asyncio import BlockingConnectionPool
    from redis.exceptions import ConnectionError as RedisConnectionError

    from cache.redis.client import RedisGuard, make_redis

    ours = make_redis(redis_server.url, guard=RedisGuard(breaker_seconds=0), coalesce=False)
    theirs = Redis(connection_pool=BlockingConnectionPool.from_url(redis_server.url))
    try:
        for client in (ours, theirs):
            await client.set("seam:lent", b"v")
        await _kill_other_clients(redis_server)
        async with ours.pipeline(transaction=True) as transaction:
            assert await transaction.get("seam:lent").incr("seam:count").execute() == [b"v", 1]
        try:
            await theirs.get("seam:lent")
            lent_as_it_was = False
        except RedisConnectionError:
            lent_as_it_was = True
        canary(lent_as_it_was, REDIS_PY, "`ConnectionPool.ensure_connection` skipping its check while "
               "maintenance notifications are 'auto', and `Connection.can_read`",
               "Connections made ready when a pool lends them (cache/redis/seam.py `ready_on_lend`, `make_ready`)",
               "if redis-py's pool now connects a closed connection again itself, `ready_on_lend` may go")
    finally:
        await ours.aclose()
        await theirs.aclose()


async def _kill_other_clients(redis_server: Any) -> None:
    admin = Redis.from_url(redis_server.url)
    try:
        assert await admin.client_kill_filter(_type="normal", skipme=True) >= 1
    finally:
        await admin.aclose()
    await asyncio.sleep(0.05)  # the end of the stream reaches the closed connections' readers


async def _used_as_it_is(_connection: Any) -> None:
    return None


def test_a_cluster_client_keeps_its_startup_nodes() -> None:
    cluster = RedisCluster(host="127.0.0.1", port=7)  # no connection is made until the first command
    nodes = startup_nodes(cluster)
    canary([(node.host, node.port) for node in nodes] == [("127.0.0.1", 7)], REDIS_PY,
           "`RedisCluster.nodes_manager.startup_nodes`", "Pub/sub on a cluster before it is initialised",
           "change cache/redis/seam.py `startup_nodes`")


async def test_the_embedded_redis_names_a_fill_lock_as_the_cache_does() -> None:
    fake = make_redis(None)  # its servers' Lua given `redis.sha1hex` (cache/redis/seam.py `lua_with_sha1hex`)
    try:
        named = await fake.eval("return ARGV[1] .. redis.sha1hex(KEYS[1] .. '\\0' .. ARGV[2])", 1, "shouts:7",
                                keys.FILL_LOCK_PREFIX, "shout:7=3")
    except ResponseError as error:
        named = str(error).encode()
    canary(named == keys.fill_lock("shouts:7", b"shout:7=3").encode(), FAKEREDIS,
           "`ScriptingCommandsMixin._get_server_runtime` (the Lua runtime made on a server's first script)",
           "The cache's fill-lock script on the embedded default (cache/store.py `_READ_OR_LEASE`)",
           "change cache/redis/seam.py `lua_with_sha1hex`, or drop it if fakeredis gives `redis.sha1hex` itself")


def test_commands_are_packed_by_hiredis_like_redis_py_packs_them() -> None:
    from redis.asyncio.connection import Connection

    from cache.redis.seam import _PackedByHiredis

    packed = fast_connection(Connection)
    canary(issubclass(packed, _PackedByHiredis), REDIS_PY, "`redis.utils.HIREDIS_AVAILABLE`",
           "Packing commands in C (cache/redis/seam.py `fast_connection`)", "install hiredis (redis[hiredis])")
    ours, theirs = packed(), Connection()
    same = all(b"".join(ours.pack_command(*args)) == b"".join(theirs.pack_command(*args))
               for args in (("SET", "ключ", 0.1), ("MGET", b"a", 2, 3.5), ("CLIENT SETNAME", "x")))
    canary(same, REDIS_PY, "`Connection.pack_command` / `HiredisRespSerializer`",
           "Packing commands in C (every command of the server)",
           "compare redis-py's packer with hiredis's and change cache/redis/seam.py `_PackedByHiredis`")


async def test_a_command_is_sent_without_a_task_and_a_stalled_send_still_times_out(
        redis_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """cache/redis/seam.py `SentWithoutATask`: a command goes to the connection's stream (redis-py's `_writer`)
    without `asyncio.wait_for`; a send the server does not take (stopped, its socket buffers full) still
    ends at the socket timeout as redis-py's own does, a TimeoutError, with the connection dropped."""
    from redis.asyncio import ConnectionPool
    from redis.asyncio.connection import Connection
    from redis.exceptions import TimeoutError as RedisTimeoutError

    waits: list[object] = []
    wait_for = asyncio.wait_for

    def counted(awaitable: Any, timeout: float | None) -> Any:
        waits.append(awaitable)
        return wait_for(awaitable, timeout)

    pool = ConnectionPool.from_url(redis_server.url, connection_class=fast_connection(Connection), socket_timeout=0.5)
    client = Redis(connection_pool=pool, retry=None)
    try:
        await client.set("sent", b"at once")
        monkeypatch.setattr(asyncio, "wait_for", counted)
        assert await client.get("sent") == b"at once"
        connection = await pool.get_connection()
        canary(isinstance(getattr(connection, "_writer", None), asyncio.StreamWriter), REDIS_PY,
               "`Connection._writer`", "Sending commands without a task each (cache/redis/seam.py `SentWithoutATask`)",
               "change `SentWithoutATask` to write where redis-py's `_send_packed_command` writes")
        await pool.release(connection)
        assert waits == []
        redis_server.pause()
        try:
            with pytest.raises(RedisTimeoutError, match="Timeout writing to socket"):
                await client.set("too much", b"x" * 64_000_000)  # more than the kernel buffers of a socket
        finally:
            redis_server.resume()
        assert len(waits) == 1  # only the wait for the stream to drain was bounded
        assert not any(c.is_connected for c in pool._in_use_connections | set(pool._available_connections))
    finally:
        await client.aclose()


async def test_the_views_overridden_hooks_are_still_called(app: Any, client: Any,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """app/http/graphql_view.py overrides Strawberry view methods that its documentation does not name; each must
    still exist and be called on the request path, or its override would silently do nothing."""
    from strawberry.asgi import GraphQL

    from app.http.graphql_view import DiscoursGraphQL

    missing = [name for name in VIEW_HOOKS if not hasattr(GraphQL, name)]
    canary(not missing, STRAWBERRY, f"the view's {missing}", "app/http/graphql_view.py DiscoursGraphQL",
           "find what replaced them and move the overrides there")
    called: list[str] = []
    overridden = ("run", "parse_http_body", "get_sub_response")
    for name in overridden:
        original = getattr(DiscoursGraphQL, name)

        def spy(self: Any, *args: Any, _name: str = name, _original: Any = original, **kwargs: Any) -> Any:
            called.append(_name)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(DiscoursGraphQL, name, spy)
    await client.get("/graphql", params={"query": "{ __typename }", "variables": "{}"},
                     headers={"accept": "application/json"})
    await client.post("/graphql", json={"query": "{ get_topics_all { slug } }"}, headers={"cache-control": "no-cache"})
    not_called = set(overridden) - set(called)
    canary(not not_called, STRAWBERRY, f"the view no longer calls {sorted(not_called)}",
           "app/http/graphql_view.py DiscoursGraphQL (its overrides)",
           "find where Strawberry's view now does that step and override it there")
    canary(GraphQL.request_adapter_class is StarletteRequestAdapter, STRAWBERRY,
           "the view's `request_adapter_class`", "app/http/exchange.py ExchangeAdapter (how the view's hooks find the "
           "request read once)", "extend the adapter class Strawberry's ASGI view now uses")
    view = GraphQL(strawberry.Schema(query=Query), subscription_protocols=(GRAPHQL_SSE_PROTOCOL,))
    protocols = (stream_protocol(view, {"accept": "text/event-stream"}), stream_protocol(view, {"accept": "*/*"}))
    canary(protocols == ("sse", "http"), STRAWBERRY, "`_get_stream_transport_from_headers`",
           "schema/engine/seam.py `stream_protocol` (subscriptions over server-sent events)",
           "find how Strawberry's parse_http_body now picks a request's stream transport")
    html = await client.get("/graphql", headers={"accept": "text/html"})
    canary(html.status_code == 200 and "/graphiql-assets/" in html.text, STRAWBERRY,
           "`should_render_graphql_ide` / `graphql_ide_html`", "The offline GraphiQL page",
           "override the view's new way of rendering its IDE")


def test_each_websocket_message_passes_through_the_handlers_handle_message() -> None:
    """app/http/subscription_messages.py checks every message in `handle_message`, which must still be what the
    protocol handlers call for each message they read, and the view must still build them from its
    `*_handler_class` attributes."""
    from strawberry.asgi import GraphQL

    from schema.engine.seam import LegacyWSHandler, TransportWSHandler

    for handler in (TransportWSHandler, LegacyWSHandler):
        canary("self.handle_message(" in inspect.getsource(handler.handle), STRAWBERRY,
               f"{handler.__name__}.handle", "app/http/subscription_messages.py (messages checked before the library)",
               "find where the handler now reads each message and check it there")
    canary(GraphQL.graphql_transport_ws_handler_class.__origin__ is TransportWSHandler  # type: ignore[attr-defined]
           and GraphQL.graphql_ws_handler_class.__origin__ is LegacyWSHandler,  # type: ignore[attr-defined]
           STRAWBERRY, "the view's `graphql_transport_ws_handler_class` / `graphql_ws_handler_class`",
           "app/http/graphql_view.py DiscoursGraphQL", "set the view's new handler attributes to the checked handlers")


# --- SQLAlchemy -----------------------------------------------------------------------------------

SQLALCHEMY = f"SQLAlchemy {version('sqlalchemy')}"


async def test_a_session_can_await_from_get_bind(engine: Any) -> None:
    """orm/replicas.py decides a statement's database in `Session.get_bind`, awaiting a Redis read there."""
    from sqlalchemy import Select, literal, select
    from sqlalchemy.ext.asyncio import async_sessionmaker
    from sqlalchemy.orm import Session

    from orm.seam import await_in_session

    awaited: list[int] = []

    async def decide() -> int:
        await asyncio.sleep(0)
        awaited.append(1)
        return 1

    class Deciding(Session):
        def get_bind(self, mapper: Any = None, *, clause: Any = None, **kwargs: Any) -> Any:
            if isinstance(clause, Select):
                await_in_session(decide())
            return super().get_bind(mapper, clause=clause, **kwargs)

    async with async_sessionmaker(engine, sync_session_class=Deciding)() as session:
        assert await session.scalar(select(literal(7))) == 7
    canary(awaited == [1], SQLALCHEMY, "`sqlalchemy.util.await_` inside `Session.get_bind`",
           "Read replicas (orm/replicas.py RoutingSession)", "change orm/seam.py `await_in_session`")


def test_a_select_says_whether_it_locks_rows() -> None:
    from sqlalchemy import literal, select

    from orm.seam import locks_rows

    canary(locks_rows(select(literal(1)).with_for_update()) and not locks_rows(select(literal(1))), SQLALCHEMY,
           "`Select._for_update_arg`", "Read replicas (a SELECT ... FOR UPDATE goes to the primary)",
           "change orm/seam.py `locks_rows`")


async def test_a_connection_closed_while_it_is_set_up_is_a_connection_error(redis_server: Any) -> None:
    """What redis-py raises when a cluster client disconnects a connection being set up (an AttributeError
    on its missing stream) reaches the guard as the connection error it is, not as a server error."""
    from redis.asyncio import ConnectionPool
    from redis.asyncio.connection import Connection
    from redis.exceptions import ConnectionError as RedisConnectionError

    from cache.redis.seam import checked_on_connect

    async def closed_meanwhile(connection: Any) -> None:
        await connection.disconnect()
        connection._writer.writelines([b"PING"])  # what redis-py's send does with the stream gone

    pool = ConnectionPool.from_url(redis_server.url, connection_class=checked_on_connect(Connection, closed_meanwhile))
    client = Redis(connection_pool=pool, retry=None)
    try:
        with pytest.raises(RedisConnectionError):
            await client.ping()
    finally:
        await client.aclose()


def test_a_write_on_a_closed_transport_reads_as_a_lost_connection(redis_server: Any) -> None:
    """uvloop (what the server runs on) refuses a write on a closed transport with the RuntimeError that
    cache/redis/seam.py `lost_connection` recognises; the guard then takes Redis as unreachable."""
    import uvloop

    from cache.redis.client import RedisGuard, RedisUnavailable
    from cache.redis.seam import lost_connection

    async def write_after_close() -> BaseException:
        _reader, writer = await asyncio.open_connection("127.0.0.1", redis_server.port)
        writer.transport.close()
        await asyncio.sleep(0)  # the loop closes the handler
        try:
            writer.transport.write(b"PING\r\n")
        except RuntimeError as error:
            return error
        return AssertionError("the write on a closed transport was taken")

    error = uvloop.run(write_after_close())
    canary(lost_connection(error), "uvloop", "a RuntimeError saying the transport is closed",
           "Redis Cluster failover (a connection closed under a command, cache/redis/seam.py `lost_connection`)",
           "change cache/redis/seam.py `lost_connection` to recognise what it raises now")
    assert isinstance(RedisGuard().failed(error, "get"), RedisUnavailable)  # type: ignore[arg-type]


async def test_every_connection_of_a_cluster_client_runs_the_check() -> None:
    """cache/failover.py checks each node of a Redis Cluster too, on every connection the client makes."""
    from cache.redis.client import make_redis
    from devtools.redis_cluster import RedisClusterServers

    seen: list[bytes] = []

    async def check(connection: Any) -> None:
        await connection.send_command("ECHO", "checked")
        seen.append(await connection.read_response())

    async with RedisClusterServers(1) as cluster:
        client = make_redis(cluster.url, cluster=True, on_connect=check)
        try:
            await client.set("a", 1)
            await client.get("a")
        finally:
            await client.aclose()
    # one check per connection: the client's discovery of the cluster, then the one carrying the commands
    canary(seen and set(seen) == {b"checked"}, REDIS_PY,
           "`RedisCluster.connection_kwargs['connection_class']` and `ClusterNode.connection_class`",
           "The failover check of each cluster node (cache/failover.py)",
           "change cache/redis/seam.py `connect_cluster_nodes_with`")


# --- uvicorn --------------------------------------------------------------------------------------

UVICORN = f"uvicorn {version('uvicorn')}"


async def test_uvicorns_sigterm_handler_is_its_servers_handle_exit() -> None:
    """app/graceful.py finds the server to drain through the SIGTERM handler uvicorn installs."""
    import signal

    import uvicorn

    from app.graceful import uvicorn_server_of

    server = uvicorn.Server(uvicorn.Config(app=None))
    with server.capture_signals():
        found = uvicorn_server_of(signal.getsignal(signal.SIGTERM))
    canary(found is server, UVICORN, "`Server.capture_signals` installing the bound `Server.handle_exit`",
           "Graceful restarts (app/graceful.py drain_on_sigterm)", "change app/graceful.py `uvicorn_server_of`")


async def test_a_connection_runs_a_check_when_it_connects(redis_server: Any) -> None:
    """cache/failover.py checks every new connection's server before the connection carries anything."""
    from redis.asyncio import ConnectionPool
    from redis.asyncio.connection import Connection

    from cache.redis.seam import checked_on_connect

    seen: list[bytes] = []

    async def check(connection: Any) -> None:
        await connection.send_command("ECHO", "checked")
        seen.append(await connection.read_response())

    pool = ConnectionPool.from_url(redis_server.url, connection_class=checked_on_connect(Connection, check))
    client = Redis(connection_pool=pool)
    try:
        assert await client.ping()
    finally:
        await client.aclose()
    canary(seen == [b"checked"], REDIS_PY, "`AbstractConnection.on_connect_check_health`, called by `connect`",
           "The failover check of every new connection (cache/failover.py)", "change cache/redis/seam.py `checked_on_connect`")


def test_an_expanding_in_compiles_to_the_placeholder_driver_reads_replace() -> None:
    from sqlalchemy import bindparam, column, select, table
    from sqlalchemy.dialects.postgresql.asyncpg import dialect

    from orm.seam import driver_sql

    rows = table("rows", column("a"), column("b"))
    sql, names, constants = driver_sql(
        select(rows.c.a).where(rows.c.b == bindparam("x"), rows.c.a.in_(bindparam("ids", expanding=True)),
                               rows.c.b.not_in([1, 2])), dialect())
    canary(sql.endswith("WHERE rows.b = $1 AND rows.a = ANY($2) AND (rows.b <> ALL($3))")
           and names == ["x", "ids", "b_1"] and constants["b_1"] == [1, 2], SQLALCHEMY,
           "an expanding IN compiled as `IN (__[POSTCOMPILE_name])`, numbered after the other parameters",
           "Reads on the driver (orm/driver.py)", "change orm/seam.py `driver_sql`")


async def test_statement_listeners_are_called_through_a_connections_dispatch(engine: Any) -> None:
    from sqlalchemy import event

    from orm.seam import cursor_events

    seen: list[tuple[str, str]] = []

    def before(_conn: Any, _cursor: Any, statement: str, _parameters: Any, context: Any, _many: bool) -> None:
        context.kept = "by the listener"  # as Sentry's and OpenTelemetry's keep their span
        seen.append(("before", statement))

    def after(_conn: Any, _cursor: Any, statement: str, _parameters: Any, context: Any, _many: bool) -> None:
        seen.append(("after", f"{statement} {context.kept} {context.dialect.name}"))

    event.listen(engine.sync_engine, "before_cursor_execute", before)
    event.listen(engine.sync_engine, "after_cursor_execute", after)
    connection = await engine.raw_connection()
    try:
        with cursor_events(engine.sync_engine, connection, "SELECT 1", []):
            pass
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", before)
        event.remove(engine.sync_engine, "after_cursor_execute", after)
        await greenlet_spawn(connection.close)
    canary(seen == [("before", "SELECT 1"), ("after", f"SELECT 1 by the listener {engine.dialect.name}")],
           SQLALCHEMY, "`Engine.dispatch.before_cursor_execute` / `after_cursor_execute`",
           "Reads on the driver (orm/driver.py: statement counters, error reports' and traces' spans see their "
           "statements)", "change orm/seam.py `cursor_events`")


async def test_a_lent_connection_knows_its_pool_and_whether_the_pool_was_invalidated_since(engine: Any) -> None:
    from sqlalchemy import text

    from orm.engine import make_engine, make_session_factory, read_session
    from orm.seam import invalidated_since_connected, pool_of
    from tests.conftest import TEST_DATABASE_URL

    own = make_engine(TEST_DATABASE_URL, pool_size=2)
    try:
        connection = await own.raw_connection()
        fresh = invalidated_since_connected(connection)
        with contextlib.suppress(Exception):  # a session's statement finds its connection dead: the pool's
            async with read_session(make_session_factory(own)) as session:  # invalidation covers all
                await session.execute(text("SELECT pg_terminate_backend(pg_backend_pid())"))
        canary(pool_of(connection) is own.sync_engine.pool and not fresh and invalidated_since_connected(connection),
               SQLALCHEMY, "`_ConnectionFairy._pool`, `Pool._invalidate_time`, `_ConnectionRecord.starttime`",
               "Connections held for reads on the driver (orm/held.py: none lent that the pool's invalidation "
               "covers)", "change orm/seam.py `pool_of` and `invalidated_since_connected`")
        await greenlet_spawn(connection.close)
    finally:
        await own.dispose()


async def test_a_pool_checkout_gets_its_connection_from_do_get(monkeypatch: pytest.MonkeyPatch) -> None:
    from sqlalchemy import text

    from orm.engine import make_engine, make_session_factory, read_session
    from orm.held import HoldingPool
    from tests.conftest import TEST_DATABASE_URL

    calls: list[int] = []
    original = HoldingPool._do_get

    def counted(pool: HoldingPool) -> Any:
        calls.append(1)
        return original(pool)

    monkeypatch.setattr(HoldingPool, "_do_get", counted)
    own = make_engine(TEST_DATABASE_URL, pool_size=1)
    try:
        async with read_session(make_session_factory(own)) as session:
            await session.execute(text("SELECT 1"))
    finally:
        await own.dispose()
    canary(own.sync_engine.pool.logger.name == "sqlalchemy.pool.impl.HoldingPool", SQLALCHEMY,
           "`_sqla_logger_namespace`", "The holding pool's log (orm/held.py: under SQLAlchemy's loggers, quiet)",
           "change orm/held.py `HoldingPool._sqla_logger_namespace`")
    canary(calls == [1], SQLALCHEMY, "`QueuePool._do_get` (a checkout's connection taken from the pool)",
           "Connections held for reads on the driver (orm/held.py: a checkout that finds none idle takes a held "
           "one back)", "change orm/held.py `HoldingPool._do_get`")
