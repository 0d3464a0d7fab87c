"""The pages the links in our mail open (`PUBLIC_URL/confirm?token=...`, `/reset`, `/confirm-email-change`),
for a deployment where no web client serves them (LINKS_URL points the mail at one that does).

A GET only shows a button (or the new-password form): mail scanners and link previews open links, and
must not use up a single-use token. The POST does what the GraphQL mutation would (confirmEmail,
resetPassword, confirmEmailChange), through the same resolvers; a confirmed address signs its owner in
with the session cookie. Each page is in the reader's language (Russian or English, auth/language.py) and,
once done, leads on: to the web client (LINKS_URL) when there is one, else to this server."""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from auth import language
from auth.cookies import set_session_cookie
from resolvers import auth
from resolvers.deps import Deps
from resolvers.errors import ApiError

MAX_FORM_BYTES = 4096
Act = Callable[[Deps, str], Awaitable[str | None]]
Endpoint = Callable[[Request], Awaitable[Response]]

# Every word the pages say, in each language the server writes (auth/language.py).
WORDS: dict[str, dict[str, str]] = {
    "en": {
        "confirm.title": "Confirm your email", "confirm.button": "Confirm my email",
        "confirm.done": "Your email is confirmed", "signed_in": "You are signed in.",
        "change.title": "Confirm your new email", "change.button": "Use this address",
        "change.done": "Your new email is confirmed: sign in with it from now on",
        "reset.title": "Choose a new password", "reset.field": "New password", "reset.button": "Set the password",
        "reset.done": "Your password is changed",
        "reset.signed_out": "Every session was signed out; sign in with the new password.",
        "reset.refused": "The password was not changed", "refused": "This link does not work",
        "on": "Go on",
    },
    "ru": {
        "confirm.title": "Подтвердите адрес почты", "confirm.button": "Подтвердить адрес",
        "confirm.done": "Адрес подтверждён", "signed_in": "Вы вошли на сайт.",
        "change.title": "Подтвердите новый адрес почты", "change.button": "Использовать этот адрес",
        "change.done": "Новый адрес подтверждён: теперь входите с ним",
        "reset.title": "Придумайте новый пароль", "reset.field": "Новый пароль", "reset.button": "Сменить пароль",
        "reset.done": "Пароль изменён",
        "reset.signed_out": "Все сеансы завершены; войдите с новым паролем.",
        "reset.refused": "Пароль не изменён", "refused": "Ссылка не работает",
        "on": "Продолжить",
    },
}


class Page:
    """One request's page: its language (`?lang=`, kept through the form; else Accept-Language; else
    DEFAULT_LANGUAGE) and where it leads on (LINKS_URL, the web client, when set; else this server)."""

    def __init__(self, request: Request, fields: dict[str, str] | None = None) -> None:
        settings = request.app.state.settings
        asked = (fields or {}).get("lang") or request.query_params.get("lang")
        self.lang = language.choose(asked, request.headers.get("accept-language"), settings.default_language)
        self.words = WORDS[self.lang]
        self.onward = settings.links_url or "/"

    def __call__(self, title: str, body: str, status: int = 200, *, onward: bool = False) -> HTMLResponse:
        words = self.words
        title = words.get(title, title)
        more = f'<p><a href="{html.escape(self.onward)}">{words["on"]}</a></p>' if onward else ""
        return HTMLResponse(f"""<!doctype html><html lang="{self.lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex">
<title>{html.escape(title)}</title><style>body{{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;
padding:0 1rem}}button{{font:inherit;padding:.5rem 1rem}}input{{font:inherit;padding:.4rem;width:100%}}</style>
</head><body><h1>{html.escape(title)}</h1>{body}{more}</body></html>""", status_code=status,
                            headers={"cache-control": "no-store", "referrer-policy": "no-referrer",
                                     "content-language": self.lang, "vary": "accept-language"})

    def form(self, path: str, token: str, button: str, extra: str = "") -> str:
        return (f'<form method="post" action="{path}"><input type="hidden" name="token" value="{html.escape(token)}">'
                f'<input type="hidden" name="lang" value="{self.lang}">'
                f'{extra}<p><button type="submit">{html.escape(self.words[button])}</button></p></form>')

    def refusal(self, title: str, exc: ApiError) -> HTMLResponse:
        """The API's reason (its words are English) under a title in the page's language, with its code."""
        return self(title, f"<p>{html.escape(str(exc))}. <small>({html.escape(exc.code)})</small></p>", status=400)


async def _fields(request: Request) -> dict[str, str]:
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        return {}
    return {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}


def _confirmation(path: str, words: str, act: Act) -> Endpoint:
    """A page that shows a button for the link's token, and does `act` with it when pressed; `act`
    returns a session token to sign the browser in with, or None. `words`: the page's words' prefix."""

    async def page(request: Request) -> Response:
        if request.method == "GET":
            show = Page(request)
            return show(f"{words}.title", show.form(path, request.query_params.get("token", ""), f"{words}.button"))
        deps: Deps = request.app.state.deps
        fields = await _fields(request)
        show = Page(request, fields)
        try:
            session_token = await act(deps, fields.get("token", ""))
        except ApiError as exc:
            return show.refusal("refused", exc)
        response = show(f"{words}.done", f"<p>{show.words['signed_in']}</p>" if session_token else "", onward=True)
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
    if request.method == "GET":
        show = Page(request)
        password = (f'<p><label>{show.words["reset.field"]}<br><input type="password" name="password" minlength="8" '
                    'required autocomplete="new-password"></label></p>')
        return show("reset.title", show.form("/reset", request.query_params.get("token", ""), "reset.button",
                                             password))
    deps: Deps = request.app.state.deps
    fields = await _fields(request)
    show = Page(request, fields)
    try:
        await auth.reset_password(deps, fields.get("token", ""), fields.get("password", ""))
    except ApiError as exc:
        return show.refusal("reset.refused", exc)
    return show("reset.done", f"<p>{show.words['reset.signed_out']}</p>", onward=True)


routes = [
    Route("/confirm", _confirmation("/confirm", "confirm", _confirm_email), methods=["GET", "POST"]),
    Route("/confirm-email-change", _confirmation("/confirm-email-change", "change", _confirm_email_change),
          methods=["GET", "POST"]),
    Route("/reset", reset, methods=["GET", "POST"]),
]
