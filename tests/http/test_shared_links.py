"""A shared `/graphql?query=…` link (issue 73): a browser's navigation gets GraphiQL with the query filled in
(tests/http/test_graphiql_browser.py shows the editors), every other client keeps its answer; a request
naming an operation its document lacks is a JSON error with a code, not a line of plain text."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from app.http.graphiql import TITLE
from app.http.graphql_request import wants_a_page

QUERY = {"query": "{ get_topics_all { slug } }"}
BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"


@pytest.mark.parametrize("accept, page", [
    (BROWSER, True),  # Chromium's and Firefox's navigation
    ("text/html", True),
    ("TEXT/HTML", True),
    ("*/*", False),  # curl, fetch() without headers
    ("", False),
    ("application/json", False),
    ("application/graphql-response+json, application/json;q=0.9, text/html;q=0.1", False),
    ("application/json, text/html", False),
])
def test_a_page_is_what_a_navigation_asks_for(accept: str, page: bool) -> None:
    assert wants_a_page(accept) is page


@pytest.mark.parametrize("accept, page", [(BROWSER, True), ("*/*", False), ("application/json", False),
                                          ("application/graphql-response+json", False)])
async def test_a_get_with_a_query_is_the_ide_for_a_browser_only(client: httpx.AsyncClient, accept: str,
                                                                page: bool) -> None:
    response = await client.get("/graphql", params=QUERY, headers={"accept": accept})
    assert response.status_code == 200
    if page:
        assert response.headers["content-type"].startswith("text/html") and f"<title>{TITLE}" in response.text
        assert "cache-control" not in response.headers or "public" not in response.headers["cache-control"]
    else:
        body: Any = response.json()
        assert "errors" not in body and isinstance(body["data"]["get_topics_all"], list)


@pytest.mark.parametrize("method", ["GET", "POST"])
async def test_an_unknown_operation_name_is_a_json_error_with_a_code(client: httpx.AsyncClient, method: str) -> None:
    asked = {**QUERY, "operationName": "Elsewhere"}
    response = (await client.get("/graphql", params=asked) if method == "GET"
                else await client.post("/graphql", json=asked))
    assert response.status_code == 400
    assert response.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
    assert "Elsewhere" in response.json()["errors"][0]["message"]
