"""Work a write leaves for after its answer: what its writer does not wait for and no reader needs first (the
notifications' digests, which the periodic sweep queues again if this is lost). A write answered over HTTP runs
it once its answer has gone out (app/http/write_path.py); any other caller (the command line, a test calling a
resolver) runs it at once."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator

from ambient import AFTERWARDS

log = logging.getLogger(__name__)

Work = Callable[[], Awaitable[None]]


class Afterwards:
    """The work left by one write; closed once it has run, after which more work runs at once (a task the write
    started, inheriting the context, may leave some late)."""

    __slots__ = ("open", "works")

    def __init__(self) -> None:
        self.works: list[Work] = []
        self.open = True

    async def run(self) -> None:
        self.open = False
        for work in self.works:
            try:
                await work()
            except Exception:  # the write is done and answered: its leftovers never fail it
                log.exception("work left for after a write's answer failed")
        self.works.clear()


@contextlib.contextmanager
def collecting(afterwards: Afterwards) -> Iterator[None]:
    """Around a write's execution: what it leaves for later goes to `afterwards`."""
    token = AFTERWARDS.set(afterwards)
    try:
        yield
    finally:
        AFTERWARDS.reset(token)


async def after_answer(work: Work) -> None:
    """`work` once the write's answer has gone out, or now when no answer waits for it."""
    afterwards = AFTERWARDS.get()
    if afterwards is not None and afterwards.open:
        afterwards.works.append(work)
    else:
        await work()
