"""The editors' panel in real Chromium (issue 69), against PostgreSQL and Redis: an editor signs in, hides a
comment that a reader (a second browser context) then no longer gets, restores it, with the keyboard alone
too; deletes and restores a shout; sets a person's roles; the queue shows a new comment without a reload; a
reader is refused. Each page's screenshot is taken (`UPDATE_SCREENSHOTS=1` writes the README's, docs/panel/).
The panel loads nothing from another host; its files keep within their budget, with caching headers."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, Page

from app.routes.admin_panel import FILES
from tests.helpers import PASSWORD, Api, User
from tests.live import ROOT, serve

# Each page's screenshot goes to artifacts/panel (not committed); with UPDATE_SCREENSHOTS=1, to docs/panel,
# the committed ones the README shows (a run that rewrites them on every `make test` would dirty the tree).
SCREENSHOTS = ROOT / ("docs" if os.environ.get("UPDATE_SCREENSHOTS") == "1" else "artifacts") / "panel"
BUDGET = 1_500_000  # bytes, uncompressed
COMMENT = "mutation($r: ReactionInput!) { create_reaction(reaction: $r) { reaction { id } } }"


async def _email(api: Api, user: User) -> str:
    return str((await api("{ me { author { email } } }", user=user))["author"]["email"])


async def _signed_in(browser: Browser, base: str, email: str, elsewhere: list[str], lang: str = "en") -> Page:
    page = await browser.new_page(viewport={"width": 1280, "height": 860}, locale=lang)
    page.on("request", lambda request: None if request.url.startswith((base, "data:")) else elsewhere.append(request.url))
    await page.goto(f"{base}/admin/?lang={lang}")
    await page.fill("input[name=email]", email)
    await page.fill("input[name=password]", PASSWORD)
    await page.keyboard.press("Enter")
    return page


async def _shot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


async def _comments_a_reader_gets(browser: Browser, base: str, shout: int) -> list[int]:
    """What a reader's page of the shout loads: its comments, as a reader in a browser context of their own."""
    reader = await browser.new_context()
    page = await reader.new_page()
    await page.goto(f"{base}/healthz")
    found = await page.evaluate("""async (shout) => {
        const answer = await fetch('/graphql', {method: 'POST', headers: {'content-type': 'application/json'},
          body: JSON.stringify({query: 'query($s: Int!) { load_shout_comments(shout: $s, limit: 50) { id } }',
                                variables: {s: shout}})}).then(r => r.json());
        return answer.data.load_shout_comments.map(c => c.id);
    }""", shout)
    await reader.close()
    return list(found)


async def _hide_and_confirm(page: Page, reaction: int) -> None:
    row = page.locator(f"tr[data-reaction='{reaction}']")
    await row.get_by_role("button").click()
    await page.locator("#confirm-yes").click()
    await page.wait_for_selector(f"tr.deleted[data-reaction='{reaction}']")


async def test_an_editor_hides_a_comment_a_reader_no_longer_gets_and_restores_it(
        browser: Browser, app: Any, api: Api) -> None:
    editor, author, commenter = await api.user("editor"), await api.user(), await api.user()
    shout = await api.published(author)
    reaction = (await api(COMMENT, {"r": {"shout": shout, "kind": "COMMENT", "body": "<p>buy pills</p>"}},
                          commenter))["reaction"]["id"]
    elsewhere: list[str] = []
    async with serve(app) as base:
        assert reaction in await _comments_a_reader_gets(browser, base, shout)
        page = await _signed_in(browser, base, await _email(api, editor), elsewhere)
        await page.wait_for_selector(f"tr[data-reaction='{reaction}']")
        await _shot(page, "moderation")
        await _hide_and_confirm(page, reaction)
        assert reaction not in await _comments_a_reader_gets(browser, base, shout)
        await page.locator(f"tr[data-reaction='{reaction}']").get_by_role("button", name="Restore").click()
        await page.wait_for_selector(f"tr:not(.deleted)[data-reaction='{reaction}']")
        assert reaction in await _comments_a_reader_gets(browser, base, shout)
    assert elsewhere == [], f"the panel loaded from elsewhere: {elsewhere}"


