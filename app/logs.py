"""Log hygiene and form: what may never reach a log line, whatever the level; the level and the form the
settings choose (LOG_LEVEL, LOG_FORMAT): plain lines for a terminal, or one JSON object a line for a log
collector, a traceback inside its record rather than on lines of its own, with the id and the operation of
the request it was written for."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import orjson

from ambient import LOG_CONTEXT

PLAIN = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class WithoutQueryStrings(logging.Filter):
    """uvicorn's access lines name the path only: a query string may carry an OAuth code, a token or a GET
    request's GraphQL variables."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and len(record.args) >= 3:
            path = record.args[2]
            if isinstance(path, str) and "?" in path:
                record.args = (*record.args[:2], path.split("?", 1)[0], *record.args[3:])
        return True


class JsonLines(logging.Formatter):
    """A record as one line of JSON: time (UTC, milliseconds), level, logger, message, the request's id and
    operation when written for one, and the exception's traceback when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname, "logger": record.name, "message": record.getMessage()}
        context = LOG_CONTEXT.get()
        if context is not None:
            entry["request_id"] = context.request_id
            if context.operation:
                entry["operation"] = context.operation
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry).decode()


def configure(level: str = "INFO", form: str = "plain") -> None:
    """The root logger's one handler, on standard error; uvicorn's loggers write through it (the server is
    started with no logging configuration of uvicorn's own)."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonLines() if form == "json" else logging.Formatter(PLAIN))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    logging.getLogger("uvicorn.access").addFilter(WithoutQueryStrings())
