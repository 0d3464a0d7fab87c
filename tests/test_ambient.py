"""Context variables are declared in one place (ambient/): an invisible argument is at least a visible
declaration, with who sets it and who reads it."""

from __future__ import annotations

import re
from contextvars import ContextVar
from pathlib import Path

import ambient

ROOT = Path(__file__).resolve().parents[1]
SERVER = ("app", "schema", "resolvers", "auth", "triggers", "cache", "orm", "config", "telemetry")
DECLARED = {name for name, value in vars(ambient).items() if isinstance(value, ContextVar)}


def test_no_other_module_of_the_server_declares_a_context_variable() -> None:
    declares = re.compile(r"\bContextVar\(")
    found = [str(path.relative_to(ROOT)) for package in SERVER for path in (ROOT / package).rglob("*.py")
             if declares.search(path.read_text())]
    assert found == []


def test_each_variable_is_described_and_both_set_and_read_elsewhere() -> None:
    assert len(DECLARED) == 9
    described = set(re.findall(r"^- `([A-Z_]+)`:", ambient.__doc__ or "", re.MULTILINE))
    assert described == DECLARED
    code = "\n".join(path.read_text() for package in SERVER for path in (ROOT / package).rglob("*.py"))
    for name in DECLARED:
        assert re.search(rf"\b{name}\.set\(", code), f"{name} is never set"
        assert re.search(rf"\b{name}\.get\(", code), f"{name} is never read"
