"""CORS (issue 10): the web client on its own origin calls the API with credentials. Listed origins, exact
or patterns, get their origin echoed with credentials and `Vary: Origin`; preflights get 204 with the
methods, headers and max-age; other origins get nothing a browser would accept."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from config.settings import Settings, SettingsError, load_settings

ORIGINS = ["https://discours.io", "https://*.discours.io", "http://localhost:*"]
QUERY = {"query": "{ get_topics_all { id } }"}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"cors_origins": ORIGINS, "cors_max_age": 1234})


def _preflight(origin: str, method: str = "POST", headers: str = "content-type, authorization") -> dict[str, str]:
    return {"origin": origin, "access-control-request-method": method, "access-control-request-headers": headers}


@pytest.mark.parametrize("origin", ["https://discours.io", "https://new.discours.io", "https://a.b.discours.io",
                                    "http://localhost:3000"])
async def test_a_listed_origin_gets_its_preflight_answered(client: httpx.AsyncClient, origin: str) -> None:
    response = await client.options("/graphql", headers=_preflight(origin))
    assert response.status_code == 204 and response.content == b""
    assert response.headers["access-control-allow-origin"] == origin
    assert response.headers["access-control-allow-credentials"] == "true"
    assert {"GET", "POST"} <= set(response.headers["access-control-allow-methods"].split(", "))
    allowed = set(response.headers["access-control-allow-headers"].lower().split(", "))
    assert {"authorization", "content-type"} <= allowed
    assert response.headers["access-control-max-age"] == "1234"
    assert "Origin" in response.headers["vary"]


async def test_a_credentialed_request_gets_its_origin_back(client: httpx.AsyncClient) -> None:
    """Computed or answered from the response cache in front of the view (app/http/response_front.py)."""
    client.cookies.set("session_token", "whatever")
    answers = [await client.post("/graphql", json=QUERY, headers={"origin": "https://new.discours.io"})
               for _ in range(2)]
    assert [a.headers["x-cache"] for a in answers] == ["MISS", "HIT"]
    for response in answers:
        assert response.status_code == 200 and "errors" not in response.json()
        assert response.headers["access-control-allow-origin"] == "https://new.discours.io"
        assert response.headers["access-control-allow-credentials"] == "true"
        assert "Origin" in response.headers["vary"]
        assert "etag" in response.headers["access-control-expose-headers"].lower()


@pytest.mark.parametrize("origin", ["https://evil.example", "https://discours.io.evil.example",
                                    "https://evildiscours.io", "http://discours.io", "https://discours.io:8443",
                                    "null"])
async def test_other_origins_get_nothing_a_browser_accepts(client: httpx.AsyncClient, origin: str) -> None:
    preflight = await client.options("/graphql", headers=_preflight(origin))
    assert preflight.status_code == 400
    assert "access-control-allow-origin" not in preflight.headers
    response = await client.post("/graphql", json=QUERY, headers={"origin": origin})
    assert response.status_code == 200  # answered (a server cannot stop the request), unreadable to the page
    assert "access-control-allow-origin" not in response.headers


async def test_a_preflight_for_an_unlisted_header_or_method_is_refused(client: httpx.AsyncClient) -> None:
    assert (await client.options("/graphql", headers=_preflight("https://discours.io", "DELETE"))).status_code == 400
    refused = await client.options("/graphql", headers=_preflight("https://discours.io", "POST", "x-secret"))
    assert refused.status_code == 400


def _settings(**values: Any) -> Settings:
    return load_settings(jwt_secret="t" * 40, **values)


def test_defaults_allow_localhost_in_development_and_nothing_in_production() -> None:
    development = _settings(database_url="sqlite:///./x.db")
    assert "http://localhost:*" in development.allowed_origins
    production = _settings(database_url="postgresql://u@h/db")
    assert production.allowed_origins == []
    assert _settings(database_url="postgresql://u@h/db", environment="development").allowed_origins
    assert _settings(database_url="sqlite:///./x.db", environment="production").allowed_origins == []
    assert _settings(database_url="postgresql://u@h/db", cors_origins=["https://discours.io"]).allowed_origins == [
        "https://discours.io"]


@pytest.mark.parametrize("origin", ["https://discours.io/", "discours.io", "https://discours.io/path", "*"])
def test_an_origin_that_is_not_one_is_refused_at_start(origin: str) -> None:
    with pytest.raises(SettingsError, match="CORS_ORIGINS"):
        _settings(cors_origins=[origin])


def test_a_cross_site_cookie_needs_a_secure_one() -> None:
    with pytest.raises(SettingsError, match="COOKIE_SECURE"):
        _settings(cookie_samesite="none")
    assert _settings(cookie_samesite="none", cookie_secure=True).cookie_samesite == "none"
