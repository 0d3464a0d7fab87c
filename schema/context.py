"""The per-request context: dependencies plus DataLoaders created for this request only (a loader
shared between requests would serve one request's data to another)."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeVar

from graphql.pyutils import is_awaitable
from redis.exceptions import RedisError
from strawberry.dataloader import DataLoader, DefaultCache
from strawberry.types import Info as StrawberryInfo

from auth.permissions import Viewer
from auth.sessions import Session
from cache import response_capture
from cache.entities import get_cached_authors, get_cached_communities, get_cached_shouts, get_cached_topics
from cache.live.counters import get_counters
from cache.live.views import client_key
from resolvers.auth import account_viewer
from resolvers.deps import Deps
from resolvers.errors import Busy
from resolvers.reaction_reads import reactions_by_ids
from schema.engine.rendered import RenderedAnswers

log = logging.getLogger(__name__)
_UNSET = object()

BatchGetter = Callable[..., Awaitable[list[Any]]]
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
R = TypeVar("R")
# A value now, or an awaitable of it: what a field answered from its loader at once when it can returns
# (graphql-core awaits what it must). Such a field names its GraphQL type apart (`graphql_type`).
Soon: TypeAlias = V | Awaitable[V]


# --- answering from what a loader already holds --------------------------------------------------
# A field resolved through a loader costs a coroutine, a future and a task in graphql-core even when its
# value is already there. A page loads what its selection asks of its items' relations first, together
# (schema/pages.py), and puts the values in the loaders as they are (`Loader.hold`: no future per key);
# the relation fields then take them at once and await only what is missing.

class Loader(DataLoader[K, V]):
    """A request's DataLoader that also holds values given to it whole (`hold`), without a future each;
    `load` answers them like any loaded value. It keeps its batch function (`fetch`) and its futures
    (`futures`, the cache map it gives the DataLoader) itself: both are arguments of DataLoader's public
    constructor, where the attributes DataLoader keeps them under are not promised."""

    def __init__(self, load_fn: Callable[[list[K]], Awaitable[Sequence[V]]]) -> None:
        self.fetch = load_fn
        self.futures: DefaultCache[K, V] = DefaultCache()
        super().__init__(load_fn=load_fn, cache_map=self.futures)
        self.held: dict[K, V] = {}

    def has(self, key: K) -> bool:
        """Whether the value of `key` is held or loaded (or being loaded)."""
        return key in self.held or self.futures.get(key) is not None

    def hold(self, values: dict[K, V]) -> None:
        self.held.update(values)

    def load(self, key: K) -> Awaitable[V]:
        if key in self.held:
            future = asyncio.get_running_loop().create_future()
            future.set_result(self.held[key])
            return future
        return super().load(key)

    def clear(self, key: K) -> None:
        """Forget `key`'s value, held or loaded: the next `load` loads it again."""
        self.held.pop(key, None)
        if self.futures.get(key) is not None:
            super().clear(key)


def _held(loader: Loader[Any, Any], key: Any) -> tuple[bool, Any]:
    value = loader.held.get(key, _UNSET)
    if value is not _UNSET:
        return True, value
    future = loader.futures.get(key)
    if future is None or not future.done() or future.cancelled() or future.exception() is not None:
        return False, None
    return True, future.result()


def soon(loader: Loader[K, V], key: K) -> Soon[V]:
    """The loader's value for `key`: at once when it holds it, else its future (awaited by GraphQL)."""
    held, value = _held(loader, key)
    return value if held else loader.load(key)


def soon_all(loader: Loader[K, V], keys: Sequence[K]) -> Soon[list[V]]:
    values = []
    for key in keys:
        held, value = _held(loader, key)
        if not held:
            return loader.load_many(keys)
        values.append(value)
    return values


def then(value: Soon[V], make: Callable[[V], R]) -> Soon[R]:
    """`make(value)` now, or once the awaitable gives the value."""
    if not is_awaitable(value):  # graphql-core's check: no abstract-class machinery per value
        return make(value)  # type: ignore[arg-type]

    async def later() -> R:
        return make(await value)

    return later()


def client_address(request: Any) -> str | None:
    """The client's address (uvicorn takes it from X-Forwarded-For only behind a trusted proxy)."""
    client = getattr(request, "client", None)
    return client.host if client else None


def reader_of(request: Any, author_id: int | None) -> str:
    """Who reads, for view counting: the author, else a hash of the client's address and agent."""
    if author_id is not None or request is None:
        return client_key(author_id, None, None)
    return guest_of(request.scope)


