"""The response cache: a hit skips parse, validate and execute; any invalidation of anything the response
was built from makes it a miss; only anonymous, error-free public queries are stored."""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from tests.helpers import Api

AUTHOR = 'query($s: String) { get_author(slug: $s) { id name stat { shouts } } }'


async def _commands(redis: Redis) -> dict[str, int]:
    stats = await redis.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}


async def test_a_hit_costs_no_sql_and_two_redis_commands(client: Any, app: Any, sql_counter: Any,
                                                         redis: Redis) -> None:
    query = {"query": "query($o: LoadShoutsOptions) { load_shouts_by(options: $o) { id title authors { name } "
                      "topics { slug } stat { rating } } }", "variables": {"o": {"limit": 10, "offset": 20}}}
    first = (await client.post("/graphql", json=query)).json()
    before = await _commands(redis)
    sql_counter.reset()
    second = await client.post("/graphql", json=query)
    after = await _commands(redis)
    assert second.json() == first
    assert sql_counter.count == 0
    spent = {name: after[name] - before.get(name, 0) for name in after if after[name] != before.get(name, 0)}
    spent.pop("info", None)
    assert spent == {"get": 1, "mget": 1}, spent
    assert app.state.responses.hits >= 1


async def test_a_committed_write_refreshes_the_response(api: Api, client: Any) -> None:
    """X-Cache shows each step: computed and stored, served whole, made a miss by the write."""
    user = await api.user()
    read = {"query": AUTHOR, "variables": {"s": user.slug}}
    client.cookies.clear()
    first = await client.post("/graphql", json=read)
    second = await client.post("/graphql", json=read)
    assert (first.headers["x-cache"], second.headers["x-cache"]) == ("MISS", "HIT")
    assert second.content == first.content
    await api("mutation { update_author(profile: {name: \"Новое имя\"}) { error } }", user=user)
    client.cookies.clear()
    third = await client.post("/graphql", json=read)
    assert third.headers["x-cache"] == "MISS"
    assert third.json()["data"]["get_author"]["name"] == "Новое имя"
    signed_in = await client.post("/graphql", json=read, headers={"authorization": f"Bearer {user.token}"})
    assert signed_in.headers["x-cache"] == "BYPASS"


async def test_signed_in_errors_mutations_and_random_are_not_stored(api: Api, app: Any) -> None:
    user = await api.user()
    for _ in range(2):
        await api(AUTHOR, {"s": user.slug}, user)
        await api.raw("{ load_shouts_by(options: {limit: -1}) { id } }")
        await api("{ load_shouts_random_top(options: {limit: 3}) { id } }")
        await api("mutation { requestPasswordReset(email: \"nobody@example.org\") { success } }")
    cache = getattr(app.state, "responses", None)
    assert cache is None or cache.stores == 0
