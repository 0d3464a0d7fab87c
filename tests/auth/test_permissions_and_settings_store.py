"""The one permission module, and the admin-only settings store behind it."""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from auth.permissions import Viewer, can
from cache import keys
from tests.auth.test_auth import LOGIN, PASSWORD, _call, _code, _register_and_login

reader = Viewer(author_id=10, roles={1: frozenset({"reader"})})
author = Viewer(author_id=11, roles={1: frozenset({"reader", "author"})})
editor = Viewer(author_id=12, roles={1: frozenset({"reader", "editor"})})
admin_elsewhere = Viewer(author_id=13, roles={2: frozenset({"admin"})})
system_admin = Viewer(author_id=14, system_admin=True)


def test_editing_needs_authorship_or_an_editor() -> None:
    assert can(author, "shout:update", owners=[11, 99])
    assert not can(author, "shout:update", owners=[99])
    assert can(editor, "shout:update", owners=[99])
    assert not can(reader, "shout:update", owners=[10])  # a reader cannot edit even "their" shout
    assert can(author, "draft:update", owners=[11]) and not can(author, "draft:update", owners=[12])
    assert not can(None, "shout:read")


def test_roles_are_per_community() -> None:
    assert can(admin_elsewhere, "community:update", community_id=2)
    assert not can(admin_elsewhere, "community:update", community_id=1)
    assert not admin_elsewhere.is_admin
    assert can(system_admin, "community:delete", community_id=7) and system_admin.is_admin
    assert not can(editor, "community:update") and can(editor, "topic:create")


async def test_settings_store_is_admin_only(client: Any, redis: Redis) -> None:
    query = "{ getEnvVariables { name variables { key value isSecret } } }"
    update = 'mutation { updateEnvVariable(key: "FEATURE_REGISTRATION", value: "on") }'
    secret = 'mutation { updateEnvVariable(key: "OAUTH_GOOGLE_CLIENT_SECRET", value: "s3cr3t") }'
    assert _code(await _call(client, query)) == "UNAUTHENTICATED"
    _, user = await _register_and_login(client)
    assert _code(await _call(client, update, token=user)) == "FORBIDDEN"
    login = await _call(client, LOGIN, {"email": "root@example.org", "password": PASSWORD})
    admin = login["data"]["login"]["token"] or (await _register_and_login(client, "root@example.org"))[1]
    assert (await _call(client, update, token=admin))["data"]["updateEnvVariable"] is True
    assert (await _call(client, secret, token=admin))["data"]["updateEnvVariable"] is True
    bad = 'mutation { updateEnvVariable(key: "lower case", value: "x") }'
    assert _code(await _call(client, bad, token=admin)) == "BAD_USER_INPUT"
    sections = {s["name"]: s["variables"] for s in (await _call(client, query, token=admin))["data"]["getEnvVariables"]}
    assert sections["features"] == [{"key": "FEATURE_REGISTRATION", "value": "on", "isSecret": False}]
    assert sections["auth"][0]["value"] != "s3cr3t" and sections["auth"][0]["isSecret"]
    assert await redis.get(keys.env_var("FEATURE_REGISTRATION")) == b"on"
    assert await redis.ttl(keys.env_var("FEATURE_REGISTRATION")) == -1  # seed 000: kept without TTL
