"""Each sign-in provider's flow against a local double that answers as the provider's documentation says
(tests/provider_double.py), on PostgreSQL and Redis: the identity each one yields, OpenID ID tokens refused
when their signature, audience, issuer, nonce or expiry do not hold, a refused state, a code used twice,
GitHub's private address, Telegram's widget (its hash, its age, a replay), linking and unlinking, and no
token, code or secret in any log line."""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from redis.asyncio import Redis
from sqlalchemy import select

from app.main import create_app
from auth import telegram
from auth.services import build_auth
from config.settings import OAuthProvider, Settings
from orm import Author
from resolvers.deps import Deps
from resolvers.writes import transaction
from tests.provider_double import CLIENT_SECRET, Double, default_users, running_double

PUBLIC = "http://discours.test"
BOT_TOKEN = "123456:telegram-bot-token"
ME = "{ me { author { id slug name pic email email_verified } } }"


@pytest.fixture(scope="module")
async def double() -> AsyncIterator[Double]:
    async with running_double() as running:
        yield running


@pytest.fixture
def provider(double: Double) -> Double:
    """The double, as each test leaves it: fresh users (unique subjects and addresses), nothing spoiled."""
    tag = secrets.token_hex(4)
    users = default_users()
    for user in users.values():
        for name in ("sub", "id"):
            if name in user:
                user[name] = f"{user[name]}-{tag}"
        for name in ("email", "default_email"):
            if user.get(name):
                user[name] = user[name].replace("@", f"+{tag}@")
        for entry in user.get("emails", []):
            entry["email"] = entry["email"].replace("@", f"+{tag}@")
    double.users, double.id_token = users, {}
    return double


@pytest.fixture
async def site(deps: Deps, settings: Settings, redis: Redis, double: Double,
               mailer: Any) -> AsyncIterator[httpx.AsyncClient]:
    configured = settings.model_copy(update={
        "public_url": PUBLIC,
        "oauth_providers": {**double.settings(),
                            "telegram": OAuthProvider(client_id="discours_bot", client_secret=BOT_TOKEN)},
    })
    app_deps = Deps(cache=deps.cache, db=deps.db, auth=build_auth(configured, redis, mailer=mailer))
    transport = httpx.ASGITransport(app=create_app(configured, deps=app_deps))
    async with httpx.AsyncClient(transport=transport, base_url=PUBLIC) as client:
        yield client


async def _consent(site: httpx.AsyncClient, provider: str, **params: str) -> str:
    """Start at our site, consent at the provider (a browser of its own); the callback to come back to."""
    started = await site.get(f"/oauth/{provider}", params={"redirect_uri": f"{PUBLIC}/after", **params})
    assert started.status_code == 302, started.text
    async with httpx.AsyncClient() as browser:
        consent = await browser.get(started.headers["location"])
    assert consent.status_code == 302, consent.text
    back = urlsplit(consent.headers["location"])
    assert back.path == f"/oauth/{provider}/callback"
    return f"{back.path}?{back.query}"


async def _me(site: httpx.AsyncClient) -> dict[str, Any]:
    author: dict[str, Any] = (await site.post("/graphql", json={"query": ME})).json()["data"]["me"]["author"]
    return author


async def _sign_in(site: httpx.AsyncClient, provider: str) -> dict[str, Any]:
    site.cookies.clear()
    done = await site.get(await _consent(site, provider))
    assert done.status_code == 302 and done.headers["location"] == f"{PUBLIC}/after", done.text
    return await _me(site)


async def _identities(deps: Deps, author_id: int) -> dict[str, str]:
    async with deps.db() as session:
        return dict((await session.get(Author, author_id)).oauth or {})  # type: ignore[union-attr]


# --- each provider's identity --------------------------------------------------------------------------

