"""The pages our mail links to, served by the server when no web client handles them (issue 10): a GET
shows a button and uses nothing up (mail scanners open links); the POST confirms, signs in or resets. Each
page is in the reader's language and leads on (issue 73)."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from auth import language
from auth.mailer import LogMailer
from tests.helpers import PASSWORD, Api

ME = "{ me { author { id } } }"


def _link(mailer: LogMailer, to: str) -> tuple[str, str]:
    message = next(m for m in reversed(mailer.sent) if m.to == to)
    match = re.search(r"https?://[^/\s]+(/[\w-]+)\?token=([\w.\-]+)", message.body)
    assert match, message.body
    return match.group(1), match.group(2)


async def test_the_confirmation_link_confirms_and_signs_in(client: httpx.AsyncClient, api: Api,
                                                            mailer: LogMailer) -> None:
    email = f"link-{id(mailer)}@example.org"
    await api("mutation($e: String!, $p: String!) { registerUser(email: $e, password: $p) { success } }",
              {"e": email, "p": PASSWORD})
    path, token = _link(mailer, email)
    assert path == "/confirm"
    for _ in range(2):  # opened twice (a scanner, then the person): the token is still there
        shown = await client.get(f"{path}?token={token}")
        assert shown.status_code == 200 and f'value="{token}"' in shown.text and "<form" in shown.text
    done = await client.post(path, data={"token": token}, headers={"accept-language": "en"})
    assert done.status_code == 200 and "confirmed" in done.text
    assert "session_token" in done.cookies
    me = await client.post("/graphql", json={"query": ME})
    assert me.json()["data"]["me"]["author"]["id"]
    client.cookies.clear()
    again = await client.post(path, data={"token": token})
    assert again.status_code == 400 and "session_token" not in again.cookies


async def test_the_reset_link_sets_a_new_password(client: httpx.AsyncClient, api: Api, mailer: LogMailer) -> None:
    user = await api.user()
    email = (await api("{ me { author { email } } }", user=user))["author"]["email"]
    await api("mutation($e: String!) { requestPasswordReset(email: $e) { success } }", {"e": email})
    path, token = _link(mailer, email)
    assert path == "/reset"
    assert 'type="password"' in (await client.get(f"{path}?token={token}")).text
    short = await client.post(path, data={"token": token, "password": "short"})
    assert short.status_code == 400  # refused, and the token is still good
    done = await client.post(path, data={"token": token, "password": "a brand new password"})
    assert done.status_code == 200
    login = await api("mutation($e: String!, $p: String!) { login(email: $e, password: $p) { success } }",
                      {"e": email, "p": "a brand new password"})
    assert login["success"]


async def test_links_can_lead_to_the_web_client(api: Any, settings: Any, mailer: LogMailer) -> None:
    settings.links_url = "https://discours.io"
    user = await api.user()
    email = (await api("{ me { author { email } } }", user=user))["author"]["email"]
    await api("mutation($e: String!) { requestPasswordReset(email: $e) { success } }", {"e": email})
    assert re.search(r"https://discours\.io/reset\?token=", mailer.sent[-1].body)


@pytest.mark.parametrize("asked, header, default, chosen", [
    ("en", "ru-RU,ru;q=0.9", "ru", "en"),  # the client's lang first
    ("EN-gb", None, "ru", "en"),
    ("de", "en-US,en;q=0.9", "ru", "en"),  # a lang the server does not write: the header decides
    (None, "de-DE,de;q=0.9,en;q=0.8,ru;q=0.7", "ru", "en"),  # the first supported, by preference
    (None, "ru;q=0.5, en;q=0.9", "ru", "en"),  # by quality, not order
    (None, "en;q=0, ru;q=0.1", "en", "ru"),  # q=0: not wanted
    (None, "fr, de", "en", "en"),  # nothing supported: the deployment's
    (None, "", "ru", "ru"),
    (None, "en;q=bad", "ru", "ru"),
])
def test_the_language_is_the_clients_then_the_headers_then_the_deployments(
        asked: str | None, header: str | None, default: str, chosen: str) -> None:
    assert language.choose(asked, header, default) == chosen


@pytest.mark.parametrize("path", ["/confirm", "/reset", "/confirm-email-change"])
@pytest.mark.parametrize("query, header, lang, says", [
    ("", {}, "ru", "Подтвердите"),  # DEFAULT_LANGUAGE
    ("", {"accept-language": "en-GB,en;q=0.9"}, "en", "Confirm"),
    ("&lang=en", {"accept-language": "ru"}, "en", "Confirm"),
    ("&lang=ru", {"accept-language": "en"}, "ru", "Подтвердите"),
])
async def test_each_page_is_in_the_readers_language(client: httpx.AsyncClient, path: str, query: str,
                                                    header: dict[str, str], lang: str, says: str) -> None:
    page = await client.get(f"{path}?token=t{query}", headers=header)
    assert page.status_code == 200 and f'<html lang="{lang}">' in page.text
    assert page.headers["content-language"] == lang
    assert f'name="lang" value="{lang}"' in page.text  # the answer to the form is in the same language
    if path != "/reset":
        assert says in page.text
    refused = await client.post(path, data={"token": "not-a-token", "lang": lang, "password": "long enough pw"})
    assert refused.status_code == 400 and f'<html lang="{lang}">' in refused.text
    assert ("Ссылка не работает" if lang == "ru" and path != "/reset" else "") in refused.text


@pytest.mark.parametrize("links_url, onward", [(None, 'href="/"'), ("https://discours.io", 'href="https://discours.io"')])
async def test_a_done_page_leads_on(client: httpx.AsyncClient, api: Api, mailer: LogMailer, settings: Any,
                                    links_url: str | None, onward: str) -> None:
    email = f"on-{id(mailer)}-{int(links_url is None)}@example.org"
    await api("mutation($e: String!, $p: String!) { registerUser(email: $e, password: $p) { success } }",
              {"e": email, "p": PASSWORD})
    path, token = _link(mailer, email)
    settings.links_url = links_url
    done = await client.post(path, data={"token": token, "lang": "ru"})
    assert done.status_code == 200 and "Адрес подтверждён" in done.text and onward in done.text
    assert "Продолжить" in done.text
