"""Accounts, sessions, sign-in providers and linking, permissions, mail (auth/)."""
