"""GraphQL over HTTP: `application/graphql-response+json` when asked for it, the classic JSON otherwise."""

from __future__ import annotations

from typing import Any

GQL_RESPONSE = "application/graphql-response+json"


async def test_request_errors_are_400_without_data_for_graphql_response_json(client: Any) -> None:
    headers = {"accept": GQL_RESPONSE}
    parse_error = await client.post("/graphql", json={"query": "{ get_author("}, headers=headers)
    assert parse_error.status_code == 400
    assert parse_error.headers["content-type"].startswith(GQL_RESPONSE)
    assert "data" not in parse_error.json() and parse_error.json()["errors"]
    invalid = await client.post("/graphql", json={"query": "{ no_such_field }"}, headers=headers)
    assert invalid.status_code == 400 and "data" not in invalid.json()
    coercion = await client.post("/graphql", headers=headers, json={
        "query": "query($id: Int) { get_author(author_id: $id) { id } }", "variables": {"id": "not a number"}})
    assert coercion.status_code == 400


async def test_executed_requests_are_200_even_with_field_errors(client: Any) -> None:
    headers = {"accept": GQL_RESPONSE}
    ok = await client.post("/graphql", json={"query": '{ get_author(slug: "author-1") { slug } }'}, headers=headers)
    assert ok.status_code == 200 and ok.json()["data"]["get_author"]["slug"] == "author-1"
    field_error = await client.post("/graphql", json={"query": "{ load_shouts_by(options: {limit: -1}) { id } }"},
                                    headers=headers)
    assert field_error.status_code == 200 and field_error.json()["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"


async def test_plain_json_clients_keep_200(client: Any) -> None:
    response = await client.post("/graphql", json={"query": "{ get_author("}, headers={"accept": "application/json"})
    assert response.status_code == 200 and response.headers["content-type"].startswith("application/json")


async def test_etag_and_304_for_hits_and_computed_answers(api: Any, client: Any) -> None:
    """An ETag on every error-free query answer; If-None-Match with it gives 304 and no body, for a
    response-cache hit, for a computed answer and for a signed-in one; a write changes the tag.
    Cache-Control carries the smallest max age the answer's fields declare, `private` for an answer kept
    per viewer, `no-cache` (revalidate) where no field declares one."""
    user = await api.user()
    query = {"query": "query($s: String) { get_author(slug: $s) { name } }", "variables": {"s": user.slug}}
    client.cookies.clear()
    first = await client.post("/graphql", json=query)
    etag = first.headers["etag"]
    assert first.headers["cache-control"] == "public, max-age=60" and etag.startswith('W/"')
    hit = await client.post("/graphql", json=query, headers={"if-none-match": etag})
    assert hit.status_code == 304 and hit.content == b"" and hit.headers["etag"] == etag
    assert hit.headers["x-cache"] == "HIT"
    other = await client.post("/graphql", json=query, headers={"if-none-match": '"something-else"'})
    assert other.status_code == 200 and other.headers["etag"] == etag

    signed_in = {"authorization": f"Bearer {user.token}"}
    public = await client.post("/graphql", json=query, headers=signed_in)
    assert public.headers["x-cache"] == "HIT" and public.headers["cache-control"] == "public, max-age=60"
    private = {"query": "query($s: String) { get_author(slug: $s) { name email } }", "variables": {"s": user.slug}}
    kept = await client.post("/graphql", json=private, headers=signed_in)
    assert kept.headers["x-cache"] == "MISS" and kept.headers["cache-control"] == "private, max-age=60"
    undeclared = {"query": "{ load_shouts_top(limit: 3) { id } }"}
    computed = await client.post("/graphql", json=undeclared, headers=signed_in)
    assert computed.headers["x-cache"] == "BYPASS" and computed.headers["cache-control"] == "private, no-cache"
    again = await client.post("/graphql", json=undeclared, headers={
        **signed_in, "if-none-match": computed.headers["etag"].removeprefix("W/")})
    assert again.status_code == 304
    client.cookies.clear()
    assert (await client.post("/graphql", json=undeclared)).headers["cache-control"] == "no-cache"

    await api('mutation { update_author(profile: {name: "Другое имя"}) { error } }', user=user)
    client.cookies.clear()
    changed = await client.post("/graphql", json=query, headers={"if-none-match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag


async def test_mutations_and_errors_are_not_stored_by_anyone(client: Any) -> None:
    mutation = await client.post("/graphql", json={"query": 'mutation { requestPasswordReset(email: "x@example.org") { success } }'})
    assert mutation.headers["cache-control"] == "no-store" and "etag" not in mutation.headers
    error = await client.post("/graphql", json={"query": "{ nope }"})
    assert error.headers["cache-control"] == "no-store" and "etag" not in error.headers
