"""The pages our mail links to, served by the server when no web client handles them (issue 10): a GET
shows a button and uses nothing up (mail scanners open links); the POST confirms, signs in or resets."""

from __future__ import annotations

import re
from typing import Any

import httpx

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
    done = await client.post(path, data={"token": token})
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
