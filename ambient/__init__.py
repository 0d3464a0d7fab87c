"""Every context variable of the server: the state a task carries without passing it, in one place.

A context variable is an invisible argument: whoever sets it changes what code far below does. So each is
declared here, named for what it means, with who sets it and who reads it; no other module declares one
(tests/test_ambient.py). A task started inside a setter's block inherits the value (asyncio copies the
context), which is why each setter says how long its value holds.

- `REFRESHING`: the write's invalidations set graces and note the responses to compute again. Set by
  app/http/write_path.py, around a write answered over HTTP; read by cache/refresh.py `refreshing_now`
  (cache/store.py's invalidation).
- `AFTERWARDS`: the work a write leaves for after its answer. Set by resolvers/afterwards.py `collecting`, called
  by app/http/write_path.py around a write's execution; read by resolvers/afterwards.py `after_answer`.
- `CAPTURE`: which generations the answer being computed depends on: the stamps it is kept under. Set by
  cache/response_capture.py `begin` / `end`, around one computation; read by cache/response_capture.py
  (cache/store.py and cache/composite.py report to it).
- `RIDING_FILLS`: fills computed meanwhile wait to go out with the next read instead of a round trip of their
  own. Set by cache/store.py `Cache.fills_ride_along`, around a request's reads; read by cache/store.py
  `Cache.get_many`.
- `SENT_AT_ONCE`: the command goes out at the next turn of the loop instead of waiting for the queue to be
  quiet. Set by cache/redis/coalesce.py `at_once`, around one command; read by cache/redis/coalesce.py.
- `ROOT_RENDERING`: pages under the root field answer their items by their rendered JSON. Set by
  schema/engine/item_fragments.py `rendering_items`, around a root field; read by schema/engine/item_fragments.py.
- `STREAM_TURN`: a start nested in a live turn takes none; `started` ends the turn early. Set by
  schema/engine/stream_starts.py `StreamStarts.turn`, for a subscription's start; read by schema/engine/stream_starts.py
  `started`.
- `RELATED_ANSWERS`: the rules of one change ask each question of the database once. Set by triggers/related.py
  `one_event`, around one change's rules; read by triggers/related.py.
- `LOG_CONTEXT`: the request a log record is written for (its id, and its operation once read). Set by
  app/http/request_ids.py, around one HTTP request or WebSocket (with LOG_FORMAT=json only), its operation
  by app/http/response_front.py; read by app/logs.py's JSON lines.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the types of the values only: nothing here imports the layers above at run time
    from cache.fills import RidingFills
    from cache.refresh import Refreshing
    from cache.response_capture import Capture
    from resolvers.afterwards import Afterwards
    from schema.engine.item_fragments import RootRendering
    from schema.engine.stream_starts import Turn

REFRESHING: ContextVar[Refreshing | None] = ContextVar("refreshing", default=None)
AFTERWARDS: ContextVar[Afterwards | None] = ContextVar("afterwards", default=None)
CAPTURE: ContextVar[Capture | None] = ContextVar("response_capture", default=None)
RIDING_FILLS: ContextVar[RidingFills | None] = ContextVar("riding_fills", default=None)
SENT_AT_ONCE: ContextVar[bool] = ContextVar("sent_at_once", default=False)
ROOT_RENDERING: ContextVar[RootRendering | None] = ContextVar("root_rendering", default=None)
STREAM_TURN: ContextVar[Turn | None] = ContextVar("stream_turn", default=None)
RELATED_ANSWERS: ContextVar[dict[tuple[str, int], Any] | None] = ContextVar("related_answers", default=None)


@dataclass
class LogContext:
    request_id: str
    operation: str | None = None


LOG_CONTEXT: ContextVar[LogContext | None] = ContextVar("log_context", default=None)
