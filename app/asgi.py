"""The module uvicorn imports in every worker: `uvicorn app.asgi:app`."""

from __future__ import annotations

from app import logs
from app.main import create_app
from config.settings import get_settings

settings = get_settings()
logs.configure(settings.log_level, settings.log_format)
app = create_app(settings)