async def test_the_keyboard_alone_hides_a_comment(browser: Browser, app: Any, api: Api) -> None:
    editor, author, commenter = await api.user("editor"), await api.user(), await api.user()
    shout = await api.published(author)
    reaction = (await api(COMMENT, {"r": {"shout": shout, "kind": "COMMENT", "body": "<p>by keys</p>"}},
                          commenter))["reaction"]["id"]
    async with serve(app) as base:
        page = await _signed_in(browser, base, await _email(api, editor), [])
        button = page.locator(f"tr[data-reaction='{reaction}'] button")
        await button.wait_for()
        for _ in range(200):  # Tab, Tab, … until the row's button has the focus
            if await button.evaluate("node => node === document.activeElement"):
                break
            await page.keyboard.press("Tab")
        else:
            raise AssertionError("Tab never reached the comment's button")
        await page.keyboard.press("Enter")  # the confirmation opens with its button focused
        await page.keyboard.press("Enter")
        await page.wait_for_selector(f"tr.deleted[data-reaction='{reaction}']")
    assert reaction not in [c["id"] for c in await api(
        "query($s: Int!) { load_shout_comments(shout: $s, limit: 50) { id } }", {"s": shout})]


async def test_the_queue_shows_a_new_comment_without_a_reload(browser: Browser, app: Any, api: Api) -> None:
    editor, author, commenter = await api.user("editor"), await api.user(), await api.user()
    shout = await api.published(author)
    async with serve(app) as base:
        page = await _signed_in(browser, base, await _email(api, editor), [])
        await page.wait_for_selector("table tbody tr")
        await page.wait_for_selector("body[data-live='open']", state="attached")  # its event stream is open
        loaded = await page.evaluate("() => performance.getEntriesByType('navigation').length")
        reaction = (await api(COMMENT, {"r": {"shout": shout, "kind": "COMMENT", "body": "<p>live</p>"}},
                              commenter))["reaction"]["id"]
        await page.wait_for_selector(f"tr[data-reaction='{reaction}']", timeout=5000)
        assert await page.evaluate("() => performance.getEntriesByType('navigation').length") == loaded


async def test_an_editor_deletes_and_restores_a_shout(browser: Browser, app: Any, api: Api) -> None:
    editor, author = await api.user("admin"), await api.user()  # an administrator: the audit trail is theirs
    shout = await api.published(author)
    get = "query($i: Int) { get_shout(shout_id: $i) { id } }"
    async with serve(app) as base:
        page = await _signed_in(browser, base, await _email(api, editor), [], lang="ru")
        await page.wait_for_selector("table tbody tr")
        await page.goto(f"{base}/admin/#/shouts")
        await page.wait_for_selector("tr[data-shout]")  # the page's own search field, not the last page's
        await page.fill("input[name=search]", str(shout))
        await page.keyboard.press("Enter")
        row = page.locator(f"tr[data-shout='{shout}']")
        await row.wait_for()
        await _shot(page, "shouts")
        await row.get_by_role("button", name="Править").click()  # its title and topics, edited
        await page.fill("form.card input[name=title]", "Исправленный заголовок")
        await page.locator("form.card select[name=topics]").select_option(label="Art")
        await page.locator("form.card button[type=submit]").click()
        await page.wait_for_selector(f"tr[data-shout='{shout}'] >> text=Исправленный заголовок")
        edited = await api("query($i: Int) { get_shout(shout_id: $i) { title topics { title } } }", {"i": shout})
        assert edited == {"title": "Исправленный заголовок", "topics": [{"title": "Art"}]}
        await row.get_by_role("button", name="Удалить").click()
        assert "можно вернуть" in await page.locator("#confirm-text").inner_text()  # it says what it will do
        await page.locator("#confirm-yes").click()
        await page.wait_for_selector(f"tr.deleted[data-shout='{shout}']")
        assert await api(get, {"i": shout}) is None
        await page.locator(f"tr[data-shout='{shout}']").get_by_role("button", name="Вернуть").click()
        await page.wait_for_selector(f"tr:not(.deleted)[data-shout='{shout}']")
        assert (await api(get, {"i": shout}))["id"] == shout
        # the audit trail has both, and its entry leads to the shout
        await page.goto(f"{base}/admin/#/audit")
        entry = page.locator(f"a[href='#/shouts?search={shout}']").first
        await entry.wait_for()
        assert await page.locator(f"a[href='#/shouts?search={shout}']").count() >= 2
        await entry.click()
        await page.wait_for_selector(f"tr[data-shout='{shout}']")  # among what else its id's digits match
        assert await page.locator("input[name=search]").input_value() == str(shout)


