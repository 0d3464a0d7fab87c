"""Password hashing with argon2id (memory-hard), off the event loop.

Hashing and verifying take tens of milliseconds of CPU each (argon2-cffi releases the GIL while it
works), so they run in a small thread pool of their own: a flood of logins then costs those threads'
time, never the event loop's, and other requests keep being answered. At most `max_waiting` hashes may
wait for a thread; past that a login or registration is refused as busy rather than queued without end.

Hashes carried over from Discours' auth service are bcrypt (`$2a$`, `$2b$`, `$2y$`): they are verified as
such and, being outdated, replaced by an argon2id hash at the first successful sign-in."""

from __future__ import annotations

import asyncio
import contextlib
import os
from concurrent.futures import ThreadPoolExecutor

import bcrypt
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

MIN_LENGTH = 8
MAX_LENGTH = 1024  # argon2 hashes any length; a cap keeps one request from costing too much
BCRYPT_PREFIXES = ("$2a$", "$2b$", "$2y$")


def _yield_cpu() -> None:
    """Hashing threads run only when a core has nothing else to do (SCHED_IDLE, for this thread alone:
    Linux schedules threads one by one), and the lanes argon2 starts inherit it. On a busy machine requests
    come first and sign-ins wait; `max_waiting` bounds how many. A lower nice value was not enough: a
    flood of logins still doubled the p99 of other requests."""
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


class HashingBusy(Exception):
    """More passwords are waiting to be hashed than the pool takes."""


class Passwords:
    def __init__(self, *, time_cost: int = 3, memory_cost: int = 65536, threads: int = 1,
                 max_waiting: int = 64) -> None:
        # One lane: argon2 runs a thread per lane, and a hash must not take more than its pool's one core
        # (four lanes took both cores of a small machine). Older four-lane hashes are upgraded at sign-in.
        self._hasher = PasswordHasher(time_cost=time_cost, memory_cost=memory_cost, parallelism=1)
        # Verified against when the account does not exist, so both paths cost the same time.
        self._dummy = self._hasher.hash("not-a-real-password")
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="argon2", initializer=_yield_cpu)
        self._slots = threads + max_waiting
        self._taken = 0

    @property
    def taken(self) -> int:
        """Hashes under way or waiting for a thread."""
        return self._taken

    async def _run(self, work: object, *args: str) -> object:
        if self._taken >= self._slots:
            raise HashingBusy("too many sign-ins at once; try again in a moment")
        self._taken += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, work, *args)  # type: ignore[arg-type]
        finally:
            self._taken -= 1

    async def hash(self, password: str) -> str:
        return str(await self._run(self._hasher.hash, password))

    async def verify(self, stored_hash: str | None, password: str) -> bool:
        return bool(await self._run(self._verify, stored_hash or "", password))

    def _verify(self, stored_hash: str, password: str) -> bool:
        if stored_hash.startswith(BCRYPT_PREFIXES):
            return _bcrypt_matches(stored_hash, password)
        try:
            return self._hasher.verify(stored_hash or self._dummy, password) and bool(stored_hash)
        except (VerificationError, InvalidHashError):
            return False

    def outdated(self, stored_hash: str) -> bool:
        """Whether a hash was made with other parameters than today's, or by another algorithm (bcrypt): it is
        replaced at the next sign-in."""
        if stored_hash.startswith(BCRYPT_PREFIXES):
            return True
        try:
            return self._hasher.check_needs_rehash(stored_hash)
        except InvalidHashError:
            return False

    @staticmethod
    def known(stored_hash: str) -> bool:
        """Whether a stored hash is one this server verifies (argon2id or bcrypt)."""
        return stored_hash.startswith(("$argon2id$", *BCRYPT_PREFIXES))

    @staticmethod
    def problem(password: str | None) -> str | None:
        """Why a new password is refused, or None."""
        if not password or len(password) < MIN_LENGTH:
            return f"password must be at least {MIN_LENGTH} characters"
        if len(password) > MAX_LENGTH:
            return "password is too long"
        return None


def _bcrypt_matches(stored_hash: str, password: str) -> bool:
    """bcrypt compares at most 72 bytes of a password (its own limit, as the service that made the hash
    did); a malformed hash matches nothing."""
    try:
        return bcrypt.checkpw(password.encode()[:72], stored_hash.encode())
    except ValueError:
        return False
