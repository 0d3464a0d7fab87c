"""Seed 004: no string in Redis over 10 KB (CACHE_MAX_VALUE_BYTES). A stamped value is kept whole, compressed,
or in parts of at most the bound each; one past a hundred parts is not kept, and its readers compute it without
waiting for a fill lock. Responses keep their bodies in parts too. A part that Redis lost is a miss, never an
error or a wrong value (cache/stamps.py)."""

from __future__ import annotations

import asyncio
import random
import uuid
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis
from sqlalchemy import update

from cache import keys
from cache.fills import Lease
from cache.live import threads
from cache.stamps import MAX_VALUE, encode_json, part_keys, too_big
from cache.store import Cache
from orm import Shout
from resolvers.deps import Deps
from resolvers.writes import transaction
from telemetry import metrics
from tests.helpers import Api

pytestmark = pytest.mark.usefixtures("engine")


def _noise(size: int, seed: int = 1) -> str:
    """Text that compresses to about half: hex of random bytes."""
    return random.Random(seed).randbytes(size // 2).hex()


async def _longest_strings(redis: Redis) -> dict[str, int]:
    """Every string key's length, and every hash field's, by key: what seed 004 bounds."""
    found: dict[str, int] = {}
    async for key in redis.scan_iter(count=1000):
        kind = (await redis.type(key)).decode()
        if kind == "string":
            found[key.decode()] = await redis.strlen(key)
        elif kind == "hash":
            fields = await redis.hgetall(key)
            found[key.decode()] = max((len(value) for value in fields.values()), default=0)
    return found


def test_a_value_is_kept_whole_compressed_in_parts_or_not_at_all() -> None:
    stamp = b"epoch=1,shouts=2"
    small = encode_json(stamp, b'{"a":1}')
    assert small.head == stamp + b'|j{"a":1}' and small.parts == ()
    compressible = encode_json(stamp, b"[" + b"1," * 20_000 + b"1]")
    assert compressible.head.startswith(stamp + b"|z") and len(compressible.head) <= MAX_VALUE
    parted = encode_json(stamp, f'"{_noise(60_000)}"'.encode())
    assert not parted.too_big and len(parted.parts) == 4  # some 33 KB compressed
    assert part_keys(parted.head) == [name for name, _ in parted.parts]
    assert all(len(data) <= MAX_VALUE for _, data in parted.parts) and len(parted.head) <= MAX_VALUE
    beyond = encode_json(stamp, f'"{_noise(2_200_000)}"'.encode())  # some 1.1 MB compressed
    assert beyond.too_big and too_big(beyond.head) and beyond.parts == ()


async def test_a_value_in_parts_is_read_whole_and_a_lost_part_is_a_miss(cache: Cache, redis: Redis) -> None:
    key, value = f"test:big:{uuid.uuid4().hex}", {"text": _noise(60_000)}
    computed: list[int] = []

    async def query() -> dict[str, Any]:
        computed.append(1)
        return value

    assert await cache.cached_query(key, query, tags=[keys.TAG_SHOUTS]) == value
    head = await redis.get(key)
    assert head is not None and len(head) <= MAX_VALUE and len(part_keys(head)) == 4
    assert all([0 < await redis.strlen(part) <= MAX_VALUE for part in part_keys(head)])
    assert all([await redis.ttl(part) > await redis.ttl(key) for part in part_keys(head)])  # parts outlive it
    assert await cache.cached_query(key, query, tags=[keys.TAG_SHOUTS]) == value and len(computed) == 1

    await redis.delete(part_keys(head)[2])  # evicted
    assert await cache.cached_query(key, query, tags=[keys.TAG_SHOUTS]) == value and len(computed) == 2
    assert await cache.cached_query(key, query, tags=[keys.TAG_SHOUTS]) == value and len(computed) == 2


async def test_a_value_past_a_hundred_parts_is_computed_by_each_reader_and_never_kept(
        cache: Cache, redis: Redis) -> None:
    key, value = f"test:huge:{uuid.uuid4().hex}", {"text": _noise(2_200_000)}
    computed: list[int] = []

    async def query() -> dict[str, Any]:
        computed.append(1)
        return value

    refused = metrics.total(metrics.VALUES_TOO_BIG, what="value")
    assert await cache.cached_query(key, query, tags=[keys.TAG_SHOUTS]) == value
    marker = await redis.get(key)
    assert marker is not None and too_big(marker)  # only its stamp and one byte
    assert metrics.total(metrics.VALUES_TOO_BIG, what="value") == refused + 1
    # Another worker computing it holds the fill lock of its generation: a reader does not wait for it.
    assert await cache.take_fill_lock(key, marker.partition(b"|")[0]) is Lease.OURS
    cache.fill_wait_ms = 600_000
    for reads in (2, 3):
        assert await asyncio.wait_for(cache.cached_query(key, query, tags=[keys.TAG_SHOUTS]), 10) == value
        assert len(computed) == reads
    assert await redis.get(key) == marker  # not written again


LONG_SHOUT = "query($s: String) { get_shout(slug: $s) { id body } }"


async def test_a_long_shout_and_its_response_are_kept_within_ten_kilobytes_a_string(
        api: Api, deps: Deps, redis: Redis, client: httpx.AsyncClient) -> None:
    """A shout whose text compresses past 10 KB: its entity, its rendered answer and its response are kept in
    parts, the second read is a response-cache hit with the same text, and no string or hash field in Redis is
    over the bound; after a write it is computed again, whole."""
    author = await api.user()
    shout_id = await api.published(author)
    body = f"<p>{_noise(80_000, seed=2)}</p>"
    async with transaction(deps) as session:
        await session.execute(update(Shout).where(Shout.id == shout_id).values(body=body))
        slug = (await session.get(Shout, shout_id)).slug  # type: ignore[union-attr]
    request = {"query": LONG_SHOUT, "variables": {"s": slug}}
    first = await client.post("/graphql", json=request, headers={"accept-encoding": "gzip"})
    assert first.json()["data"]["get_shout"]["body"] == body and first.headers["x-cache"] == "MISS"
    again = await client.post("/graphql", json=request, headers={"accept-encoding": "gzip"})
    assert again.json() == first.json() and again.headers["x-cache"] == "HIT"
    longest = await _longest_strings(redis)
    assert max(longest.values()) <= MAX_VALUE, sorted(longest.items(), key=lambda kv: -kv[1])[:3]
    assert any(k.startswith("part:") for k in longest)

    async with transaction(deps) as session:
        await session.execute(update(Shout).where(Shout.id == shout_id).values(body=body + "<p>ещё</p>"))
    changed = await client.post("/graphql", json=request)
    assert changed.json()["data"]["get_shout"]["body"] == body + "<p>ещё</p>"


COMMENT = """mutation($s: Int!, $b: String!) {
  create_reaction(reaction: {kind: COMMENT, shout: $s, body: $b}) { error reaction { id } }
}"""
COMMENTS = "query($s: Int!) { load_shout_comments(shout: $s, limit: 5) { id body } }"


async def test_a_long_comment_is_kept_compressed_in_its_thread(api: Api, redis: Redis) -> None:
    """A comment may hold 10,000 characters, some 20 KB of Cyrillic: its `comment:{id}` HASH keeps the text
    compressed, and the thread read from it gives the text as written."""
    author = await api.user()
    shout_id = await api.published(author)
    letters = "абвгдеёжзийклмнопрстуфхцчшщъыьэюя "
    body = "".join(random.Random(3).choice(letters) for _ in range(10_000))
    assert len(body.encode()) > 2 * MAX_VALUE - 2_000
    created = await api(COMMENT, {"s": shout_id, "b": body}, author)
    assert created["error"] is None
    for _ in range(2):  # built from SQL, then read from the kept page
        assert await api(COMMENTS, {"s": shout_id}) == [{"id": created["reaction"]["id"], "body": body}]
    kept = await redis.hgetall(keys.comment(created["reaction"]["id"]))
    assert b"body.z" in kept and threads.decode(kept)["body"] == body  # what a thread read makes of the HASH
    longest = await _longest_strings(redis)
    assert keys.comment(created["reaction"]["id"]) in longest
    assert max(longest.values()) <= MAX_VALUE, sorted(longest.items(), key=lambda kv: -kv[1])[:3]
