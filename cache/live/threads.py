"""Comment threads (seed 001): a HASH per comment and sorted sets of comment ids, kept current by the
write side (triggers/live_rules.py) under the rules of cache/live/structures.py.

- `comment:{id}`: the comment's columns, its `rating` and `status` (active / deleted);
- `post:{shout}:comments`: top-level comments scored by time, `post:{shout}:comments:best` by rating,
  `post:{shout}:comments:all`: every comment of the shout (replies too) by time;
- `comment:{id}:replies` and `comment:{id}:replies:best`: direct replies by time and by rating.

Members are zero-padded ids, so equal scores order by id: "newest" is (time, id) descending, "oldest"
the reverse, "like" is (rating, id) descending and "dislike" exactly its reverse. A comment's reply count
is the ZCARD of its replies. A thread is held whole or not at all: one that outgrows the cap is not
stored, and is read from SQL whole each time its page is not cached. Sets only hold live comments of
public shouts, so a deleted comment leaves its sets, and its HASH, if still read (a page cached a
moment before), says `deleted`.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import aliased

from cache import keys
from cache.fills import Lease
from cache.live.structures import LiveStore, structure_key
from cache.stamps import COMPRESS_OVER
from cache.store import Cache
from orm import Reaction, Shout
from orm.engine import SessionFactory
from orm.reaction import COMMENT_KINDS, RATING_KINDS
from orm.stats import is_listed, vote_value

# sort -> (structure suffix, newest/highest first)
ORDERS: dict[str, tuple[str, bool]] = {
    "newest": ("", True), "oldest": ("", False), "like": ("best", True), "dislike": ("best", False),
}
_INT_FIELDS = ("id", "created_at", "updated_at", "deleted_at", "deleted_by", "reply_to", "shout", "created_by",
               "rating")
_TEXT_FIELDS = ("body", "quote", "kind", "oid")
_PACKED, _PACKED_B = ".z", b".z"  # the suffix of a text field kept compressed (`encode`)


def set_name(owner_kind: str, order: str = "") -> str:
    """The live structure holding a shout's top-level comments or a comment's replies in one order."""
    base = "comments" if owner_kind == "shout" else "replies"
    return f"{base}:{order}" if order else base


def comment_rating() -> Any:
    """A comment's rating: the sum of the live votes that reply to it."""
    vote = aliased(Reaction)
    return (select(func.coalesce(func.sum(vote_value(vote)), 0))
            .where(vote.reply_to == Reaction.id, vote.deleted_at.is_(None), vote.kind.in_(RATING_KINDS))
            .scalar_subquery())


def members_query(owner_kind: str, name: str, owner_ids: Sequence[int]) -> Select[Any]:
    """(owner, score, comment id) of every member of the named sets of `owner_ids`: live comments of
    public shouts, in the order of the set (highest score, then highest id, first)."""
    owner = Reaction.shout if owner_kind == "shout" else Reaction.reply_to
    score = comment_rating() if name.endswith(":best") else Reaction.created_at
    query = (select(owner, score, Reaction.id).join(Shout, Shout.id == Reaction.shout)
             .where(owner.in_(list(owner_ids)), Reaction.deleted_at.is_(None),
                    Reaction.kind.in_(COMMENT_KINDS), is_listed()))
    if name in ("comments", "comments:best"):
        query = query.where(Reaction.reply_to.is_(None))
    return query.order_by(owner, score.desc(), Reaction.id.desc())


def as_row(reaction: Reaction, rating: int) -> dict[str, Any]:
    """What `comment:{id}` holds: the columns, the rating and the status."""
    return {**reaction.dict(), "rating": rating, "status": "deleted" if reaction.deleted_at is not None else "active"}


def encode(row: dict[str, Any]) -> list[Any]:
    """HSET arguments of `comment:{id}` (None fields are left out). A text longer than COMPRESS_OVER bytes (a
    comment may hold 10,000 characters, some 20 KB of Cyrillic) is kept compressed, as `{name}.z` (seed 004:
    a hash's elements are watched for their size as strings are)."""
    fields: list[Any] = []
    for name, value in row.items():
        if value is None:
            continue
        if name in _TEXT_FIELDS and len(text := str(value).encode()) > COMPRESS_OVER:
            fields += [name + _PACKED, zlib.compress(text, 1)]
        else:
            fields += [name, value]
    return fields


def decode(raw: dict[bytes, bytes]) -> dict[str, Any]:
    stored = {k.decode(): v.decode() for k, v in raw.items() if not k.endswith(_PACKED_B)}
    stored.update({k.decode().removesuffix(_PACKED): zlib.decompress(v).decode()
                   for k, v in raw.items() if k.endswith(_PACKED_B)})
    row: dict[str, Any] = {name: int(stored[name]) if name in stored else None for name in _INT_FIELDS}
    row.update({name: stored.get(name) for name in _TEXT_FIELDS})
    row["rating"] = row["rating"] or 0
    row["status"] = stored.get("status", "active")
    return row


@dataclass(frozen=True, slots=True)
class Page:
    ids: list[int]
    total: int