def guest_of(scope: Any) -> str:
    """`reader_of` an anonymous request, from its ASGI scope: the address uvicorn gives it and the first
    User-Agent header as Starlette decodes it, read from the raw list (a response-cache hit of a shout
    notes its reader, and a Starlette Request and its Headers cost that hit more than the rest of it)."""
    client = scope.get("client")
    agent = next((value.decode("latin-1") for name, value in scope.get("headers", ()) if name == b"user-agent"),
                 None)
    return client_key(None, client[0] if client else None, agent)


def _entity_loader(deps: Deps, getter: BatchGetter) -> Loader[int, Any]:
    async def load(ids: Sequence[int]) -> list[Any]:
        return await getter(list(ids), cache=deps.cache, db=deps.db)

    return Loader(load)


def _views_loader(deps: Deps) -> Loader[int, int]:
    """View counters (seed 000 `viewed:{shout_id}`): a page reads them in one MGET."""
    async def load(ids: Sequence[int]) -> list[int]:
        return await deps.views.get_many(list(ids))

    return Loader(load)


def _counters_loader(deps: Deps, kind: str) -> Loader[int, dict[str, Any]]:
    """The live counters of the entities whose `stat` a request asks for, one round trip per kind."""
    async def load(ids: Sequence[int]) -> list[dict[str, Any]]:
        return await get_counters(kind, list(ids), live=deps.live, db=deps.primary)

    return Loader(load)


def _reactions_loader(deps: Deps) -> Loader[int, Any]:
    async def load(ids: Sequence[int]) -> list[Any]:
        return await reactions_by_ids(deps, list(ids))

    return Loader(load)


L = TypeVar("L")


def _on_first_use(make: Callable[[Deps], L]) -> functools.cached_property[L]:
    """A loader of the request, made by `make` the first time the request asks for it."""
    def made(loaders: Loaders) -> L:
        return make(loaders._deps)

    return functools.cached_property(made)


class Loaders:
    """A request's DataLoaders, each made when the request first uses it (most requests use few)."""

    def __init__(self, deps: Deps) -> None:
        self._deps = deps
        self.counters = _CounterLoaders(deps)

    @classmethod
    def create(cls, deps: Deps) -> Loaders:
        return cls(deps)

    authors: functools.cached_property[Loader[int, Any]] = _on_first_use(
        lambda deps: _entity_loader(deps, get_cached_authors))
    topics: functools.cached_property[Loader[int, Any]] = _on_first_use(
        lambda deps: _entity_loader(deps, get_cached_topics))
    communities: functools.cached_property[Loader[int, Any]] = _on_first_use(
        lambda deps: _entity_loader(deps, get_cached_communities))
    shouts: functools.cached_property[Loader[int, Any]] = _on_first_use(
        lambda deps: _entity_loader(deps, get_cached_shouts))
    views: functools.cached_property[Loader[int, int]] = _on_first_use(_views_loader)
    reactions: functools.cached_property[Loader[int, Any]] = _on_first_use(_reactions_loader)


class _CounterLoaders(dict[str, Loader[int, dict[str, Any]]]):
    """`loaders.counters[kind]`, made on first use."""

    def __init__(self, deps: Deps) -> None:
        super().__init__()
        self._deps = deps

    def __missing__(self, kind: str) -> Loader[int, dict[str, Any]]:
        if kind not in COUNTER_KINDS:
            raise KeyError(kind)
        loader = self[kind] = _counters_loader(self._deps, kind)
        return loader


COUNTER_KINDS = ("shout", "author", "topic", "community")


def bearer_token(request: Any, cookie_name: str) -> str | None:
    """The session token of a request (`token_from`)."""
    if request is None:
        return None
    return token_from(request.headers.get("authorization", ""), lambda: request.cookies.get(cookie_name))


def token_from(authorization: str, session_cookie: Callable[[], str | None]) -> str | None:
    """The session token of a request: `Authorization: Bearer <token>` (or the bare token, as some
    Discours clients send it), else the httpOnly session cookie's value, worked out only then (parsing a
    request's cookies is the costly part)."""
    header = authorization.strip()
    if header:
        scheme, _, value = header.partition(" ")
        return value.strip() if scheme.lower() == "bearer" and value else header
    return session_cookie() or None


def _token_of_params(params: dict[str, Any] | None) -> str | None:
    """The session token of a WebSocket's connection_init payload, if it carries one."""
    if not params:
        return None
    token = params.get("token")
    if not isinstance(token, str):
        header = params.get("Authorization") or params.get("authorization")
        if not isinstance(header, str):
            return None
        scheme, _, value = header.strip().partition(" ")
        token = value if scheme.lower() == "bearer" and value else header
    return token.strip() or None


