"""Authentication under load (issue 9): per-address limits on logins, registrations and mail asked for,
a per-recipient limit on mail, and password hashing off the event loop with a bounded queue."""

from __future__ import annotations

import asyncio
import os
import threading
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from argon2 import PasswordHasher
from sqlalchemy import select, update

from app.main import create_app, wire
from auth.mailer import LogMailer
from auth.passwords import HashingBusy, Passwords
from auth.services import build_auth
from orm.author import Author
from tests.helpers import PASSWORD, inside_one_window, until

LOGIN = "mutation($e: String!, $p: String!) { login(email: $e, password: $p) { success error } }"
REGISTER = "mutation($e: String!, $p: String!) { registerUser(email: $e, password: $p) { success error } }"
RESET = "mutation($e: String!) { requestPasswordReset(email: $e) { success } }"

Client = Callable[[str], Any]


@pytest.fixture
def limited(engine: Any, cache: Any, redis: Any, settings: Any, mailer: LogMailer) -> Callable[..., Any]:
    """An app with the given rate limits; yields a function that opens a client from a given address."""
    @asynccontextmanager
    async def open_app(**limits: int) -> AsyncIterator[Callable[[str], Any]]:
        own = settings.model_copy(update=limits)
        app = create_app(own, deps=wire(own, engine, cache, auth=build_auth(own, redis, mailer=mailer)))

        async def post(address: str, query: str, variables: dict[str, Any]) -> dict[str, Any]:
            transport = httpx.ASGITransport(app=app, client=(address, 4000))
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
                response = await client.post("/graphql", json={"query": query, "variables": variables})
                return response.json()  # type: ignore[no-any-return]

        yield post

    return open_app


def _email() -> str:
    return f"load-{uuid.uuid4().hex[:10]}@example.org"


def _code(body: dict[str, Any]) -> str | None:
    return body["errors"][0]["extensions"]["code"] if body.get("errors") else None


async def test_logins_from_one_address_are_limited_per_minute(limited: Any) -> None:
    async with limited(logins_per_address=5) as post:
        await inside_one_window(60)  # the limit's window (auth/services.py)
        for _ in range(5):  # fresh addresses: the per-account lockout never applies
            body = await post("10.1.0.1", LOGIN, {"e": _email(), "p": "wrong password"})
            assert body["data"]["login"] == {"success": False, "error": "Invalid email or password"}
        assert _code(await post("10.1.0.1", LOGIN, {"e": _email(), "p": "wrong password"})) == "RATE_LIMITED"
        other = await post("10.1.0.2", LOGIN, {"e": _email(), "p": "wrong password"})
        assert other["data"]["login"]["success"] is False and "errors" not in other


async def test_registrations_from_one_address_are_limited(limited: Any) -> None:
    async with limited(registrations_per_address=3) as post:
        await inside_one_window(3600)  # the limit's window (auth/services.py)
        for _ in range(3):
            assert (await post("10.2.0.1", REGISTER, {"e": _email(), "p": PASSWORD}))["data"]["registerUser"]["success"]
        assert _code(await post("10.2.0.1", REGISTER, {"e": _email(), "p": PASSWORD})) == "RATE_LIMITED"
        assert (await post("10.2.0.2", REGISTER, {"e": _email(), "p": PASSWORD}))["data"]["registerUser"]["success"]


async def test_mail_is_limited_per_address_and_per_recipient(limited: Any, mailer: LogMailer) -> None:
    async with limited(mails_per_address=3, mails_per_recipient=2) as post:
        await inside_one_window(3600)  # the limit's window (auth/services.py)
        email = _email()
        await post("10.3.0.9", REGISTER, {"e": email, "p": PASSWORD})  # mails once: the confirmation
        sent_before = len(mailer.sent)
        for address in ("10.3.0.1", "10.3.0.2", "10.3.0.3"):  # three addresses ask for the same inbox
            assert (await post(address, RESET, {"e": email}))["data"]["requestPasswordReset"]["success"]
        to_inbox = [m for m in list(mailer.sent)[sent_before:] if m.to == email]
        assert len(to_inbox) == 1  # the confirmation took one of the hour's two; the rest are not sent
        for _ in range(2):  # one address may ask three times an hour (it asked once above)
            assert (await post("10.3.0.1", RESET, {"e": _email()}))["data"]["requestPasswordReset"]["success"]
        assert _code(await post("10.3.0.1", RESET, {"e": _email()})) == "RATE_LIMITED"


