"""Stamps and stored values: what a value is kept as, and what it was computed under.

A stored value is its stamp, `|`, a format byte and its JSON, as one string of at most CACHE_MAX_VALUE_BYTES
(seed 004: no string over 10 KB): as it is (`j`) while that fits in COMPRESS_OVER, else compressed (`z`); one
still too long compressed is kept in parts (`p`, `Stored.parts`), each a string within the bound named by
the hash of its bytes, and under the value's key the stamp and the parts' names. Parts are written before
the name list that points to them and outlive it (PART_MARGIN): a reader that finds the list finds the parts,
unless Redis evicted one, which is a miss. A value that would take more than BATCH parts (one MGET reads
them) is kept as its stamp and `TOO_BIG` alone: while the stamp is current its readers know that computing
it is the answer, without waiting for anyone's fill lock, and that keeping it is not.

A stamp names the generations of the tags it was computed under (`epoch=81,author:5=3`), so that a value or
a response can be checked by itself: by a script in Redis (cache/lua/stamp_moves.lua), by a round trip from
outside (`stamp_is_current`, on a cluster), or from a shell (`discours cache inspect`).
"""

from __future__ import annotations

import hashlib
import zlib
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import orjson
from redis.asyncio import Redis

from cache import keys, response_capture
from cache.redis.limits import BATCH

# Seed 004: at most 100 keys in one command; a stamp names at most what a script checks in ten MGETs.
CHECKED_MOST = 10 * 100

# Seed 004: a string value over 10 KB is compressed, and kept in parts if that is still too long.
COMPRESS_OVER = 10_240
MAX_VALUE = 10_240  # CACHE_MAX_VALUE_BYTES' default
PART_MARGIN = 600  # seconds a value's parts outlive it
_JSON = b"j"
_ZLIB = b"z"
_PARTS = b"p"
TOO_BIG = b"b"


@dataclass(frozen=True, slots=True)
class Stored:
    """A value as it is kept: `head` under its key, and the (key, bytes) of the parts it names, kept first."""

    head: bytes
    parts: tuple[tuple[str, bytes], ...] = ()

    @property
    def too_big(self) -> bool:
        return too_big(self.head)


def dumps(data: Any) -> bytes:
    return orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS)


def encode(stamp: bytes, data: Any, most: int = MAX_VALUE) -> Stored:
    return encode_json(stamp, dumps(data), most)


def encode_json(stamp: bytes, body: bytes, most: int = MAX_VALUE) -> Stored:
    """A stamp and JSON already encoded, as kept within `most` bytes a string (the module's rules)."""
    plain = stamp + b"|" + _JSON + body
    if len(plain) <= min(COMPRESS_OVER, most):
        return Stored(plain)
    packed = zlib.compress(body, 1)
    if len(stamp) + 2 + len(packed) <= most:
        return Stored(stamp + b"|" + _ZLIB + packed)
    parts = split(packed, most)
    head = stamp + b"|" + _PARTS + b",".join(name.encode() for name, _ in parts)
    if not parts or len(head) > most:
        return Stored(stamp + b"|" + TOO_BIG)
    return Stored(head, parts)


def split(data: bytes, most: int) -> tuple[tuple[str, bytes], ...]:
    """`data` in parts of at most `most` bytes, each with its key (named by its bytes); () when that takes
    more than BATCH parts."""
    chunks = [data[start:start + most] for start in range(0, len(data), most)]
    if len(chunks) > BATCH:
        return ()
    return tuple((keys.value_part(hashlib.blake2b(chunk, digest_size=10).hexdigest()), chunk) for chunk in chunks)


def part_keys(stored: bytes) -> list[str]:
    """The keys of the parts a stored value is kept in ([] for one kept whole)."""
    bar = stored.find(b"|")
    return stored[bar + 2:].decode().split(",") if stored[bar + 1:bar + 2] == _PARTS else []


def whole(head: bytes, parts: Sequence[bytes | None]) -> bytes | None:
    """The stored value a head and its parts make (kept compressed, as one string would be); None when a part
    is gone."""
    if any(part is None for part in parts):
        return None
    return head.partition(b"|")[0] + b"|" + _ZLIB + b"".join(cast("Sequence[bytes]", parts))


def too_big(stored: bytes) -> bool:
    """Whether a stored value is the marker of one too big to keep (`encode_json`)."""
    return stored.partition(b"|")[2] == TOO_BIG


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
