"""HTTP routes of the sign-in flows (auth/oauth.py):

- `GET /oauth/{provider}` sends the browser to the provider (Telegram: to our page with its widget);
  `?link=1` from a signed-in person links the provider to their account instead of signing in;
- `GET /oauth/{provider}/callback` comes back: signs in and sets the session cookie, or links;
- a web client's sign-in (the 2025 Discours client's protocol: `?state=` of its own, base64 JSON naming
  its `redirect_url`, and no `redirect_uri`) comes back instead to the client's `/oauth` route with
  `access_token` (short-lived until its next getSession exchanges it) and its state, or with `error`;
- `twitter` is X's other name;
- `POST /oauth/{provider}/unlink` takes a provider off the signed-in person's account.

A failure is a page a person can act on (JSON for a client that asks for it), never a server error.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Awaitable, Callable
from urllib.parse import urlencode

from redis.exceptions import RedisError
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from auth import oauth
from auth.cookies import set_session_cookie
from auth.oauth_profiles import TELEGRAM
from config.settings import AccountSettings
from resolvers.deps import Deps
from resolvers.errors import Conflict
from resolvers.identities import link_identity, oauth_sign_in, unlink_identity
from schema.context import bearer_token


def _refused(request: Request, message: str, status: int = 400) -> Response:
    if "text/html" in request.headers.get("accept", ""):
        return HTMLResponse("<!doctype html><meta charset=utf-8><title>Sign-in failed</title>"
                            f"<p>{html.escape(message)}</p><p><a href=\"/\">Back</a></p>", status_code=status)
    return JSONResponse({"error": message}, status_code=status)


def _redis_guarded(route: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """Sign-in states and sessions live in Redis: while it does not answer, a page that says so (503)."""
    @functools.wraps(route)
    async def guarded(request: Request) -> Response:
        try:
            return await route(request)
        except RedisError:
            return _refused(request, "signing in is unavailable for a moment: try again shortly", 503)
    return guarded


async def _signed_in_author(request: Request, deps: Deps) -> int | None:
    token = bearer_token(request, deps.accounts.settings.session_cookie)
    session = await deps.accounts.sessions.validate(token) if token else None
    return None if session is None else session.user_id


def _to_client(started: oauth.Started, **answer: str) -> Response:
    """The browser sent to the web client's /oauth route with `answer` (access_token, or error) and the
    client's own state back."""
    assert started.client_route is not None and started.client_state is not None
    return RedirectResponse(f"{started.client_route}?{urlencode({**answer, 'state': started.client_state})}",
                            status_code=302)


def _failed(request: Request, settings: AccountSettings, error: oauth.OAuthError,
            started: oauth.Started | None, status: int = 400) -> Response:
    """A sign-in that cannot go on: a web client's ends on its route with the error's code; one whose state
    is not known ends on the web client's route (LINKS_URL) for a browser, when there is one; any other on
    a page of ours."""
    if started is not None and started.client_route is not None:
        return _to_client(started, error=error.code)
    if started is None and settings.links_url and "text/html" in request.headers.get("accept", ""):
        return RedirectResponse(f"{settings.links_url.rstrip('/')}/oauth?{urlencode({'error': error.code})}",
                                status_code=302)
    return _refused(request, str(error), status)


@_redis_guarded
async def oauth_start(request: Request) -> Response:
    """A sign-in begins. A web client's (its `state` and no `redirect_uri`: the 2025 client's protocol) has
    its return checked before anything else: one that is not allowed stays on a page of ours, and the
    provider is never called; after that every failure goes back to the client's route."""
    deps: Deps = request.app.state.deps
    settings = deps.accounts.settings
    params = request.query_params
    provider = oauth.canonical(request.path_params["provider"])
    client_state = params.get("state") if "redirect_uri" not in params else None
    started: oauth.Started | None = None
    if client_state is not None:
        try:
            started = oauth.Started(oauth.client_route(settings, client_state), None, client_state)
        except oauth.OAuthError as exc:
            return _refused(request, str(exc))
    link_to = None
    if params.get("link"):
        link_to = await _signed_in_author(request, deps)
        if link_to is None:
            return _refused(request, "sign in first to link a provider to your account", 401)
    try:
        url = await oauth.start(deps.state, settings, provider,
                                started.redirect_uri if started else params.get("redirect_uri"), link_to=link_to,
                                client_state=client_state)
    except oauth.OAuthError as exc:
        return _failed(request, settings, exc, started)
    return RedirectResponse(url, status_code=302)


@_redis_guarded
async def telegram_widget(request: Request) -> Response:
    deps: Deps = request.app.state.deps
    try:
        page = oauth.telegram_widget(deps.accounts.settings, request.query_params.get("state", ""))
    except oauth.OAuthError as exc:
        return _refused(request, str(exc))
    return HTMLResponse(page)


@_redis_guarded
async def oauth_callback(request: Request) -> Response:
    deps: Deps = request.app.state.deps
    settings = deps.accounts.settings
    provider = oauth.canonical(request.path_params["provider"])
    params = request.query_params
    started: oauth.Started | None = None
    try:
        if provider == TELEGRAM:
            identity, started = await oauth.finish_telegram(deps.state, settings, dict(params))
        elif params.get("error"):  # the person cancelled at the provider, or it refused
            started = await oauth.cancel(deps.state, params.get("state"), provider)
            if params["error"] == "access_denied":
                raise oauth.OAuthError("the sign-in was cancelled at the provider", code="access_denied")
            raise oauth.OAuthError(f"the provider refused the sign-in ({params['error'][:64]})",
                                   code="provider_error")
        elif not params.get("code") or not params.get("state"):
            raise oauth.OAuthError("code and state are required", code="invalid_state")
        else:
            identity, started = await oauth.finish(deps.state, settings, provider, params["code"], params["state"])
    except oauth.OAuthError as exc:
        return _failed(request, settings, exc, started or exc.started)
    try:
        if started.link_to is not None:
            if await _signed_in_author(request, deps) != started.link_to:
                return _refused(request, "sign in to the account you started linking from", 401)
            await link_identity(deps, started.link_to, identity)
            return RedirectResponse(started.redirect_uri, status_code=302)
        token = await oauth_sign_in(deps, identity, handed_over=started.client_route is not None)
    except Conflict as exc:
        return _failed(request, settings, oauth.OAuthError(str(exc), code="account_conflict"), started, 409)
    if started.client_route is not None:  # the client stores it, then exchanges it (getSession)
        return _to_client(started, access_token=token)
    response = RedirectResponse(started.redirect_uri, status_code=302)
    set_session_cookie(response, settings, token)
    return response


@_redis_guarded
async def oauth_unlink(request: Request) -> Response:
    deps: Deps = request.app.state.deps
    author_id = await _signed_in_author(request, deps)
    if author_id is None:
        return _refused(request, "sign in first", 401)
    try:
        left = await unlink_identity(deps, author_id, request.path_params["provider"])
    except Conflict as exc:
        return _refused(request, str(exc), 409)
    return JSONResponse({"providers": sorted(left)})


routes = [
    Route(f"/oauth/{TELEGRAM}/widget", telegram_widget, methods=["GET"]),
    Route("/oauth/{provider}", oauth_start, methods=["GET"]),
    Route("/oauth/{provider}/callback", oauth_callback, methods=["GET"]),
    Route("/oauth/{provider}/unlink", oauth_unlink, methods=["POST"]),
]
