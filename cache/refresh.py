"""Hot responses computed again by the write that made them stale, once it is answered; while it runs, their
readers are served what was there (a *grace*).

Why: under writes, a hot page (the latest comments) was made stale by every comment. DESIGN.md asks only that
*once a mutation's response is sent* no reader gets what it made wrong: until then, a reader may be given the
answer from before it, as it would have been had it come a moment earlier. And the write's own writer waits
for none of it: computed before the answer, the refreshes made a comment on a busy page wait for the page's
computation too (bench/RESULTS.md, a comment alone and on a busy page).

So a write answered over HTTP (app/http/graphql_view.py) invalidates in three steps:

1. Its invalidation moves each generation as ever, and notes the move in the tag's grace: `grace:{tag}` holds
   the chain of moves made by writes not yet answered (`g0>g1>g2`, the current generation last), with a TTL of
   about a second (`GRACE_BUMP`, one script with the clock's move). In the same step it reads which responses
   were read again after a move of one of its tags (the *refresh index*) and the requests they answer.
2. A stored response whose stamp is stale by such moves alone (each generation it names that moved is in its
   tag's chain, the chain ends at the current one) is still served (cache/lua/response_look_up.lua): its readers
   wait for no computation. Such a hit is never noted as checked at the clock, so once the grace is gone it is
   checked again, and stale.
3. The write ends its graces and only then is answered (and its live messages are published, by the script that
   ends them, after it: whoever they tell of the write reads what it wrote). Ending a grace cuts the chain at the
   generation the write moved to (`END_GRACES`): nothing stale by its move is served any more, while what is
   stale only by later writes' moves still is, until they are answered. A grace that could not be ended (Redis
   lost) is waited out before the answer. After the answer, the write computes those responses again (at most a
   few), as a read of no one's that joins a reader's computation of the same answer (app/http/write_refresh.py)
   and keeps it as any computation does (the store checks its stamps).

A write answered right after its invalidation (one statement sent on its own, resolvers/writes.py `one_statement`:
`closing`) has no time to cover: its moves set no grace, and its live messages go out in the same script, after
them, so that it needs no round trip to end graces.

Writes other than a request's (the revalidator, the CLI, a drill) move generations with no grace, and a chain
that does not end at the generation a move starts from is started again: a stamp is never served past a move
that no grace covers.

What gets refreshed: a public response that a look-up found stale and that was then computed again (read again
after a write) is noted, with its store, in the refresh index of each tag whose move made it stale, with its
request: a few per tag, most recent first, with the response cache's TTL. A response no one reads again drops
out of the index with its TTL, so writes do not keep computing answers no one reads.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from ambient import REFRESHING
from cache import keys
from cache.lua import load_lua
from cache.redis.client import queue_set

# Responses noted per tag in its refresh index.
INDEXED_PER_TAG = 4
# A write that moves more tags than this moves them without graces (a bulk change: nothing is refreshed).
GRACED_TAGS_MOST = 32

# A grace is a chain of generations, `g0>g1>g2`: each move made by a write not yet answered, in order. A stamp
# naming any generation of the chain but its last, while the last is current, is stale only by those writes'
# moves, and may be served (cache/lua/graced_moves.lua). At most GRACE_CHAIN_MOST generations: the oldest
# drop out (what names them is stale as ever).
GRACE_CHAIN_MOST = 16

GRACE_BUMP = load_lua("grace_bump", chain_most=GRACE_CHAIN_MOST)
END_GRACES = load_lua("end_graces")


@dataclass(frozen=True, slots=True)
class Refresh:
    """A response to compute again: its key, and the request it answers."""

    key: str
    document: str
    operation: str | None
    variables: Any


@dataclass(slots=True)
class Refreshing:
    """What a write's invalidation left to the write (app/http/graphql_view.py): the graces it set (their keys), the
    responses to compute again (at most `most`: the most recently read again of each tag moved, first), and
    when the graces were set (`time.monotonic`), to wait them out when they cannot be deleted."""

    most: int  # RESPONSES_REFRESHED_PER_WRITE
    grace_ms: int  # REFRESH_GRACE_MS
    graces: dict[str, int] = field(default_factory=dict)  # grace key: the generation this write moved to
    requests: list[Refresh] = field(default_factory=list)
    graced_at: float = 0.0
    # What waits for the graces' end: the write's live messages (triggers/sink.py), whose readers would be
    # served under the graces what they announce is changed; published as the graces end (cache/generations.py).
    messages: list[tuple[str, bytes]] = field(default_factory=list)
    # The write is answered right after its next invalidation (one statement sent on its own, resolvers/writes.py):
    # that move sets no grace, and the messages noted by then go out with it, in the same script (cache/generations.py).
    closing: bool = False
    # Until the write is done: an invalidation made later by a task it started (which inherits REFRESHING) would
    # set graces no one ends, so from then on invalidations move generations with none, and messages go out.
    open: bool = True

    def noted(self, graces: dict[str, int], found: Sequence[bytes | str]) -> None:
        """The graces a bump set (each key, with the generation it moved to) and the requests it found."""
        self.graces.update(graces)
        self.graced_at = time.monotonic()
        known = {request.key for request in self.requests}
        for raw in found:
            request = _request_of(raw)
            if request is not None and request.key not in known and len(self.requests) < self.most:
                known.add(request.key)
                self.requests.append(request)

    def grace_left(self) -> float:
        """Seconds until the graces set last have expired on their own."""
        return max(self.graced_at + self.grace_ms / 1000 - time.monotonic(), 0.0) if self.graces else 0.0


def refreshing_now() -> Refreshing | None:
    """The write whose invalidations set graces now, if any (`REFRESHING`, while it is open)."""
    refreshing = REFRESHING.get()
    return refreshing if refreshing is not None and refreshing.open else None


def request_record(key: str, document: str, operation: str | None, variables: Any) -> bytes:
    """A request as its refresh index's member names it (keys.refresh_request)."""
    return orjson.dumps({"k": key, "d": document, "o": operation, "v": variables})


def _request_of(raw: bytes | str) -> Refresh | None:
    try:
        record = orjson.loads(raw)
        return Refresh(str(record["k"]), str(record["d"]), record.get("o"), record.get("v"))
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return None  # not ours: nothing to refresh


def queue_noted(pipe: Any, key: str, record: bytes, tags: Sequence[str], ttl: int) -> None:
    """Note the response under `key` (answering `record`) in the refresh index of each of `tags`, the tags whose
    moves made it stale before it was computed again: the most recent INDEXED_PER_TAG of each are kept."""
    member = keys.refresh_request(key)
    queue_set(pipe, member, record, ttl)
    now = time.time()
    for tag in tags:
        index = keys.refresh_index(tag)
        pipe.zadd(index, {member: now})
        pipe.zremrangebyrank(index, 0, -INDEXED_PER_TAG - 1)
        pipe.expire(index, ttl)
