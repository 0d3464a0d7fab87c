"""OAuth2 authorization-code flow with PKCE (S256) against configured providers (seed 000 section 1.2).

`oauth_state:{state}` (a HASH, 10 minutes, single use) carries the PKCE verifier and where to send
the browser back; the provider's tokens land in `oauth_access:{user_id}:{provider}` (1 hour) and
`oauth_refresh:{user_id}:{provider}` (30 days).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx
from redis.asyncio import Redis

from cache import keys
from config.settings import OAuthProvider, Settings

STATE_TTL = 600
PROVIDER_TIMEOUT = 10.0  # seconds for each call to a provider
ACCESS_TTL = 3600
REFRESH_TTL = 30 * 24 * 3600


class OAuthError(Exception):
    """The flow cannot go on; the message is safe to show."""


@dataclass(frozen=True, slots=True)
class Identity:
    provider: str
    subject: str
    email: str
    email_verified: bool  # the provider vouches for the address: it may then sign in to an account with it
    name: str | None
    picture: str | None
    access_token: str
    refresh_token: str | None


def _challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def callback_url(settings: Settings, provider_id: str) -> str:
    return f"{settings.public_url.rstrip('/')}/oauth/{provider_id}/callback"


def _provider(settings: Settings, provider_id: str) -> OAuthProvider:
    provider = settings.oauth_providers.get(provider_id)
    if provider is None:
        raise OAuthError(f"unknown provider {provider_id!r}")
    return provider


def _redirect_allowed(settings: Settings, redirect_uri: str) -> bool:
    allowed = settings.oauth_redirect_allowed or [settings.public_url]
    return any(redirect_uri == prefix or redirect_uri.startswith(prefix.rstrip("/") + "/") for prefix in allowed)


async def start(redis: Redis, settings: Settings, provider_id: str, redirect_uri: str | None) -> str:
    """Record a new state and return the provider's authorization URL."""
    provider = _provider(settings, provider_id)
    target = redirect_uri or settings.public_url
    if not _redirect_allowed(settings, target):
        raise OAuthError("redirect_uri is not allowed")
    state = secrets.token_urlsafe(24)
    verifier = secrets.token_urlsafe(48)
    key = keys.oauth_state(state)
    async with redis.pipeline(transaction=True) as pipe:
        pipe.hset(key, mapping={"redirect_uri": target, "code_verifier": verifier, "provider": provider_id,
                                "created_at": str(int(time.time())), "csrf_token": secrets.token_urlsafe(16)})
        pipe.expire(key, STATE_TTL)
        await pipe.execute()
    query = urlencode({"response_type": "code", "client_id": provider.client_id,
                       "redirect_uri": callback_url(settings, provider_id), "scope": provider.scope,
                       "state": state, "code_challenge": _challenge(verifier), "code_challenge_method": "S256"})
    return f"{provider.authorize_url}?{query}"


async def _take_state(redis: Redis, state: str) -> dict[str, str]:
    key = keys.oauth_state(state)
    async with redis.pipeline(transaction=True) as pipe:  # single use: read and delete at once
        pipe.hgetall(key)
        pipe.delete(key)
        found, _ = await pipe.execute()
    if not found:
        raise OAuthError("unknown or expired state")
    return {k.decode(): v.decode() for k, v in found.items()}


async def finish(redis: Redis, settings: Settings, provider_id: str, code: str, state: str,
                 *, http: httpx.AsyncClient | None = None) -> tuple[Identity, str]:
    """Exchange the code (with the PKCE verifier) and read the user; returns the identity and where
    the browser goes next."""
    provider = _provider(settings, provider_id)
    saved = await _take_state(redis, state)
    if saved["provider"] != provider_id:
        raise OAuthError("state belongs to another provider")
    owns_client = http is None
    client = http or httpx.AsyncClient(timeout=PROVIDER_TIMEOUT)
    try:
        token_response = await client.post(provider.token_url, data={
            "grant_type": "authorization_code", "code": code, "redirect_uri": callback_url(settings, provider_id),
            "client_id": provider.client_id, "client_secret": provider.client_secret,
            "code_verifier": saved["code_verifier"],
        }, headers={"accept": "application/json"})
        if token_response.status_code != 200:
            raise OAuthError("the provider refused the code")
        token_data: dict[str, Any] = token_response.json()
        access = token_data.get("access_token")
        if not access:
            raise OAuthError("the provider returned no access token")
        user_response = await client.get(provider.userinfo_url, headers={"authorization": f"Bearer {access}"})
        if user_response.status_code != 200:
            raise OAuthError("the provider refused the user information")
        user: dict[str, Any] = user_response.json()
    except httpx.HTTPError as exc:
        raise OAuthError("the provider does not answer") from exc
    finally:
        if owns_client:
            await client.aclose()
    email = str(user.get("email") or "").strip().lower()
    subject = str(user.get("sub") or user.get("id") or "")
    if not subject:
        raise OAuthError("the provider gave no user id")
    if not email:
        raise OAuthError("the provider gave no email address; allow it to share your email and try again")
    verified = provider.emails_verified or user.get("email_verified") in (True, "true")
    identity = Identity(provider=provider_id, subject=subject, email=email, email_verified=verified,
                        name=user.get("name"),
                        picture=user.get("picture") or user.get("avatar_url"), access_token=access,
                        refresh_token=token_data.get("refresh_token"))
    return identity, saved["redirect_uri"]


async def store_provider_tokens(redis: Redis, user_id: int, identity: Identity) -> None:
    async with redis.pipeline(transaction=True) as pipe:
        pipe.set(keys.oauth_access(user_id, identity.provider), identity.access_token, ex=ACCESS_TTL)
        if identity.refresh_token:
            pipe.set(keys.oauth_refresh(user_id, identity.provider), identity.refresh_token, ex=REFRESH_TTL)
        await pipe.execute()
