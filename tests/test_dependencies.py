"""The lock and the declared ranges agree: what `make install` installs (requirements.lock, exact versions
with hashes) is what pyproject.toml allows, every dependency pyproject declares is locked with a hash, and
what runs is what the lock says."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent


def _locked() -> dict[str, tuple[str, int]]:
    """Each locked package: its version and how many file hashes the lock allows for it."""
    text = (ROOT / "requirements.lock").read_text()
    locked = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        match = re.match(r"([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==([^\s;\\]+)", block)
        if match:
            locked[canonicalize_name(match[1])] = (match[2], block.count("--hash=sha256:"))
    return locked


def _declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [Requirement(line) for line in project["dependencies"] + project["optional-dependencies"]["dev"]]


def test_every_declared_dependency_is_locked_within_its_range_with_hashes() -> None:
    locked = _locked()
    for requirement in _declared():
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{name} is declared in pyproject.toml but not locked: run `make lock`"
        locked_version, hashes = locked[name]
        assert requirement.specifier.contains(locked_version, prereleases=True), (
            f"{name}=={locked_version} is locked outside pyproject.toml's {requirement.specifier}: run `make lock`")
        assert hashes >= 1, f"{name} is locked without a hash"


def test_what_runs_is_what_is_locked() -> None:
    locked = _locked()
    for name in ("strawberry-graphql", "graphql-core", "redis", "hiredis", "sqlalchemy", "asyncpg"):
        assert version(name) == locked[name][0], (
            f"{name} {version(name)} is installed but {locked[name][0]} is locked: run `make install`")
