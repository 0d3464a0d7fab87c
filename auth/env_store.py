"""The settings store of seed 000 section 2: `env_vars:{NAME}` strings without TTL, grouped in the
seed's categories, behind admin-only operations. Secret values are never shown back."""

from __future__ import annotations

import re
from dataclasses import dataclass

from redis.asyncio import Redis

from auth.tokens import as_text
from cache import keys

NAME = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
MAX_VALUE = 8192
SECRET_MARKERS = ("SECRET", "PASSWORD", "TOKEN", "KEY", "DSN")
MASK = "••••••••"

# Seed 000 section 2, "Категории переменных": (section, description, name prefixes)
SECTIONS = [
    ("database", "Database connection", ("DB_", "DATABASE_", "POSTGRES_")),
    ("auth", "Authentication and OAuth", ("JWT_", "OAUTH_", "AUTH_")),
    ("redis", "Redis connection", ("REDIS_",)),
    ("search", "Search", ("SEARCH_", "ELASTICSEARCH_")),
    ("integrations", "External services", ("GOOGLE_", "SENTRY_", "SMTP_", "MAIL_")),
    ("security", "Security", ("CORS_", "ALLOWED_", "SECURITY_")),
    ("logging", "Logging", ("LOG_", "DEBUG")),
    ("features", "Feature flags", ("FEATURE_",)),
]
OTHER = ("other", "Everything else")


@dataclass(frozen=True, slots=True)
class EnvVariable:
    key: str
    value: str
    is_secret: bool
    section: str


def section_of(name: str) -> str:
    for section, _, prefixes in SECTIONS:
        if name.startswith(prefixes):
            return section
    return OTHER[0]


def is_secret(name: str) -> bool:
    return any(marker in name for marker in SECRET_MARKERS)


class EnvStore:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    @staticmethod
    def check(name: str, value: str) -> str | None:
        if not NAME.match(name):
            return "a variable name is upper case letters, digits and underscores"
        if len(value) > MAX_VALUE:
            return "the value is too long"
        return None

    async def set_many(self, items: dict[str, str]) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            for name, value in items.items():
                pipe.set(keys.env_var(name), value)
            pipe.sadd(keys.env_index(), *items)
            await pipe.execute()

    async def all(self) -> list[EnvVariable]:
        names = sorted(as_text(n) for n in await self.redis.smembers(keys.env_index()))
        if not names:
            return []
        values = await self.redis.mget([keys.env_var(n) for n in names])
        return [EnvVariable(key=n, value=MASK if is_secret(n) else as_text(v), is_secret=is_secret(n),
                            section=section_of(n)) for n, v in zip(names, values, strict=True) if v is not None]
