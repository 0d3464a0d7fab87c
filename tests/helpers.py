"""Signed-in GraphQL calls for tests: users with roles, one call helper."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import update

from orm import CommunityAuthor
from resolvers.deps import Deps
from resolvers.writes import transaction

PASSWORD = "correct horse battery"


@dataclass
class User:
    id: int
    slug: str
    token: str


class Api:
    def __init__(self, client: Any, deps: Deps) -> None:
        self.client = client
        self.deps = deps

    async def raw(self, query: str, variables: dict[str, Any] | None = None, user: User | None = None) -> Any:
        self.client.cookies.clear()
        headers = {"authorization": f"Bearer {user.token}"} if user else {}
        response = await self.client.post("/graphql", json={"query": query, "variables": variables or {}},
                                          headers=headers)
        assert response.status_code == 200, response.text
        return response.json()

    async def __call__(self, query: str, variables: dict[str, Any] | None = None, user: User | None = None) -> Any:
        body = await self.raw(query, variables, user)
        assert "errors" not in body, body["errors"]
        data = body["data"]
        return next(iter(data.values())) if len(data) == 1 else data

    async def error(self, query: str, variables: dict[str, Any] | None = None, user: User | None = None) -> str:
        body = await self.raw(query, variables, user)
        assert body.get("errors"), body
        return str(body["errors"][0]["extensions"]["code"])

    async def user(self, *roles: str, email: str | None = None) -> User:
        email = email or f"u-{uuid.uuid4().hex[:12]}@example.org"
        await self("mutation($e: String!, $p: String!) { registerUser(email: $e, password: $p, name: $e) "
                   "{ success } }", {"e": email, "p": PASSWORD})
        login = await self("mutation($e: String!, $p: String!) { login(email: $e, password: $p) "
                           "{ token author { id slug } } }", {"e": email, "p": PASSWORD})
        user = User(id=login["author"]["id"], slug=login["author"]["slug"], token=login["token"])
        if roles:
            async with transaction(self.deps) as session:
                await session.execute(update(CommunityAuthor).where(
                    CommunityAuthor.author == user.id, CommunityAuthor.community == 1).values(
                    roles=",".join(("reader", "author", *roles))))
        return user
