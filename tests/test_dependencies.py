"""The locks and the declared ranges agree: what `make run` installs (requirements.lock, the server's
dependencies) and `make install` (requirements-dev.lock, those and the tools), exact versions with hashes,
is what pyproject.toml allows; every dependency pyproject declares is locked with a hash in the lock it
belongs to, the two agree on every version they share, the runtime lock holds no tool, and what runs is
what the locks say."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent


RUNTIME, DEV = "requirements.lock", "requirements-dev.lock"


def _locked(lock: str = DEV) -> dict[str, tuple[str, int]]:
    """Each package a lock holds: its version and how many file hashes the lock allows for it."""
    text = (ROOT / lock).read_text()
    locked = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        match = re.match(r"([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==([^\s;\\]+)", block)
        if match:
            locked[canonicalize_name(match[1])] = (match[2], block.count("--hash=sha256:"))
    return locked


def _declared(*, dev: bool = True) -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = project["dependencies"] + (project["optional-dependencies"]["dev"] if dev else [])
    return [Requirement(line) for line in lines]


@pytest.mark.parametrize("lock", [RUNTIME, DEV])
def test_every_declared_dependency_is_locked_within_its_range_with_hashes(lock: str) -> None:
    locked = _locked(lock)
    for requirement in _declared(dev=lock == DEV):
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{name} is declared in pyproject.toml but not locked: run `make lock`"
        locked_version, hashes = locked[name]
        assert requirement.specifier.contains(locked_version, prereleases=True), (
            f"{name}=={locked_version} is locked outside pyproject.toml's {requirement.specifier}: run `make lock`")
        assert hashes >= 1, f"{name} is locked without a hash"


def test_the_runtime_lock_is_the_development_locks_versions_without_the_tools() -> None:
    runtime, dev = _locked(RUNTIME), _locked(DEV)
    assert {name: found[0] for name, found in runtime.items()} == {name: dev[name][0] for name in runtime}
    tools = {canonicalize_name(r.name) for r in _declared()} - {canonicalize_name(r.name) for r in _declared(dev=False)}
    assert tools and not tools & set(runtime), "a development tool in the runtime lock"
    assert len(runtime) < len(dev)


def test_what_runs_is_what_is_locked() -> None:
    locked = _locked()
    for name in ("strawberry-graphql", "graphql-core", "redis", "hiredis", "sqlalchemy", "asyncpg"):
        assert version(name) == locked[name][0], (
            f"{name} {version(name)} is installed but {locked[name][0]} is locked: run `make install`")