async def test_google_signs_in_by_openid_connect(site: httpx.AsyncClient, provider: Double, deps: Deps) -> None:
    user = provider.users["google"]
    me = await _sign_in(site, "google")
    assert (me["email"], me["email_verified"], me["name"], me["pic"]) == \
        (user["email"], True, "G User", "https://lh3.example/g.png")
    assert await _identities(deps, me["id"]) == {"google": user["sub"]}
    assert (await _sign_in(site, "google"))["id"] == me["id"]  # the same account again, by its subject


@pytest.mark.parametrize("spoiled, why", [
    ({"key": "other"}, "signature"),
    ({"aud": "another-client"}, "aud"),
    ({"iss": "https://impostor.example"}, "iss"),
    ({"exp": int(time.time()) - 3600, "iat": int(time.time()) - 7200}, "exp"),
    ({"nonce": "from-another-sign-in"}, "nonce"),
])
async def test_an_id_token_that_does_not_hold_signs_no_one_in(site: httpx.AsyncClient, provider: Double,
                                                             deps: Deps, spoiled: dict[str, Any], why: str) -> None:
    provider.id_token = spoiled
    site.cookies.clear()
    refused = await site.get(await _consent(site, "google"))
    assert refused.status_code == 400 and "set-cookie" not in refused.headers
    error = refused.json()["error"]
    assert error.startswith("Google's ID token is not valid") and why in error, error
    async with deps.db() as session:
        assert await session.scalar(select(Author.id).where(Author.email == provider.users["google"]["email"])) is None


async def test_a_rotated_signing_key_is_fetched_again(site: httpx.AsyncClient, provider: Double) -> None:
    await _sign_in(site, "google")
    fetched = provider.jwks_fetches
    provider.rotate_key()
    provider.users["google"]["sub"] += "-rotated"
    provider.users["google"]["email"] = "rotated+" + provider.users["google"]["email"]
    assert (await _sign_in(site, "google"))["email"].startswith("rotated+")
    assert provider.jwks_fetches == fetched + 1  # once: the kept key set lacked the new kid


async def test_github_reads_a_private_address_and_vouches_only_for_a_verified_primary(
        site: httpx.AsyncClient, provider: Double) -> None:
    me = await _sign_in(site, "github")  # /user has no address: /user/emails has the private primary
    assert (me["email"], me["email_verified"], me["name"], me["pic"]) == \
        (provider.users["github"]["emails"][0]["email"], True, "Octo Cat", "https://avatars.example/octo.png")

    unverified = default_users()["github"]
    unverified.update(id=f"gh-{secrets.token_hex(4)}", emails=[
        {"email": f"secondary-{secrets.token_hex(4)}@example.org", "primary": False, "verified": True},
        {"email": f"primary-{secrets.token_hex(4)}@example.org", "primary": True, "verified": False}])
    provider.users["github"] = unverified
    me = await _sign_in(site, "github")
    assert me["email"] == unverified["emails"][1]["email"] and me["email_verified"] is False


async def test_facebook_yandex_vk_and_x_each_yield_their_identity(site: httpx.AsyncClient, provider: Double,
                                                                 deps: Deps) -> None:
    facebook = await _sign_in(site, "facebook")
    assert (facebook["email"], facebook["email_verified"], facebook["name"], facebook["pic"]) == \
        (provider.users["facebook"]["email"], False, "Face Book", "https://fbcdn.example/p.jpg")

    yandex = await _sign_in(site, "yandex")
    assert (yandex["email"], yandex["email_verified"], yandex["name"], yandex["pic"]) == \
        (provider.users["yandex"]["default_email"], False, "Ya User",
         "https://avatars.yandex.net/get-yapic/131/abc-1/islands-200")

    vk = await _sign_in(site, "vk")  # the address from the token response, the name from users.get
    assert (vk["email"], vk["email_verified"], vk["name"], vk["pic"]) == \
        (provider.users["vk"]["email"], False, "Вера Кузнецова", "https://vk.example/v.jpg")
    assert await _identities(deps, vk["id"]) == {"vk": str(provider.users["vk"]["id"])}

    x = await _sign_in(site, "x")  # X gives no address; its secret went by HTTP Basic (the double insists)
    assert (x["email"], x["email_verified"], x["name"], x["pic"]) == (None, False, "X User", "https://pbs.example/x.jpg")
    assert (await _sign_in(site, "x"))["id"] == x["id"]


