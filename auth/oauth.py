"""The sign-in flows (seed 000 section 1.2): OAuth 2 authorization code with PKCE (S256) through Authlib's
httpx client, OpenID Connect where the provider has it, and Telegram's Login Widget.

`oauth_state:{state}` (a HASH, 10 minutes, single use) carries the PKCE verifier, the OpenID nonce, where
to send the browser back and, for a signed-in person linking a provider, their account: our state in
Redis, not Authlib's cookie session. The provider's tokens land in `oauth_access:{user_id}:{provider}`
(1 hour) and `oauth_refresh:{user_id}:{provider}` (30 days).

Every failure is an `OAuthError` whose message a person can act on; none holds a token, a code or a
secret, and nothing here logs one (httpx logs each request's URL: no token ever travels in one).
"""

from __future__ import annotations

import base64
import html
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
import orjson
from authlib.integrations.base_client.errors import OAuthError as AuthlibError
from redis.asyncio import Redis

from auth import telegram
from auth.oauth_profiles import TELEGRAM, Answers, AsyncOAuth2Client, Endpoints, Identity, OAuthError, endpoints
from auth.oidc import IdTokenInvalid, OpenIdConfigs
from cache import keys
from config.settings import AccountSettings

STATE_TTL = 600
PROVIDER_TIMEOUT = 10.0  # seconds for each call to a provider
ACCESS_TTL = 3600
REFRESH_TTL = 30 * 24 * 3600

OPENID = OpenIdConfigs()  # discovery documents and key sets, kept per worker

__all__ = ["ALIASES", "Identity", "OAuthError", "Started", "callback_url", "canonical", "client_route", "finish",
           "finish_telegram", "start", "store_provider_tokens"]


# The names the 2025 web client gives providers, and ours.
ALIASES = {"twitter": "x"}


@dataclass(frozen=True, slots=True)
class Started:
    """Where the state sends the browser back, and the account a linking flow belongs to; for a web
    client's sign-in (`client_route`), its own state, given back to it with the token."""

    redirect_uri: str
    link_to: int | None
    client_state: str | None = None

    @property
    def client_route(self) -> str | None:
        return self.redirect_uri if self.client_state is not None else None


def canonical(provider_id: str) -> str:
    return ALIASES.get(provider_id, provider_id)


