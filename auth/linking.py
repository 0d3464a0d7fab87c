"""Which account a provider identity signs in to, and when one may be linked or unlinked: the rules in one
place, as pure decisions over what the database holds (resolvers/identities.py carries them out).

- An identity linked before signs in to its account, whatever address it now shows.
- An address the provider vouches for links the account that has it, only if that account's own address
  was confirmed here: an unconfirmed one may have been registered by someone who never owned it, waiting
  for the owner to sign in with a provider and hand them a linked account.
- An address the provider does not vouch for, or none, never takes over an account: it creates a new
  account (with the address unconfirmed) when no account has it, and otherwise asks the person to sign in
  to that account and link the provider from there.
- A signed-in person links an identity no other account holds, and unlinks one that is not their last
  way to sign in (a password, a confirmed address that can reset one, or another identity).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from auth.oauth_profiles import Identity


@dataclass(frozen=True, slots=True)
class Account:
    """What the rules need of an account."""

    id: int
    email: str | None
    email_verified: bool
    has_password: bool
    identities: dict[str, str]  # provider: subject


@dataclass(frozen=True, slots=True)
class Decision:
    action: Literal["sign_in", "link", "unlink", "create", "refuse"]
    account: Account | None = None
    reason: str = ""  # for a refusal: what the person can do


def sign_in(identity: Identity, linked: Account | None, by_address: Account | None) -> Decision:
    """`linked`: the account holding this identity; `by_address`: the account with the identity's address."""
    if linked is not None:
        return Decision("sign_in", linked)
    if identity.email is None or by_address is None:
        return Decision("create")
    if identity.provider in by_address.identities:
        return Decision("refuse", reason=(
            f"The account with this address signs in with another {identity.provider} account: sign in with "
            "that one, or with your password"))
    if not identity.email_verified:
        return Decision("refuse", reason=(
            "An account with this address exists and the provider has not confirmed the address to us: sign "
            f"in with your password, then link {identity.provider} from your profile"))
    if not by_address.email_verified:
        return Decision("refuse", reason=(
            "An account with this address exists but its address was never confirmed: confirm it (or reset "
            f"the password by mail), then sign in with {identity.provider}"))
    return Decision("link", by_address)


def link(account: Account, identity: Identity, linked: Account | None) -> Decision:
    """A signed-in `account` links `identity`; `linked` is the account holding it already, if any."""
    if linked is not None and linked.id != account.id:
        return Decision("refuse", reason=f"This {identity.provider} account already signs in to another account")
    current = account.identities.get(identity.provider)
    if current is not None and current != identity.subject:
        return Decision("refuse", reason=(
            f"Another {identity.provider} account is linked: unlink it first"))
    return Decision("link", account)


def unlink(account: Account, provider: str) -> Decision:
    if provider not in account.identities:
        return Decision("refuse", reason=f"No {provider} account is linked")
    others = len(account.identities) - 1
    if not (account.has_password or (account.email and account.email_verified) or others):
        return Decision("refuse", reason=(
            f"{provider} is your only way to sign in: set a password or link another provider first"))
    return Decision("unlink", account)