class Threads:
    def __init__(self, live: LiveStore, cache: Cache, db: SessionFactory) -> None:
        self.live, self.cache, self.db = live, cache, db

    async def page(self, owner_kind: str, owner_id: int, name: str, offset: int, limit: int,
                   newest_first: bool) -> Page:
        """One page of a set and its size."""
        stop = offset + limit - 1

        def commands(pipe: Any, key: str) -> None:
            (pipe.zrevrange if newest_first else pipe.zrange)(key, offset, stop)
            pipe.zcard(key)

        found, noted = await self.live.read(owner_kind, name, [owner_id], commands, per_key=2)
        if found[0] is not None:
            members, total = found[0]
            return Page([int(m) for m in members], total)
        members_of = (await self._build_sets(owner_kind, name, [owner_id], noted))[owner_id]
        ordered = members_of if newest_first else members_of[::-1]
        return Page(ordered[offset:offset + limit], len(ordered))

    async def _build_sets(self, owner_kind: str, name: str, owner_ids: Sequence[int],
                          noted: dict[int, Any]) -> dict[int, list[int]]:
        """Read the named sets of `owner_ids` from SQL (highest first) and store those within the cap (a
        bigger thread is read from SQL each time, its pages cached by the caller). One builder at a time
        per set (the fill lock); the others read SQL without storing."""
        to_build = [i for i in owner_ids if i in noted]
        lock_keys = {i: structure_key(owner_kind, i, name) for i in to_build}
        taken = dict(zip(to_build, await self.cache.take_fill_locks(list(lock_keys.values())), strict=True))
        # This reader stores the sets whose lock it took (or all, with Redis down: nothing is stored then).
        builders = [i for i in to_build if taken[i] is not Lease.ANOTHERS]
        try:
            async with self.db() as session:
                rows = (await session.execute(members_query(owner_kind, name, owner_ids))).all()
            members: dict[int, list[tuple[int, int]]] = {i: [] for i in owner_ids}
            for owner, score, comment_id in rows:
                members[owner].append((int(score), comment_id))
            cap = self.live.thread_cap
            storable = [(i, [x for score, cid in members[i] for x in (score, keys.member(cid))])
                        for i in builders if len(members[i]) <= cap]
            await self.live.build(owner_kind, name, storable, noted, structure="zset")
        finally:
            await self.cache.release_fill_lock(*(lock_keys[i] for i in to_build if taken[i] is Lease.OURS))
        return {i: [cid for _, cid in m] for i, m in members.items()}

    async def comments(self, ids: Sequence[int], *, children_limit: int = 0,
                       children_offset: int = 0) -> list[dict[str, Any]]:
        """The live comments among `ids`, in order, as API dicts with `stat` (rating and reply count)
        and, with `children_limit`, their first replies (oldest first) as `first_replies`."""
        ids = list(ids)
        rows, replies = await asyncio.gather(self._hashes(ids),
                                             self._reply_pages(ids, children_offset, children_limit))
        nested: dict[int, list[dict[str, Any]]] = {}
        if children_limit:
            flat = await self.comments([r for page in replies.values() for r in page.ids])
            by_id = {c["id"]: c for c in flat}
            nested = {i: [by_id[r] for r in page.ids if r in by_id] for i, page in replies.items()}
        result = []
        for comment_id in ids:
            row = rows.get(comment_id)
            if row is None or row["status"] == "deleted":
                continue
            rating = row.pop("rating")
            row.pop("status")
            result.append({**row, "stat": {"rating": rating, "comments_count": replies[comment_id].total}})
            if children_limit:
                result[-1]["first_replies"] = nested.get(comment_id, [])
        return result

    async def _hashes(self, ids: list[int]) -> dict[int, dict[str, Any]]:
        found, noted = await self.live.read_hashes("comment", "comment", ids)
        rows = {i: decode(raw[0]) for i, raw in zip(ids, found, strict=True) if raw is not None and raw[0]}
        missing = [i for i in ids if i not in rows]
        if missing:
            rows.update(await self._build_hashes(missing, noted))
        return rows

    async def _build_hashes(self, ids: list[int], noted: dict[int, Any]) -> dict[int, dict[str, Any]]:
        async with self.db() as session:
            built = (await session.execute(select(Reaction, comment_rating()).where(Reaction.id.in_(ids)))).all()
        rows = {r.id: as_row(r, int(rating)) for r, rating in built}
        await self.live.build("comment", "comment", [(i, encode(row)) for i, row in rows.items()], noted,
                              structure="hash")
        return rows

    async def rebuild(self, owner_kind: str, ids: list[int]) -> None:
        """Build every thread structure of these shouts or comments from SQL (the rebuild command); each
        is stored unless a write touched its entity meanwhile."""
        names = ["comments", "comments:best", "comments:all"] if owner_kind == "shout" else ["replies", "replies:best"]
        for name in names:
            await self._build_sets(owner_kind, name, ids, await self.live.note(owner_kind, name, ids))
        if owner_kind == "comment":
            await self._build_hashes(ids, await self.live.note("comment", "comment", ids))

    async def _reply_pages(self, ids: list[int], offset: int, limit: int) -> dict[int, Page]:
        """Each comment's first replies (oldest first) and reply count, from `comment:{id}:replies`."""
        def commands(pipe: Any, key: str) -> None:
            if limit:
                pipe.zrange(key, offset, offset + limit - 1)
            pipe.zcard(key)

        found, noted = await self.live.read("comment", "replies", ids, commands, per_key=2 if limit else 1)
        pages = {i: Page([int(m) for m in raw[0]] if limit else [], raw[-1])
                 for i, raw in zip(ids, found, strict=True) if raw is not None}
        missing = [i for i in ids if i not in pages]
        if missing:
            built = await self._build_sets("comment", "replies", missing, noted)
            for i in missing:
                oldest_first = built[i][::-1]
                pages[i] = Page(oldest_first[offset:offset + limit] if limit else [], len(oldest_first))
        return pages
