"""The per-request context: dependencies plus DataLoaders created for this request only (a loader
shared between requests would serve one request's data to another)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import RedisError
from strawberry.dataloader import DataLoader
from strawberry.types import Info as StrawberryInfo

from cache import keys
from cache.entities import get_cached_authors, get_cached_communities, get_cached_shouts, get_cached_topics
from resolvers.deps import Deps

BatchGetter = Callable[..., Awaitable[list[Any]]]


def _entity_loader(deps: Deps, getter: BatchGetter) -> DataLoader[int, Any]:
    async def load(ids: Sequence[int]) -> list[Any]:
        return await getter(list(ids), cache=deps.cache, db=deps.db)

    return DataLoader(load_fn=load)


def _views_loader(deps: Deps) -> DataLoader[int, int]:
    """View counters live only in Redis (seed 000 `viewed:{shout_id}`); a page reads them in one MGET."""
    async def load(ids: Sequence[int]) -> list[int]:
        if not deps.cache.available:
            return [0] * len(ids)
        try:
            raw = await deps.cache.redis.mget([keys.viewed(i) for i in ids])
        except RedisError:  # a view counter must never fail a read
            return [0] * len(ids)
        return [int(v) if v is not None else 0 for v in raw]

    return DataLoader(load_fn=load)


@dataclass
class Loaders:
    authors: DataLoader[int, Any]
    topics: DataLoader[int, Any]
    communities: DataLoader[int, Any]
    shouts: DataLoader[int, Any]
    views: DataLoader[int, int]

    @classmethod
    def create(cls, deps: Deps) -> Loaders:
        return cls(
            authors=_entity_loader(deps, get_cached_authors),
            topics=_entity_loader(deps, get_cached_topics),
            communities=_entity_loader(deps, get_cached_communities),
            shouts=_entity_loader(deps, get_cached_shouts),
            views=_views_loader(deps),
        )


@dataclass
class Context:
    deps: Deps
    loaders: Loaders
    request: Any = None
    response: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


Info = StrawberryInfo[Context, None]
