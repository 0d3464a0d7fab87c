"""Provider identities on accounts: signing in with one, linking and unlinking, carried out as
auth/linking.py decides. An account's identities are `author.oauth` ({provider: subject})."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from auth import linking
from auth.oauth import Identity, store_provider_tokens
from auth.oauth_profiles import endpoints
from auth.sessions import HANDED_OVER
from orm import Author
from resolvers.auth import author_by_email, create_account
from resolvers.deps import Deps
from resolvers.errors import BadInput, Conflict
from resolvers.writes import transaction


def _account(author: Author) -> linking.Account:
    return linking.Account(id=author.id, email=author.email, email_verified=bool(author.email_verified),
                           has_password=bool(author.password), identities=dict(author.oauth or {}))


async def _holder(deps: Deps, provider: str, subject: str) -> Author | None:
    async with deps.db() as session:
        return await session.scalar(select(Author).where(Author.signs_in_with(provider, subject),
                                                         Author.deleted_at.is_(None)))


async def _author(deps: Deps, author_id: int) -> Author:
    async with deps.db() as session:
        author = await session.get(Author, author_id)
    if author is None or author.deleted_at is not None:
        raise BadInput("the account is gone")
    return author


async def _set_identities(deps: Deps, author_id: int, identities: dict[str, str]) -> None:
    async with transaction(deps) as session:
        row = await session.get(Author, author_id)
        assert row is not None
        row.oauth = identities or None  # a new dict: the JSON column's change is seen


async def oauth_sign_in(deps: Deps, identity: Identity, *, again: bool = True, handed_over: bool = False) -> str:
    """The account behind a provider identity (linked before, linked now, or new), signed in; the token.
    `handed_over`: the token goes to a web client in an address, short-lived until it is exchanged
    (auth/sessions.py HANDED_OVER)."""
    holder = await _holder(deps, identity.provider, identity.subject)
    by_address = None if holder is not None or identity.email is None else \
        await author_by_email(deps, identity.email)
    decision = linking.sign_in(identity, None if holder is None else _account(holder),
                               None if by_address is None else _account(by_address))
    if decision.action == "refuse":
        raise Conflict(decision.reason, field="email")
    if decision.action == "create":
        name = identity.name or (identity.email or "").split("@")[0] or f"{identity.provider} {identity.subject}"
        try:
            author = await create_account(deps, name=name, email=identity.email, email_verified=identity.email_verified,
                                          pic=identity.picture, oauth={identity.provider: identity.subject})
        except IntegrityError:
            if not again:
                raise
            # the address (or the identity) was taken a moment ago: decide again on what is there now
            return await oauth_sign_in(deps, identity, again=False, handed_over=handed_over)
        author_id, slug = author.id, author.slug
    else:
        assert decision.account is not None
        author_id = decision.account.id
        if decision.action == "link":
            await _set_identities(deps, author_id, {**decision.account.identities,
                                                    identity.provider: identity.subject})
        slug = next(a.slug for a in (holder, by_address) if a is not None and a.id == author_id)
    await store_provider_tokens(deps.state, author_id, identity)
    session = await deps.accounts.sessions.create(
        author_id, slug, auth_data={"method": identity.provider},
        ttl=deps.accounts.settings.oauth_token_ttl if handed_over else None,
        token_type=HANDED_OVER if handed_over else "session")
    return session.token


async def link_identity(deps: Deps, author_id: int, identity: Identity) -> None:
    """A signed-in person's account takes `identity` (they came back from the provider)."""
    account = _account(await _author(deps, author_id))
    holder = await _holder(deps, identity.provider, identity.subject)
    decision = linking.link(account, identity, None if holder is None else _account(holder))
    if decision.action == "refuse":
        raise Conflict(decision.reason, field="provider")
    await _set_identities(deps, author_id, {**account.identities, identity.provider: identity.subject})
    await store_provider_tokens(deps.state, author_id, identity)


async def unlink_identity(deps: Deps, author_id: int, provider: str) -> dict[str, str]:
    """Takes the provider off the account (not its last way in); the identities left."""
    account = _account(await _author(deps, author_id))
    decision = linking.unlink(account, provider)
    if decision.action == "refuse":
        raise Conflict(decision.reason, field="provider")
    left = {name: subject for name, subject in account.identities.items() if name != provider}
    await _set_identities(deps, author_id, left)
    return left


def oauth_providers(deps: Deps) -> list[dict[str, str]]:
    settings = deps.accounts.settings
    base = settings.public_url.rstrip("/")
    return [{"id": pid, "name": endpoints(pid, p).name, "url": f"{base}/oauth/{pid}"}
            for pid, p in sorted(settings.oauth_providers.items())]
