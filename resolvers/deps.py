"""What every resolver function needs, passed explicitly: the cache, the session factory, the limits."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from redis.asyncio import Redis
from sqlalchemy import ColumnElement, or_

from cache.live.boards import Boards
from cache.live.structures import LiveStore
from cache.live.threads import Threads
from cache.live.views import ViewCounter
from cache.messaging.delayed import DelayedQueue
from cache.messaging.pubsub import Hub
from cache.store import Cache
from orm.engine import SessionFactory
from orm.replicas import ReadRouting
from resolvers.errors import BadInput

if TYPE_CHECKING:
    from auth.services import AuthServices
    from cache.revalidator import CacheRevalidationManager
    from config.settings import SearchSettings


DEFERRED_QUEUE = "deferred"  # the delayed queue's name: deferred work of every kind


@dataclass(frozen=True, slots=True)
class SearchLimits:
    """The search settings (config/settings.py says what each one bounds)."""

    max_length: int = 200
    kept_results: int = 200
    candidates: int = 1_000
    window: int = 20_000
    count_cap: int = 1_000
    statement_timeout: float = 2.0
    author_similarity: float = 0.4

    @classmethod
    def of(cls, settings: SearchSettings) -> SearchLimits:
        return cls(max_length=settings.search_max_length, kept_results=settings.search_kept_results,
                   candidates=settings.search_candidates, window=settings.search_window,
                   count_cap=settings.search_count_cap, statement_timeout=settings.search_statement_timeout,
                   author_similarity=settings.author_search_similarity)


@dataclass(frozen=True, slots=True)
class Deps:
    cache: Cache
    db: SessionFactory
    max_page_size: int = 100
    ttl_shouts: int = 300
    ttl_search: int = 600
    search: SearchLimits = SearchLimits()
    board_weeks: int = 52  # how many weeks back weekly leaderboards can be read
    digest_window: int = 3600  # at most one notification digest per author and window (resolvers/digests.py)
    notify_fanout: int = 10_000  # people one event is pushed to at most (resolvers/events.py)
    auth: AuthServices | None = None
    revalidator: CacheRevalidationManager | None = None
    # Counters, follow graphs and threads kept current by the write side (cache/live/structures.py).
    live: LiveStore = None  # type: ignore[assignment]  # built from `cache` when not given
    # View counters and reading / search histories (cache/live/views.py).
    views: ViewCounter = None  # type: ignore[assignment]  # built from `cache` and `db` when not given
    # Deferred work, such as scheduled publication (cache/messaging/delayed.py, resolvers/scheduled.py).
    delayed: DelayedQueue = None  # type: ignore[assignment]  # built from `cache` when not given
    # This worker's one pub/sub connection, shared by its subscribers (cache/messaging/pubsub.py).
    hub: Hub = None  # type: ignore[assignment]  # built from `cache` when not given
    # Which database answers a read of `db` (orm/replicas.py); None: the primary answers every read.
    routing: ReadRouting | None = None
    # Sessions of the primary only, for what copies SQL into live structures (their builds follow rules of
    # their own, cache/live/structures.py); `db` itself when no replica is configured.
    primary: SessionFactory = None  # type: ignore[assignment]
    # What must not be evicted: sessions, sign-in tokens, OAuth state, rate limits, settings, the queues
    # and the live structures (REDIS_STATE_URL; `cache.state`, the cache's own Redis unless set apart).
    state: Redis = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.primary is None:
            object.__setattr__(self, "primary", self.db)
        if self.state is None:
            object.__setattr__(self, "state", self.cache.state)
        if self.live is None:
            object.__setattr__(self, "live", LiveStore(self.cache))
        if self.views is None:
            object.__setattr__(self, "views", ViewCounter(self.cache, self.primary, self.live))
        if self.delayed is None:
            object.__setattr__(self, "delayed", DelayedQueue(self.state, DEFERRED_QUEUE))
        if self.hub is None:
            object.__setattr__(self, "hub", Hub(self.cache.redis))

    @property
    def boards(self) -> Boards:
        """Leaderboards (seed 001), read through the live structures."""
        return Boards(self.live, self.cache, self.primary)

    @property
    def threads(self) -> Threads:
        """Comment threads (seed 001), read through the live structures."""
        return Threads(self.live, self.cache, self.primary)

    @property
    def accounts(self) -> AuthServices:
        """The auth services; a Deps built without them serves only public reads."""
        if self.auth is None:
            raise RuntimeError("auth services are not configured")
        return self.auth


def like_pattern(text: str) -> str:
    """`%text%` for LIKE with the user's own wildcards escaped (use with escape="\\")."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def holding(text: str, columns: Iterable[Any], id_column: Any) -> ColumnElement[bool]:
    """An administrator's search: any of `columns` holding the text (case-insensitive), or, for a number,
    the row of that id."""
    pattern = like_pattern(text)
    return or_(*(column.ilike(pattern, escape="\\") for column in columns),
               *([id_column == int(text)] if text.isdigit() else []))


def checked_status(status: str | None, allowed: tuple[str, ...]) -> str:
    """A list's status filter, lower case (none: `all`), or BadInput naming the ones there are."""
    status = (status or "all").lower()
    if status not in allowed:
        raise BadInput(f"status: one of {', '.join(allowed)}", field="status")
    return status