@dataclass
class Context:
    deps: Deps
    loaders: Loaders
    request: Any = None
    response: Any = None
    extra: dict[str, Any] = field(default_factory=dict)
    # A WebSocket's connection_init payload (Strawberry sets it): `{"token": ...}` or `{"Authorization": ...}`
    connection_params: dict[str, Any] | None = None
    # Set by the view when root fields may be answered from rendered JSON (schema/engine/rendered.py).
    rendered: RenderedAnswers | None = None
    # Whether the request is someone's read, whose shouts count a view: not a write's computing a response again
    # (cache/refresh.py), whose readers count theirs when it is served to them.
    counts_reads: bool = True
    _session: Any = field(default=_UNSET, repr=False)
    _viewer: Any = field(default=_UNSET, repr=False)
    _claims: Any = field(default=_UNSET, repr=False)

    async def session(self, *, shapes_answer: bool = True) -> Session | None:
        """The request's valid session, checked against Redis once per request. `shapes_answer`: whether
        what the caller does with it changes the answer (a list of the viewer's own, a private field), or
        only has effects beside it (a view counted, a reading remembered): an answer shaped by the viewer
        is never stored for everyone (response_capture)."""
        if shapes_answer:
            response_capture.viewer_read()
        if self._session is _UNSET:
            await self._check(self._token())
        session: Session | None = self._session  # set just above
        return session

    async def _check(self, token: str | None) -> None:
        """`_session`: the session of `token`, checked against Redis, or None."""
        self._session = None
        auth = self.deps.auth
        if auth and token:
            try:
                self._session = await auth.sessions.validate(token)
            except RedisError as exc:
                # Not "signed out": the token may well be valid, and a client told UNAUTHENTICATED
                # throws it away. Asked again, the next call tries Redis again.
                self._session = _UNSET
                log.warning("a session could not be checked: Redis does not answer")
                raise Busy("sessions cannot be checked right now; try again shortly") from exc

    def _token(self) -> str | None:
        auth = self.deps.auth
        if not auth:
            return None
        return _token_of_params(self.connection_params) or bearer_token(self.request, auth.settings.session_cookie)

    async def client(self) -> str:
        """Who reads, for view counting: the signed-in author or a hash of the anonymous client."""
        viewer = await self.viewer(shapes_answer=False)
        return reader_of(self.request, viewer.author_id if viewer else None)

    async def viewer(self, *, shapes_answer: bool = True) -> Viewer | None:
        """The signed-in account, or None for a guest (see `session` for `shapes_answer`)."""
        return (await self._viewer_and(None, shapes_answer=shapes_answer))[0]

    async def beside(self, read: Callable[[], Awaitable[R]]) -> tuple[Viewer | None, R | None]:
        """resolvers/access.py `ViewerCheck.beside`: `read()` goes out with the session's check and the account's
        read, in the same gathering (no task more than the check makes)."""
        return await self._viewer_and(read, shapes_answer=True)

    async def _viewer_and(self, read: Callable[[], Awaitable[R]] | None, *,
                          shapes_answer: bool) -> tuple[Viewer | None, R | None]:
        if shapes_answer:
            response_capture.viewer_read()
        if self._viewer is _UNSET:
            claimed = self._claimed() if self._session is _UNSET else None
            if claimed is None:
                session = await self.session(shapes_answer=False)
                self._viewer = None if session is None else await account_viewer(self.deps, session.user_id)
            else:
                # The token names its account: the account is read beside the session's check (one round trip
                # for both), and taken only if the session is valid and is that account's; so is `read`.
                gathered = (self._check(self._token()), account_viewer(self.deps, claimed),
                            *((read(),) if read else ()))
                outcomes = await asyncio.gather(*gathered, return_exceptions=True)
                for outcome in outcomes[:2]:  # the check's error first, as when they were awaited in turn
                    if isinstance(outcome, BaseException):
                        raise outcome
                session = self._session
                self._viewer = outcomes[1] if session is not None and session.user_id == claimed else None
                if read is not None and self._viewer is not None:  # a refused writer's read is not used
                    if isinstance(outcomes[2], BaseException):
                        raise outcomes[2]
                    return self._viewer, outcomes[2]
        viewer: Viewer | None = self._viewer  # set just above, or before
        if read is None or viewer is None:
            return viewer, None
        return viewer, await read()

    def _claimed(self) -> int | None:
        """The account the request's token's signed claims name (no Redis), decoded once per request."""
        if self._claims is _UNSET:
            token = self._token()
            self._claims = self.deps.auth.sessions.claimed_user(token) if token and self.deps.auth else None
        claimed: int | None = self._claims
        return claimed


Info = StrawberryInfo[Context, None]
