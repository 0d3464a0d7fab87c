"""Stamps and stored values: what a value is kept as, and what it was computed under.

A stored value is its stamp, `|`, a format byte and its JSON (compressed over COMPRESS_OVER, seed 004). A
stamp names the generations of the tags it was computed under (`epoch=81,author:5=3`), so that a value or a
response can be checked by itself: by a script in Redis (cache/lua/stamp_moves.lua), by a round trip from
outside (`stamp_is_current`, on a cluster), or from a shell (`discours cache inspect`).
"""

from __future__ import annotations

import zlib
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import orjson
from redis.asyncio import Redis

from cache import keys, response_capture

# Seed 004: at most 100 keys in one command; a stamp names at most what a script checks in ten MGETs.
CHECKED_MOST = 10 * 100

# Seed 004: a string value over 10 KB is compressed.
COMPRESS_OVER = 10_240
_JSON = b"j"
_ZLIB = b"z"


def dumps(data: Any) -> bytes:
    return orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS)


def encode(stamp: bytes, data: Any) -> bytes:
    return encode_json(stamp, dumps(data))


def encode_json(stamp: bytes, body: bytes) -> bytes:
    """A stamp and JSON already encoded, as stored: compressed over COMPRESS_OVER (seed 004)."""
    if len(body) > COMPRESS_OVER:
        return stamp + b"|" + _ZLIB + zlib.compress(body, 1)
    return stamp + b"|" + _JSON + body


def decode(raw: bytes) -> tuple[bytes, Any]:
    stamp, body = decode_json(raw)
    return stamp, orjson.loads(body)


def decode_json(raw: bytes) -> tuple[bytes, bytes]:
    """The stamp and the JSON bytes of a stored value, not parsed."""
    stamp, _, rest = raw.partition(b"|")
    return stamp, json_of(rest)


def json_of(rest: bytes) -> bytes:
    """The JSON bytes of what follows a stored value's stamp (its format byte, then its body)."""
    fmt, body = rest[:1], rest[1:]
    return zlib.decompress(body) if fmt == _ZLIB else body


class KeptDecoded:
    """The values last decoded under some keys, each with the bytes it was decoded from, the most recently
    read `size` of them. A value read again as the very same bytes (its stamp included) is the same value:
    it is handed out again, not parsed again. What it hands out is shared by every reader in the worker,
    so it is only read, never changed (tests/cache/test_composite.py checks the readers of composites)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._kept: OrderedDict[str, tuple[bytes, bytes, Any]] = OrderedDict()

    def decode(self, key: str, raw: bytes, decoder: Callable[[bytes], tuple[bytes, Any]] | None = None
               ) -> tuple[bytes, Any]:
        """`raw`'s stamp and value, as `decoder` gives them (by default parsed: the module's `decode`)."""
        kept = self._kept.get(key)
        if kept is not None and kept[0] == raw:
            self._kept.move_to_end(key)
            return kept[1], kept[2]
        stamp, data = (decoder or decode)(raw)
        if self.size:
            self._kept[key] = (raw, stamp, data)
            self._kept.move_to_end(key)
            if len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return stamp, data

    def items(self) -> list[tuple[str, bytes, Any]]:
        """What is kept: (key, bytes, value)."""
        return [(key, raw, data) for key, (raw, _, data) in self._kept.items()]


def stamp_parts(generations: Mapping[str, bytes]) -> dict[str, bytes]:
    """Each tag's part of a stamp. A stamp names its tags (`epoch=81,author:5=3`), so a stored value or
    response can be checked by itself (`discours cache inspect`, the response cache's Lua)."""
    return {tag: tag.encode() + b"=" + generation for tag, generation in generations.items()}


def parse_stamp(stamp: bytes) -> dict[str, bytes]:
    """The tags a stored value depends on, with the generations it was computed under."""
    return dict((tag.decode(), generation) for tag, _, generation in
                (part.rpartition(b"=") for part in stamp.split(b",") if part))


def capture_stamp(capture: response_capture.Capture) -> bytes | None:
    """The stamp to keep what a capture saw under (a response, a composite), naming every generation; None
    when it must not be kept: it read while Redis was unavailable or saw a tag move, read nothing, or read
    more tags than a script checks in ten MGETs."""
    if not capture.storable or not capture.generations:
        return None
    # a member's tag moves only with its family's (keys.covering): the family's generation answers for it
    generations = {tag: generation for tag, generation in capture.generations.items()
                   if keys.covering(tag) not in capture.generations}
    if len(generations) > CHECKED_MOST:
        return None
    return b",".join(stamp_parts(generations).values())


async def stamp_is_current(redis: Redis, stamp: bytes) -> bool:
    """What cache/lua/stamp_is_current.lua answers, from outside Redis (a cluster keeps generations in other slots
    than the value, where a script cannot read them): one more round trip."""
    wanted = parse_stamp(stamp)
    return not wanted or list(wanted.values()) == await redis.mget(keys.generations(wanted))
