"""Everything the auth operations need, built once by the lifespan from the settings."""

from __future__ import annotations

from dataclasses import dataclass

from redis.asyncio import Redis

from auth.mail_templates import MailTemplateError, MailTemplates, checked
from auth.mailer import LogMailer, Mailer, SmtpMailer
from auth.oauth_profiles import all_endpoints
from auth.passwords import Passwords
from auth.sessions import SessionStore
from auth.throttle import LoginThrottle, Rate, RateLimits
from auth.verification import VerificationStore
from config.settings import AccountSettings, SettingsError

# Rate-limited actions: by client address, except MAIL_RECEIVED (by the recipient's address).
LOGIN, REGISTER, MAIL_ASKED, MAIL_RECEIVED = "login", "register", "mail", "mailto"
COLD_SEARCH = "search"  # a search the cache could not answer, by client address


@dataclass
class AuthServices:
    settings: AccountSettings
    sessions: SessionStore
    verifications: VerificationStore
    throttle: LoginThrottle
    limits: RateLimits
    passwords: Passwords
    mailer: Mailer
    templates: MailTemplates


def build_auth(settings: AccountSettings, redis: Redis, *, mailer: Mailer | None = None) -> AuthServices:
    if mailer is None:
        mailer = (SmtpMailer(settings.smtp_host, settings.smtp_port, user=settings.smtp_user,
                             password=settings.smtp_password, starttls=settings.smtp_starttls,
                             sender=settings.mail_from)
                  if settings.smtp_host else LogMailer(log_bodies=settings.mail_log_links is True))
    assert settings.jwt_secret is not None  # the settings validator fills or refuses it
    all_endpoints(settings.oauth_providers)  # a provider configured wrong stops the start, with its reason
    try:  # and so does a mail template
        templates = checked(settings.mail_templates_dir)
    except MailTemplateError as exc:
        raise SettingsError(f"MAIL_TEMPLATES_DIR: {exc}") from None
    return AuthServices(
        settings=settings,
        sessions=SessionStore(redis, secret=settings.jwt_secret, ttl=settings.session_ttl,
                              grace=settings.session_outage_grace, per_user=settings.sessions_per_user),
        verifications=VerificationStore(redis, ttl=settings.verification_ttl),
        throttle=LoginThrottle(redis, max_failures=settings.login_max_failures,
                               lock_seconds=settings.login_lock_seconds),
        limits=RateLimits(redis, {
            LOGIN: Rate(settings.logins_per_address, 60),
            REGISTER: Rate(settings.registrations_per_address, 3600),
            MAIL_ASKED: Rate(settings.mails_per_address, 3600),
            MAIL_RECEIVED: Rate(settings.mails_per_recipient, 3600),
            COLD_SEARCH: Rate(settings.cold_searches_per_address, 60),
        }),
        passwords=Passwords(time_cost=settings.password_time_cost, memory_cost=settings.password_memory_cost,
                            threads=settings.password_hash_threads, max_waiting=settings.password_hash_queue),
        mailer=mailer,
        templates=templates,
    )
