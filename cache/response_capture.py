"""What one request's cache reads depended on: the response cache stores a response only with every tag
generation its computation saw (see cache/response/responses.py). `Cache.get_many` reports here.

A context variable, the one piece of request state the project keeps in one: the reads are made deep in
the cache layer (cache/store.py, cache/composite.py), by resolver code that the CLI, the precache and the
rebuild run too and that knows nothing of requests, from the tasks graphql-core starts for a request's
fields (each a copy of the request's context, so each reports to the request's capture). Threading a
capture through every resolver call instead would put the response cache's concern in every signature."""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field

from ambient import CAPTURE


@dataclass
class Capture:
    generations: dict[str, bytes] = field(default_factory=dict)
    storable: bool = True
    # Shouts whose reading this response counted as a view: a hit on the stored response counts them too.
    views: list[int] = field(default_factory=list)
    # Whether the answer depends on who asked (a resolver read the viewer): never stored for everyone.
    read_viewer: bool = False
    # Whether a value read was not kept under the current epoch (absent, or kept before the epoch last moved):
    # what is computed from it was not computed since, so nothing kept of that computation is current either.
    cold: bool = False

    def saw(self, generations: dict[str, bytes]) -> None:
        for tag, generation in generations.items():
            if self.generations.setdefault(tag, generation) != generation:
                self.storable = False  # one request saw a tag move: do not store what it computed

    def absorb(self, inner: Capture) -> None:
        """What a computation nested in this one (a composite value, cache/composite.py) depended on."""
        self.saw(inner.generations)
        self.storable = self.storable and inner.storable
        self.views.extend(inner.views)
        self.read_viewer = self.read_viewer or inner.read_viewer
        self.cold = self.cold or inner.cold


def report(generations: dict[str, bytes] | None) -> None:
    """Called by the cache on every validated read; `None` means the read did not go through Redis."""
    capture = CAPTURE.get()
    if capture is None:
        return
    if generations is None:
        capture.storable = False
    else:
        capture.saw(generations)


def read_cold() -> None:
    """A value read was not kept under the current epoch (cache/store.py reports it)."""
    capture = CAPTURE.get()
    if capture is not None:
        capture.cold = True


def cold() -> bool:
    """Whether the computation being captured read a value not kept under the current epoch."""
    capture = CAPTURE.get()
    return capture is not None and capture.cold


def viewed(shout_id: int) -> None:
    capture = CAPTURE.get()
    if capture is not None:
        capture.views.append(shout_id)


def viewer_read() -> None:
    """The answer being computed depends on the viewer (schema/context.py reports it)."""
    capture = CAPTURE.get()
    if capture is not None:
        capture.read_viewer = True


def active() -> bool:
    """Whether a response being computed now may be stored (so reads should report what they saw)."""
    return CAPTURE.get() is not None


def begin() -> tuple[Capture, contextvars.Token[Capture | None]]:
    """Capture what the reads from here on depend on. Captures nest: what an inner one saw, its outer one
    saw too (`end` hands it on)."""
    capture = Capture()
    return capture, CAPTURE.set(capture)


def end(token: contextvars.Token[Capture | None]) -> None:
    finished = CAPTURE.get()
    CAPTURE.reset(token)
    outer = CAPTURE.get()
    if outer is not None and finished is not None and finished is not outer:
        outer.absorb(finished)
