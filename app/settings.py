"""The one settings object. Nothing else in the project reads the environment."""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class SettingsError(RuntimeError):
    """A setting is wrong; the message names the variable."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    # No DATABASE_URL: a SQLite file next to where the server starts (the embedded default).
    database_url: str = Field(default="sqlite+aiosqlite:///./discours.db")
    # No REDIS_URL: an in-process Redis (fakeredis) with the same command set and Lua.
    redis_url: str | None = None
    db_pool_size: int = 10
    redis_max_connections: int = 64

    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    debug: bool = False

    # Background revalidation loop period, seconds (seed 002: 5 minutes).
    cache_revalidation_interval: int = 300
    # Time-limited collections (seed 000 section 3.3: 5 minutes; search: 10 minutes).
    cache_ttl_shouts: int = 300
    cache_ttl_search: int = 600
    # Fraction of a TTL used as random spread so keys written together do not expire together.
    cache_ttl_jitter: float = 0.1
    # After a Redis error, go straight to the database for this long before trying Redis again.
    redis_breaker_seconds: float = 5.0
    max_page_size: int = 100

    @field_validator("database_url")
    @classmethod
    def _normalise_database_url(cls, value: str) -> str:
        if value.startswith(("postgres://", "postgresql://")):
            return "postgresql+asyncpg://" + value.split("://", 1)[1]
        if value.startswith("sqlite://") and "+aiosqlite" not in value:
            return value.replace("sqlite://", "sqlite+aiosqlite://", 1)
        if not value.startswith(("postgresql+asyncpg://", "sqlite+aiosqlite://")):
            raise ValueError(
                "DATABASE_URL must be postgresql://... (asyncpg) or sqlite:///path (aiosqlite), "
                f"got {value!r}"
            )
        return value

    @field_validator("redis_url")
    @classmethod
    def _check_redis_url(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        assert value is not None
        if not value.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError(f"REDIS_URL must be redis://, rediss:// or unix://, got {value!r}")
        return value

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")


def load_settings(**overrides: object) -> Settings:
    """Build settings from the environment; a wrong value raises SettingsError naming the variable."""
    from pydantic import ValidationError

    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = "; ".join(
            f"{'_'.join(str(p) for p in err['loc']).upper()}: {err['msg']}" for err in exc.errors()
        )
        raise SettingsError(f"invalid settings: {problems}") from exc


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return load_settings()
