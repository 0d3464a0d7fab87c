"""Mail in the reader's language (issue 70, the language choice of issue 73's pages): every message is read
back from a real SMTP server the test starts (aiosmtpd), as the mail server of a deployment would receive
it: its language chosen by `lang`, else Accept-Language, else DEFAULT_LANGUAGE; a text and an HTML part;
a link that works. Templates are files an operator may replace; a broken one stops the start."""

from __future__ import annotations

import re
import shutil
import uuid
from collections.abc import AsyncIterator
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiosmtpd.controller import Controller
from redis.asyncio import Redis
from sqlalchemy.ext.asyncio import AsyncEngine

from app.main import create_app, wire
from auth.mail_templates import OWN
from auth.services import build_auth
from cache.store import Cache
from config.settings import Settings, SettingsError
from devtools.services import free_port
from tests.helpers import PASSWORD, until


class Inbox:
    """What the SMTP server received, parsed."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []

    async def handle_DATA(self, _server: Any, _session: Any, envelope: Any) -> str:
        self.messages.append(message_from_bytes(envelope.original_content, policy=policy.default))  # type: ignore[arg-type]
        return "250 OK"

    async def to(self, address: str) -> EmailMessage:
        await until(lambda: any(address in str(m["To"]) for m in self.messages), f"mail to {address}")
        return [m for m in self.messages if address in str(m["To"])][-1]


@pytest.fixture
def inbox() -> Any:
    received = Inbox()
    controller = Controller(received, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield received, controller.port
    finally:
        controller.stop()


@pytest.fixture
async def mailing(inbox: tuple[Inbox, int], engine: AsyncEngine, redis: Redis,
                  settings: Settings) -> AsyncIterator[tuple[httpx.AsyncClient, Inbox]]:
    """The app sending its mail through SMTP to the inbox."""
    received, port = inbox
    smtp = settings.model_copy(update={"smtp_host": "127.0.0.1", "smtp_port": port, "smtp_starttls": False})
    app = create_app(smtp, deps=wire(smtp, engine, Cache(redis), auth=build_auth(smtp, redis)))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        yield client, received


def _address() -> str:
    return f"mail-{uuid.uuid4().hex[:10]}@example.org"


async def _ask(client: httpx.AsyncClient, query: str, variables: dict[str, Any],
               accept_language: str | None = None) -> dict[str, Any]:
    headers = {"accept-language": accept_language} if accept_language else {}
    answer = (await client.post("/graphql", json={"query": query, "variables": variables}, headers=headers)).json()
    assert "errors" not in answer, answer
    return answer


REGISTER = "mutation($e: String!, $p: String!) { registerUser(email: $e, password: $p, name: \"Мария\") { success } }"
SEND_LINK = "mutation($e: String!, $l: String, $t: String) { sendLink(email: $e, lang: $l, template: $t) { id } }"
RESET = "mutation($e: String!, $l: String) { requestPasswordReset(email: $e, lang: $l) { success } }"


def _parts(message: EmailMessage) -> tuple[str, str]:
    text, html = message.get_body(("plain",)), message.get_body(("html",))
    assert text is not None and html is not None, message
    return str(text.get_content()), str(html.get_content())


@pytest.mark.parametrize("accept_language, lang, subject", [
    ("en-US,en;q=0.9", "en", "Confirm your email"),
    ("de-DE, ru;q=0.5", "ru", "Подтвердите адрес почты"),
    (None, "ru", "Подтвердите адрес почты"),  # DEFAULT_LANGUAGE
])
async def test_a_registration_is_confirmed_in_the_language_of_the_request(
        mailing: tuple[httpx.AsyncClient, Inbox], accept_language: str | None, lang: str, subject: str) -> None:
    client, inbox = mailing
    email = _address()
    await _ask(client, REGISTER, {"e": email, "p": PASSWORD}, accept_language)
    message = await inbox.to(email)
    assert message["Subject"] == subject and message["Content-Language"] == lang
    text, html = _parts(message)
    assert "Мария" in text and "Мария" in html
    link = re.search(r"http://\S+/confirm\?token=([\w.\-]+)", text)
    assert link and f'href="{link[0]}"' in html
    confirmed = await client.post("/confirm", data={"token": link[1]})
    assert confirmed.status_code == 200 and "session_token" in confirmed.cookies


@pytest.mark.parametrize("lang, template, accept_language, subject", [
    ("en", "verification", "ru", "Confirm your email"),  # lang wins over the header
    (None, "verification", "en", "Confirm your email"),  # the 2025 client: no lang
    (None, None, "ru", "Ссылка для входа в Дискурс"),  # the default variant
    ("en", None, None, "Your link to sign in to Discours"),
])
async def test_send_link_takes_its_language_and_its_variant(
        mailing: tuple[httpx.AsyncClient, Inbox], lang: str | None, template: str | None,
        accept_language: str | None, subject: str) -> None:
    client, inbox = mailing
    email = _address()
    await _ask(client, REGISTER, {"e": email, "p": PASSWORD})
    await inbox.to(email)
    inbox.messages.clear()
    await _ask(client, SEND_LINK, {"e": email, "l": lang, "t": template}, accept_language)
    message = await inbox.to(email)
    assert message["Subject"] == subject
    text, html = _parts(message)
    assert "/confirm?token=" in text and "/confirm?token=" in html


async def test_an_unknown_variant_is_refused(mailing: tuple[httpx.AsyncClient, Inbox]) -> None:
    client, _ = mailing
    answer = (await client.post("/graphql", json={"query": SEND_LINK, "variables": {
        "e": _address(), "t": "nope"}})).json()
    assert answer["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert "verification" in answer["errors"][0]["message"]


async def test_a_password_reset_takes_its_lang(mailing: tuple[httpx.AsyncClient, Inbox]) -> None:
    client, inbox = mailing
    email = _address()
    await _ask(client, REGISTER, {"e": email, "p": PASSWORD})
    await inbox.to(email)
    await _ask(client, RESET, {"e": email, "l": "ru"}, "en")
    message = await inbox.to(email)
    assert message["Subject"] == "Смена пароля"
    text, _ = _parts(message)
    assert re.search(r"/reset\?token=[\w.\-]+", text)


def test_an_operators_templates_replace_the_servers_and_a_broken_one_stops_the_start(
        tmp_path: Path, settings: Settings, redis: Redis) -> None:
    def folder(name: str, file: str, text: str | None) -> dict[str, str]:
        """A copy of the server's templates with `file` written anew (removed when `text` is None)."""
        own = tmp_path / name
        shutil.copytree(OWN, own)
        if text is None:
            (own / file).unlink()
        else:
            (own / file).write_text(text)
        return {"mail_templates_dir": str(own)}

    subject = (OWN / "confirm.en.txt.jinja").read_text().replace("Confirm your email", "Welcome to Our Magazine")
    replaced = build_auth(settings.model_copy(update=folder("replaced", "confirm.en.txt.jinja", subject)), redis)
    assert replaced.templates.write("confirm", "en", link="l", name="n").subject == "Welcome to Our Magazine"
    for name, file, text, says in (
            ("broken", "reset.ru.html.jinja", "{% block content %}{{ link }", r"reset\.ru\.html\.jinja"),
            ("missing", "reset.ru.html.jinja", None, r"reset\.ru\.html\.jinja"),
            ("misspelt", "digest.en.txt.jinja", "{% block subject %}{{ cuont }}{% endblock %}{% block body %}"
             "{% endblock %}", r"digest\.en\.txt\.jinja.*cuont")):
        with pytest.raises(SettingsError, match="MAIL_TEMPLATES_DIR: .*" + says):
            build_auth(settings.model_copy(update=folder(name, file, text)), redis)
