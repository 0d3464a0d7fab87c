"""The 2025 web client's social sign-in, as the client does it, in real Chromium (issue 70): a page on another
origin keeps its `state` (base64 JSON naming its `redirect_url`) and opens `{core}/oauth/{provider}?state=`;
the local provider double signs in; the browser ends on the client's `/oauth` route with a token and the
state, where the page checks the state and calls getSession with the token as a Bearer. Each refusal path
ends on that route with an error code; a return address that is not allowed stays on the server's page and
the provider is never called."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
import pytest
import uvicorn
from playwright.async_api import Browser, Page
from redis.asyncio import Redis
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route as Path

from app.main import create_app, wire
from auth.mailer import LogMailer
from auth.services import build_auth
from cache.store import Cache
from config.settings import Settings
from devtools.services import free_port
from tests.helpers import until
from tests.provider_double import Double, default_users, running_double

# The client's two pages, written to its behaviour (src/routes/oauth.ts, src/context/session.tsx): the start
# keeps the state where the route finds it; the route checks it, keeps the token and asks for the session.
START = """<!doctype html><meta charset=utf-8><title>client</title><script>
const q = new URLSearchParams(location.search);
const back = q.get('redirect_url') || location.origin + '/after';
const state = btoa(JSON.stringify({redirect_url: back, nonce: crypto.randomUUID()}));
localStorage.setItem('oauth_state', state);
location.href = q.get('core') + '/oauth/' + q.get('provider') + '?state=' + encodeURIComponent(state);
</script>"""
ROUTE = """<!doctype html><meta charset=utf-8><title>oauth</title><body><script>
(async () => {
  const q = new URLSearchParams(location.search), b = document.body.dataset;
  b.stateKept = String(q.get('state') === localStorage.getItem('oauth_state'));
  if (q.get('error')) { b.error = q.get('error'); b.done = '1'; return; }
  const token = q.get('access_token');
  const answer = await fetch(CORE + '/graphql', {method: 'POST', credentials: 'include',
    headers: {'content-type': 'application/json', authorization: 'Bearer ' + token},
    body: JSON.stringify({query: 'mutation { getSession { token author { slug } } }'})}).then(r => r.json());
  b.handed = token; b.session = answer.data.getSession.token; b.slug = answer.data.getSession.author.slug;
  b.done = '1';
})();
</script>"""


@contextlib.asynccontextmanager
async def _served(app: Any, port: int) -> AsyncIterator[str]:
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    task = __import__("asyncio").get_running_loop().create_task(server.serve())
    await until(lambda: server.started or task.done(), "uvicorn starts")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


@pytest.fixture(scope="module")
async def double() -> AsyncIterator[Double]:
    async with running_double() as running:
        yield running


@pytest.fixture
async def sites(double: Double, engine: AsyncEngine, redis: Redis,
                settings: Settings) -> AsyncIterator[tuple[str, str, Double]]:
    """(the core's address, the client's, the provider double): the core allows returns to the client only."""
    double.users, double.requests, double.refuse_next = default_users(), [], None
    double.users["google"]["sub"] = f"g-{free_port()}"
    double.users["google"]["email"] = f"g-{free_port()}@example.org"
    double.users["x"]["id"] = f"x-{free_port()}"
    core_port, client_port = free_port(), free_port()
    core, client = f"http://127.0.0.1:{core_port}", f"http://127.0.0.1:{client_port}"
    configured = settings.model_copy(update={
        "public_url": core, "links_url": client, "oauth_redirect_allowed": [client], "cors_origins": [client],
        "oauth_providers": {name: found for name, found in double.settings().items() if name in ("google", "x")}})
    app = create_app(configured, deps=wire(configured, engine, Cache(redis),
                                           auth=build_auth(configured, redis, mailer=LogMailer())))
    client_app = Starlette(routes=[Path("/", lambda _r: HTMLResponse(START)),
                                   Path("/oauth", lambda _r: HTMLResponse(ROUTE.replace("CORE", json.dumps(core))))])
    async with _served(app, core_port), _served(client_app, client_port):
        yield core, client, double


async def _sign_in(browser: Browser, client: str, core: str, provider: str, *,
                   redirect_url: str | None = None, prepare: Any = None) -> tuple[Page, dict[str, str]]:
    page = await browser.new_page()
    if prepare is not None:
        await prepare(page)
    query = {"core": core, "provider": provider, **({"redirect_url": redirect_url} if redirect_url else {})}
    await page.goto(f"{client}/?{urlencode(query)}")
    await page.wait_for_function("() => document.body && document.body.dataset.done === '1'", timeout=20_000)
    return page, dict(await page.evaluate("() => ({...document.body.dataset})"))


@pytest.mark.parametrize("provider", ["google", "twitter"])
async def test_the_client_signs_in_and_exchanges_its_token(browser: Browser, sites: tuple[str, str, Double],
                                                           provider: str) -> None:
    core, client, _ = sites
    callbacks: list[str] = []

    async def watch(page: Page) -> None:
        page.on("request", lambda request: callbacks.append(request.url) if "/callback?" in request.url else None)

    page, seen = await _sign_in(browser, client, core, provider, prepare=watch)
    assert urlsplit(page.url).path == "/oauth" and seen["stateKept"] == "true", seen
    assert seen["slug"] and seen["session"] != seen["handed"]  # exchanged at the first getSession
    async with httpx.AsyncClient() as http:
        def me(token: str) -> Any:
            return http.post(f"{core}/graphql", json={"query": "{ me { author { slug } } }"},
                             headers={"authorization": f"Bearer {token}"})

        assert (await me(seen["session"])).json()["data"]["me"]["author"]["slug"] == seen["slug"]
        assert (await me(seen["handed"])).json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"

    # the same callback again (a replay): back on the route, refused
    [callback] = callbacks
    await page.goto(callback)
    await page.wait_for_function("() => document.body && document.body.dataset.done === '1'")
    replay = dict(await page.evaluate("() => ({...document.body.dataset})"))
    assert replay["error"] == "state_used" and replay["stateKept"] == "true", replay


@pytest.mark.parametrize("provider, code", [("nope", "unknown_provider"), ("github", "unknown_provider")])
async def test_an_unknown_or_unconfigured_provider_ends_on_the_route(
        browser: Browser, sites: tuple[str, str, Double], provider: str, code: str) -> None:
    core, client, double = sites
    page, seen = await _sign_in(browser, client, core, provider)
    assert urlsplit(page.url).path == "/oauth" and seen == {**seen, "error": code, "stateKept": "true"}
    assert double.requests == []


async def test_a_provider_error_ends_on_the_route(browser: Browser, sites: tuple[str, str, Double]) -> None:
    core, client, double = sites
    double.refuse_next = "access_denied"  # the person says no at the provider
    page, seen = await _sign_in(browser, client, core, "google")
    assert urlsplit(page.url).path == "/oauth" and seen["error"] == "access_denied" and seen["stateKept"] == "true"


async def test_a_bad_state_at_the_callback_ends_on_the_clients_route(browser: Browser,
                                                                     sites: tuple[str, str, Double]) -> None:
    core, _, _ = sites
    page = await browser.new_page()
    await page.goto(f"{core}/oauth/google/callback?code=c&state=never-issued")
    await page.wait_for_function("() => document.body && document.body.dataset.done === '1'")
    assert dict(await page.evaluate("() => ({...document.body.dataset})"))["error"] == "invalid_state"


async def test_a_return_that_is_not_allowed_stays_here_and_calls_no_provider(
        browser: Browser, sites: tuple[str, str, Double]) -> None:
    core, client, double = sites
    page = await browser.new_page()
    await page.goto(f"{client}/?{urlencode({'core': core, 'provider': 'google', 'redirect_url': 'https://elsewhere.example/x'})}")
    await page.wait_for_load_state("networkidle")
    assert page.url.startswith(core + "/oauth/google?") and "not allowed" in await page.content()
    assert double.requests == []
