"""The session cookie: one definition for the GraphQL operations and the OAuth callback."""

from __future__ import annotations

from starlette.responses import Response

from config.settings import AccountSettings


def set_session_cookie(response: Response, settings: AccountSettings, token: str) -> None:
    response.set_cookie(settings.session_cookie, token, max_age=settings.session_ttl, httponly=True,
                        secure=settings.cookie_secure, samesite=settings.cookie_samesite, path="/")


def clear_session_cookie(response: Response, settings: AccountSettings) -> None:
    response.delete_cookie(settings.session_cookie, path="/", httponly=True, secure=settings.cookie_secure,
                           samesite=settings.cookie_samesite)
