"""OpenID Connect: the provider's configuration found by discovery, and its ID tokens validated.

An ID token is a JWT the provider signed: it says who signed in (`sub`), for which client (`aud`), when it
stops being valid (`exp`), and repeats the nonce the sign-in started with (a token from another sign-in
cannot be slipped in). Validation is Authlib's (`CodeIDToken`: the essential claims, nonce, azp, at_hash)
over joserfc's signature check against the provider's published keys (JWKS), with the issuer and the
audience required to be the provider's and ours.

Discovery documents and key sets change rarely: each is kept per worker for `CONFIG_TTL` seconds; a token
signed with a key the kept set does not have (the provider rotated its keys) fetches the set once again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import httpx
from authlib.oidc.core import CodeIDToken
from joserfc import jwt
from joserfc.errors import InvalidKeyIdError, JoseError
from joserfc.jwk import KeySet
from joserfc.jws import JWSRegistry

CONFIG_TTL = 3600.0
LEEWAY = 60  # seconds of clock difference allowed between the provider and us


class IdTokenInvalid(Exception):
    """The ID token does not hold; the message names what failed, never the token."""


@dataclass
class _Kept:
    value: Any
    until: float


class OpenIdConfigs:
    """Discovery documents and key sets, kept per worker (a few providers: bounded by the settings)."""

    def __init__(self, ttl: float = CONFIG_TTL) -> None:
        self.ttl = ttl
        self._kept: dict[str, _Kept] = {}

    async def _get_json(self, http: httpx.AsyncClient, url: str, *, fresh: bool = False) -> Any:
        kept = self._kept.get(url)
        if kept is not None and not fresh and kept.until > time.monotonic():
            return kept.value
        # auth=None: public documents, and an OAuth client (Authlib's) would otherwise want its token first
        response = await http.get(url, headers={"accept": "application/json"}, auth=None)
        response.raise_for_status()
        value = response.json()
        self._kept[url] = _Kept(value, time.monotonic() + self.ttl)
        return value

    async def metadata(self, http: httpx.AsyncClient, discovery_url: str) -> dict[str, Any]:
        """The provider's `/.well-known/openid-configuration`."""
        found: dict[str, Any] = await self._get_json(http, discovery_url)
        return found

    async def validate(self, http: httpx.AsyncClient, metadata: dict[str, Any], id_token: str, *,
                       client_id: str, nonce: str, access_token: str | None) -> dict[str, Any]:
        """The ID token's claims once its signature, issuer, audience, expiry and nonce hold."""
        algorithms = metadata.get("id_token_signing_alg_values_supported") or ["RS256"]
        registry = JWSRegistry(algorithms=[a for a in algorithms if a != "none"])
        try:
            keys = KeySet.import_key_set(await self._get_json(http, metadata["jwks_uri"]))
            try:
                token = jwt.decode(id_token, keys, registry=registry)
            except InvalidKeyIdError:  # signed with a key we do not have yet: the provider rotated its keys
                keys = KeySet.import_key_set(await self._get_json(http, metadata["jwks_uri"], fresh=True))
                token = jwt.decode(id_token, keys, registry=registry)
        except JoseError as exc:
            raise IdTokenInvalid(f"its signature does not hold ({exc.error})") from None
        except ValueError:
            raise IdTokenInvalid("it is not a signed JWT") from None
        options: dict[str, Any] = {"iss": {"essential": True, "value": metadata["issuer"]},
                                   "aud": {"essential": True, "value": client_id}}
        params = {"nonce": nonce, "client_id": client_id, "access_token": access_token}
        claims = CodeIDToken(token.claims, token.header, options, params)
        try:
            claims.validate(leeway=LEEWAY)
        except JoseError as exc:
            raise IdTokenInvalid(f"its claims do not hold ({exc.error}: {exc.description})") from None
        return dict(claims)
