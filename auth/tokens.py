"""Session JWTs (HS256) and random one-time tokens. Only hashes of tokens are ever stored."""

from __future__ import annotations

import functools
import hashlib
import secrets
import time
from dataclasses import dataclass

import jwt


class InvalidToken(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Claims:
    user_id: int
    username: str
    issued_at: int
    expires_at: int


def token_id(token: str) -> str:
    """What Redis keys carry instead of a token: a reader of Redis cannot lift a usable token."""
    return hashlib.sha256(token.encode()).hexdigest()[:40]


def issue(user_id: int, username: str, *, secret: str, ttl: int) -> str:
    now = int(time.time())
    payload = {"sub": str(user_id), "username": username, "iat": now, "exp": now + ttl,
               "jti": secrets.token_urlsafe(16), "typ": "session"}
    return jwt.encode(payload, secret, algorithm="HS256")


def decode(token: str, *, secret: str) -> Claims:
    """The claims of a session token signed with `secret` and not expired, else InvalidToken.

    A token verified once is remembered (at most VERIFIED_KEPT of them, the least recently used going
    first), so that a reader's next requests skip verifying its signature again (some 80 us a request);
    only its expiry, the one check whose answer changes with time, is made each time. What fails never
    enters: a forged or malformed token costs its verification each time, and fills nothing."""
    claims = _verified(token, secret)
    if claims.expires_at <= time.time():  # as PyJWT decides it (no leeway)
        raise InvalidToken("Signature has expired")
    return claims


VERIFIED_KEPT = 4096


@functools.lru_cache(maxsize=VERIFIED_KEPT)
def _verified(token: str, secret: str) -> Claims:
    try:
        payload = jwt.decode(token, secret, algorithms=["HS256"], options={"require": ["sub", "exp", "iat"]})
    except jwt.PyJWTError as exc:
        raise InvalidToken(str(exc)) from exc
    if payload.get("typ") != "session":
        raise InvalidToken("not a session token")
    try:
        user_id = int(payload["sub"])
    except (TypeError, ValueError) as exc:
        raise InvalidToken("bad subject") from exc
    return Claims(user_id=user_id, username=str(payload.get("username", "")),
                  issued_at=int(payload["iat"]), expires_at=int(payload["exp"]))


def as_text(value: bytes | str) -> str:
    """Redis replies are bytes; ids stored in sets and strings are ASCII."""
    return value.decode() if isinstance(value, bytes) else value


def one_time(user_id: int) -> str:
    """A verification token: `{user_id}.{random}`, so the consumer can find the user's key."""
    return f"{user_id}.{secrets.token_urlsafe(32)}"


def split_one_time(token: str) -> tuple[int, str]:
    user, _, rest = token.partition(".")
    if not user.isdigit() or len(rest) < 20:
        raise InvalidToken("malformed token")
    return int(user), token_id(token)
