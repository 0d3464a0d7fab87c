"""Accounts and sessions against real Redis and PostgreSQL, failures included."""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from typing import Any

import jwt
import pytest
from redis.asyncio import Redis

from auth import tokens
from auth.mailer import LogMailer
from auth.throttle import email_digest
from cache import keys
from resolvers.slugs import slugify
from tests.helpers import until

REGISTER = """mutation($email: String!, $password: String, $name: String) {
  registerUser(email: $email, password: $password, name: $name) { success error token author { id slug } } }"""
LOGIN = """mutation($email: String!, $password: String!) {
  login(email: $email, password: $password) { success error token author { id slug name } } }"""
ME = "{ me { success token author { id slug email email_verified roles } } }"
SESSION = "mutation { getSession { token author { id slug name pic bio links } } }"
PASSWORD = "correct horse battery"


def _address() -> str:
    return f"user-{uuid.uuid4().hex[:10]}@example.org"


def _token_in(mailer: LogMailer, to: str) -> str:
    message = next(m for m in reversed(mailer.sent) if m.to == to)
    match = re.search(r"token=([\w.\-]+)", message.body)
    assert match, message.body
    return match.group(1)


async def _call(client: Any, query: str, variables: dict[str, Any] | None = None,
                token: str | None = None) -> dict[str, Any]:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    client.cookies.clear()  # the bearer token (or nothing) decides who is asking, not a leftover cookie
    response = await client.post("/graphql", json={"query": query, "variables": variables or {}}, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


async def _register_and_login(client: Any, email: str | None = None, password: str = PASSWORD) -> tuple[str, str]:
    email = email or _address()
    registered = await _call(client, REGISTER, {"email": email, "password": password, "name": "Тест Автор"})
    assert registered["data"]["registerUser"]["success"], registered
    login = await _call(client, LOGIN, {"email": email, "password": password})
    assert login["data"]["login"]["success"], login
    return email, login["data"]["login"]["token"]


def _code(result: dict[str, Any]) -> str:
    return result["errors"][0]["extensions"]["code"]


async def test_register_confirm_login_and_session(client: Any, mailer: LogMailer) -> None:
    email = _address()
    registered = await _call(client, REGISTER, {"email": email, "password": PASSWORD, "name": "Анна Тест"})
    assert registered["data"]["registerUser"]["success"]
    assert registered["data"]["registerUser"]["author"]["slug"].startswith("anna-test")  # transliterated
    confirmed = await _call(client, "mutation($t: String!) { confirmEmail(token: $t) { success token } }",
                            {"t": _token_in(mailer, email)})
    token = confirmed["data"]["confirmEmail"]["token"]
    assert confirmed["data"]["confirmEmail"]["success"] and token
    me = (await _call(client, ME, token=token))["data"]["me"]
    assert me["author"]["email"] == email and me["author"]["email_verified"] is True
    assert "author" in me["author"]["roles"]
    session = await _call(client, SESSION, token=token)
    assert session["data"]["getSession"]["token"] == token


async def test_cookie_carries_the_session(client: Any) -> None:
    email, _ = await _register_and_login(client)
    response = await client.post("/graphql", json={"query": LOGIN, "variables": {"email": email, "password": PASSWORD}})
    set_cookie = response.headers["set-cookie"]
    assert "session_token=" in set_cookie and "HttpOnly" in set_cookie
    me = await client.post("/graphql", json={"query": ME})  # the client keeps the cookie
    assert me.json()["data"]["me"]["author"]["email"] == email


async def test_wrong_password_and_unknown_email_look_the_same(client: Any) -> None:
    email, _ = await _register_and_login(client)
    wrong = (await _call(client, LOGIN, {"email": email, "password": "not the password"}))["data"]["login"]
    unknown = (await _call(client, LOGIN, {"email": _address(), "password": "whatever123"}))["data"]["login"]
    assert wrong == unknown == {"success": False, "error": "Invalid email or password", "token": None, "author": None}


async def test_five_failures_lock_the_account_for_five_minutes(client: Any, redis: Redis) -> None:
    email, _ = await _register_and_login(client)
    for _ in range(5):
        await _call(client, LOGIN, {"email": email, "password": "wrong password"})
    locked = (await _call(client, LOGIN, {"email": email, "password": PASSWORD}))["data"]["login"]
    assert not locked["success"] and "Too many" in locked["error"]
    lock_keys = [k async for k in redis.scan_iter(match="login_failures:*")]
    lock_key = lock_keys[0]
    assert 290 <= await redis.ttl(lock_key) <= 300
    for _ in range(5):  # an address with no account locks the same way: nothing to learn from it
        await _call(client, LOGIN, {"email": "nobody-" + email, "password": "wrong password"})
    assert "Too many" in (await _call(client, LOGIN, {"email": "nobody-" + email, "password": "x" * 9}))[
        "data"]["login"]["error"]


@pytest.mark.parametrize("failures", [1, 2, 3, 4, 5])
async def test_the_lock_starts_at_the_fifth_failure(client: Any, failures: int) -> None:
    email, _ = await _register_and_login(client)
    for _ in range(failures):
        await _call(client, LOGIN, {"email": email, "password": "wrong password"})
    login = (await _call(client, LOGIN, {"email": email, "password": PASSWORD}))["data"]["login"]
    if failures < 5:
        assert login["success"], login
    else:
        assert not login["success"] and "Too many" in login["error"]


async def test_a_success_resets_the_count_and_the_lock_ends(client: Any, redis: Redis) -> None:
    email, _ = await _register_and_login(client)
    for _ in range(2):  # 4 + 4 failures with a success between them never lock
        for _ in range(4):
            await _call(client, LOGIN, {"email": email, "password": "wrong password"})
        assert (await _call(client, LOGIN, {"email": email, "password": PASSWORD}))["data"]["login"]["success"]
    for _ in range(5):
        await _call(client, LOGIN, {"email": email, "password": "wrong password"})
    assert not (await _call(client, LOGIN, {"email": email, "password": PASSWORD}))["data"]["login"]["success"]
    lock = keys.login_failures(email_digest(email))
    assert await redis.ttl(lock) > 0
    await redis.pexpire(lock, 1)  # the five minutes pass
    for _ in range(200):
        if not await redis.exists(lock):
            break
        await asyncio.sleep(0.005)
    assert (await _call(client, LOGIN, {"email": email, "password": PASSWORD}))["data"]["login"]["success"]


async def test_verification_tokens_are_single_use_and_expire(client: Any, mailer: LogMailer, redis: Redis) -> None:
    email, _ = await _register_and_login(client)
    confirm = "mutation($t: String!) { confirmEmail(token: $t) { success } }"
    token = _token_in(mailer, email)
    assert (await _call(client, confirm, {"t": token}))["data"]["confirmEmail"]["success"]
    assert _code(await _call(client, confirm, {"t": token})) == "INVALID_TOKEN"  # reused

    await _call(client, "mutation($e: String!) { requestPasswordReset(email: $e) { success } }", {"e": email})
    reset_token = _token_in(mailer, email)
    found = [k async for k in redis.scan_iter(match="verification:*:password_reset:*") if not k.endswith(b"pending")]
    key = found[0]
    assert 3590 <= await redis.ttl(key) <= 3600
    await redis.pexpire(key, 1)

    async def expired() -> bool:
        return not await redis.exists(key)

    await until(expired, "the token's key expires")
    reset = "mutation($t: String!, $p: String!) { resetPassword(token: $t, newPassword: $p) { success } }"
    assert _code(await _call(client, reset, {"t": reset_token, "p": "another password"})) == "INVALID_TOKEN"
    assert _code(await _call(client, confirm, {"t": "1.forged-token-forged-token-forged"})) == "INVALID_TOKEN"
    assert _code(await _call(client, confirm, {"t": "garbage"})) == "INVALID_TOKEN"


async def test_password_reset_flow(client: Any, mailer: LogMailer) -> None:
    email, old_token = await _register_and_login(client)
    sent_before = len(mailer.sent)
    unknown = await _call(client, "mutation($e: String!) { requestPasswordReset(email: $e) { success } }",
                          {"e": _address()})
    assert unknown["data"]["requestPasswordReset"]["success"] and len(mailer.sent) == sent_before
    await _call(client, "mutation($e: String!) { requestPasswordReset(email: $e) { success } }", {"e": email})
    reset = "mutation($t: String!, $p: String!) { resetPassword(token: $t, newPassword: $p) { success } }"
    result = await _call(client, reset, {"t": _token_in(mailer, email), "p": "a brand new password"})
    assert result["data"]["resetPassword"]["success"]
    assert _code(await _call(client, ME, token=old_token)) == "UNAUTHENTICATED"  # every session ended
    relogin = await _call(client, LOGIN, {"email": email, "password": "a brand new password"})
    assert relogin["data"]["login"]["success"]


async def test_logout_revokes_and_refresh_rotates(client: Any) -> None:
    email, token = await _register_and_login(client)
    refreshed = await _call(client, "mutation { refreshToken { success token } }", token=token)
    new_token = refreshed["data"]["refreshToken"]["token"]
    assert new_token and new_token != token
    assert _code(await _call(client, ME, token=token)) == "UNAUTHENTICATED"
    assert (await _call(client, ME, token=new_token))["data"]["me"]["success"]
    assert (await _call(client, "mutation { logout { success } }", token=new_token))["data"]["logout"]["success"]
    assert _code(await _call(client, ME, token=new_token)) == "UNAUTHENTICATED"
    _, third = await _register_and_login(client, email)
    assert (await _call(client, "{ logout { success } }", token=third))["data"]["logout"]["success"]
    assert _code(await _call(client, ME, token=third)) == "UNAUTHENTICATED"


async def test_password_change_ends_the_other_sessions(client: Any) -> None:
    email, first = await _register_and_login(client)
    second = (await _call(client, LOGIN, {"email": email, "password": PASSWORD}))["data"]["login"]["token"]
    change = "mutation($o: String!, $n: String!) { changePassword(oldPassword: $o, newPassword: $n) { success } }"
    wrong = await _call(client, change, {"o": "not it at all", "n": "next password 1"}, token=first)
    assert _code(wrong) == "BAD_USER_INPUT"
    assert (await _call(client, change, {"o": PASSWORD, "n": "next password 1"}, token=first))[
        "data"]["changePassword"]["success"]
    assert (await _call(client, ME, token=first))["data"]["me"]["success"]
    assert _code(await _call(client, ME, token=second)) == "UNAUTHENTICATED"


async def test_forged_expired_and_foreign_tokens_are_refused(client: Any, settings: Any) -> None:
    _, token = await _register_and_login(client)
    user_id = jwt.decode(token, options={"verify_signature": False})["sub"]
    now = int(time.time())
    claims = {"sub": user_id, "iat": now, "exp": now + 3600, "typ": "session", "username": "x"}
    forged = jwt.encode(claims, "some other secret of enough length!!", algorithm="HS256")
    expired = jwt.encode({**claims, "exp": now - 10}, settings.jwt_secret, algorithm="HS256")
    # correctly signed, but no session exists for it (e.g. a token minted for another user)
    foreign = jwt.encode({**claims, "sub": "1"}, settings.jwt_secret, algorithm="HS256")
    for bad in (forged, expired, foreign, token[:-3] + "abc", "not-a-jwt"):
        assert _code(await _call(client, ME, token=bad)) == "UNAUTHENTICATED"


def test_a_token_verified_once_still_expires_and_a_refused_one_is_not_remembered(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """auth/tokens.py remembers the tokens it verified (a reader's next requests skip the signature): what
    it remembers still expires on time, and what it refuses, it keeps refusing without remembering it."""
    secret = "t" * 40
    token = tokens.issue(7, "reader", secret=secret, ttl=60)
    verified = tokens._verified.cache_info().misses
    assert tokens.decode(token, secret=secret).user_id == 7
    assert tokens.decode(token, secret=secret).user_id == 7
    assert tokens._verified.cache_info().misses == verified + 1  # its signature verified once
    issued = time.time()
    monkeypatch.setattr(tokens.time, "time", lambda: issued + 61)  # past its expiry
    with pytest.raises(tokens.InvalidToken, match="expired"):
        tokens.decode(token, secret=secret)
    monkeypatch.undo()
    remembered = tokens._verified.cache_info().currsize
    for _ in range(2):
        with pytest.raises(tokens.InvalidToken):
            tokens.decode(token, secret="another secret of its own length!!!!!!!")
    assert tokens._verified.cache_info().currsize == remembered


@pytest.mark.parametrize("operation", [
    "{ me { success } }",
    "mutation { getSession { token } }",
    "mutation { refreshToken { success } }",
    "mutation { logout { success } }",
    'mutation { changePassword(oldPassword: "a", newPassword: "bbbbbbbbbb") { success } }',
    'mutation { updateSecurity(email: "x@example.org", old_password: "a") { success } }',
    "mutation { cancelEmailChange { success } }",
])
async def test_anonymous_calls_get_a_clear_error(client: Any, operation: str) -> None:
    result = await _call(client, operation)
    assert _code(result) == "UNAUTHENTICATED"


async def test_email_change(client: Any, mailer: LogMailer) -> None:
    _, token = await _register_and_login(client)
    new_email = _address()
    update = """mutation($e: String, $o: String) { updateSecurity(email: $e, old_password: $o) {
      success error author { id } } }"""
    wrong = await _call(client, update, {"e": new_email, "o": "wrong one"}, token=token)
    assert not wrong["data"]["updateSecurity"]["success"]
    started = await _call(client, update, {"e": new_email, "o": PASSWORD}, token=token)
    assert started["data"]["updateSecurity"]["success"]
    cancelled = await _call(client, "mutation { cancelEmailChange { success } }", token=token)
    assert cancelled["data"]["cancelEmailChange"]["success"]
    confirm = "mutation($t: String!) { confirmEmailChange(token: $t) { success } }"
    assert _code(await _call(client, confirm, {"t": _token_in(mailer, new_email)})) == "INVALID_TOKEN"
    await _call(client, update, {"e": new_email, "o": PASSWORD}, token=token)
    assert (await _call(client, confirm, {"t": _token_in(mailer, new_email)}))["data"]["confirmEmailChange"]["success"]
    assert (await _call(client, ME, token=token))["data"]["me"]["author"]["email"] == new_email
    assert (await _call(client, LOGIN, {"email": new_email, "password": PASSWORD}))["data"]["login"]["success"]


async def test_private_fields_only_for_self_and_admins(client: Any) -> None:
    email, token = await _register_and_login(client)
    me = (await _call(client, ME, token=token))["data"]["me"]["author"]
    query = "query($id: Int) { get_author(author_id: $id) { email roles email_verified } }"
    assert (await _call(client, query, {"id": me["id"]}))["data"]["get_author"] == \
        {"email": None, "roles": None, "email_verified": None}
    _, other = await _register_and_login(client)
    assert (await _call(client, query, {"id": me["id"]}, token=other))["data"]["get_author"]["email"] is None
    _, admin = await _register_and_login(client, "root@example.org")  # listed in ADMIN_EMAILS
    assert (await _call(client, "{ isAdmin }", token=admin))["data"]["isAdmin"] is True
    assert (await _call(client, "{ isAdmin }", token=other))["data"]["isAdmin"] is False
    assert (await _call(client, "{ isAdmin }"))["data"]["isAdmin"] is False
    assert (await _call(client, query, {"id": me["id"]}, token=admin))["data"]["get_author"]["email"] == email


async def test_questions(client: Any) -> None:
    email, _ = await _register_and_login(client)
    assert (await _call(client, "query($e: String!) { isEmailUsed(email: $e) }", {"e": email}))["data"]["isEmailUsed"]
    assert not (await _call(client, "query($e: String!) { isEmailUsed(email: $e) }", {"e": _address()}))[
        "data"]["isEmailUsed"]
    roles = (await _call(client, "{ getRoles { id permissions { resource action } } }"))["data"]["getRoles"]
    by_id = {r["id"]: {(p["resource"], p["action"]) for p in r["permissions"]} for r in roles}
    assert set(by_id) == {"reader", "author", "artist", "expert", "editor", "admin"}
    assert ("shout", "update_any") in by_id["editor"] and ("shout", "update_any") not in by_id["author"]
    assert by_id["reader"] < by_id["author"] < by_id["editor"] < by_id["admin"]
    found = await _call(client, '{ get_author_id(user: "user-000003") { slug } }')
    assert found["data"]["get_author_id"] == {"slug": "author-3"}


async def test_redis_holds_no_raw_token_and_the_seed_ttls(client: Any, redis: Redis) -> None:
    _, token = await _register_and_login(client)
    user_id = jwt.decode(token, options={"verify_signature": False})["sub"]
    signature = token.rsplit(".", 1)[1].encode()
    async for key in redis.scan_iter(count=1000):
        assert token.encode() not in key and signature not in key
        kind = await redis.type(key)
        if kind == b"string":
            value = await redis.get(key)
            assert token.encode() not in value and signature not in value
        elif kind == b"hash":
            for field_value in (await redis.hgetall(key)).values():
                assert token.encode() not in field_value and signature not in field_value
        elif kind == b"set":
            for member in await redis.smembers(key):
                assert token.encode() not in member
    session_keys = [k async for k in redis.scan_iter(match=f"session:{{{user_id}}}:*")]
    assert session_keys
    month = 30 * 24 * 3600
    for key in [*session_keys, keys.user_sessions(int(user_id)).encode()]:
        assert month - 5 <= await redis.ttl(key) <= month
    fields = await redis.hgetall(session_keys[0])
    assert set(fields) == {b"user_id", b"username", b"token_type", b"created_at", b"last_activity",
                           b"auth_data", b"device_info"}


async def test_session_reads_cost_no_sql_when_warm(client: Any, sql_counter: Any) -> None:
    _, token = await _register_and_login(client)
    await _call(client, ME, token=token)
    await _call(client, SESSION, token=token)
    sql_counter.reset()
    me = await _call(client, ME, token=token)
    session = await _call(client, SESSION, token=token)
    assert me["data"]["me"]["success"] and session["data"]["getSession"]["token"] == token
    assert sql_counter.count == 0, sql_counter.statements


@pytest.mark.parametrize("name, slug", [
    ("Анна Тест", "anna-test"), ("Щукин Ёжиков", "shchukin-yozhikov"), ("Їжак Ґава", "yizhak-gava"),
    ("Zoë Ørsted", "zoe-orsted"), ("  !!! ", "author"), ("я" * 50, "ya" * 20),
])
def test_slugs_are_transliterated(name: str, slug: str) -> None:
    assert slugify(name) == slug


async def test_a_sign_in_prunes_expired_sessions_and_caps_the_live_ones(redis: Redis) -> None:
    """`user_sessions:{id}` renews its TTL at every sign-in, so only pruning keeps it to the live sessions:
    expired ids leave it, and past SESSIONS_PER_USER the oldest session is revoked."""
    from auth.sessions import SessionStore

    store = SessionStore(redis, secret="s" * 40, ttl=3600, per_user=3)
    user = 900_000_000 + uuid.uuid4().int % 1_000_000
    listed = keys.user_sessions(user)
    first = await store.create(user, "u")
    expired = await store.create(user, "u")
    await redis.delete(keys.session(user, expired.token_id))  # its hash expired; its id stays listed
    # 150 ids left from sessions long expired: more than one SSCAN step
    await redis.sadd(listed, *[f"gone{n}" for n in range(150)])
    second = await store.create(user, "u")
    assert {tokens.as_text(m) for m in await redis.smembers(listed)} == {first.token_id, second.token_id}
    for n, session in enumerate((first, second)):  # distinct creation times: the oldest is `first`
        await redis.hset(keys.session(user, session.token_id), "created_at", str(1_000 + n))
    third = await store.create(user, "u")
    fourth = await store.create(user, "u")
    assert {tokens.as_text(m) for m in await redis.smembers(listed)} == {
        second.token_id, third.token_id, fourth.token_id}
    assert await store.validate(first.token) is None  # revoked: the oldest past the cap
    assert await store.validate(fourth.token) is not None and await store.validate(second.token) is not None
