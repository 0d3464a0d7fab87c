"""The editors' panel (ADMIN_PATH, `/admin` by default): a page of the server's own, from its own copies of its
files (app/static/admin: plain JavaScript modules, no build step, nothing from another host), that is a
client of the GraphQL API and nothing else. It signs in with the server's session cookie; what it may do
is what the API lets the person do, so a script can do the same.

The page is written in the reader's language (auth/language.py: `?lang=`, Accept-Language, DEFAULT_LANGUAGE;
the panel switches it and remembers the choice). Its files are served with validators and a short life
(a new version is picked up within minutes, revalidated cheaply), the page itself never cached."""

from __future__ import annotations

import html
from functools import lru_cache
from pathlib import Path

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from auth import language
from config.settings import Settings

FILES = Path(__file__).resolve().parents[1] / "static" / "admin"  # app/static/admin
ASSETS_MAX_AGE = 300


class Assets(StaticFiles):
    """The panel's files, each with its validators (ETag, Last-Modified) and a short life."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code in (200, 304):
            response.headers["cache-control"] = f"public, max-age={ASSETS_MAX_AGE}, must-revalidate"
        return response


@lru_cache(maxsize=1)
def _shell() -> str:
    return (FILES / "index.html").read_text()


def routes(settings: Settings) -> list[BaseRoute]:
    base = settings.admin_path.rstrip("/")
    if not base:
        return []

    async def page(request: Request) -> Response:
        lang = language.choose(request.query_params.get("lang"), request.headers.get("accept-language"),
                               settings.default_language)
        text = _shell().replace("{{lang}}", lang).replace("{{base}}", html.escape(base))
        return HTMLResponse(text, headers={"cache-control": "no-store", "content-language": lang,
                                           "referrer-policy": "same-origin", "x-frame-options": "DENY"})

    async def slash(_request: Request) -> Response:
        return RedirectResponse(base + "/", status_code=308)

    return [Route(base, slash), Route(base + "/", page),
            Mount(base + "/assets", app=Assets(directory=FILES), name="admin-assets")]
