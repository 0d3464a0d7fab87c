"""Auth fields of Query and Mutation: thin wrappers that also carry the session cookie."""

from __future__ import annotations

from typing import Any

import strawberry

from auth import language
from auth.cookies import clear_session_cookie, set_session_cookie
from resolvers import auth, identities
from schema.context import Info, client_address
from schema.engine.cache_control import READ_MAX_AGE, cache_control
from schema.engine.safety import CHANGES_STATE
from schema.results import (
    AuthResult,
    AuthSuccess,
    OAuthProvider,
    Permission,
    RolesInfo,
    SecurityUpdateResult,
    SessionInfo,
)
from schema.types import Author


def _set_cookie(info: Info, token: str | None) -> None:
    response, settings = info.context.response, info.context.deps.accounts.settings
    if response is None:
        return
    if token:
        set_session_cookie(response, settings, token)
    else:
        clear_session_cookie(response, settings)


def _client(info: Info) -> str | None:
    return client_address(info.context.request)


def _language(info: Info, lang: str | None = None) -> str:
    """The language of the mail an operation sends: its `lang`, else the request's Accept-Language, else
    DEFAULT_LANGUAGE (auth/language.py)."""
    request = info.context.request
    header = request.headers.get("accept-language") if request is not None else None
    return language.choose(lang, header, info.context.deps.accounts.settings.default_language)


def _device(info: Info) -> dict[str, Any]:
    request = info.context.request
    if request is None:
        return {}
    return {"user_agent": request.headers.get("user-agent", "")[:255], "ip": _client(info)}


def _auth_result(info: Info, result: dict[str, Any]) -> AuthResult:
    if result.get("token"):
        _set_cookie(info, result["token"])
    return AuthResult(success=result["success"], error=result.get("error"), token=result.get("token"),
                      author=Author.of(result.get("author")))


def _security(result: dict[str, Any]) -> SecurityUpdateResult:
    return SecurityUpdateResult(success=result["success"], error=result.get("error"),
                                author=Author.of(result.get("author")))


async def _logout(info: Info) -> None:
    await auth.logout(info.context.deps, await info.context.session())
    _set_cookie(info, None)


@strawberry.type
class AuthQuery:
    @strawberry.field
    async def me(self, info: Info) -> AuthResult:
        return _auth_result(info, await auth.current(info.context.deps, await info.context.session()))

    @strawberry.field(metadata=CHANGES_STATE)
    async def logout(self, info: Info) -> AuthResult:
        await _logout(info)
        return AuthResult(success=True)

    @strawberry.field(name="isEmailUsed")
    async def is_email_used(self, info: Info, email: str) -> bool:
        return await auth.is_email_used(info.context.deps, email)

    @strawberry.field(name="isAdmin")
    async def is_admin(self, info: Info) -> bool:
        viewer = await info.context.viewer()
        return viewer is not None and viewer.is_admin

    @strawberry.field(name="getOAuthProviders")
    def get_oauth_providers(self, info: Info) -> list[OAuthProvider]:
        return [OAuthProvider(**p) for p in identities.oauth_providers(info.context.deps)]

    @strawberry.field(name="getRoles")
    def get_roles(self) -> list[RolesInfo]:
        return [RolesInfo(id=r["id"], name=r["name"], description=r["description"],
                          permissions=[Permission(**p) for p in r["permissions"]]) for r in auth.roles_info()]

    @strawberry.field(metadata=cache_control(READ_MAX_AGE))
    async def get_author_id(self, info: Info, user: str) -> Author | None:
        return Author.of(await auth.get_author_id(info.context.deps, user))


@strawberry.type
class AuthMutation:
    @strawberry.mutation
    async def login(self, info: Info, email: str, password: str) -> AuthResult:
        return _auth_result(info, await auth.login(info.context.deps, email, password, _device(info)))

    @strawberry.mutation
    async def logout(self, info: Info) -> AuthSuccess:
        await _logout(info)
        return AuthSuccess(success=True)

    @strawberry.mutation(name="refreshToken")
    async def refresh_token(self, info: Info) -> AuthResult:
        return _auth_result(info, await auth.refresh_token(info.context.deps, await info.context.session()))

    @strawberry.mutation(name="registerUser")
    async def register_user(self, info: Info, email: str, password: str | None = None,
                            name: str | None = None) -> AuthResult:
        return _auth_result(info, await auth.register_user(info.context.deps, email, password, name, _client(info),
                                                           _language(info)))

    @strawberry.mutation(name="sendLink")
    async def send_link(self, info: Info, email: str, lang: str | None = None,
                        template: str | None = None) -> Author:
        author = Author.of(await auth.send_link(info.context.deps, email, _client(info), _language(info, lang),
                                                template))
        assert author is not None
        return author

    @strawberry.mutation(name="confirmEmail")
    async def confirm_email(self, info: Info, token: str) -> AuthResult:
        return _auth_result(info, await auth.confirm_email(info.context.deps, token))

    @strawberry.mutation(name="getSession")
    async def get_session(self, info: Info) -> SessionInfo:
        result = await auth.current(info.context.deps, await info.context.session(), exchange=True)
        author = Author.of(result["author"])
        assert author is not None
        return SessionInfo(token=result["token"], author=author)

    @strawberry.mutation(name="changePassword")
    async def change_password(self, info: Info, oldPassword: str, newPassword: str) -> AuthSuccess:
        session = await info.context.session()
        return AuthSuccess(success=await auth.change_password(info.context.deps, session, oldPassword, newPassword))

    @strawberry.mutation(name="resetPassword")
    async def reset_password(self, info: Info, token: str, newPassword: str) -> AuthSuccess:
        return AuthSuccess(success=await auth.reset_password(info.context.deps, token, newPassword))

    @strawberry.mutation(name="requestPasswordReset")
    async def request_password_reset(self, info: Info, email: str, lang: str | None = None) -> AuthSuccess:
        return AuthSuccess(success=await auth.request_password_reset(info.context.deps, email, _client(info),
                                                                     _language(info, lang)))

    @strawberry.mutation(name="updateSecurity")
    async def update_security(self, info: Info, email: str | None = None, old_password: str | None = None,
                              new_password: str | None = None) -> SecurityUpdateResult:
        session = await info.context.session()
        return _security(await auth.update_security(info.context.deps, session, email, old_password, new_password,
                                                    _client(info), _language(info)))

    @strawberry.mutation(name="confirmEmailChange")
    async def confirm_email_change(self, info: Info, token: str) -> SecurityUpdateResult:
        return _security(await auth.confirm_email_change(info.context.deps, token))

    @strawberry.mutation(name="cancelEmailChange")
    async def cancel_email_change(self, info: Info) -> SecurityUpdateResult:
        return _security(await auth.cancel_email_change(info.context.deps, await info.context.session()))
