"""Telegram's Login Widget: not OAuth. The widget sends the browser back with the user's fields and a
`hash`, the HMAC-SHA-256 of those fields (sorted `key=value` lines) keyed by the SHA-256 of the bot's token
(https://core.telegram.org/widgets/login#checking-authorization). We check that HMAC, the answer's age
(`auth_date`), and that it was not used before: each hash is remembered for as long as it could be
accepted (`telegram_login:{hash}`), so a copied link signs in no one a second time.

Telegram gives no address: the identity signs in by its subject alone (auth/linking.py).
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping

from redis.asyncio import Redis

from auth.oauth_profiles import TELEGRAM, Endpoints, Identity, OAuthError
from cache import keys

# Ours, not Telegram's: the state the widget's return URL carries (auth/oauth.py), left out of the check
OURS = frozenset({"state"})


def data_check_string(fields: Mapping[str, str]) -> str:
    return "\n".join(f"{name}={fields[name]}" for name in sorted(fields) if name != "hash" and name not in OURS)


def signature(fields: Mapping[str, str], bot_token: str) -> str:
    secret = hashlib.sha256(bot_token.encode()).digest()
    return hmac.new(secret, data_check_string(fields).encode(), hashlib.sha256).hexdigest()


async def verify(redis: Redis, endpoints: Endpoints, fields: Mapping[str, str], *, max_age: int,
                 now: float | None = None) -> Identity:
    """The widget's user, once its hash, age and novelty hold."""
    given = fields.get("hash", "")
    if not given or not hmac.compare_digest(given, signature(fields, endpoints.client_secret)):
        raise OAuthError("Telegram's answer does not carry a valid signature")
    try:
        age = (time.time() if now is None else now) - int(fields.get("auth_date", ""))
    except ValueError:
        raise OAuthError("Telegram's answer has no valid auth_date") from None
    if not -60 <= age <= max_age:  # a minute of clock difference either way
        raise OAuthError("Telegram's answer is too old: sign in again")
    if not await redis.set(keys.telegram_login(given), "1", nx=True, ex=max_age + 60):
        raise OAuthError("this Telegram sign-in was already used: sign in again")
    name = " ".join(part for part in (fields.get("first_name"), fields.get("last_name")) if part)
    return endpoints.identity(fields.get("id"), None, False, name or fields.get("username"),
                              fields.get("photo_url"), {})


__all__ = ["TELEGRAM", "data_check_string", "signature", "verify"]