async def test_a_facebook_silhouette_is_no_picture(site: httpx.AsyncClient, provider: Double) -> None:
    provider.users["facebook"]["picture"] = {"data": {"url": "https://fbcdn.example/blank.jpg", "is_silhouette": True}}
    assert (await _sign_in(site, "facebook"))["pic"] is None


# --- the flow's failures -------------------------------------------------------------------------------

async def test_a_refused_state_and_a_code_used_twice(site: httpx.AsyncClient, provider: Double) -> None:
    forged = await site.get("/oauth/github/callback?code=anything&state=made-up")
    assert forged.status_code == 400 and "expired or was already used" in forged.json()["error"]

    callback = await _consent(site, "github")
    assert (await site.get(callback)).status_code == 302
    replayed = await site.get(callback)  # the same callback again: its state is spent
    assert replayed.status_code == 400 and "already used" in replayed.json()["error"]

    # the code again under a new state: the provider refuses it, and says why
    code = parse_qs(urlsplit(callback).query)["code"][0]
    fresh = parse_qs(urlsplit(await _consent(site, "github")).query)["state"][0]
    site.cookies.clear()
    reused = await site.get(f"/oauth/github/callback?code={code}&state={fresh}")
    assert reused.status_code == 400 and "set-cookie" not in reused.headers
    assert reused.json()["error"] == "GitHub refused the sign-in (invalid_grant): start again"


async def test_a_wrong_client_secret_is_a_clear_refusal(site: httpx.AsyncClient, provider: Double,
                                                       settings: Settings, deps: Deps, redis: Redis,
                                                       mailer: Any) -> None:
    wrong = {**provider.settings(), "x": provider.settings()["x"].model_copy(update={"client_secret": "wrong"})}
    configured = settings.model_copy(update={"public_url": PUBLIC, "oauth_providers": wrong})
    app_deps = Deps(cache=deps.cache, db=deps.db, auth=build_auth(configured, redis, mailer=mailer))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(configured, deps=app_deps)),
                                 base_url=PUBLIC) as other:
        refused = await other.get(await _consent(other, "x"))
    assert refused.status_code == 400 and refused.json()["error"] == "X refused the sign-in (invalid_client): start again"


