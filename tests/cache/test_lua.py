"""The server's Lua scripts (cache/lua/): no Lua left in Python strings, each file with the header that names
its KEYS and ARGV, every file used, every script as loaded compiling on a real Redis, and the scripts run on
their own (EVAL, keys of one hash tag so that a cluster takes them too), apart from the modules using them."""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest
from redis.asyncio import Redis

import cache
from cache.lua import HERE, INCLUDED, LOADED, load_lua
from tests.helpers import ROOT

SERVER = ("app", "schema", "resolvers", "auth", "triggers", "cache", "orm", "config", "telemetry")
FILES = sorted(path.stem for path in HERE.glob("*.lua"))


def _import_the_cache() -> None:
    for module in pkgutil.walk_packages(cache.__path__, "cache."):
        importlib.import_module(module.name)


def test_no_lua_is_left_in_python() -> None:
    calls = re.compile(r"redis\.p?call\(")
    found = [str(path.relative_to(ROOT)) for package in SERVER for path in (ROOT / package).rglob("*.py")
             if calls.search(path.read_text())]
    assert found == []


@pytest.mark.parametrize("name", FILES)
def test_each_file_says_what_it_takes_and_gives(name: str) -> None:
    header = [line for line in (HERE / f"{name}.lua").read_text().splitlines() if line.startswith("--")]
    if header[0].startswith("-- A library:"):
        return
    for part in ("-- KEYS:", "-- ARGV:", "-- Returns"):
        assert any(line.startswith(part) for line in header), f"{name}.lua names no {part!r}"


def test_every_file_is_a_script_some_module_loads_or_a_library_one_includes() -> None:
    _import_the_cache()
    assert set(FILES) == set(LOADED) | INCLUDED


async def test_every_script_as_loaded_compiles_on_redis(redis: Redis) -> None:
    _import_the_cache()
    for name, script in LOADED.items():
        assert "$" not in script and not re.search(r"^\s*--", script, re.MULTILINE), name
        assert await redis.script_load(script), name


def test_includes_come_once_comments_go_and_a_missing_constant_refuses() -> None:
    script = load_lua("response_hit", grace_prefix="grace:", fields_end=11)
    assert script.count("local function stamp_moves") == 1  # asked for by two libraries
    assert script.index("local function stamp_moves") < script.index("local function all_graced") < \
        script.index("local function look_up") < script.index("return look_up()")
    assert script.rstrip().endswith("return look_up()")
    with pytest.raises(KeyError, match="fields_end"):
        load_lua("response_hit", grace_prefix="grace:")
    assert load_lua("forget_on_node").startswith("#!lua flags=allow-cross-slot-keys\n")


async def test_a_lock_is_released_by_its_owner_only(redis: Redis) -> None:
    release = load_lua("lock_release")
    await redis.set("lock:{t}", "mine")
    assert await redis.eval(release, 1, "lock:{t}", "theirs") == 0
    assert await redis.get("lock:{t}") == b"mine"
    assert await redis.eval(release, 1, "lock:{t}", "mine") == 1
    assert await redis.exists("lock:{t}") == 0


async def test_the_wal_floor_only_rises(redis: Redis) -> None:
    raise_floor = load_lua("wal_floor_raise")
    await redis.eval(raise_floor, 1, "floor:{t}", "0000000000000010", 100)
    await redis.eval(raise_floor, 1, "floor:{t}", "000000000000000f", 200)  # lower: kept, its expiry moved
    assert await redis.get("floor:{t}") == b"0000000000000010" and await redis.ttl("floor:{t}") > 100
    await redis.eval(raise_floor, 1, "floor:{t}", "00000000000000a0", 100)
    assert await redis.get("floor:{t}") == b"00000000000000a0"


async def test_the_delayed_queue_leases_due_messages_and_a_lapsed_lease_comes_back(redis: Redis) -> None:
    fetch, settle = load_lua("delayed_fetch"), load_lua("delayed_settle")
    queue = ["q:{t}", "q:{t}:leased", "q:{t}:deliveries", "q:{t}:parked", "q:{t}:errors"]
    await redis.zadd(queue[0], {"due": 10, "later": 1000})
    assert await redis.eval(fetch, 3, *queue[:3], 100, 10, 130) == [b"due", 1]
    assert await redis.zscore(queue[1], "due") == 130 and await redis.zscore(queue[0], "later") == 1000
    assert await redis.eval(fetch, 3, *queue[:3], 120, 10, 150) == []  # leased until 130
    assert await redis.eval(fetch, 3, *queue[:3], 140, 10, 170) == [b"due", 2]  # the lease lapsed
    assert await redis.eval(settle, 5, *queue, "due", "park", 141, "boom", 1) == 1
    assert await redis.hget(queue[4], "due") == b"boom" and await redis.zcard(queue[1]) == 0
    assert await redis.eval(settle, 5, *queue, "due", "retry", 150, "", 1) == 0  # no longer leased


async def test_a_value_is_read_only_under_current_generations(redis: Redis) -> None:
    read = load_lua("composite_read")
    await redis.set("gen:{t}a", "5")
    await redis.set("v:{t}1", "{t}a=5|the value")
    await redis.set("v:{t}2", "{t}a=4|an old value")
    assert await redis.eval(read, 2, "v:{t}1", "v:{t}2", "gen:") == [b"{t}a=5|the value", None]
    await redis.incr("gen:{t}a")
    assert await redis.eval(read, 1, "v:{t}1", "gen:") == [None]


async def test_a_stored_response_is_a_hit_then_stale_once_a_generation_moves(redis: Redis) -> None:
    fields = ("s", "b", "z", "v", "e", "a", "p", "c")
    hit = load_lua("response_hit", grace_prefix="grace:", fields_end=3 + len(fields))
    await redis.set("gen:{t}a", "7")
    await redis.hset("r:{t}", mapping={"s": "{t}a=7", "b": "body", "e": "etag", "a": "60"})
    keys_args = (2, "r:{t}", "clock:{t}", "gen:", "4242", 60, *fields)
    found = await redis.eval(hit, *keys_args)
    assert found[:2] == [2, b"body"] and found[5] == b"60" and found[7] == b""
    assert await redis.hget("r:{t}", "c") == b"4242"  # found current at the clock it started
    assert (await redis.eval(hit, *keys_args))[:2] == [2, b"body"]  # the clock did not move: no stamp check
    await redis.set("gen:{t}a", "8")
    await redis.set("clock:{t}", "4243")
    assert await redis.eval(hit, *keys_args) == [1, b"4243", b"", b"{t}a"]


async def test_a_view_counts_once_an_hour_and_a_missing_counter_is_asked_for(redis: Redis) -> None:
    count = load_lua("views_count", hour=3600)
    keys_of = ("seen:{t}", "views:{t}", "pending:{t}")
    assert await redis.eval(count, 3, *keys_of, "5", 10) == 2  # no counter: built from SQL first
    await redis.set("views:{t}", 0)
    assert await redis.eval(count, 3, *keys_of, "5", 10) == 1
    assert await redis.eval(count, 3, *keys_of, "5", 10) == 0
    assert await redis.get("views:{t}") == b"1" and await redis.ttl("seen:{t}") > 3500
