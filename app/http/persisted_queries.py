"""Automatic persisted queries (Apollo's protocol): `extensions.persistedQuery.sha256Hash` with the document
registers it (the hash checked); without it, it names a registered document, or is answered
PERSISTED_QUERY_NOT_FOUND, which tells the client to send the document too."""

from __future__ import annotations

from app.http.graphql_request import GraphQLRequest
from app.http.guards import BAD_REQUEST, PERSISTED_QUERY_NOT_FOUND, Refused
from cache.response.persisted import PersistedQueries, sha256


async def resolved(request: GraphQLRequest, store: PersistedQueries) -> GraphQLRequest:
    """The request with its document: as sent, or the registered one its hash names."""
    single = request.single
    if single is None or single.persisted_hash is None:
        return request
    if single.document:
        if sha256(single.document) != single.persisted_hash:
            raise Refused(400, BAD_REQUEST, "provided sha does not match query")
        await store.put(single.persisted_hash, single.document)
        return request
    found = await store.get(single.persisted_hash)
    if found is None:
        raise Refused(200, PERSISTED_QUERY_NOT_FOUND, "PersistedQueryNotFound")
    return request.with_document(found)
