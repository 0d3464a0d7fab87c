"""What a flush changed, in cache terms: tags to invalidate at once, entities whose counters to revalidate,
operations on live structures (cache/live/structures.py) to apply after the commit, and pub/sub messages to
publish once all of that is done (cache/messaging/pubsub.py)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from cache.live.structures import LiveOps


@dataclass
class Changes:
    tags: set[str] = field(default_factory=set)
    # (entity_type, entity_id): counters recomputed by the CacheRevalidationManager
    marks: set[tuple[str, str]] = field(default_factory=set)
    live: LiveOps = field(default_factory=LiveOps)
    # (channel, message): published after the invalidation, so a subscriber that reads on receipt
    # never gets the data from before the write
    messages: list[tuple[str, bytes]] = field(default_factory=list)
    # (table, insert|update|delete): how many rows, counted in the metrics once committed
    writes: Counter[tuple[str, str]] = field(default_factory=Counter)

    def tag(self, *tags: str) -> None:
        self.tags.update(tags)

    def mark(self, entity_type: str, *ids: int | str | None) -> None:
        self.marks.update((entity_type, str(i)) for i in ids if i is not None)

    def __bool__(self) -> bool:
        return bool(self.tags or self.marks or self.live or self.messages)
