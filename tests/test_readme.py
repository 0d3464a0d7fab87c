"""The project as a newcomer meets it: a short README that maps the docs, the operations page's settings table
listing every setting with its default, the architecture page's module map naming every module, and a suite
that reads nothing outside the repository."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from config.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
SETTINGS_PAGE = DOCS / "operations.md"
MODULE_MAP = DOCS / "architecture.md"
README_MOST_LINES = 150
ROW = re.compile(r"^\| `([A-Z0-9_]+)` \| (.*?) \|", re.MULTILINE)


def _shown(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, list | dict):
        return f"`{json.dumps(value)}`"
    return f"`{value}`"


def test_every_setting_is_in_the_table_with_its_default() -> None:
    table = dict(ROW.findall(SETTINGS_PAGE.read_text()))
    expected = {name.upper(): _shown(field.get_default(call_default_factory=True))
                for name, field in Settings.model_fields.items()}
    assert sorted(set(expected) - set(table)) == [], "settings missing from docs/operations.md's table"
    assert sorted(set(table) - set(expected)) == [], "docs/operations.md's table lists settings that do not exist"
    wrong = {name: (table[name], shown) for name, shown in expected.items() if table[name] != shown}
    assert wrong == {}, "a default in docs/operations.md differs from config/settings.py: (docs, actual)"


def test_nothing_reads_outside_the_project() -> None:
    """A clone anywhere passes `make test`: no code, script or Makefile names a path above the project (the
    contract files the tests need are copied into tests/contract_files/, their origin in ORIGIN.md)."""
    root, here = README.parent, Path(__file__).resolve()
    tracked = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True).stdout
    code = [root / p for p in tracked.split() if p.endswith((".py", ".sh", ".toml", ".ini", ".cfg")) or
            p in ("Makefile", ".ci/run")]
    outside = re.compile(r"\.\./|/work/|parents\[[2-9]\]|parent\.parent\.parent")
    found = [f"{path.relative_to(root)}: {match.group(0)}" for path in code if path.exists() and path != here
             for match in [outside.search(path.read_text())] if match]
    assert found == []


LAYERS = ("config", "telemetry", "app", "schema", "resolvers", "auth", "triggers", "cache", "orm")


def test_the_layout_names_every_module_with_its_job() -> None:
    """A module added without a line in the module map (docs/architecture.md) fails here, as does a line left
    for a module that is gone."""
    layout = MODULE_MAP.read_text().split("## Layout", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"^\| `([a-z_/]+\.py)` \| .+ \|$", layout, re.MULTILINE))
    root = ROOT
    modules = {path.relative_to(root).as_posix() for layer in LAYERS for path in (root / layer).rglob("*.py")
               if path.name != "__init__.py"  # sub-packages too
               and path.parent.name != "versions"}  # a migration, named by its revision
    assert modules - named == set(), "modules the layout does not name"
    assert named - modules == set(), "the layout names modules that are gone"


def test_the_readme_is_short_and_links_every_page_of_the_docs() -> None:
    """What a newcomer reads first: what it is, the two commands, the embedded default, and a map of the docs
    (every page of docs/ linked, and each link to a page that exists)."""
    text = README.read_text()
    assert len(text.splitlines()) <= README_MOST_LINES
    pages = {path.name for path in DOCS.glob("*.md")}
    linked = set(re.findall(r"\]\(docs/([\w-]+\.md)(?:#[\w-]+)?\)", text))
    assert pages - linked == set(), "docs pages the README does not link"
    assert linked - pages == set(), "the README links docs pages that do not exist"
    for command in ("make run", "make test"):
        assert command in text
