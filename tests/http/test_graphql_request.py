"""The request read once (app/http/graphql_request.py) at its boundary: what it makes of a GET and a POST, what it
refuses and how, and that a POST which misses the response cache is decoded from JSON once, whoever reads
its parameters afterwards (the front, the view's steps, Strawberry)."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from starlette.types import Message

from app.http.graphql_request import GraphQLRequest, ReadingRules, read
from app.http.guards import Refused
from cache.response.persisted import sha256

RULES = ReadingRules(max_json_depth=8, max_batch=3, session_cookie="session_token")
QUERY = "query Named($n: Int) { get_topics_all { slug } }"


def _scope(method: str, *, query_string: bytes = b"", headers: dict[str, str] | None = None) -> dict[str, Any]:
    return {"type": "http", "method": method, "path": "/graphql", "query_string": query_string,
            "headers": [(k.encode(), v.encode()) for k, v in (headers or {}).items()], "client": ("192.0.2.7", 5)}


async def _read(method: str, body: bytes = b"", **scope: Any) -> GraphQLRequest:
    chunks: list[Message] = [{"type": "http.request", "body": body[:5], "more_body": True},
                             {"type": "http.request", "body": body[5:], "more_body": False}]

    async def receive() -> Message:
        return chunks.pop(0)

    request, again = await read(_scope(method, **scope), receive, RULES)
    if method == "POST":  # the body is given again, whole, to whoever reads it next
        assert await again() == {"type": "http.request", "body": body, "more_body": False}
    return request


def _post(value: Any, **headers: str) -> Any:
    return _read("POST", orjson.dumps(value), headers={"content-type": "application/json", **headers})


async def test_a_post_is_one_operation_with_its_public_key_and_who_asks() -> None:
    request = await _post({"query": QUERY, "operationName": "Named", "variables": {"n": 1}},
                          accept="application/graphql-response+json", cookie="session_token=abc; other=1")
    single = request.single
    assert single is not None and single.document == QUERY and single.operation_name == "Named"
    assert single.variables == {"n": 1} and not request.batch and request.operation_name == "Named"
    assert request.token == "abc" and request.signed_in and request.address == "192.0.2.7"
    assert request.public_key is not None and request.public_key == request.response_key()
    assert request.response_key(scope="user:1") not in (None, request.public_key)
    assert not (await _post({"query": QUERY}, cookie="other=1")).signed_in
    # the header before the cookie; a bare token as some Discours clients send it; a blank header: none
    assert (await _post({"query": QUERY}, authorization="Bearer x", cookie="session_token=abc")).token == "x"
    assert (await _post({"query": QUERY}, authorization="x")).token == "x"
    assert not (await _post({"query": QUERY}, authorization=" ")).signed_in


async def test_a_get_decodes_its_json_parameters_and_keys_as_the_same_post() -> None:
    variables = {"n": 1}
    get = await _read("GET", query_string=b"query=" + QUERY.replace(" ", "+").replace("$", "%24").encode()
                      + b"&operationName=Named&variables=" + orjson.dumps(variables))
    post = await _post({"query": QUERY, "operationName": "Named", "variables": variables})
    assert get.single is not None and get.single.variables == variables
    assert get.public_key == post.public_key
    browser = await _read("GET", query_string=b"query=%7B+__typename+%7D", headers={"accept": "text/html"})
    assert browser.public_key is None  # a browser's GET is answered, never kept
    page = await _read("GET", headers={"accept": "text/html"})
    assert page.asks_for_ide and page.single is None
    script = await _read("GET", headers={"accept": "application/json"})
    assert not script.asks_for_ide and script.single is not None and script.single.document is None


async def test_a_hash_only_persisted_query_keys_as_its_document() -> None:
    persisted = {"persistedQuery": {"version": 1, "sha256Hash": sha256(QUERY)}}
    by_hash = await _post({"extensions": persisted})
    assert by_hash.single is not None and by_hash.single.document is None
    assert by_hash.public_key == (await _post({"query": QUERY})).public_key
    found = by_hash.with_document(QUERY)
    assert found.single is not None and found.single.document == QUERY and found.public_key == by_hash.public_key


async def test_a_batch_is_its_operations_and_has_no_key() -> None:
    request = await _post([{"query": QUERY}, {"query": "{ __typename }"}])
    assert request.batch and len(request.operations) == 2 and request.single is None
    assert request.public_key is None and request.operation_name == "batch"


REFUSED: list[tuple[str, bytes, dict[str, str], int, str]] = [
    ("not JSON", b"{ __typename }", {"content-type": "text/plain"}, 415, "UNSUPPORTED_MEDIA_TYPE"),
    ("malformed JSON", b'{"query": ', {}, 400, "BAD_REQUEST"),
    ("invalid UTF-8", b'{"query": "\xff"}', {}, 400, "BAD_REQUEST"),
    ("too deep", b'{"query": "{ a }", "variables": {"a": [[[[[[[[[1]]]]]]]]]}}', {}, 400, "BAD_REQUEST"),
    ("a JSON string", b'"hello"', {}, 400, "BAD_REQUEST"),
    ("an empty batch", b"[]", {}, 400, "BAD_REQUEST"),
    ("a long batch", orjson.dumps([{"query": "{ a }"}] * 4), {}, 400, "TOO_MANY_OPERATIONS"),
    ("query not a string", b'{"query": 1}', {}, 400, "BAD_REQUEST"),
    ("variables not an object", b'{"query": "{ a }", "variables": [1]}', {}, 400, "BAD_REQUEST"),
    ("operationName not a string", b'{"query": "{ a }", "operationName": 2}', {}, 400, "BAD_REQUEST"),
    ("persistedQuery of another version", b'{"extensions": {"persistedQuery": {"version": 2, "sha256Hash": "ab"}}}',
     {}, 400, "PERSISTED_QUERY_NOT_SUPPORTED"),
]


@pytest.mark.parametrize("what, body, headers, status, code", REFUSED, ids=[r[0] for r in REFUSED])
async def test_what_is_refused_while_reading(what: str, body: bytes, headers: dict[str, str], status: int,
                                             code: str) -> None:
    with pytest.raises(Refused) as refused:
        await _read("POST", body, headers={"content-type": "application/json", **headers})
    assert (refused.value.status, refused.value.code) == (status, code)


async def test_a_post_that_misses_is_decoded_from_json_once(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """From the socket to the answer: the front reads it, misses, hands it to the view, whose steps and
    Strawberry take the parameters as read. Counted: every JSON decode of this body's bytes or text."""
    body = orjson.dumps({"query": "query($o: LoadShoutsOptions) { load_shouts_by(options: $o) { id } }",
                         "variables": {"o": {"limit": 3, "offset": 7}}})
    decodes: list[Any] = []
    orjson_loads, json_loads = orjson.loads, json.loads

    def counting_orjson(data: Any) -> Any:
        if data in (body, body.decode()):
            decodes.append(data)
        return orjson_loads(data)

    def counting_json(data: Any, *args: Any, **kwargs: Any) -> Any:
        if data in (body, body.decode()):
            decodes.append(data)
        return json_loads(data, *args, **kwargs)

    monkeypatch.setattr(orjson, "loads", counting_orjson)
    monkeypatch.setattr(json, "loads", counting_json)
    response = await client.post("/graphql", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 200 and response.headers["x-cache"] == "MISS", response.text
    assert len(response.json()["data"]["load_shouts_by"]) == 3
    assert len(decodes) == 1
