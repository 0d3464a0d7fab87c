"""No token, password, code or email in a log line (issue 9), and a refused document is quoted short."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest

from app.logs import WithoutQueryStrings
from auth.mailer import LogMailer, Message
from auth.services import build_auth
from config.settings import load_settings


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
