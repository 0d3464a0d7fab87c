"""GraphiQL in a real browser (issue 10): headless Chromium (Debian's, driven by Playwright, which never
downloads a browser of its own) opens /graphql with no internet access, types a query, runs it and sees the
result; a person signs in through the header editor and through the session cookie a login sets. The page
must load nothing from anywhere but the server. Screenshots are kept in artifacts/ (not committed)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from playwright.async_api import Browser, Page

from app.http.graphiql import TITLE, starter_query
from tests.helpers import PASSWORD, Api
from tests.live import ROOT, serve

ARTIFACTS = ROOT / "artifacts"

async def _open(browser: Browser, base: str, elsewhere: list[str], address: str = "/graphql") -> Page:
    page = await browser.new_page(viewport={"width": 1400, "height": 900})

    def note(request: Any) -> None:
        if not request.url.startswith((base, "data:", "blob:", "ws://127.0.0.1")):
            elsewhere.append(request.url)

    page.on("request", note)
    await page.goto(f"{base}{address}", wait_until="networkidle")
    await page.wait_for_selector(".graphiql-container .graphiql-query-editor .CodeMirror")
    return page


async def _set_editor(page: Page, selector: str, text: str) -> None:
    """Replace a CodeMirror editor's text the way a person would: click, select all, type (inserted as
    typed text, so the editor's bracket auto-closing does not double what is typed)."""
    await page.locator(f"{selector} .CodeMirror:visible").first.click()
    await page.keyboard.press("Control+A")
    await page.keyboard.press("Delete")
    await page.keyboard.insert_text(text)


RESPONSE = ".graphiql-response .CodeMirror"


async def _editor(page: Page, selector: str) -> str:
    return str(await page.locator(f"{selector} .CodeMirror").first.evaluate("node => node.CodeMirror.getValue()"))


async def _press_run(page: Page) -> Any:
    """Press the run button as the page stands and read the answer in the response pane."""
    await page.locator(".graphiql-execute-button").click()
    await page.wait_for_function(f"""() => {{
        const text = document.querySelector('{RESPONSE}')?.CodeMirror?.getValue();
        return text && text.trim().startsWith('{{');
    }}""")
    return json.loads(await page.locator(RESPONSE).evaluate("node => node.CodeMirror.getValue()"))


async def _run(page: Page, query: str) -> Any:
    """Type `query`, press the run button, and read the response pane (emptied first, so what it shows
    is this run's answer)."""
    await _set_editor(page, ".graphiql-query-editor", query)
    await page.evaluate(f"document.querySelector('{RESPONSE}')?.CodeMirror.setValue('')")
    return await _press_run(page)


async def test_graphiql_types_and_runs_a_query_offline(browser: Browser, app: Any) -> None:
    elsewhere: list[str] = []
    async with serve(app) as base:
        page = await _open(browser, base, elsewhere)
        body = await _run(page, "{ get_topics_all { slug title } }")
        ARTIFACTS.mkdir(exist_ok=True)
        await page.screenshot(path=str(ARTIFACTS / "graphiql.png"))
    assert "errors" not in body and body["data"]["get_topics_all"], body
    assert elsewhere == [], f"the page loaded from elsewhere: {elsewhere}"


async def test_graphiql_signs_in_by_header_and_by_cookie(browser: Browser, app: Any, api: Api) -> None:
    user = await api.user()
    me = "{ me { author { slug } } }"
    elsewhere: list[str] = []
    async with serve(app) as base:
        page = await _open(browser, base, elsewhere)
        anonymous = await _run(page, me)
        assert anonymous["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"

        await page.get_by_role("button", name="Headers").click()  # the header editor
        await _set_editor(page, ".graphiql-editor-tool", json.dumps({"Authorization": f"Bearer {user.token}"}))
        by_header = await _run(page, me)
        await page.screenshot(path=str(ARTIFACTS / "graphiql-header.png"))
        assert by_header["data"]["me"]["author"]["slug"] == user.slug
        await _set_editor(page, ".graphiql-editor-tool", "{}")

        email = (await api("{ me { author { email } } }", user=user))["author"]["email"]
        login = await _run(page, f'mutation {{ login(email: "{email}", password: "{PASSWORD}") {{ success }} }}')
        assert login["data"]["login"]["success"], login
        cookies = {c["name"] for c in await page.context.cookies()}
        by_cookie = await _run(page, me)
        await page.screenshot(path=str(ARTIFACTS / "graphiql-cookie.png"))
    assert "session_token" in cookies
    assert by_cookie["data"]["me"]["author"]["slug"] == user.slug
    assert elsewhere == []


async def test_graphiql_is_this_apis_page_and_its_starter_query_runs(browser: Browser, app: Any, api: Api) -> None:
    await api.published(await api.user())  # something to list
    elsewhere: list[str] = []
    async with serve(app) as base:
        page = await _open(browser, base, elsewhere)
        assert await page.title() == TITLE
        assert await _editor(page, ".graphiql-query-editor") == starter_query()
        body = await _press_run(page)
    assert "errors" not in body and body["data"]["load_shouts_by"] and body["data"]["get_topics_all"], body
    assert elsewhere == []


async def test_a_shared_link_opens_with_its_query_variables_and_operation(browser: Browser, app: Any,
                                                                         api: Api) -> None:
    shout = await api.published(await api.user())
    query = "query One($id: Int) { get_shout(shout_id: $id) { id title } }\nquery Other { get_topics_all { slug } }"
    variables = json.dumps({"id": shout})
    link = "/graphql?" + urlencode({"query": query, "variables": variables, "operationName": "One"})
    elsewhere: list[str] = []
    async with serve(app) as base:
        page = await _open(browser, base, elsewhere, link)
        assert await _editor(page, ".graphiql-query-editor") == query
        await page.get_by_role("button", name="Variables").click()
        assert json.loads(await _editor(page, ".graphiql-editor-tool")) == {"id": shout}
        body = await _press_run(page)  # two operations: the one the link names runs, without asking
        await page.screenshot(path=str(ARTIFACTS / "graphiql-shared-link.png"))
    assert body == {"data": {"get_shout": {"id": shout, "title": "Событие"}}}, body
    assert elsewhere == []
