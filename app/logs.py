"""Log hygiene: what may never reach a log line, whatever the level."""

from __future__ import annotations

import logging


class WithoutQueryStrings(logging.Filter):
    """uvicorn's access lines name the path only: a query string may carry an OAuth code, a token or a GET
    request's GraphQL variables."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and len(record.args) >= 3:
            path = record.args[2]
            if isinstance(path, str) and "?" in path:
                record.args = (*record.args[:2], path.split("?", 1)[0], *record.args[3:])
        return True


def configure() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("uvicorn.access").addFilter(WithoutQueryStrings())
