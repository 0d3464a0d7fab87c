"""Schemathesis in GraphQL mode against a running server: every query and mutation of the schema, with
arguments generated from their types, anonymous and signed in; no answer may be a 5xx or carry
`INTERNAL_SERVER_ERROR` (issue 9). The server runs on a database of its own (`<test db>_fuzz`), since
generated mutations write whatever their types allow.

FUZZ_EXAMPLES (default 10) sets the examples per operation and identity: 10 makes about 2,000 requests;
the closing note's long run used more."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from sqlalchemy.ext.asyncio import create_async_engine

from app.cli.seed import SIZES, seed_connection
from orm.engine import create_database_if_missing
from schema.schema import build_schema
from tests.conftest import TEST_DATABASE_URL, TEST_REDIS_URL, _migrate_fresh
from tests.helpers import PASSWORD
from tests.live import ROOT, free_port

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "10"))
FUZZ_DATABASE_URL = TEST_DATABASE_URL + "_fuzz"
FUZZ_REDIS_URL = TEST_REDIS_URL.rsplit("/", 1)[0] + "/11"
# Operations that would end the signed-in run's own session (the rest of it would run anonymous).
ENDS_SESSION = ("logout", "delete_author", "deleteAuthor")


def _prepare_database() -> None:
    async def seed() -> None:
        engine = create_async_engine(FUZZ_DATABASE_URL)
        async with engine.begin() as conn:
            await seed_connection(conn, SIZES["test"], seed=11)
        await engine.dispose()

    asyncio.run(create_database_if_missing(FUZZ_DATABASE_URL))
    _migrate_fresh(FUZZ_DATABASE_URL)
    asyncio.run(seed())


@pytest.fixture(scope="module")
def fuzz_server() -> Iterator[tuple[str, str]]:
    """A one-worker server on the fuzz database; yields (base URL, a signed-in user's token)."""
    _prepare_database()
    port = free_port()
    env = {**os.environ, "DATABASE_URL": FUZZ_DATABASE_URL, "REDIS_URL": FUZZ_REDIS_URL, "JWT_SECRET": "f" * 40,
           "PASSWORD_TIME_COST": "1", "PASSWORD_MEMORY_COST": "1024", "CACHE_REVALIDATION_INTERVAL": "3600",
           "REQUEST_TIMEOUT": "30"}
    process = subprocess.Popen([sys.executable, "-m", "uvicorn", "app.asgi:app", "--host", "127.0.0.1",
                                "--port", str(port), "--log-level", "warning"], cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, timeout=30) as client:
            for _ in range(150):
                try:
                    client.get("/healthz")
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            client.post("/graphql", json={"query": "mutation($e: String!, $p: String!) { registerUser(email: $e, "
                                                   "password: $p, name: \"Fuzz\") { success } }",
                                          "variables": {"e": "fuzz@example.org", "p": PASSWORD}})
            login = client.post("/graphql", json={"query": "mutation($e: String!, $p: String!) { login(email: $e, "
                                                            "password: $p) { token } }",
                                                   "variables": {"e": "fuzz@example.org", "p": PASSWORD}})
            token = login.json()["data"]["login"]["token"]
        yield base, token
    finally:
        process.terminate()
        process.wait(10)


def _server_errors(response: Any) -> list[str]:
    if response.status_code >= 500:
        return [f"HTTP {response.status_code}: {response.text[:200]}"]
    try:
        errors = response.json().get("errors") or []
    except ValueError:
        return [f"not JSON: {response.text[:200]}"]
    return [e.get("message", "") for e in errors if (e.get("extensions") or {}).get("code") == "INTERNAL_SERVER_ERROR"]


def test_generated_requests_find_no_server_error(fuzz_server: tuple[str, str]) -> None:
    base, token = fuzz_server
    fuzz_schema = schemathesis.graphql.from_file(str(build_schema()))
    failures: list[str] = []
    sent = [0]

    def fuzz(operation: Any, headers: dict[str, str]) -> None:
        who = "signed in" if headers else "anonymous"

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        def run(case: Any) -> None:
            response = case.call(base_url=f"{base}/graphql", headers=headers)
            sent[0] += 1
            failures.extend(f"{operation.label} {who}: {problem}\n{case.body}" for problem in _server_errors(response))

        run()

    for result in fuzz_schema.get_all_operations():
        operation = result.ok()
        fuzz(operation, {})
        if not any(name in operation.label for name in ENDS_SESSION):
            fuzz(operation, {"authorization": f"Bearer {token}"})
    print(f"\nfuzz: {sent[0]} requests, {len(failures)} server errors")
    assert sent[0] >= 100 * min(EXAMPLES, 10), sent
    assert not failures, "\n\n".join(failures[:10])
