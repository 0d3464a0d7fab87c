"""Automatic persisted queries, as Apollo clients speak them: a hash alone is PersistedQueryNotFound until
the document is sent with it (hash checked), then the hash alone runs it, over POST and over GET, where an
anonymous public query is a response-cache hit like the full request."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import httpx
from redis.asyncio import Redis

from cache import keys

QUERY = "query Topics { get_topics_all { slug } }"
DIGEST = hashlib.sha256(QUERY.encode()).hexdigest()


def persisted(digest: str = DIGEST, version: int = 1) -> dict[str, Any]:
    return {"persistedQuery": {"version": version, "sha256Hash": digest}}


async def test_register_then_run_by_hash_over_post_and_get(client: httpx.AsyncClient, redis: Redis) -> None:
    unknown = await client.post("/graphql", json={"extensions": persisted()})
    assert unknown.status_code == 200
    assert unknown.json()["errors"][0]["message"] == "PersistedQueryNotFound"
    assert unknown.json()["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_FOUND"

    registered = await client.post("/graphql", json={"query": QUERY, "extensions": persisted(), "operationName": "Topics"})
    assert registered.status_code == 200 and registered.json()["data"]["get_topics_all"]
    assert 0 < await redis.ttl(keys.persisted_query(DIGEST)) <= 86_400

    by_hash = await client.post("/graphql", json={"extensions": persisted(), "operationName": "Topics"})
    assert by_hash.json() == registered.json()
    assert by_hash.headers["x-cache"] == "HIT"  # the hash stands for the document: one response-cache entry

    params = {"extensions": json.dumps(persisted()), "operationName": "Topics"}
    over_get = await client.get("/graphql", params=params)
    assert over_get.status_code == 200 and over_get.json() == registered.json()
    assert over_get.headers["x-cache"] in ("HIT", "MISS")
    again = await client.get("/graphql", params=params)
    assert again.headers["x-cache"] == "HIT" and again.content == over_get.content


async def test_a_wrong_hash_or_version_is_refused_and_nothing_is_stored(client: httpx.AsyncClient,
                                                                        redis: Redis) -> None:
    other = hashlib.sha256(b"something else").hexdigest()
    wrong = await client.post("/graphql", json={"query": QUERY, "extensions": persisted(other)})
    assert wrong.status_code == 400 and wrong.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
    assert await redis.exists(keys.persisted_query(other)) == 0
    for bad in (persisted(version=2), persisted("not-a-hash"), {"persistedQuery": "x"}):
        refused = await client.post("/graphql", json={"query": QUERY, "extensions": bad})
        assert refused.status_code == 400
        assert refused.json()["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_SUPPORTED"


async def test_a_stored_document_that_does_not_match_its_hash_is_not_run(client: httpx.AsyncClient,
                                                                        redis: Redis) -> None:
    """Keys hold a hash of the hash (64 characters at most), so a document is checked against the hash
    asked for before it runs."""
    await redis.set(keys.persisted_query(DIGEST), "{ get_communities_all { slug } }")
    response = await client.post("/graphql", json={"extensions": persisted()})
    assert response.json()["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_FOUND"


async def test_a_persisted_mutation_is_refused_over_get(client: httpx.AsyncClient) -> None:
    mutation = 'mutation Out { logout { success } }'
    digest = hashlib.sha256(mutation.encode()).hexdigest()
    await client.post("/graphql", json={"query": mutation, "extensions": persisted(digest)})
    response = await client.get("/graphql", params={"extensions": json.dumps(persisted(digest))})
    assert response.status_code == 405 and response.headers["allow"] == "POST"
