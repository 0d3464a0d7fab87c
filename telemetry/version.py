"""The server's version: `pyproject.toml`'s, the one place it is written, read from the installed
package's metadata (an editable install has it too)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "discours-core"

try:
    VERSION = version(DISTRIBUTION)
except PackageNotFoundError:  # modules imported from a checkout that was never installed
    VERSION = "0+unknown"
