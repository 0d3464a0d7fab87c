"""HTTP routes of the OAuth flow: `/oauth/{provider}` sends the browser to the provider,
`/oauth/{provider}/callback` comes back, signs in and sets the session cookie."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from auth import oauth
from auth.cookies import set_session_cookie
from resolvers.auth import oauth_sign_in
from resolvers.deps import Deps
from resolvers.errors import Conflict


def _error(message: str, status: int = 400) -> Response:
    return JSONResponse({"error": message}, status_code=status)


async def oauth_start(request: Request) -> Response:
    deps: Deps = request.app.state.deps
    try:
        url = await oauth.start(deps.state, deps.accounts.settings, request.path_params["provider"],
                                request.query_params.get("redirect_uri"))
    except oauth.OAuthError as exc:
        return _error(str(exc))
    return RedirectResponse(url, status_code=302)


async def oauth_callback(request: Request) -> Response:
    deps: Deps = request.app.state.deps
    settings = deps.accounts.settings
    code, state = request.query_params.get("code"), request.query_params.get("state")
    if request.query_params.get("error") or not code or not state:
        return _error(request.query_params.get("error") or "code and state are required")
    try:
        identity, redirect_uri = await oauth.finish(deps.state, settings, request.path_params["provider"],
                                                    code, state)
    except oauth.OAuthError as exc:
        return _error(str(exc))
    try:
        token = await oauth_sign_in(deps, identity)
    except Conflict as exc:
        return _error(str(exc), 409)
    response = RedirectResponse(redirect_uri, status_code=302)
    set_session_cookie(response, settings, token)
    return response


routes = [
    Route("/oauth/{provider}", oauth_start, methods=["GET"]),
    Route("/oauth/{provider}/callback", oauth_callback, methods=["GET"]),
]
