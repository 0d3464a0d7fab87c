"""The whole OAuth flow against a real OAuth2 provider that this test starts on loopback: PKCE is
checked by the provider, the state is single use, provider tokens land under the seed's keys."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
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
from auth import oauth
from auth.services import build_auth
from config.settings import OAuthProvider, Settings
from devtools.services import free_port
from orm import Author
from resolvers.deps import Deps
from resolvers.writes import transaction

CLIENT_ID, CLIENT_SECRET = "discours-test", "provider-secret"


@dataclass
class Provider:
    """What the provider on loopback answers; a test changes it before the flow."""

    user: dict[str, Any] = field(default_factory=lambda: {
        "sub": "gh-4242", "email": "oauth.user@example.org", "email_verified": True, "name": "OAuth User"})
    token_fields: dict[str, Any] = field(default_factory=lambda: {"token_type": "Bearer", "expires_in": 3600})
    with_access_token: bool = True
    token_delay: float = 0.0
    url: str = ""


def _provider_app(provider: Provider) -> Starlette:
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
        await asyncio.sleep(provider.token_delay)
        form = {k: v[0] for k, v in parse_qs((await request.body()).decode()).items()}
        grant = codes.pop(str(form.get("code")), None)
        verifier = str(form.get("code_verifier", ""))
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if (grant is None or form.get("client_secret") != CLIENT_SECRET or challenge != grant["challenge"]
                or form.get("redirect_uri") != grant["redirect_uri"]):
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
        access = secrets.token_urlsafe(16)
        tokens[access] = dict(provider.user)
        issued = {"access_token": access, "refresh_token": "refresh-" + access} if provider.with_access_token else {}
        return JSONResponse({**issued, **provider.token_fields})

    async def userinfo(request: Request) -> Response:
        user = tokens.get(request.headers.get("authorization", "").removeprefix("Bearer "))
        return JSONResponse(user) if user else JSONResponse({"error": "invalid_token"}, status_code=401)

    return Starlette(routes=[Route("/authorize", authorize), Route("/token", token, methods=["POST"]),
                             Route("/userinfo", userinfo)])


@pytest.fixture
async def provider() -> AsyncIterator[Provider]:
    behaviour = Provider()
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(_provider_app(behaviour), host="127.0.0.1", port=port,
                                           log_level="warning"))
    task = asyncio.create_task(server.serve())
    while not server.started:  # noqa: ASYNC110 - uvicorn offers a flag, not an event
        await asyncio.sleep(0.01)
    behaviour.url = f"http://127.0.0.1:{port}"
    yield behaviour
    server.should_exit = True
    await task


def _configured(url: str) -> OAuthProvider:
    return OAuthProvider(name="Test", client_id=CLIENT_ID, client_secret=CLIENT_SECRET,
                         authorize_url=f"{url}/authorize", token_url=f"{url}/token", userinfo_url=f"{url}/userinfo")


@pytest.fixture
async def oauth_client(deps: Deps, settings: Settings, redis: Redis, provider: Provider,
                       mailer: Any) -> AsyncIterator[httpx.AsyncClient]:
    configured = settings.model_copy(update={
        "public_url": "http://discours.test",
        # a second provider on the same server, to carry a state across providers
        "oauth_providers": {"test": _configured(provider.url),
                            "other": _configured(provider.url).model_copy(update={"name": "Other"})},
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
        {"id": "other", "name": "Other", "url": "http://discours.test/oauth/other"},
        {"id": "test", "name": "Test", "url": "http://discours.test/oauth/test"}]

    callback = await _to_callback(oauth_client, "http://discours.test/after-login")
    state = parse_qs(urlsplit(callback).query)["state"][0]
    assert 590 <= await redis.ttl(f"oauth_state:{state}") <= 600
    fields = await redis.hgetall(f"oauth_state:{state}")
    assert {b"redirect_uri", b"code_verifier", b"provider", b"created_at"} <= set(fields)

    done = await oauth_client.get(callback)
    assert done.status_code == 302 and done.headers["location"] == "http://discours.test/after-login"
    assert "HttpOnly" in done.headers["set-cookie"]
    # single use: spent, kept as a mark to its expiry so that a replay is told apart (and refused)
    assert await redis.hget(f"oauth_state:{state}", "used") == b"1"
    assert 0 < await redis.ttl(f"oauth_state:{state}") <= 600
    replayed = await oauth_client.get(callback)
    assert replayed.status_code == 400 and "already used" in replayed.text

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


ME = "{ me { author { id email email_verified } } }"
REGISTER = 'mutation($e: String!) { registerUser(email: $e, password: "long password", name: "Has A Password") ' \
    "{ author { id } } }"


async def _signed_in(oauth_client: httpx.AsyncClient) -> dict[str, Any]:
    callback = await _to_callback(oauth_client, "http://discours.test/")
    done = await oauth_client.get(callback)
    assert done.status_code == 302, done.text
    author: dict[str, Any] = (await oauth_client.post("/graphql", json={"query": ME})).json()["data"]["me"]["author"]
    oauth_client.cookies.clear()
    return author


async def test_a_verified_email_links_the_existing_account(oauth_client: httpx.AsyncClient, provider: Provider,
                                                           deps: Deps) -> None:
    email = f"linked-{secrets.token_hex(4)}@example.org"
    registered = (await oauth_client.post("/graphql", json={"query": REGISTER, "variables": {"e": email}})).json()
    account = registered["data"]["registerUser"]["author"]["id"]
    provider.user = {"sub": f"sub-{email}", "email": email.upper(), "email_verified": True, "name": "Linked"}
    # not while the account's own address is unconfirmed: whoever registered it may not own it
    callback = await _to_callback(oauth_client, "http://discours.test/")
    refused = await oauth_client.get(callback)
    assert refused.status_code == 409 and "never confirmed" in refused.json()["error"]
    async with transaction(deps) as session:
        (await session.get(Author, account)).email_verified = True  # type: ignore[union-attr]
    assert (await _signed_in(oauth_client))["id"] == account
    async with deps.db() as session:
        assert (await session.get(Author, account)).oauth == {"test": f"sub-{email}"}  # type: ignore[union-attr]
    # signed in again by the linked identity, even after the address changed at the provider
    provider.user = {**provider.user, "email": f"changed-{email}"}
    assert (await _signed_in(oauth_client))["id"] == account


async def test_an_unverified_email_never_signs_in_to_an_existing_account(
        oauth_client: httpx.AsyncClient, provider: Provider, deps: Deps) -> None:
    email = f"victim-{secrets.token_hex(4)}@example.org"
    registered = (await oauth_client.post("/graphql", json={"query": REGISTER, "variables": {"e": email}})).json()
    account = registered["data"]["registerUser"]["author"]["id"]
    provider.user = {"sub": "attacker", "email": email, "name": "Attacker"}  # no email_verified claim
    callback = await _to_callback(oauth_client, "http://discours.test/")
    refused = await oauth_client.get(callback)
    assert refused.status_code == 409 and "password" in refused.json()["error"]
    assert "set-cookie" not in refused.headers
    async with deps.db() as session:
        assert (await session.get(Author, account)).oauth is None  # type: ignore[union-attr]


async def test_a_provider_that_gives_no_address_makes_an_account_without_one(
        oauth_client: httpx.AsyncClient, provider: Provider) -> None:
    provider.user = {"sub": f"no-email-{secrets.token_hex(4)}", "name": "No Address"}
    author = await _signed_in(oauth_client)
    assert author["email"] is None and author["email_verified"] is False
    assert (await _signed_in(oauth_client))["id"] == author["id"]  # the same account by its subject


async def test_an_unverified_email_of_nobody_makes_an_unverified_account(oauth_client: httpx.AsyncClient,
                                                                        provider: Provider) -> None:
    email = f"fresh-{secrets.token_hex(4)}@example.org"
    provider.user = {"sub": f"sub-{email}", "email": email, "email_verified": False}
    author = await _signed_in(oauth_client)
    assert author["email"] == email and author["email_verified"] is False


@pytest.mark.parametrize("change, message", [
    ({"with_access_token": False}, "no access token"),
    ({"user": {"email": "no-subject@example.org", "email_verified": True}}, "Test gave no user id"),
])
async def test_what_a_provider_leaves_out_is_a_clear_error(oauth_client: httpx.AsyncClient, provider: Provider,
                                                          change: dict[str, Any], message: str) -> None:
    for name, value in change.items():
        setattr(provider, name, value)
    callback = await _to_callback(oauth_client, "http://discours.test/")
    refused = await oauth_client.get(callback)
    assert refused.status_code == 400 and message in refused.json()["error"], refused.text
    assert "set-cookie" not in refused.headers


async def test_a_provider_that_does_not_answer_in_time(oauth_client: httpx.AsyncClient, provider: Provider,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(oauth, "PROVIDER_TIMEOUT", 0.2)
    provider.token_delay = 1.0
    callback = await _to_callback(oauth_client, "http://discours.test/")
    refused = await oauth_client.get(callback)
    assert refused.status_code == 400 and refused.json()["error"] == "Test does not answer"


async def test_the_provider_reports_an_error(oauth_client: httpx.AsyncClient, redis: Redis) -> None:
    callback = await _to_callback(oauth_client, "http://discours.test/")
    state = parse_qs(urlsplit(callback).query)["state"][0]
    denied = await oauth_client.get(f"/oauth/test/callback?error=access_denied&state={state}")
    assert denied.status_code == 400 and denied.json()["error"] == "the sign-in was cancelled at the provider"
    assert await redis.hget(f"oauth_state:{state}", "used") == b"1"  # spent: the sign-in cannot be resumed
    resumed = await oauth_client.get(callback)
    assert resumed.status_code == 400 and "already used" in resumed.json()["error"]
    page = await oauth_client.get(f"/oauth/test/callback?error=server_error&state={state}",
                                  headers={"accept": "text/html"})
    assert page.status_code == 400 and page.headers["content-type"].startswith("text/html")
    assert "the provider refused the sign-in (server_error)" in page.text


async def test_a_state_issued_for_another_provider_is_refused(oauth_client: httpx.AsyncClient) -> None:
    callback = await _to_callback(oauth_client, "http://discours.test/")
    crossed = await oauth_client.get(callback.replace("/oauth/test/", "/oauth/other/"))
    assert crossed.status_code == 400 and "another provider" in crossed.json()["error"]
    assert "set-cookie" not in crossed.headers
