"""Password hashing with argon2id (memory-hard)."""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

MIN_LENGTH = 8
MAX_LENGTH = 1024  # argon2 hashes any length; a cap keeps one request from costing too much


class Passwords:
    def __init__(self, *, time_cost: int = 3, memory_cost: int = 65536) -> None:
        self._hasher = PasswordHasher(time_cost=time_cost, memory_cost=memory_cost)
        # Verified against when the account does not exist, so both paths cost the same time.
        self._dummy = self._hasher.hash("not-a-real-password")

    def hash(self, password: str) -> str:
        return self._hasher.hash(password)

    def verify(self, stored_hash: str | None, password: str) -> bool:
        try:
            return self._hasher.verify(stored_hash or self._dummy, password) and stored_hash is not None
        except (VerificationError, InvalidHashError):
            return False

    @staticmethod
    def problem(password: str | None) -> str | None:
        """Why a new password is refused, or None."""
        if not password or len(password) < MIN_LENGTH:
            return f"password must be at least {MIN_LENGTH} characters"
        if len(password) > MAX_LENGTH:
            return "password is too long"
        return None
