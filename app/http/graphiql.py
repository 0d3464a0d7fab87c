"""GraphiQL served whole by the server: Strawberry's page, with the scripts and styles it loads from unpkg
served from app/static/graphiql instead (copied there, hash-checked, by scripts/vendor_graphiql.py). The
page keeps its Subresource Integrity attributes, so the browser checks the served files against the same
hashes. Nothing is fetched from the internet: the page works offline."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from schema.engine.seam import graphql_ide_page

ASSETS = Path(__file__).resolve().parents[1] / "static" / "graphiql"  # app/static
PREFIX = "/graphiql-assets/"
CDN = "https://unpkg.com/"


@lru_cache(maxsize=1)
def offline_page() -> str:
    page = graphql_ide_page()
    assert "https://" not in page.replace(CDN, ""), "the GraphiQL page loads from somewhere else than unpkg"
    return page.replace(CDN, PREFIX)


def assets_route() -> Mount:
    return Mount(PREFIX.rstrip("/"), app=StaticFiles(directory=ASSETS), name="graphiql-assets")
