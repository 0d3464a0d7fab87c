"""Accounts carried over from Discours' auth service (`discours adopt --accounts FILE`).

The Feb-2025 Discours backend kept its people in a separate auth service (Authorizer): an author row holds
that service's user id (`author.user`) and nothing to sign in with. Its export, a CSV with a header row of
`user,email[,email_verified][,password_hash][,provider,subject][,roles]`, gives each author back:

- the address (lower-cased) and whether the service had verified it;
- the password hash: bcrypt as the service made it, verified as such and replaced by argon2id at the first
  successful sign-in (auth/passwords.py), or argon2id;
- a provider identity (`provider`, `subject`), linked as a sign-in of ours would link it;
- roles, added to the author's roles in the main community.

It fills in what an author does not have here yet and never replaces what they have (an address changed
here, a password rehashed at sign-in, a provider linked), so that running it again changes nothing.

A row that cannot be carried over whole is carried over not at all, and is a line of the report: a user
no author has, an address another author or another row has, a hash this server cannot verify, an identity
another author has. The rest is written in one transaction; running the import again changes nothing.
Authors who end with neither an address nor a provider identity cannot sign in: the report lists them.
"""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select

from auth.accounts import normal_address
from auth.passwords import Passwords
from orm import Author, Community, CommunityAuthor
from orm.engine import SessionFactory

TRUE = frozenset({"1", "true", "yes", "t", "y"})
SHOWN = 20  # names a report lists of each kind, at most


@dataclass
class AccountsImport:
    updated: int = 0  # authors changed
    unchanged: int = 0  # authors the file names whose accounts already say what it says
    refused: list[str] = field(default_factory=list)  # one line per row not carried over
    cannot_sign_in: list[str] = field(default_factory=list)  # slugs of authors with no address nor identity
    cannot_sign_in_count: int = 0

    def describe(self) -> str:
        lines = [f"Accounts: {self.updated} authors updated, {self.unchanged} already as the file says, "
                 f"{len(self.refused)} rows not carried over."]
        lines += [f"  - {line}" for line in self.refused]
        if self.cannot_sign_in_count:
            lines.append(f"{self.cannot_sign_in_count} authors have neither an address nor a provider identity "
                         f"and cannot sign in: {', '.join(self.cannot_sign_in)}"
                         + (", …" if self.cannot_sign_in_count > len(self.cannot_sign_in) else ""))
        return "\n".join(lines)


@dataclass(frozen=True)
class _Row:
    line: int
    user: str
    email: str | None
    verified: bool
    password_hash: str | None
    identity: tuple[str, str] | None
    roles: tuple[str, ...]


def read_accounts(path: Path) -> tuple[list[_Row], list[str]]:
    """The rows of an export, and a line for each that is malformed."""
    rows: list[_Row] = []
    refused: list[str] = []
    with path.open(newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        if reader.fieldnames is None or not {"user", "email"} <= set(reader.fieldnames):
            raise ValueError(f"{path}: the header row must name at least `user` and `email`")
        for number, raw in enumerate(reader, start=2):
            value: dict[str, str] = {k: (v or "").strip() for k, v in raw.items() if k is not None}
            email = normal_address(value.get("email"))
            provider, subject = value.get("provider", "").lower(), value.get("subject", "")
            if problem := _malformed(value, email, provider, subject):
                refused.append(f"line {number} ({value.get('user') or '?'}): {problem}")
                continue
            roles = tuple(r for r in value.get("roles", "").replace(";", ",").replace(" ", ",").split(",") if r)
            rows.append(_Row(number, value["user"], email, value.get("email_verified", "").lower() in TRUE,
                             value.get("password_hash") or None, (provider, subject) if provider else None, roles))
    return rows, refused


def _malformed(value: dict[str, str], email: str | None, provider: str, subject: str) -> str | None:
    """Why a row of the export is not one, or None."""
    if not value.get("user"):
        return "no user"
    if value.get("email") and email is None:
        return "an address that is not one"
    if value.get("password_hash") and not Passwords.known(value["password_hash"]):
        return "a hash this server cannot verify (bcrypt or argon2id only)"
    if bool(provider) != bool(subject):
        return "a provider without a subject, or a subject without a provider"
    return None


async def import_accounts(db: SessionFactory, rows: list[_Row], refused: list[str]) -> AccountsImport:
    done = AccountsImport(refused=list(refused))
    shared = {email for email, n in Counter(r.email for r in rows if r.email).items() if n > 1}
    async with db() as session, session.begin():
        authors = {a.user: a for a in (await session.scalars(
            select(Author).where(Author.user.in_([r.user for r in rows])))).all()}
        owners = dict((await session.execute(select(Author.email, Author.id).where(
            Author.email.in_([r.email for r in rows if r.email])))).all())
        main = await session.scalar(select(Community.id).order_by((Community.slug != "discours"), Community.id)
                                    .limit(1))
        for row in rows:
            author = authors.get(row.user)
            problem = (
                "no author has this user" if author is None
                else f"the address {row.email} is on several rows" if row.email in shared
                else f"the address {row.email} is another author's" if row.email and owners.get(row.email,
                                                                                                 author.id) != author.id
                else await _identity_taken(session, row, author.id))
            if problem:
                done.refused.append(f"line {row.line} ({row.user}): {problem}")
                continue
            assert author is not None
            changed = _apply(author, row)
            if row.roles and main is not None:
                changed = await _add_roles(session, author.id, main, row.roles) or changed
            if changed:
                done.updated += 1
            else:
                done.unchanged += 1
        await session.flush()
        stranded = [slug for slug, identities in (await session.execute(
            select(Author.slug, Author.oauth).where(Author.deleted_at.is_(None), Author.email.is_(None))
            .order_by(Author.id))).all() if not identities]
    done.cannot_sign_in_count = len(stranded)
    done.cannot_sign_in = list(stranded[:SHOWN])
    return done


async def _identity_taken(session: Any, row: _Row, author_id: int) -> str | None:
    if row.identity is None:
        return None
    provider, subject = row.identity
    other = await session.scalar(select(Author.id).where(Author.signs_in_with(provider, subject),
                                                         Author.id != author_id))
    return f"the {provider} identity {subject} is another author's" if other is not None else None


def _apply(author: Author, row: _Row) -> bool:
    """Fill in what the row says and the author does not have here yet; whether anything changed. What the
    author has here already (an address changed since, a password set or rehashed at sign-in, a provider
    linked) is theirs and stays: so an import run again changes nothing."""
    wanted: dict[str, Any] = {}
    if row.email is not None and author.email in (None, row.email):
        wanted["email"] = row.email
        wanted["email_verified"] = row.verified or (author.email == row.email and author.email_verified)
    if row.password_hash is not None and author.password is None:
        wanted["password"] = row.password_hash
    if row.identity is not None and row.identity[0] not in (author.oauth or {}):
        wanted["oauth"] = {**(author.oauth or {}), row.identity[0]: row.identity[1]}
    changed = False
    for name, value in wanted.items():
        if getattr(author, name) != value:
            setattr(author, name, value)
            changed = True
    return changed


async def _add_roles(session: Any, author_id: int, community: int, roles: tuple[str, ...]) -> bool:
    member = await session.get(CommunityAuthor, (community, author_id))
    if member is None:
        session.add(CommunityAuthor(community=community, author=author_id, roles=",".join(dict.fromkeys(roles))))
        return True
    have = [r for r in member.roles.split(",") if r]
    added = [r for r in roles if r not in have]
    if added:
        member.roles = ",".join([*have, *added])
    return bool(added)
