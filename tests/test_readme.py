"""The README's settings table is the reference people read: it must list every setting with its default."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from config.settings import Settings

README = Path(__file__).resolve().parent.parent / "README.md"
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
    table = dict(ROW.findall(README.read_text()))
    expected = {name.upper(): _shown(field.get_default(call_default_factory=True))
                for name, field in Settings.model_fields.items()}
    assert sorted(set(expected) - set(table)) == [], "settings missing from the README's table"
    assert sorted(set(table) - set(expected)) == [], "the README's table lists settings that do not exist"
    wrong = {name: (table[name], shown) for name, shown in expected.items() if table[name] != shown}
    assert wrong == {}, "README default differs from config/settings.py: (README, actual)"
