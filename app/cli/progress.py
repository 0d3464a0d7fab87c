"""Progress of the long commands (seed, rebuild, adopt, the cache's scans): a tqdm bar per step on a terminal,
nothing at all elsewhere, so that a log collector or a CI log never receives a carriage return."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import TextIO

from tqdm import tqdm


class Bars:
    """One bar at a time, named by its step; `show(label, done, total)` is the callback the steps call (a
    new label closes the bar before it), `count(label)` one for a scan whose total is unknown."""

    def __init__(self, wanted: bool, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = wanted and self.stream.isatty()
        self.bar: tqdm[None] | None = None
        self.label: str | None = None

    def show(self, label: str, done: int, total: int | None) -> None:
        if not self.enabled:
            return
        if self.bar is None or label != self.label:
            self.close()
            self.bar = tqdm(total=total, desc=label, file=self.stream, dynamic_ncols=True, leave=True)
            self.label = label
        self.bar.total = total
        self.bar.update(done - self.bar.n)
        if total is not None and done >= total:
            self.close()

    def count(self, label: str) -> Callable[[int], None]:
        return functools.partial(self.show, label, total=None)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar, self.label = None, None

