"""The module uvicorn imports in every worker: `uvicorn app.asgi:app`."""

from __future__ import annotations

import logging

from app.main import create_app

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
app = create_app()
