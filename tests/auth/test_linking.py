"""The linking rules (auth/linking.py) as a table: which account an identity signs in to, when a link or an
unlink is refused. The flows that carry them out are in tests/auth/test_sign_in_providers.py."""

from __future__ import annotations

import pytest

from auth.linking import Account, link, sign_in, unlink
from auth.oauth_profiles import Identity


def _identity(email: str | None = "a@example.org", vouched: bool = True, provider: str = "google",
              subject: str = "s1") -> Identity:
    return Identity(provider=provider, subject=subject, email=email, email_verified=vouched and email is not None,
                    name=None, picture=None)


def _account(id: int = 1, *, verified: bool = True, password: bool = True,
             identities: dict[str, str] | None = None, email: str | None = "a@example.org") -> Account:
    return Account(id=id, email=email, email_verified=verified, has_password=password, identities=identities or {})


def test_a_linked_identity_signs_in_to_its_account_whatever_its_address() -> None:
    held = _account(7, identities={"google": "s1"})
    assert sign_in(_identity(email="changed@example.org", vouched=False), held, _account(8)).account == held


@pytest.mark.parametrize("identity, by_address, action, reason", [
    (_identity(), _account(), "link", ""),
    (_identity(), _account(verified=False), "refuse", "never confirmed"),
    (_identity(vouched=False), _account(), "refuse", "has not confirmed the address"),
    (_identity(vouched=False), _account(verified=False), "refuse", "has not confirmed the address"),
    (_identity(), _account(identities={"google": "someone-else"}), "refuse", "another google account"),
    (_identity(), None, "create", ""),
    (_identity(vouched=False), None, "create", ""),
    (_identity(email=None, provider="x"), None, "create", ""),
])
def test_an_identity_not_linked_yet(identity: Identity, by_address: Account | None, action: str,
                                    reason: str) -> None:
    decision = sign_in(identity, None, by_address)
    assert decision.action == action and reason in decision.reason
    assert decision.account == (by_address if action == "link" else None)


def test_linking_from_a_signed_in_account() -> None:
    me, other = _account(1), _account(2, identities={"github": "gh"})
    assert link(me, _identity(provider="github", subject="gh"), other).action == "refuse"
    assert link(me, _identity(provider="github", subject="gh"), None).action == "link"
    assert link(_account(1, identities={"github": "gh"}), _identity(provider="github", subject="gh"),
                _account(1, identities={"github": "gh"})).action == "link"  # again: nothing changes
    replaced = link(_account(1, identities={"github": "old"}), _identity(provider="github", subject="new"), None)
    assert replaced.action == "refuse" and "unlink it first" in replaced.reason


@pytest.mark.parametrize("account, action", [
    (_account(identities={"x": "1"}, password=False, verified=False), "refuse"),  # the last way in
    (_account(identities={"x": "1"}, password=True, verified=False), "unlink"),
    (_account(identities={"x": "1"}, password=False, verified=True), "unlink"),  # a reset by mail remains
    (_account(identities={"x": "1"}, password=False, verified=True, email=None), "refuse"),
    (_account(identities={"x": "1", "telegram": "2"}, password=False, verified=False), "unlink"),
    (_account(identities={"telegram": "2"}), "refuse"),  # nothing to unlink
])
def test_unlinking(account: Account, action: str) -> None:
    assert unlink(account, "x").action == action
