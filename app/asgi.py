"""The module uvicorn imports in every worker: `uvicorn app.asgi:app`."""

from __future__ import annotations

from app import logs
from app.main import create_app

logs.configure()
app = create_app()
