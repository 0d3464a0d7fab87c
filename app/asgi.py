"""The module uvicorn imports in every worker: `uvicorn app.asgi:app`."""

from __future__ import annotations

from app import logs
from app.main import create_app
from config.settings import get_settings
from telemetry import error_reports, tracing

settings = get_settings()
logs.configure(settings.log_level, settings.log_format)
error_reports.start(settings.error_report_dsn, environment="production" if settings.is_production else "development",
                    sample_rate=settings.sentry_sample_rate)  # before the app: its integrations patch Starlette
tracing.start(settings.otel_exporter_otlp_endpoint, service=settings.otel_service_name,
              sample_rate=settings.otel_traces_sample_rate)  # before the app makes its engines
app = tracing.wrap(create_app(settings))
