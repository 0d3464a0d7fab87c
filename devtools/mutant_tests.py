"""How the mutation pass runs a mutant's tests (tests/conftest.py hands every collection here; outside the
pass, nothing changes).

mutmut runs a mutant's tests with `-x` in an order of its own, each with the suite's deadline (240 s), so
a mutant killed by a 20 ms test may first sit through minutes of others, and one that makes a test wait for
ever costs the whole deadline. Here, under a mutant, the tests run fastest first (by the durations mutmut
measured on the unmutated code, in its stats), and each has a deadline of its own: FACTOR times its
measured duration, at least FLOOR_SECONDS. A test past it fails, which kills the mutant, as it should: the
mutant made that test hang or crawl.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

FLOOR_SECONDS = 15.0
FACTOR = 5.0
# What mutmut names as the mutant under test when it runs the unmutated code (its stats, its forced
# failure, listing the tests): those runs keep the suite's order and deadline.
_NOT_A_MUTANT = {"", "stats", "fail", "list_all_tests", "mutant_generation"}
_STATS = Path("mutmut-stats.json")  # mutmut runs the tests from its mutants/ directory, beside its stats


def measured_durations() -> dict[str, float]:
    """Each test's duration on the unmutated code, by node id, when a mutant is under test; else empty."""
    if os.environ.get("MUTANT_UNDER_TEST", "") in _NOT_A_MUTANT or not _STATS.exists():
        return {}
    durations: dict[str, float] = json.loads(_STATS.read_text()).get("duration_by_test", {})
    return durations


def order_and_bound(items: list[Any]) -> None:
    """Under a mutant: the fastest tests first, each with its own deadline (pytest-timeout's marker)."""
    durations = measured_durations()
    if not durations:
        return
    slowest = max(durations.values())
    items.sort(key=lambda item: durations.get(item.nodeid, slowest))
    for item in items:
        item.add_marker(pytest.mark.timeout(max(FLOOR_SECONDS, FACTOR * durations.get(item.nodeid, slowest))))