def client_route(settings: AccountSettings, client_state: str) -> str:
    """The web client's `/oauth` route for a sign-in it started with `client_state`: base64 of JSON whose
    `redirect_url` is where it goes on afterwards, an address OAUTH_REDIRECT_ALLOWED allows. OAuthError
    when the state says no such address or names one that is not allowed: the browser then stays here."""
    try:
        padded = client_state + "=" * (-len(client_state) % 4)
        decoded = orjson.loads(base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_")))
        redirect_url = decoded["redirect_url"]
    except (ValueError, TypeError, KeyError, orjson.JSONDecodeError):
        raise OAuthError("the sign-in's state does not say where to return", code="invalid_state") from None
    parts = urlsplit(redirect_url) if isinstance(redirect_url, str) and len(redirect_url) <= 2048 else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        raise OAuthError("the sign-in's state does not say where to return", code="invalid_state")
    if not _redirect_allowed(settings, redirect_url):
        raise OAuthError("the return address is not allowed", code="redirect_not_allowed")
    return f"{parts.scheme}://{parts.netloc}/oauth"


def callback_url(settings: AccountSettings, provider_id: str) -> str:
    return f"{settings.public_url.rstrip('/')}/oauth/{provider_id}/callback"


def _endpoints(settings: AccountSettings, provider_id: str) -> Endpoints:
    configured = settings.oauth_providers.get(provider_id)
    if configured is None:
        raise OAuthError(f"unknown provider {provider_id!r}", code="unknown_provider")
    return endpoints(provider_id, configured)


def _redirect_allowed(settings: AccountSettings, redirect_uri: str) -> bool:
    allowed = settings.oauth_redirect_allowed or [settings.public_url]
    return any(redirect_uri == prefix or redirect_uri.startswith(prefix.rstrip("/") + "/") for prefix in allowed)


def _client(provider: Endpoints, settings: AccountSettings) -> AsyncOAuth2Client:
    return AsyncOAuth2Client(client_id=provider.client_id, client_secret=provider.client_secret,
                             token_endpoint_auth_method=provider.token_auth, code_challenge_method="S256",
                             redirect_uri=callback_url(settings, provider.provider), scope=provider.scope,
                             timeout=PROVIDER_TIMEOUT)


async def _metadata(provider: Endpoints, client: httpx.AsyncClient) -> dict[str, Any] | None:
    if not provider.discovery_url:
        return None
    try:
        return await OPENID.metadata(client, provider.discovery_url)
    except (httpx.HTTPError, ValueError) as exc:
        raise OAuthError(f"{provider.name} does not answer", code="provider_unavailable") from exc


async def start(redis: Redis, settings: AccountSettings, provider_id: str, redirect_uri: str | None, *,
                link_to: int | None = None, client_state: str | None = None) -> str:
    """Record a new state; returns the provider's authorization URL (Telegram: our widget page's). With
    `client_state`, a web client's sign-in: `redirect_uri` is its route (`client_route`, checked)."""
    provider = _endpoints(settings, provider_id)
    target = redirect_uri or settings.public_url
    if client_state is None and not _redirect_allowed(settings, target):
        raise OAuthError("redirect_uri is not allowed", code="redirect_not_allowed")
    state, verifier, nonce = secrets.token_urlsafe(24), secrets.token_urlsafe(48), secrets.token_urlsafe(16)
    key = keys.oauth_state(state)
    async with redis.pipeline(transaction=True) as pipe:
        pipe.hset(key, mapping={"redirect_uri": target, "code_verifier": verifier, "nonce": nonce,
                                "provider": provider_id, "created_at": str(int(time.time())),
                                "link_to": "" if link_to is None else str(link_to),
                                **({} if client_state is None else {"client_state": client_state})})
        pipe.expire(key, STATE_TTL)
        await pipe.execute()
    if provider_id == TELEGRAM:
        return f"{settings.public_url.rstrip('/')}/oauth/{TELEGRAM}/widget?{urlencode({'state': state})}"
    async with _client(provider, settings) as client:
        metadata = await _metadata(provider, client)
        authorize = (metadata or {}).get("authorization_endpoint") or provider.authorize_url
        extra = {"nonce": nonce} if metadata else {}
        url, _ = client.create_authorization_url(authorize, state=state, code_verifier=verifier, **extra)
    return str(url)


async def _take_state(redis: Redis, state: str, provider_id: str) -> dict[str, str]:
    """The state's record, spent: single use, read and marked used at once. The record stays (to its
    expiry, ten minutes at most) as a mark, so that a replayed callback is told apart from an unknown one
    and is sent back to the web client that started it, refused."""
    key = keys.oauth_state(state)
    async with redis.pipeline(transaction=True) as pipe:
        pipe.hgetall(key)
        pipe.hset(key, "used", "1")  # a field added: the record keeps its expiry
        found, _ = await pipe.execute()
    saved = {k.decode(): v.decode() for k, v in (found or {}).items()}
    if "provider" not in saved:  # unknown or expired: the mark just made has no expiry, and goes
        await redis.delete(key)
        raise OAuthError("this sign-in has expired or was already used: start again", code="invalid_state")
    if saved.get("used"):
        raise OAuthError("this sign-in was already used: start again", code="state_used", started=_started(saved))
    if saved["provider"] != provider_id:
        raise OAuthError("this sign-in was started with another provider: start again", code="invalid_state",
                         started=_started(saved))
    return saved


def _started(saved: dict[str, str]) -> Started:
    link_to = saved.get("link_to")
    return Started(saved["redirect_uri"], int(link_to) if link_to else None, saved.get("client_state"))


async def cancel(redis: Redis, state: str | None, provider_id: str) -> Started | None:
    """The person cancelled at the provider (or it answered an error): the state is spent; what it
    recorded, when it is known."""
    if not state:
        return None
    try:
        return _started(await _take_state(redis, state, provider_id))
    except OAuthError as exc:
        return exc.started if isinstance(exc.started, Started) else None


async def _exchange(provider: Endpoints, client: AsyncOAuth2Client, metadata: dict[str, Any] | None, code: str,
                    verifier: str) -> dict[str, Any]:
    """The code (and the PKCE verifier) for the provider's tokens."""
    token_url = (metadata or {}).get("token_endpoint") or provider.token_url
    try:
        token: dict[str, Any] = dict(await client.fetch_token(token_url, code=code, code_verifier=verifier))
    except AuthlibError as exc:  # the provider's error answer (invalid_grant: a code used twice, ...)
        raise OAuthError(f"{provider.name} refused the sign-in ({exc.error}): start again",
                         code="provider_error") from None
    except ValueError:
        raise OAuthError(f"{provider.name} answered the token request with something unreadable") from None
    if not token.get("access_token"):
        raise OAuthError(f"{provider.name} returned no access token")
    return token


async def _id_claims(provider: Endpoints, client: AsyncOAuth2Client, metadata: dict[str, Any],
                     token: dict[str, Any], nonce: str) -> dict[str, Any]:
    """An OpenID provider's ID token, validated: its claims."""
    if not token.get("id_token"):
        raise OAuthError(f"{provider.name} returned no ID token")
    try:
        return await OPENID.validate(client, metadata, token["id_token"], client_id=provider.client_id,
                                     nonce=nonce, access_token=token["access_token"])
    except IdTokenInvalid as exc:
        raise OAuthError(f"{provider.name}'s ID token is not valid: {exc}") from None


async def finish(redis: Redis, settings: AccountSettings, provider_id: str, code: str,
                 state: str) -> tuple[Identity, Started]:
    """Exchange the code, validate the ID token of an OpenID provider, and read the user; returns the
    identity and what the state recorded."""
    provider = _endpoints(settings, provider_id)
    saved = await _take_state(redis, state, provider_id)
    if provider_id == TELEGRAM:
        raise OAuthError("Telegram signs in with its widget")
    try:
        async with _client(provider, settings) as client:
            metadata = await _metadata(provider, client)
            token = await _exchange(provider, client, metadata, code, saved["code_verifier"])
            claims = None if metadata is None else await _id_claims(provider, client, metadata, token, saved["nonce"])
            client.token = token
            identity = await provider.read(provider, Answers(client, token, claims))
    except httpx.HTTPError as exc:
        raise OAuthError(f"{provider.name} does not answer", code="provider_unavailable") from exc
    return identity, _started(saved)


async def finish_telegram(redis: Redis, settings: AccountSettings,
                          fields: Mapping[str, str]) -> tuple[Identity, Started]:
    """The Login Widget's answer (its fields and our state): checked, then the state spent."""
    provider = _endpoints(settings, TELEGRAM)
    identity = await telegram.verify(redis, provider, fields, max_age=settings.telegram_login_max_age)
    saved = await _take_state(redis, fields.get("state", ""), TELEGRAM)
    return identity, _started(saved)


def telegram_widget(settings: AccountSettings, state: str) -> str:
    """The page holding Telegram's Login Widget; the widget sends the browser to our callback with the
    user's fields added to it (our state kept)."""
    provider = _endpoints(settings, TELEGRAM)
    back = html.escape(f"{callback_url(settings, TELEGRAM)}?{urlencode({'state': state})}")
    return ("<!doctype html><meta charset=utf-8><title>Sign in with Telegram</title>"
            "<script async src=\"https://telegram.org/js/telegram-widget.js?22\" "
            f"data-telegram-login=\"{html.escape(provider.client_id)}\" data-size=\"large\" "
            f"data-auth-url=\"{back}\" data-request-access=\"write\"></script>")


async def store_provider_tokens(redis: Redis, user_id: int, identity: Identity) -> None:
    if identity.access_token is None:
        return
    async with redis.pipeline(transaction=True) as pipe:
        pipe.set(keys.oauth_access(user_id, identity.provider), identity.access_token, ex=ACCESS_TTL)
        if identity.refresh_token:
            pipe.set(keys.oauth_refresh(user_id, identity.provider), identity.refresh_token, ex=REFRESH_TTL)
        await pipe.execute()
