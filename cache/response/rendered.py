"""Rendered answers: one root field's answer as the JSON bytes it is sent as, for one selection.

A public list read again with the response cache off, or in another document than the one whose whole
answer is kept (another operation name, another field beside it), is executed field by field from warm
values: for the three hundred topics of `get_topics_all`, two thousand fields completed and serialized,
where the answer is the same bytes each time. Kept rendered, the field's answer is one Redis read and is
placed in the response as it is (`orjson.Fragment`), not executed.

A rendered answer is kept like a composite (cache/composite.py): under the stamp of every generation the
reads that computed it saw, checked inside Redis by the same script on each read, so a write to anything
it was made of makes it a miss. What read the viewer, counted a view or read while Redis was unavailable
is not kept (a hit would skip the viewer's reading, or the view). Which fields, and the key of a selection,
schema/engine/rendered.py decides.

Stored as every stamped value is (cache/stamps.py: whole, compressed or in parts, within seed 004's 10 KB a
string), for RENDERED_ANSWER_TTL seconds at most.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from weakref import WeakKeyDictionary

from redis.asyncio.client import Pipeline
from redis.exceptions import RedisError

from cache import response_capture
from cache.composite import TOO_BIG_TO_KEEP, read_stamped, read_stamped_many
from cache.fills import queue_stored
from cache.stamps import KeptDecoded, capture_stamp, decode_json, encode_json
from cache.store import MISSING, Cache

# A worker keeps the answers it read last as they are sent (decompressed), by key, as many as composites.
_kept: WeakKeyDictionary[Cache, KeptDecoded] = WeakKeyDictionary()


@dataclass(slots=True, eq=False)
class Rendered:
    """A rendered answer as the worker keeps it once read: its JSON bytes, and the response that is this
    answer alone with its ETag (schema/engine/rendered.py `answer_without_executing` makes them the first time it
    sends it so; a key names one field with one response name, so one response). Kept made, not put inside
    `{"data":{...}}` again on every read: for all topics, that is a tenth of the read's CPU."""

    body: bytes
    whole: tuple[bytes, str] | None = None  # the response of this answer alone, and its ETag


def _decoded(raw: bytes) -> tuple[bytes, Rendered]:
    stamp, body = decode_json(raw)
    return stamp, Rendered(body)


async def read_rendered_items(cache: Cache, item_keys: Sequence[str]) -> list[bytes | None]:
    """The JSON of each page item kept under `item_keys` (schema/engine/item_fragments.py) whose stamp is current,
    in one round trip; None for one absent or outdated (`read_stamped_many`)."""
    return await read_stamped_many(cache, item_keys, "rendered item")


async def read_rendered(cache: Cache, key: str) -> Rendered | None:
    """The answer kept under `key`, if every generation it was computed under is current (the same object
    while its stored bytes stay the same)."""
    kept = _kept.get(cache)
    if kept is None:
        kept = _kept[cache] = KeptDecoded(cache.decoded.size)
    found = await read_stamped(cache, key, kept, _decoded, "rendered")
    return None if found is MISSING or found is TOO_BIG_TO_KEEP else found


@dataclass(frozen=True, slots=True)
class ToKeep:
    """A rendered answer computed and not yet kept: handed to whoever stores the response it is part of, to
    be kept in the same round trip (`queue_kept`)."""

    key: str
    body: bytes
    capture: response_capture.Capture
    ttl: int


def queue_kept(pipe: Pipeline, cache: Cache, answers: Iterable[ToKeep]) -> bool:
    """Queue the commands keeping each answer under what its capture saw, for at most its ttl; whether any
    may be kept (not what read the viewer, counted a view or read while Redis was unavailable)."""
    queued = False
    for answer in answers:
        stamp = capture_stamp(answer.capture)
        if stamp is None or answer.capture.read_viewer or answer.capture.views or not cache.available:
            continue
        queue_stored(pipe, answer.key, encode_json(stamp, answer.body, cache.max_value),
                     cache.jittered(answer.ttl) or answer.ttl, "rendered")
        queued = True
    return queued


async def keep_all(cache: Cache, answers: Iterable[ToKeep]) -> bool:
    """Keep these answers now, in one round trip; whether any was kept."""
    try:
        async with cache.redis.pipeline(transaction=False) as pipe:
            if not queue_kept(pipe, cache, answers):
                return False
            await pipe.execute()
    except RedisError as exc:
        cache.trip(exc, "rendered write")
        return False
    return True


async def keep_rendered(cache: Cache, key: str, body: bytes, capture: response_capture.Capture, ttl: int) -> bool:
    """Keep `body` under what `capture` saw while it was computed, for at most `ttl` seconds, now; whether
    it was kept."""
    return await keep_all(cache, [ToKeep(key, body, capture, ttl)])