async def test_an_administrator_makes_a_person_an_editor_of_one_community(browser: Browser, app: Any,
                                                                         api: Api) -> None:
    admin, person = await api.user("admin"), await api.user()
    other = (await api("mutation($c: CommunityInput!) { create_community(community_input: $c) { error } }",
                       {"c": {"slug": f"other-{person.id}", "name": "Other"}}, await api.user()))
    assert other["error"] is None
    reactions = "query($c: Int) { adminGetReactions(community: $c, limit: 1) { total } }"
    assert await api.error(reactions, {"c": 1}, person) == "FORBIDDEN"
    async with serve(app) as base:
        page = await _signed_in(browser, base, await _email(api, admin), [])
        await page.wait_for_selector("table tbody tr")
        await page.goto(f"{base}/admin/#/people")
        await page.wait_for_selector("tr[data-author]")  # the page's own search field, not the last page's
        await page.fill("input[name=search]", person.slug)
        await page.keyboard.press("Enter")
        await page.locator(f"tr[data-author='{person.id}'] button").click()
        await page.locator("input[name=role][value=editor]").check()
        await _shot(page, "people")
        await page.locator("form.card button[type=submit]").click()
        assert "editor" in await page.locator("#confirm-text").inner_text()
        await page.locator("#confirm-yes").click()
        await page.wait_for_function("() => document.getElementById('status').textContent.includes('Done')")
    assert (await api(reactions, {"c": 1}, person))["total"] >= 0  # an editor there now
    other_id = (await api("{ get_communities_all { id slug } }"))
    other_id = next(c["id"] for c in other_id if c["slug"] == f"other-{person.id}")
    assert await api.error(reactions, {"c": other_id}, person) == "FORBIDDEN"  # and not elsewhere


async def test_a_reader_is_refused(browser: Browser, app: Any, api: Api) -> None:
    reader = await api.user()
    async with serve(app) as base:
        page = await _signed_in(browser, base, await _email(api, reader), [])
        await page.wait_for_selector("#refused")
        assert "not an editor" in await page.locator("#refused").inner_text()
        await _shot(page, "refused")


async def test_every_page_renders_in_both_languages(browser: Browser, app: Any, api: Api) -> None:
    admin = await api.user("admin")
    async with serve(app) as base:
        for lang in ("en", "ru"):
            page = await _signed_in(browser, base, await _email(api, admin), [], lang=lang)
            await page.wait_for_selector("table tbody tr")
            for name in ("roles", "topics", "invites", "collections", "settings", "audit"):
                await page.goto(f"{base}/admin/?lang={lang}#/{name}")
                await page.wait_for_selector("main h1")
                assert await page.locator(".error").count() == 0, await page.content()
                if lang == "en":
                    await _shot(page, name)
            assert await page.evaluate("() => document.documentElement.lang") == lang


def _files() -> list[Path]:
    return [path for path in Path(FILES).rglob("*") if path.is_file()]


async def test_the_panels_files_keep_their_budget_and_are_cached(client: httpx.AsyncClient) -> None:
    files = _files()
    total = sum(path.stat().st_size for path in files)
    assert total <= BUDGET, f"the panel's files are {total:,} bytes, over {BUDGET:,}"
    shell = await client.get("/admin/", headers={"accept-language": "en-US,en;q=0.9"})
    assert shell.status_code == 200 and '<html lang="en"' in shell.text and shell.headers["cache-control"] == "no-store"
    asset = await client.get("/admin/assets/app.js")
    assert asset.status_code == 200 and "max-age" in asset.headers["cache-control"] and asset.headers["etag"]
    again = await client.get("/admin/assets/app.js", headers={"if-none-match": asset.headers["etag"]})
    assert again.status_code == 304
    assert "https://" not in json.dumps([p.read_text() for p in files if p.suffix in (".js", ".html", ".css")])


@pytest.mark.parametrize("path", ["/admin", "/admin/"])
async def test_the_panel_is_where_the_setting_says(client: httpx.AsyncClient, path: str) -> None:
    answer = await client.get(path, follow_redirects=True)
    assert answer.status_code == 200 and "assets/app.js" in answer.text


