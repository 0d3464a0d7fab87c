"""The pages the links in our mail open (`PUBLIC_URL/confirm?token=...`, `/reset`, `/confirm-email-change`),
for a deployment where no web client serves them (LINKS_URL points the mail at one that does).

A GET only shows a button (or the new-password form): mail scanners and link previews open links, and
must not use up a single-use token. The POST does what the GraphQL mutation would (confirmEmail,
resetPassword, confirmEmailChange), through the same resolvers; a confirmed address signs its owner in
with the session cookie."""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from auth.cookies import set_session_cookie
from resolvers import auth
from resolvers.deps import Deps
from resolvers.errors import ApiError

MAX_FORM_BYTES = 4096
Act = Callable[[Deps, str], Awaitable[str | None]]
Endpoint = Callable[[Request], Awaitable[Response]]


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex">
<title>{html.escape(title)}</title><style>body{{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;
padding:0 1rem}}button{{font:inherit;padding:.5rem 1rem}}input{{font:inherit;padding:.4rem;width:100%}}</style>
</head><body><h1>{html.escape(title)}</h1>{body}</body></html>""", status_code=status,
                        headers={"cache-control": "no-store", "referrer-policy": "no-referrer"})


def _form(path: str, token: str, button: str, extra: str = "") -> str:
    return (f'<form method="post" action="{path}"><input type="hidden" name="token" value="{html.escape(token)}">'
            f"{extra}<p><button type=\"submit\">{html.escape(button)}</button></p></form>")


async def _fields(request: Request) -> dict[str, str]:
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        return {}
    return {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}


def _confirmation(path: str, title: str, button: str, done: str, act: Act) -> Endpoint:
    """A page that shows a button for the link's token, and does `act` with it when pressed; `act`
    returns a session token to sign the browser in with, or None."""

    async def page(request: Request) -> Response:
        if request.method == "GET":
            return _page(title, _form(path, request.query_params.get("token", ""), button))
        deps: Deps = request.app.state.deps
        try:
            session_token = await act(deps, (await _fields(request)).get("token", ""))
        except ApiError as exc:
            return _page("This link does not work", f"<p>{html.escape(str(exc))}.</p>", status=400)
        response = _page(done, "<p>You are signed in.</p>" if session_token else "")
        if session_token:
            set_session_cookie(response, deps.accounts.settings, session_token)
        return response

    return page


async def _confirm_email(deps: Deps, token: str) -> str | None:
    return str((await auth.confirm_email(deps, token))["token"])


async def _confirm_email_change(deps: Deps, token: str) -> str | None:
    await auth.confirm_email_change(deps, token)
    return None


async def reset(request: Request) -> Response:
    password = ('<p><label>New password<br><input type="password" name="password" minlength="8" required '
                'autocomplete="new-password"></label></p>')
    if request.method == "GET":
        return _page("Choose a new password", _form("/reset", request.query_params.get("token", ""),
                                                   "Set the password", password))
    deps: Deps = request.app.state.deps
    fields = await _fields(request)
    try:
        await auth.reset_password(deps, fields.get("token", ""), fields.get("password", ""))
    except ApiError as exc:
        return _page("The password was not changed", f"<p>{html.escape(str(exc))}.</p>", status=400)
    return _page("Your password is changed", "<p>Every session was signed out; sign in with the new password.</p>")


routes = [
    Route("/confirm", _confirmation("/confirm", "Confirm your email", "Confirm my email",
                                    "Your email is confirmed", _confirm_email), methods=["GET", "POST"]),
    Route("/confirm-email-change", _confirmation(
        "/confirm-email-change", "Confirm your new email", "Use this address",
        "Your new email is confirmed: sign in with it from now on", _confirm_email_change), methods=["GET", "POST"]),
    Route("/reset", reset, methods=["GET", "POST"]),
]
