"""Everything the auth operations need, built once by the lifespan from the settings."""

from __future__ import annotations

from dataclasses import dataclass

from redis.asyncio import Redis

from auth.mailer import LogMailer, Mailer, SmtpMailer
from auth.passwords import Passwords
from auth.sessions import SessionStore
from auth.throttle import LoginThrottle
from auth.verification import VerificationStore
from config.settings import Settings


@dataclass
class AuthServices:
    settings: Settings
    sessions: SessionStore
    verifications: VerificationStore
    throttle: LoginThrottle
    passwords: Passwords
    mailer: Mailer


def build_auth(settings: Settings, redis: Redis, *, mailer: Mailer | None = None) -> AuthServices:
    if mailer is None:
        mailer = (SmtpMailer(settings.smtp_host, settings.smtp_port, user=settings.smtp_user,
                             password=settings.smtp_password, starttls=settings.smtp_starttls,
                             sender=settings.mail_from)
                  if settings.smtp_host else LogMailer())
    assert settings.jwt_secret is not None  # the settings validator fills or refuses it
    return AuthServices(
        settings=settings,
        sessions=SessionStore(redis, secret=settings.jwt_secret, ttl=settings.session_ttl),
        verifications=VerificationStore(redis, ttl=settings.verification_ttl),
        throttle=LoginThrottle(redis, max_failures=settings.login_max_failures,
                               lock_seconds=settings.login_lock_seconds),
        passwords=Passwords(time_cost=settings.password_time_cost, memory_cost=settings.password_memory_cost),
        mailer=mailer,
    )