async def test_no_log_line_holds_a_token_a_code_or_a_secret(site: httpx.AsyncClient, provider: Double,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    """What the server logs while it finishes each provider's sign-in (it calls the provider: token,
    ID token, keys, user), at DEBUG, holds none of what the provider handed out, nor our secret. (The
    callback's own URL carries the code, as OAuth has it: single use, and useless without the PKCE
    verifier that never leaves Redis.)"""
    callbacks = []
    for name in ("google", "github", "facebook", "yandex", "vk", "x"):
        callbacks.append(await _consent(site, name))
    provider.id_token = {"aud": "another-client"}
    callbacks.append(await _consent(site, "google"))
    with caplog.at_level(logging.DEBUG):
        for callback in callbacks:
            site.cookies.clear()
            await site.get(callback)
    server_side = [record.getMessage() for record in caplog.records if PUBLIC not in record.getMessage()]
    logged = "\n".join(server_side)
    assert "HTTP Request: POST" in logged  # the server's calls to the providers are logged: real lines checked
    assert [value for value in (*provider.issued, CLIENT_SECRET) if value in logged] == []
    assert not any(value in url for _, url in provider.requests for value in provider.issued
                   if value.startswith("access-"))  # no access token ever travelled in a URL


# --- Telegram's Login Widget ---------------------------------------------------------------------------

async def _telegram_state(site: httpx.AsyncClient) -> str:
    started = await site.get("/oauth/telegram", params={"redirect_uri": f"{PUBLIC}/after"})
    assert started.status_code == 302
    page = await site.get(started.headers["location"])
    assert page.status_code == 200 and 'data-telegram-login="discours_bot"' in page.text
    state: str = parse_qs(urlsplit(started.headers["location"]).query)["state"][0]
    assert f"/oauth/telegram/callback?state={state}" in page.text
    return state


def _widget_answer(state: str, *, age: int = 5, user_id: str | None = None, bot_token: str = BOT_TOKEN) -> dict[str, str]:
    fields = {"id": user_id or str(secrets.randbelow(10**9)), "first_name": "Теле", "last_name": "Грам",
              "username": "telegram_user", "photo_url": "https://t.me/i/userpic/320/u.jpg",
              "auth_date": str(int(time.time()) - age), "state": state}
    fields["hash"] = telegram.signature(fields, bot_token)
    return fields


async def test_telegram_signs_in_once_per_widget_answer(site: httpx.AsyncClient, deps: Deps) -> None:
    answer = _widget_answer(await _telegram_state(site))
    site.cookies.clear()
    done = await site.get("/oauth/telegram/callback", params=answer)
    assert done.status_code == 302 and done.headers["location"] == f"{PUBLIC}/after"
    me = await _me(site)
    assert (me["email"], me["name"], me["pic"]) == (None, "Теле Грам", "https://t.me/i/userpic/320/u.jpg")
    assert await _identities(deps, me["id"]) == {"telegram": answer["id"]}

    site.cookies.clear()
    replayed = await site.get("/oauth/telegram/callback", params={**answer, "state": await _telegram_state(site)})
    assert replayed.status_code == 400 and "already used" in replayed.json()["error"]


@pytest.mark.parametrize("spoil, message", [
    (lambda a: {**a, "first_name": "Someone Else"}, "valid signature"),  # a field changed after signing
    (lambda a: {**a, "hash": "0" * 64}, "valid signature"),
    (lambda a: _widget_answer(a["state"], bot_token="999:another-bot"), "valid signature"),
    (lambda a: _widget_answer(a["state"], age=3600), "too old"),
    (lambda a: {k: v for k, v in a.items() if k != "hash"}, "valid signature"),
])
async def test_a_telegram_answer_that_does_not_hold_is_refused(site: httpx.AsyncClient, spoil: Any,
                                                              message: str) -> None:
    answer = spoil(_widget_answer(await _telegram_state(site)))
    site.cookies.clear()
    refused = await site.get("/oauth/telegram/callback", params=answer)
    assert refused.status_code == 400 and message in refused.json()["error"], refused.text
    assert "set-cookie" not in refused.headers


async def test_a_telegram_answer_without_our_state_is_refused(site: httpx.AsyncClient) -> None:
    answer = _widget_answer("never-issued")
    refused = await site.get("/oauth/telegram/callback", params=answer)
    assert refused.status_code == 400 and "expired or was already used" in refused.json()["error"]


# --- linking -------------------------------------------------------------------------------------------

REGISTER = 'mutation($e: String!) { registerUser(email: $e, password: "long password 1", name: "Owner") ' \
    "{ author { id } } }"


async def _registered(site: httpx.AsyncClient, deps: Deps, email: str, *, confirmed: bool) -> int:
    answer = (await site.post("/graphql", json={"query": REGISTER, "variables": {"e": email}})).json()
    author_id: int = answer["data"]["registerUser"]["author"]["id"]
    if confirmed:
        async with transaction(deps) as session:
            (await session.get(Author, author_id)).email_verified = True  # type: ignore[union-attr]
    return author_id


async def test_a_vouched_address_links_only_a_confirmed_account(site: httpx.AsyncClient, provider: Double,
                                                               deps: Deps) -> None:
    email = provider.users["google"]["email"]
    account = await _registered(site, deps, email, confirmed=False)
    site.cookies.clear()
    refused = await site.get(await _consent(site, "google"))
    assert refused.status_code == 409 and "never confirmed" in refused.json()["error"]
    async with transaction(deps) as session:
        (await session.get(Author, account)).email_verified = True  # type: ignore[union-attr]
    assert (await _sign_in(site, "google"))["id"] == account
    assert await _identities(deps, account) == {"google": provider.users["google"]["sub"]}


async def test_an_address_no_one_vouches_for_never_takes_over_an_account(site: httpx.AsyncClient,
                                                                        provider: Double, deps: Deps) -> None:
    account = await _registered(site, deps, provider.users["facebook"]["email"], confirmed=True)
    site.cookies.clear()
    refused = await site.get(await _consent(site, "facebook"))
    assert refused.status_code == 409 and "link facebook from your profile" in refused.json()["error"]
    assert "set-cookie" not in refused.headers and await _identities(deps, account) == {}


async def test_a_signed_in_person_links_and_unlinks_providers(site: httpx.AsyncClient, provider: Double,
                                                              deps: Deps) -> None:
    # an account that only Telegram signs in to
    site.cookies.clear()
    assert (await site.get("/oauth/telegram/callback", params=_widget_answer(await _telegram_state(site)))
            ).status_code == 302
    me = await _me(site)

    linked = await site.get(await _consent(site, "facebook", link="1"))  # its address is no one's here
    assert linked.status_code == 302 and linked.headers["location"] == f"{PUBLIC}/after"
    assert set(await _identities(deps, me["id"])) == {"telegram", "facebook"}
    assert (await _sign_in(site, "facebook"))["id"] == me["id"]  # Facebook now signs in to it

    # the same X account cannot belong to two accounts
    x_owner = await _sign_in(site, "x")
    site.cookies.clear()
    (await site.get(await _consent(site, "facebook")))  # signed in to `me` again
    taken = await site.get(await _consent(site, "x", link="1"))
    assert taken.status_code == 409 and "another account" in taken.json()["error"]
    assert "x" not in await _identities(deps, me["id"]) and "x" in await _identities(deps, x_owner["id"])

    unlinked = await site.post("/oauth/telegram/unlink")
    assert unlinked.status_code == 200 and unlinked.json() == {"providers": ["facebook"]}
    last = await site.post("/oauth/facebook/unlink")  # no password, no confirmed address, nothing else
    assert last.status_code == 409 and "only way to sign in" in last.json()["error"]
    assert await _identities(deps, me["id"]) == {"facebook": provider.users["facebook"]["id"]}


async def test_linking_needs_the_account_that_started_it(site: httpx.AsyncClient, provider: Double) -> None:
    site.cookies.clear()
    assert (await site.get("/oauth/github", params={"link": "1"})).status_code == 401
    await _sign_in(site, "x")
    callback = await _consent(site, "github", link="1")
    site.cookies.clear()  # came back signed out (or as someone else)
    refused = await site.get(callback)
    assert refused.status_code == 401 and "started linking" in refused.json()["error"]
    assert (await site.post("/oauth/github/unlink")).status_code == 401


async def test_a_configured_provider_that_cannot_work_stops_the_start(settings: Settings, redis: Redis) -> None:
    unknown = settings.model_copy(update={"oauth_providers": {"acme": OAuthProvider(client_id="a")}})
    with pytest.raises(ValueError, match=r"acme.*authorize_url, token_url and userinfo_url"):
        build_auth(unknown, redis)
    bot = settings.model_copy(update={"oauth_providers": {"telegram": OAuthProvider(client_id="bot")}})
    with pytest.raises(ValueError, match="bot's username"):
        build_auth(bot, redis)
