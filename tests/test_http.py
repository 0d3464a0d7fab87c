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