async def test_an_editor_merges_two_topics_and_the_targets_feed_holds_both(browser: Browser, app: Any,
                                                                           api: Api) -> None:
    editor, author = await api.user("admin"), await api.user()
    create = "mutation($t: AdminTopicInput!) { adminCreateTopic(topic: $t) { topic { id slug } } }"
    tag = str(author.id)
    target = (await api(create, {"t": {"id": 0, "community": 1, "slug": f"keep-{tag}", "title": f"Keep {tag}"}},
                        editor))["topic"]
    source = (await api(create, {"t": {"id": 0, "community": 1, "slug": f"gone-{tag}", "title": f"Gone {tag}"}},
                        editor))["topic"]
    kept, moved = await api.published(author, topic=target["id"]), await api.published(author, topic=source["id"])
    feed = "query($s: String) { load_shouts_with_topic(slug: $s, options: {limit: 50}) { id } }"
    assert [s["id"] for s in await api(feed, {"s": target["slug"]})] == [kept]
    async with serve(app) as base:
        page = await _signed_in(browser, base, await _email(api, editor), [])
        await page.wait_for_selector("table tbody tr")
        await page.goto(f"{base}/admin/#/topics")
        await page.locator(f"li[data-topic='{source['id']}'] input[name=merge]").first.check()
        await page.locator(f"li[data-topic='{target['id']}'] button").first.click()
        await page.get_by_role("button", name="Merge into this").click()
        await page.wait_for_selector("#confirm[open]")  # once the dry run has said what moves
        said = await page.locator("#confirm-text").inner_text()
        assert f"Gone {tag}" in said and "1 shouts, 1 drafts" in said  # what moves, before it does (a dry run)
        await page.locator("#confirm-yes").click()
        await page.wait_for_function("() => document.getElementById('status').textContent.includes('Done')")
        await page.wait_for_selector(f"li[data-topic='{source['id']}']", state="detached")
    assert sorted(s["id"] for s in await api(feed, {"s": target["slug"]})) == sorted([kept, moved])


async def test_an_administrator_sets_a_communitys_roles_and_its_own_role(browser: Browser, app: Any,
                                                                         api: Api) -> None:
    """In a community of the test's own (its founder administers it): the shared default community's settings
    are every other test's."""
    admin = await api.user()
    slug = f"roles-{admin.id}"
    made = await api("mutation($c: CommunityInput!) { create_community(community_input: $c) { error } }",
                     {"c": {"slug": slug, "name": f"Roles {admin.id}"}}, admin)
    assert made["error"] is None
    community = next(c["id"] for c in await api("{ get_communities_all { id slug } }") if c["slug"] == slug)
    role = f"proofreader{admin.id}"
    settings = "query($c: Int!) { adminGetCommunityRoleSettings(community_id: $c) { default_roles available_roles } }"
    before = await api(settings, {"c": community}, admin)
    async with serve(app) as base:
        page = await _signed_in(browser, base, await _email(api, admin), [])
        await page.wait_for_selector("table tbody tr")
        await page.goto(f"{base}/admin/#/roles")
        await page.wait_for_selector("main .error")  # the default community is not theirs: it says so
        await page.locator("select[name=community]").select_option(str(community))
        await page.wait_for_selector("form.card")
        await page.fill("input[name=id]", role)
        await page.fill("input[name=name]", "Proofreader")
        await page.fill("input[name=permissions]", "shout:read, reaction:create")
        await page.get_by_role("button", name="New role").click()
        await page.wait_for_selector(f"li[data-role='{role}']")
        await page.locator(f"input[name=offered][value='{role}']").check()
        await _shot(page, "roles")
        await page.locator("form.card button[type=submit]").click()
        await page.locator("#confirm-yes").click()
        await page.wait_for_function("() => document.getElementById('status').textContent.includes('Done')")
        assert role in (await api(settings, {"c": community}, admin))["available_roles"]
        await page.locator(f"li[data-role='{role}'] button").click()
        assert "Proofreader" in await page.locator("#confirm-text").inner_text()
        await page.locator("#confirm-yes").click()
        await page.wait_for_selector(f"li[data-role='{role}']", state="detached")
    after = await api(settings, {"c": community}, admin)
    assert role not in after["available_roles"] and after["default_roles"] == before["default_roles"]
