"""GraphQL over HTTP's content negotiation: which media type an answer is sent as, and which encoding a
stored answer is sent in."""

from __future__ import annotations

from cache.response.responses import Hit, PlainBodies

GRAPHQL_RESPONSE = "application/graphql-response+json"


def wants_graphql_response(accept: str) -> bool:
    """Whether the client accepts GraphQL over HTTP's own media type: then a request that never executed
    (parse, validation or variable errors) is a 400 with no `data`; a client that accepts only
    `application/json` gets the classic 200."""
    return GRAPHQL_RESPONSE in accept


def media_type(accept: str) -> str:
    """GraphQL over HTTP's media type to a client that asks for it, else the classic JSON."""
    return f"{GRAPHQL_RESPONSE}; charset=utf-8" if wants_graphql_response(accept) else "application/json"


def stored_body(hit: Hit, accept_encoding: str, plain: PlainBodies) -> tuple[bytes, dict[str, str]]:
    """A stored body as it is (gzip to a client that accepts gzip, most do), else its plain form (as
    `plain` keeps it); and the headers that say which."""
    if hit.gzipped and "gzip" in accept_encoding:
        return hit.body, {"content-encoding": "gzip"}
    return plain.of(hit), {}
