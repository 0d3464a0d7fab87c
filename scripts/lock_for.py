"""Prints the entries of a lock that a given Python installs: those whose environment marker holds for
that interpreter's version on Linux (CPython), without their markers, hashes kept. The image's Python is
Debian's, not the one that builds its wheels: `scripts/build-image.sh` fetches what the image's needs.

    python scripts/lock_for.py requirements.lock 3.11.2
"""

from __future__ import annotations

import re
import sys

from pip._vendor.packaging.markers import Marker, default_environment


def entries_for(lock: str, python: str) -> str:
    environment = {**default_environment(), "python_full_version": python,
                   "python_version": ".".join(python.split(".")[:2]), "sys_platform": "linux",
                   "platform_system": "Linux", "implementation_name": "cpython",
                   "platform_python_implementation": "CPython"}
    kept = []
    for block in re.split(r"\n(?=[A-Za-z0-9])", lock):
        head, _, rest = block.partition("\n")
        if not re.match(r"[A-Za-z0-9]", head):
            continue  # the header's comments
        requirement, _, marker = head.rstrip(" \\").partition(" ; ")
        if not marker or Marker(marker).evaluate(environment):
            kept.append(f"{requirement} \\\n{rest}")
    return "\n".join(kept) + "\n"


if __name__ == "__main__":
    with open(sys.argv[1]) as lock:
        sys.stdout.write(entries_for(lock.read(), sys.argv[2]))
