"""GraphiQL served whole by the server: Strawberry's page, with the scripts and styles it loads from unpkg
served from app/static/graphiql instead (copied there, hash-checked, by scripts/vendor_graphiql.py). The
page keeps its Subresource Integrity attributes, so the browser checks the served files against the same
hashes. Nothing is fetched from the internet: the page works offline.

The page is this API's: its title, and its own script (app/static/ide/start.js) in place of Strawberry's
welcome, which opens a shared link's query, variables and operation, or the starter query
(app/static/ide/starter.graphql) that runs on the demo data."""

from __future__ import annotations

import html
import re
from functools import lru_cache
from pathlib import Path

import orjson
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from schema.engine.seam import graphql_ide_page

STATIC = Path(__file__).resolve().parents[1] / "static"  # app/static
ASSETS = STATIC / "graphiql"
IDE = STATIC / "ide"
PREFIX = "/graphiql-assets/"
CDN = "https://unpkg.com/"
TITLE = "Discours API · GraphiQL"


def starter_query() -> str:
    return (IDE / "starter.graphql").read_text()


@lru_cache(maxsize=1)
def offline_page() -> str:
    page = graphql_ide_page()
    assert "https://" not in page.replace(CDN, ""), "the GraphiQL page loads from somewhere else than unpkg"
    title = re.search(r"<title>[^<]*</title>", page)
    welcome = re.search(r"<script>\s*const EXAMPLE_QUERY.*?</script>", page, re.S)
    assert title and welcome, "Strawberry's GraphiQL page changed its form: see app/http/graphiql.py"
    # the starter as JSON inside a script element: "</" escaped so no text of it can close the element
    starter = orjson.dumps(starter_query()).decode().replace("</", "<\\/")
    ours = (f'<script type="application/json" id="starter-query">{starter}</script>\n'
            f"    <script>\n{(IDE / 'start.js').read_text()}</script>")
    page = page[:welcome.start()] + ours + page[welcome.end():]
    return page.replace(title[0], f"<title>{html.escape(TITLE)}</title>").replace(CDN, PREFIX)


def assets_route() -> Mount:
    return Mount(PREFIX.rstrip("/"), app=StaticFiles(directory=ASSETS), name="graphiql-assets")
