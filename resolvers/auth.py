"""Accounts and sessions: registration, sign-in, sessions, email confirmation, password and email
changes. Messages never tell whether an address is registered (only `isEmailUsed` does)."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from typing import Any

from redis.exceptions import RedisError
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from auth import tokens, verification
from auth.accounts import get_account, normal_address, viewer_of
from auth.mailer import Message
from auth.passwords import HashingBusy
from auth.permissions import NEW_ACCOUNT_ROLES, PERMISSIONS, ROLES, Viewer
from auth.services import LOGIN, MAIL_ASKED, MAIL_RECEIVED, REGISTER
from auth.sessions import HANDED_OVER, Session
from cache.entities import get_cached_author, id_by_slug
from orm import Author, CommunityAuthor
from orm.community import DEFAULT_COMMUNITY
from resolvers.access import require_session
from resolvers.deps import Deps
from resolvers.errors import BadInput, Busy, Conflict, InvalidTokenError, RateLimited, Unauthenticated
from resolvers.roles import new_member_roles
from resolvers.slugs import slugify
from resolvers.writes import transaction

log = logging.getLogger(__name__)
BAD_CREDENTIALS = "Invalid email or password"
LOCKED = "Too many failed attempts; try again in a few minutes"


def normalize_email(email: str | None) -> str:
    value = normal_address(email)
    if value is None:
        raise BadInput("a valid email address is needed", field="email")
    return value


@contextlib.contextmanager
def _hashing() -> Iterator[None]:
    """A full hashing queue is the service being busy (SERVICE_UNAVAILABLE), not a failure of ours."""
    try:
        yield
    except HashingBusy as exc:
        raise Busy(str(exc)) from exc


async def _hash(deps: Deps, password: str) -> str:
    with _hashing():
        return await deps.accounts.passwords.hash(password)


async def _verify(deps: Deps, stored: str | None, password: str) -> bool:
    with _hashing():
        return await deps.accounts.passwords.verify(stored, password)


async def _limit(deps: Deps, action: str, client: str | None) -> None:
    """Refuses a client address past its rate for `action` (requests with no address are not counted)."""
    if client is not None and not await deps.accounts.limits.allow(action, client):
        raise RateLimited("too many attempts from your address; try again later")


async def _mail(deps: Deps, to: str, message: str, lang: str, **given: Any) -> None:
    """Sends `message` (auth/mail_templates.py) in `lang`, unless the recipient has had their hour's share:
    mail asked for by others must not flood an inbox. Skipped silently, so the answer does not tell
    whether anything was sent."""
    if await deps.accounts.limits.allow(MAIL_RECEIVED, to):
        written = deps.accounts.templates.write(message, lang, **given)
        await deps.accounts.mailer.send(Message(to, written.subject, written.text, written.html, lang))


async def free_slug(deps: Deps, base: str) -> str:
    async with deps.db() as session:
        taken = set((await session.scalars(
            select(Author.slug).where((Author.slug == base) | Author.slug.like(f"{base}-%")))).all())
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


async def create_account(deps: Deps, *, name: str, email: str | None, email_verified: bool = False,
                         password: str | None = None, pic: str | None = None,
                         oauth: dict[str, str] | None = None) -> Author:
    """A new account (an author, a reader and author of the main community) with a free slug from its name;
    IntegrityError when the address is taken."""
    display = name.strip()[:255]
    now = int(time.time())
    slug = await free_slug(deps, slugify(display))
    author = Author(email=email, email_verified=email_verified, name=display, slug=slug, pic=pic, created_at=now,
                    last_seen=now, updated_at=now, password=password, oauth=oauth)
    async with transaction(deps) as session:
        session.add(author)
        await session.flush()
        session.add(CommunityAuthor(community=DEFAULT_COMMUNITY, author=author.id, joined_at=now,
                                    roles=await new_member_roles(session, DEFAULT_COMMUNITY, NEW_ACCOUNT_ROLES)))
        try:
            await session.flush()
        except IntegrityError as missing:
            # not the caller's "address taken": the database lacks what migration 0012 creates
            raise RuntimeError(f"the default community (id {DEFAULT_COMMUNITY}) is missing: every new account "
                               "joins it; `discours migrate` creates it") from missing
    return author


async def author_by_email(deps: Deps, email: str) -> Author | None:
    async with deps.db() as session:
        return await session.scalar(select(Author).where(func.lower(Author.email) == email,
                                                         Author.deleted_at.is_(None)))


async def account_viewer(deps: Deps, author_id: int) -> Viewer | None:
    account = await get_account(author_id, cache=deps.cache, db=deps.db)
    return None if account is None else viewer_of(account, deps.accounts.settings.admin_emails)


async def _signed_in(deps: Deps, author: Author, device_info: dict[str, Any] | None = None,
                     method: str = "password") -> dict[str, Any]:
    session = await deps.accounts.sessions.create(author.id, author.slug, auth_data={"method": method},
                                                  device_info=device_info)
    return {"success": True, "error": None, "token": session.token,
            "author": await get_cached_author(author.id, cache=deps.cache, db=deps.db)}


def _link(deps: Deps, path: str, token: str) -> str:
    """A link in our mail: to the web client (LINKS_URL) or, by default, this server's own pages
    (app/routes/mail_links.py)."""
    settings = deps.accounts.settings
    return f"{(settings.links_url or settings.public_url).rstrip('/')}/{path}?token={token}"


# sendLink's `template`: the message each variant sends (the link is the same: it confirms and signs in).
LINK_VARIANTS = {None: "signin", "verification": "confirm"}


async def _send_confirmation(deps: Deps, author: Author, email: str, lang: str, message: str = "confirm") -> None:
    token = await deps.accounts.verifications.issue(author.id, verification.EMAIL_VERIFICATION, {"email": email})
    await _mail(deps, email, message, lang, link=_link(deps, "confirm", token), name=author.name or author.slug)


# --- registration and sign-in -----------------------------------------------------------------------

async def register_user(deps: Deps, email: str, password: str | None, name: str | None,
                        client: str | None = None, lang: str = "ru") -> dict[str, Any]:
    address = normalize_email(email)
    if password is not None and (problem := deps.accounts.passwords.problem(password)):
        return {"success": False, "error": problem, "token": None, "author": None}
    await _limit(deps, REGISTER, client)
    hashed = await _hash(deps, password) if password else None
    try:
        author = await create_account(deps, name=name or address.split("@")[0], email=address, password=hashed)
    except IntegrityError:
        # The address is taken. Say what a new registration would say, and tell the owner by mail.
        settings = deps.accounts.settings
        await _mail(deps, address, "taken", lang, site=settings.links_url or settings.public_url)
        return {"success": True, "error": None, "token": None, "author": None}
    try:
        await _send_confirmation(deps, author, address, lang)
    except RedisError as exc:  # the account stands; `sendLink` sends the confirmation again later
        log.warning("confirmation for author %s not sent: %s", author.id, exc)
    return {"success": True, "error": None, "token": None,
            "author": await get_cached_author(author.id, cache=deps.cache, db=deps.db)}


async def login(deps: Deps, email: str, password: str, device_info: dict[str, Any] | None = None) -> dict[str, Any]:
    failure = {"success": False, "error": BAD_CREDENTIALS, "token": None, "author": None}
    await _limit(deps, LOGIN, (device_info or {}).get("ip"))
    try:
        address = normalize_email(email)
    except BadInput:
        return failure
    if await deps.accounts.throttle.locked(address):
        return {**failure, "error": LOCKED}
    author = await author_by_email(deps, address)
    if not await _verify(deps, author.password if author else None, password or ""):
        await deps.accounts.throttle.failed(address)
        return failure
    assert author is not None and author.password is not None
    await deps.accounts.throttle.succeeded(address)
    if deps.accounts.passwords.outdated(author.password):
        await _store_hash(deps, author.id, await _hash(deps, password))
    return await _signed_in(deps, author, device_info)


async def logout(deps: Deps, session: Session | None) -> bool:
    session = require_session(session)
    await deps.accounts.sessions.revoke(session.user_id, session.token_id)
    return True


async def refresh_token(deps: Deps, session: Session | None) -> dict[str, Any]:
    """Rotate: a new session replaces the current one, which stops working at once."""
    session = require_session(session)
    account = await get_account(session.user_id, cache=deps.cache, db=deps.db)
    if account is None:
        raise Unauthenticated("the account no longer exists")
    new = await deps.accounts.sessions.create(session.user_id, account["slug"], auth_data={"method": "refresh"})
    await deps.accounts.sessions.revoke(session.user_id, session.token_id)
    return {"success": True, "error": None, "token": new.token,
            "author": await get_cached_author(session.user_id, cache=deps.cache, db=deps.db)}


async def current(deps: Deps, session: Session | None, *, exchange: bool = False) -> dict[str, Any]:
    """`getSession` and `me`: the token and its author, from Redis and the cache (no SQL when warm). With
    `exchange` (getSession), a token handed over in an address (a web client's sign-in) is exchanged for a
    session of the usual length, whose token is the answer's; the handed-over one stops working."""
    session = require_session(session)
    if exchange and session.token_type == HANDED_OVER:
        return await refresh_token(deps, session)
    author = await get_cached_author(session.user_id, cache=deps.cache, db=deps.db)
    if author is None:
        raise Unauthenticated("the account no longer exists")
    return {"success": True, "error": None, "token": session.token, "author": author}


# --- email confirmation, links --------------------------------------------------------------------

async def send_link(deps: Deps, email: str, client: str | None = None, lang: str = "ru",
                    template: str | None = None) -> dict[str, Any]:
    """Send a link that confirms the address and signs in, worded as `template` says (LINK_VARIANTS). The
    contract returns the Author, so an unknown address is an error; the message matches any other failure
    to send."""
    if template not in LINK_VARIANTS:
        raise BadInput(f"unknown template {template!r}: leave it out, or send one of "
                       f"{', '.join(repr(v) for v in LINK_VARIANTS if v)}", field="template")
    address = normalize_email(email)
    await _limit(deps, MAIL_ASKED, client)
    author = await author_by_email(deps, address)
    if author is None:
        raise BadInput("could not send a link to this address", field="email")
    await _send_confirmation(deps, author, address, lang, LINK_VARIANTS[template])
    found = await get_cached_author(author.id, cache=deps.cache, db=deps.db)
    assert found is not None
    return found


async def confirm_email(deps: Deps, token: str) -> dict[str, Any]:
    user_id, data = await _consume(deps, token, verification.EMAIL_VERIFICATION)
    async with transaction(deps) as session:
        author = await session.get(Author, user_id)
        if author is None or (author.email or "").lower() != data.get("email"):
            raise InvalidTokenError("this link is no longer valid")
        author.email_verified = True
    return await _signed_in(deps, author, method="email")


async def _consume(deps: Deps, token: str, kind: str) -> tuple[int, dict[str, Any]]:
    try:
        return await deps.accounts.verifications.consume(token, kind)
    except tokens.InvalidToken as exc:
        raise InvalidTokenError("the token is invalid, expired or already used") from exc


# --- passwords ----------------------------------------------------------------------------------------

async def _set_password(deps: Deps, author_id: int, password: str) -> None:
    if problem := deps.accounts.passwords.problem(password):
        raise BadInput(problem, field="password")
    await _store_hash(deps, author_id, await _hash(deps, password))  # hashed with no connection held


async def _store_hash(deps: Deps, author_id: int, hashed: str) -> None:
    async with transaction(deps) as session:
        author = await session.get(Author, author_id)
        if author is None:
            raise Unauthenticated("the account no longer exists")
        author.password = hashed


async def change_password(deps: Deps, session: Session | None, old: str, new: str) -> bool:
    """Changes the password and ends every other session of the account."""
    session = require_session(session)
    async with deps.db() as db_session:
        stored = await db_session.scalar(select(Author.password).where(Author.id == session.user_id))
    if not await _verify(deps, stored, old or ""):
        raise BadInput("the current password is wrong", field="oldPassword")
    await _set_password(deps, session.user_id, new)
    await deps.accounts.sessions.revoke_all(session.user_id, keep=session.token_id)
    return True


async def request_password_reset(deps: Deps, email: str, client: str | None = None, lang: str = "ru") -> bool:
    """Always succeeds; a reset link goes out only when the address belongs to an account."""
    await _limit(deps, MAIL_ASKED, client)
    try:
        address = normalize_email(email)
    except BadInput:
        return True
    author = await author_by_email(deps, address)
    if author is not None:
        token = await deps.accounts.verifications.issue(author.id, verification.PASSWORD_RESET)
        await _mail(deps, address, "reset", lang, link=_link(deps, "reset", token), name=author.name or author.slug)
    return True


async def reset_password(deps: Deps, token: str, new: str) -> bool:
    if problem := deps.accounts.passwords.problem(new):
        raise BadInput(problem, field="newPassword")
    user_id, _ = await _consume(deps, token, verification.PASSWORD_RESET)
    await _set_password(deps, user_id, new)
    await deps.accounts.sessions.revoke_all(user_id)  # whoever had the old password is out
    return True


# --- email change -------------------------------------------------------------------------------------

async def update_security(deps: Deps, session: Session | None, email: str | None, old_password: str | None,
                          new_password: str | None, client: str | None = None, lang: str = "ru") -> dict[str, Any]:
    session = require_session(session)
    async with deps.db() as db_session:
        author = await db_session.get(Author, session.user_id)
    if author is None:
        raise Unauthenticated("the account no longer exists")
    if not await _verify(deps, author.password, old_password or ""):
        return {"success": False, "error": "the current password is wrong", "author": None}
    if new_password:
        await _set_password(deps, author.id, new_password)
        await deps.accounts.sessions.revoke_all(author.id, keep=session.token_id)
    if email:
        address = normalize_email(email)
        if address != (author.email or "").lower():
            await _limit(deps, MAIL_ASKED, client)
            token = await deps.accounts.verifications.issue(author.id, verification.EMAIL_CHANGE, {"email": address})
            await _mail(deps, address, "email_change", lang, link=_link(deps, "confirm-email-change", token),
                        name=author.name or author.slug)
    return {"success": True, "error": None,
            "author": await get_cached_author(author.id, cache=deps.cache, db=deps.db)}


async def confirm_email_change(deps: Deps, token: str) -> dict[str, Any]:
    user_id, data = await _consume(deps, token, verification.EMAIL_CHANGE)
    try:
        async with transaction(deps) as session:
            author = await session.get(Author, user_id)
            if author is None:
                raise InvalidTokenError("this link is no longer valid")
            author.email, author.email_verified = data["email"], True
    except IntegrityError as exc:
        raise Conflict("this address belongs to another account", field="email") from exc
    return {"success": True, "error": None, "author": await get_cached_author(user_id, cache=deps.cache, db=deps.db)}


async def cancel_email_change(deps: Deps, session: Session | None) -> dict[str, Any]:
    session = require_session(session)
    cancelled = await deps.accounts.verifications.cancel(session.user_id, verification.EMAIL_CHANGE)
    return {"success": cancelled, "error": None if cancelled else "no email change is pending",
            "author": await get_cached_author(session.user_id, cache=deps.cache, db=deps.db)}


# --- questions ----------------------------------------------------------------------------------------

async def is_email_used(deps: Deps, email: str) -> bool:
    try:
        address = normalize_email(email)
    except BadInput:
        return False
    return await author_by_email(deps, address) is not None


def roles_info() -> list[dict[str, Any]]:
    result = []
    for role in ROLES.values():
        permissions = []
        for permission in sorted(PERMISSIONS[role.id]):
            resource, _, action = permission.partition(":")
            permissions.append({"resource": resource, "action": action, "conditions": None})
        result.append({"id": role.id, "name": role.name, "description": role.description,
                       "permissions": permissions})
    return result


async def get_author_id(deps: Deps, user: str) -> dict[str, Any] | None:
    author_id = await id_by_slug("author_user", user, cache=deps.cache, db=deps.db) if user else None
    return None if author_id is None else await get_cached_author(author_id, cache=deps.cache, db=deps.db)
