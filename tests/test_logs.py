"""No token, password, code or email in a log line (issue 9), and a refused document is quoted short."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.logs import JsonLines, WithoutQueryStrings
from auth.mailer import LogMailer, Message
from auth.services import build_auth
from config.settings import load_settings
from devtools.services import free_port
from tests.live import ROOT


def test_access_lines_keep_the_path_and_drop_the_query_string() -> None:
    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
                               ("10.0.0.1:5000", "GET", "/oauth/github/callback?code=SECRET&state=S", "1.1", 302),
                               None)
    WithoutQueryStrings().filter(record)
    assert "SECRET" not in record.getMessage() and "/oauth/github/callback" in record.getMessage()


async def test_the_log_mailer_names_neither_the_recipient_nor_the_link(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG):
        await LogMailer().send(Message("someone@example.org", "Reset your password", "http://x/reset?token=T0KEN"))
    assert "someone@example.org" not in caplog.text and "T0KEN" not in caplog.text
    assert "Reset your password" in caplog.text


@pytest.mark.parametrize(("env", "bodies"), [
    ({}, True),  # the embedded default is development
    ({"environment": "production", "jwt_secret": "x" * 32}, False),
    ({"environment": "production", "jwt_secret": "x" * 32, "mail_log_links": True}, True),
    ({"mail_log_links": False}, False),
])
def test_mail_bodies_are_logged_in_development_unless_told(env: dict[str, Any], bodies: bool) -> None:
    settings = load_settings(database_url="sqlite+aiosqlite:///:memory:", smtp_host=None, **env)
    assert settings.mail_log_links is bodies
    mailer = build_auth(settings, redis=None).mailer  # type: ignore[arg-type]  # nothing is sent to Redis here
    assert isinstance(mailer, LogMailer) and mailer.log_bodies is bodies


async def test_a_refused_document_is_logged_once_and_short(client: httpx.AsyncClient,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    document = "{ " + " ".join(f"a{i}: get_topics_all {{ id }}" for i in range(5000)) + " }"
    variables: dict[str, Any] = {"password": "hunter2-secret"}
    with caplog.at_level(logging.INFO, logger="discours.graphql"):
        await client.post("/graphql", json={"query": document, "variables": variables})
    lines = [r for r in caplog.records if r.name == "discours.graphql"]
    assert len(lines) == 1 and lines[0].levelno == logging.INFO
    assert len(lines[0].getMessage()) < 600 and "hunter2-secret" not in caplog.text


def _serve(tmp_path: Path, **env: str) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "app.cli.commands", "serve", "--host", "127.0.0.1", "--port", str(port)], cwd=tmp_path,
        env={**{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")},
             "PYTHONPATH": str(ROOT), "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'logs.db'}", **env},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 60
    while True:
        try:
            httpx.get(f"{base}/healthz", timeout=2)
            return server, base
        except httpx.TransportError:
            assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)


def _lines(server: subprocess.Popen[str]) -> list[str]:
    server.send_signal(signal.SIGTERM)
    output, _ = server.communicate(timeout=60)
    return [line for line in output.splitlines() if line.strip()]


PROBE = {"query": "query Probe { no_such_field }", "operationName": "Probe"}


def test_json_logs_are_one_object_a_line_with_the_request_id_and_operation(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "app.cli.commands", "migrate"], cwd=tmp_path, check=True, timeout=120,
                   env={**os.environ, "PYTHONPATH": str(ROOT),
                        "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'logs.db'}"}, capture_output=True)
    server, base = _serve(tmp_path, LOG_FORMAT="json")
    httpx.post(f"{base}/graphql", json=PROBE, headers={"x-request-id": "probe-42"}, timeout=10)
    httpx.post(f"{base}/graphql", json=PROBE, headers={"x-request-id": "not a token; \" fake"}, timeout=10)
    records = [json.loads(line) for line in _lines(server)]  # every line is one JSON object
    refused = [r for r in records if r["logger"] == "discours.graphql"]
    assert refused[0]["request_id"] == "probe-42" and refused[0]["operation"] == "Probe"
    assert "refused" in refused[0]["message"]
    assert refused[1]["request_id"] not in ("probe-42", "not a token; \" fake")  # made here instead
    access = [r for r in records if r["logger"] == "uvicorn.access" and "/graphql" in r["message"]]
    assert access and access[0]["request_id"] == "probe-42"
    assert {"time", "level", "logger", "message"} <= set(records[0])


def test_plain_logs_by_default_and_the_level_a_setting(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "app.cli.commands", "migrate"], cwd=tmp_path, check=True, timeout=120,
                   env={**os.environ, "PYTHONPATH": str(ROOT),
                        "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'logs.db'}"}, capture_output=True)
    server, base = _serve(tmp_path, LOG_LEVEL="WARNING")
    httpx.post(f"{base}/graphql", json=PROBE, timeout=10)
    lines = _lines(server)
    assert not any("refused" in line or "uvicorn.access" in line for line in lines)  # INFO records left out
    assert not any(line.startswith("{") for line in lines)


def test_a_traceback_stays_inside_its_json_record() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.LogRecord("discours", logging.ERROR, __file__, 1, "failed", None, sys.exc_info())
    line = JsonLines().format(record)
    assert "\n" not in line and "ValueError: boom" in json.loads(line)["exception"]
