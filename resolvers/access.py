"""How resolvers ask the one permission module (auth/permissions.py) and turn its answer into errors."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol, TypeVar

from auth.permissions import DEFAULT_COMMUNITY, Viewer, can
from auth.sessions import Session
from resolvers.errors import Forbidden, Unauthenticated

T = TypeVar("T")


class ViewerCheck(Protocol):
    """Who asks, not checked yet (schema/context.py `Context`): a write whose first read depends on no one's
    rights makes it during the check (`beside`), one wait for both where they were one after the other."""

    async def viewer(self) -> Viewer | None: ...

    async def beside(self, read: Callable[[], Awaitable[T]]) -> tuple[Viewer | None, T | None]:
        """The viewer, and what `read()` gave when the viewer is someone: made during the check when the
        request's token names an account (signed and unexpired), after it otherwise. None for a guest, who is
        refused before anything is read."""
        ...


def require_viewer(viewer: Viewer | None) -> Viewer:
    if viewer is None:
        raise Unauthenticated("this operation needs a signed-in user")
    return viewer


def require_session(session: Session | None) -> Session:
    if session is None:
        raise Unauthenticated("this operation needs a signed-in user")
    return session


def require_own(viewer: Viewer | None, permission: str) -> Viewer:
    """An action on the viewer's own things (their profile, their follows): the `_own` permission."""
    signed_in = require_viewer(viewer)
    return require(signed_in, permission, owners=[signed_in.author_id])


def require(viewer: Viewer | None, permission: str, *, community_id: int = DEFAULT_COMMUNITY,
            owners: Iterable[int] = ()) -> Viewer:
    signed_in = require_viewer(viewer)
    if not can(signed_in, permission, community_id=community_id, owners=owners):
        raise Forbidden(f"not allowed: {permission}")
    return signed_in