async def test_hashing_runs_off_the_event_loop_and_refuses_when_its_queue_is_full() -> None:
    passwords = Passwords(time_cost=1, memory_cost=1024, threads=1, max_waiting=1)
    loop_thread = threading.current_thread()
    seen: list[threading.Thread] = []
    release = threading.Event()
    hasher = passwords._hasher

    class SlowHasher:  # argon2's hasher, held up until the test releases it
        def hash(self, password: str) -> str:
            seen.append(threading.current_thread())
            release.wait(5)
            return hasher.hash(password)

        def verify(self, stored: str, password: str) -> bool:
            seen.append(threading.current_thread())
            return hasher.verify(stored, password)

    passwords._hasher = SlowHasher()  # type: ignore[assignment]
    first = asyncio.ensure_future(passwords.hash("first password"))
    second = asyncio.ensure_future(passwords.hash("second password"))  # waits for the one thread
    await until(lambda: passwords.taken == 2 and len(seen) == 1, "one hash runs and one waits for the thread")
    with pytest.raises(HashingBusy):
        await passwords.hash("third password")
    ticks = 0
    for _ in range(10):  # the loop keeps running while a hash is under way
        await asyncio.sleep(0)
        ticks += 1
    assert ticks == 10 and not first.done()
    release.set()
    hashes = await asyncio.gather(first, second)
    assert all(h.startswith("$argon2id$") for h in hashes)
    assert seen and all(thread is not loop_thread for thread in seen)
    assert await passwords.verify(hashes[0], "first password")
    assert not await passwords.verify(hashes[0], "wrong")


async def test_hashing_uses_one_lane_at_idle_priority() -> None:
    """A hash may take its pool's one thread and no more (argon2 starts a thread per lane), and that
    thread yields to every other: a flood of logins costs idle CPU, not the requests' (bench.login_flood)."""
    passwords = Passwords(time_cost=1, memory_cost=1024)
    stored = await passwords.hash("some password")
    assert ",p=1$" in stored
    policy = await asyncio.get_running_loop().run_in_executor(passwords._pool, os.sched_getscheduler, 0)
    assert policy == os.SCHED_IDLE


async def test_an_outdated_hash_is_replaced_at_sign_in(client: Any, deps: Any) -> None:
    """Four-lane hashes (argon2-cffi's default, which older versions stored) still sign in, and the
    sign-in replaces them with today's."""
    email = _email()
    register = "mutation($e: String!, $p: String!) { registerUser(email: $e, password: $p) { author { id } } }"
    registered = await client.post("/graphql", json={"query": register, "variables": {"e": email, "p": PASSWORD}})
    author_id = registered.json()["data"]["registerUser"]["author"]["id"]
    four_lanes = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=4).hash(PASSWORD)
    async with deps.db() as session, session.begin():
        await session.execute(update(Author).where(Author.id == author_id).values(password=four_lanes))

    signed_in = await client.post("/graphql", json={"query": LOGIN, "variables": {"e": email, "p": PASSWORD}})
    assert signed_in.json()["data"]["login"] == {"success": True, "error": None}
    async with deps.db() as session:
        stored = await session.scalar(select(Author.password).where(Author.id == author_id))
    assert stored != four_lanes and ",p=1$" in stored
    assert deps.accounts.passwords.outdated(four_lanes) and not deps.accounts.passwords.outdated(stored)
    again = await client.post("/graphql", json={"query": LOGIN, "variables": {"e": email, "p": PASSWORD}})
    assert again.json()["data"]["login"]["success"]
