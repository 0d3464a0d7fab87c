"""The whole OAuth flow against a real OAuth2 provider that this test starts on loopback: PKCE is
checked by the provider, the state is single use, provider tokens land under the seed's keys."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import secrets
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import uvicorn
from redis.asyncio import Redis
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from app.main import create_app
from auth.services import build_auth
from config.settings import OAuthProvider, Settings
from devtools.services import free_port
from resolvers.deps import Deps

CLIENT_ID, CLIENT_SECRET = "discours-test", "provider-secret"


def _provider_app() -> Starlette:
    """A minimal OAuth2 authorization server: consents at once, enforces PKCE S256."""
    codes: dict[str, dict[str, str]] = {}
    tokens: dict[str, dict[str, Any]] = {}

    async def authorize(request: Request) -> Response:
        q = request.query_params
        if q.get("client_id") != CLIENT_ID or q.get("code_challenge_method") != "S256":
            return JSONResponse({"error": "invalid_request"}, status_code=400)
        code = secrets.token_urlsafe(12)
        codes[code] = {"challenge": q["code_challenge"], "redirect_uri": q["redirect_uri"]}
        return RedirectResponse(f"{q['redirect_uri']}?code={code}&state={q['state']}", status_code=302)

    async def token(request: Request) -> Response:
        form = {k: v[0] for k, v in parse_qs((await request.body()).decode()).items()}
        grant = codes.pop(str(form.get("code")), None)
        verifier = str(form.get("code_verifier", ""))
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if (grant is None or form.get("client_secret") != CLIENT_SECRET or challenge != grant["challenge"]
                or form.get("redirect_uri") != grant["redirect_uri"]):
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
        access = secrets.token_urlsafe(16)
        tokens[access] = {"sub": "gh-4242", "email": "oauth.user@example.org", "name": "OAuth User"}
        return JSONResponse({"access_token": access, "refresh_token": "refresh-" + access, "token_type": "Bearer",
                             "expires_in": 3600})

    async def userinfo(request: Request) -> Response:
        user = tokens.get(request.headers.get("authorization", "").removeprefix("Bearer "))
        return JSONResponse(user) if user else JSONResponse({"error": "invalid_token"}, status_code=401)

    return Starlette(routes=[Route("/authorize", authorize), Route("/token", token, methods=["POST"]),
                             Route("/userinfo", userinfo)])


@pytest.fixture
async def provider_url() -> AsyncIterator[str]:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(_provider_app(), host="127.0.0.1", port=port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    while not server.started:  # noqa: ASYNC110 - uvicorn offers a flag, not an event
        await asyncio.sleep(0.01)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    await task


@pytest.fixture
async def oauth_client(deps: Deps, settings: Settings, redis: Redis, provider_url: str,
                       mailer: Any) -> AsyncIterator[httpx.AsyncClient]:
    configured = settings.model_copy(update={
        "public_url": "http://discours.test",
        "oauth_providers": {"test": OAuthProvider(
            name="Test", client_id=CLIENT_ID, client_secret=CLIENT_SECRET, authorize_url=f"{provider_url}/authorize",
            token_url=f"{provider_url}/token", userinfo_url=f"{provider_url}/userinfo")},
    })
    app_deps = Deps(cache=deps.cache, db=deps.db, auth=build_auth(configured, redis, mailer=mailer))
    transport = httpx.ASGITransport(app=create_app(configured, deps=app_deps))
    async with httpx.AsyncClient(transport=transport, base_url="http://discours.test") as client:
        yield client


async def _to_callback(oauth_client: httpx.AsyncClient, redirect_uri: str) -> str:
    started = await oauth_client.get("/oauth/test", params={"redirect_uri": redirect_uri})
    assert started.status_code == 302
    async with httpx.AsyncClient() as browser:  # the browser visits the real provider
        consent = await browser.get(started.headers["location"])
    assert consent.status_code == 302
    callback = urlsplit(consent.headers["location"])
    assert callback.path == "/oauth/test/callback"
    return f"{callback.path}?{callback.query}"


async def test_full_flow_signs_in_with_a_cookie(oauth_client: httpx.AsyncClient, redis: Redis) -> None:
    providers = (await oauth_client.post("/graphql", json={"query": "{ getOAuthProviders { id name url } }"})).json()
    assert providers["data"]["getOAuthProviders"] == [
        {"id": "test", "name": "Test", "url": "http://discours.test/oauth/test"}]

    callback = await _to_callback(oauth_client, "http://discours.test/after-login")
    state = parse_qs(urlsplit(callback).query)["state"][0]
    assert 590 <= await redis.ttl(f"oauth_state:{state}") <= 600
    fields = await redis.hgetall(f"oauth_state:{state}")
    assert {b"redirect_uri", b"code_verifier", b"provider", b"created_at"} <= set(fields)

    done = await oauth_client.get(callback)
    assert done.status_code == 302 and done.headers["location"] == "http://discours.test/after-login"
    assert "HttpOnly" in done.headers["set-cookie"]
    assert not await redis.exists(f"oauth_state:{state}")  # single use

    me = (await oauth_client.post("/graphql", json={"query": "{ me { author { id email email_verified } } }"})).json()
    author = me["data"]["me"]["author"]
    assert author["email"] == "oauth.user@example.org" and author["email_verified"] is True
    assert 3590 <= await redis.ttl(f"oauth_access:{author['id']}:test") <= 3600
    assert 30 * 86400 - 10 <= await redis.ttl(f"oauth_refresh:{author['id']}:test") <= 30 * 86400

    replay = await oauth_client.get(callback)  # the same state a second time
    assert replay.status_code == 400


async def test_a_wrong_verifier_is_refused_by_the_provider(oauth_client: httpx.AsyncClient, redis: Redis) -> None:
    callback = await _to_callback(oauth_client, "http://discours.test/")
    state = parse_qs(urlsplit(callback).query)["state"][0]
    await redis.hset(f"oauth_state:{state}", "code_verifier", "an attacker's verifier")
    refused = await oauth_client.get(callback)
    assert refused.status_code == 400 and "refused" in refused.json()["error"]


async def test_bad_requests(oauth_client: httpx.AsyncClient) -> None:
    assert (await oauth_client.get("/oauth/nope")).status_code == 400
    outside = await oauth_client.get("/oauth/test", params={"redirect_uri": "https://evil.example/steal"})
    assert outside.status_code == 400
    assert (await oauth_client.get("/oauth/test/callback?code=x&state=unknown")).status_code == 400
    assert (await oauth_client.get("/oauth/test/callback")).status_code == 400
