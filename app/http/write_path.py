"""A state-changing request over HTTP: executed in its turn (app/http/write_gate.py), then answered; what it left
for later (resolvers/afterwards.py) runs after the answer, and the hot responses its invalidations made stale are
computed again then (cache/refresh.py, app/http/write_refresh.py), so that its writer waits for nothing another
reader needs.

Its graces (what its readers may still be served while it runs) are gone before its answer, whatever happened,
or else waited out, and its live messages go out then: no reader is served what it changed once it is answered.
The refreshes that follow are bounded: a few a write, each joining the computation of the same answer under way
(app/http/write_refresh.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ambient import REFRESHING
from app.http.caching import marked
from app.http.exchange import Exchange
from app.http.write_gate import Readers, WriteGate
from app.http.write_refresh import Serve, refresh
from cache.messaging.pubsub import publish_quietly
from cache.redis.limits import PUBLISH_PER_CALL
from cache.refresh import Refreshing
from resolvers.afterwards import Afterwards, collecting

if TYPE_CHECKING:
    from cache.store import Cache
    from config.settings import AnswerSettings


class WritePath:
    """`readers`: the reads being answered, whose share a write yields to; `settings`: the writes' turns
    (WRITES_IN_FLIGHT, WRITE_WAIT_SECONDS, WRITES_WAITING, WRITE_SHARE) and how many hot responses a write
    computes again after its answer (RESPONSES_REFRESHED_PER_WRITE, 0: none)."""

    def __init__(self, readers: Readers, settings: AnswerSettings) -> None:
        self.gate = WriteGate(settings.writes_in_flight, settings.write_wait_seconds, settings.writes_waiting,
                              settings.write_share, readers)
        self.refreshed_per_write = settings.responses_refreshed_per_write
        self.refresh_grace_ms = settings.refresh_grace_ms

    async def answer(self, exchange: Exchange, execute: Callable[[Exchange], Awaitable[Any]], serve: Serve) -> Any:
        """`execute` runs the write; `serve` answers the refreshes as the view answers any request."""
        refreshing = Refreshing(self.refreshed_per_write, self.refresh_grace_ms) if self.refreshed_per_write else None
        afterwards = Afterwards()
        token = REFRESHING.set(refreshing)
        try:
            try:
                with collecting(afterwards):
                    async with self.gate.turn():
                        response = marked(await execute(exchange), "BYPASS")
            finally:
                REFRESHING.reset(token)
            return response
        finally:
            async def after_answer() -> None:
                await afterwards.run()
                if refreshing is not None and refreshing.requests:
                    await refresh(serve, exchange.scope["app"], refreshing)

            exchange.answer.after_answer = after_answer  # a failed write's leftovers run too
            if refreshing is not None:
                refreshing.open = False  # what the write started and invalidates later sets no grace
                await _end_graces(exchange.app.state.deps.cache, refreshing)


async def _end_graces(cache: Cache, refreshing: Refreshing) -> None:
    """The write's graces ended, then its live messages published: the first PUBLISH_PER_CALL in the script that
    ends the graces (one round trip, in that order), the rest after it."""
    messages, sent = refreshing.messages, 0
    if refreshing.graces:
        together = messages[:PUBLISH_PER_CALL]
        sent = len(together) if await cache.end_graces(refreshing, together) else 0
    if len(messages) > sent:
        await publish_quietly(cache.redis, messages[sent:])
