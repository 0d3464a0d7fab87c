"""The server's Lua scripts, a `.lua` file each, and the one loader that makes them what Redis runs.

Each file opens with a header: what the script does, then `-- KEYS:`, `-- ARGV:` and `-- Returns`, or, for a
library of functions other scripts share, `-- A library:` and the functions it defines. A library comes in
where a script says `-- include: name` (once, however many of the script's includes ask for it). `$name` is
a constant that the module running the script gives `load_lua` (a number the Python side uses too, written
once there). What Redis receives has no comment lines: a cluster pipeline sends a script's whole text with
every call.
"""

from __future__ import annotations

import re
from pathlib import Path
from string import Template

HERE = Path(__file__).parent
_INCLUDE = re.compile(r"^-- include: (\w+)\n", re.MULTILINE)
_COMMENT_LINE = re.compile(r"^\s*--.*\n", re.MULTILINE)

# name -> text of every script loaded so far, and the libraries they included (tests/cache/test_lua.py)
LOADED: dict[str, str] = {}
INCLUDED: set[str] = set()


def load_lua(name: str, **constants: object) -> str:
    """The script `cache/lua/{name}.lua` as Redis runs it: its includes in place, its comment lines gone, its
    `$constants` substituted (a missing one raises KeyError: no script goes out half made)."""
    text = _with_includes(name, set())
    shebang = ""
    if text.startswith("#!"):  # a shebang (flags) must stay the script's first line
        shebang, text = text.split("\n", 1)
        shebang += "\n"
    text = shebang + _COMMENT_LINE.sub("", text)
    script = Template(text).substitute({key: str(value) for key, value in constants.items()})
    LOADED[name] = script
    return script


def _with_includes(name: str, included: set[str]) -> str:
    text = (HERE / f"{name}.lua").read_text()

    def include(match: re.Match[str]) -> str:
        library = match.group(1)
        if library in included:
            return ""
        included.add(library)
        INCLUDED.add(library)
        return _with_includes(library, included)

    return _INCLUDE.sub(include, text)
