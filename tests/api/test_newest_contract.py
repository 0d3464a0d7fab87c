"""What the August 2025 contract adds outside its admin API, through GraphQL: collections read, reactions
filtered by a shout's and an author's id, `CommonResult.success`, an author's name never null, and both
forms of `updateEnvVariable`. Each read is made once before the write it follows."""

from __future__ import annotations

import uuid

from tests.helpers import Api

COLLECTION = "query($s: String!) { get_collection(slug: $s) { id slug title desc pic amount created_by { id } } }"
ALL = "{ get_collections_all { slug title } }"
BY_AUTHOR = "query($id: Int) { get_collections_by_author(author_id: $id) { slug } }"


async def test_collections_are_read_by_slug_all_and_by_author(api: Api) -> None:
    maker, other = await api.user(), await api.user()
    slug = f"coll-{uuid.uuid4().hex[:10]}"
    assert await api(COLLECTION, {"s": slug}) is None
    before = await api(ALL)
    assert await api(BY_AUTHOR, {"id": maker.id}) == []

    created = await api("mutation($c: CollectionInput!) { create_collection(collection_input: $c) { success error } }",
                        {"c": {"slug": slug, "title": "Подборка", "desc": "о разном", "pic": "https://pic/1.png"}},
                        maker)
    assert created == {"success": True, "error": None}
    found = await api(COLLECTION, {"s": slug})
    assert found == {"id": found["id"], "slug": slug, "title": "Подборка", "desc": "о разном",
                     "pic": "https://pic/1.png", "amount": 0, "created_by": {"id": maker.id}}
    assert {"slug": slug, "title": "Подборка"} in await api(ALL) and len(await api(ALL)) == len(before) + 1
    assert await api(BY_AUTHOR, {"id": maker.id}) == [{"slug": slug}]
    assert await api(BY_AUTHOR, {"id": other.id}) == []

    renamed = f"coll-{uuid.uuid4().hex[:10]}"  # `id` names it, so its slug can change
    update = "mutation($c: CollectionInput!) { update_collection(collection_input: $c) { success error } }"
    assert await api.error(update, {"c": {"id": found["id"], "slug": renamed, "title": "x"}}, other) == "FORBIDDEN"
    await api(update, {"c": {"id": found["id"], "slug": renamed, "title": "Новое имя"}}, maker)
    assert await api(COLLECTION, {"s": slug}) is None
    assert (await api(COLLECTION, {"s": renamed}))["title"] == "Новое имя"
    assert await api(BY_AUTHOR, {"id": maker.id}) == [{"slug": renamed}]
    await api("mutation($s: String!) { delete_collection(slug: $s) { success } }", {"s": renamed}, maker)
    assert await api(COLLECTION, {"s": renamed}) is None and await api(BY_AUTHOR, {"id": maker.id}) == []


REACTIONS = "query($by: ReactionBy!) { load_reactions_by(by: $by, limit: 50) { id } }"
COMMENT = "mutation($r: ReactionInput!) { create_reaction(reaction: $r) { reaction { id } } }"


async def test_reactions_by_a_shouts_id_and_an_authors_id(api: Api) -> None:
    author, commenter, other = await api.user(), await api.user(), await api.user()
    shout = await api.published(author)
    slug = (await api("query($id: Int) { get_shout(shout_id: $id) { slug } }", {"id": shout}))["slug"]
    assert await api(REACTIONS, {"by": {"shout_id": shout}}) == []
    assert await api(REACTIONS, {"by": {"author_id": commenter.id}}) == []
    mine = await api(COMMENT, {"r": {"kind": "COMMENT", "shout": shout, "body": "первый"}}, commenter)
    theirs = await api(COMMENT, {"r": {"kind": "LIKE", "shout": shout}}, other)
    ids = {mine["reaction"]["id"], theirs["reaction"]["id"]}

    assert {r["id"] for r in await api(REACTIONS, {"by": {"shout_id": shout}})} == ids
    assert await api(REACTIONS, {"by": {"shout_id": shout}}) == await api(REACTIONS, {"by": {"shout": slug}})
    assert await api(REACTIONS, {"by": {"author_id": commenter.id}}) == [{"id": mine["reaction"]["id"]}]
    comments = {"shout_id": shout, "kinds": ["COMMENT", "QUOTE"]}  # a comment thread, read from its live list
    assert await api(REACTIONS, {"by": comments}) == [{"id": mine["reaction"]["id"]}]
    assert await api(REACTIONS, {"by": {"shout_id": shout, "shout": "no-such-shout"}}) == []
    assert await api.error(REACTIONS, {"by": {"author_id": commenter.id, "created_by": other.id}}) == "BAD_USER_INPUT"


async def test_an_author_without_a_name_shows_their_slug(api: Api) -> None:
    person = await api.user()
    from orm import Author
    from resolvers.writes import transaction

    async with transaction(api.deps) as session:
        (await session.get(Author, person.id)).name = None  # type: ignore[union-attr]
    found = await api("query($id: Int) { get_author(author_id: $id) { slug name } }", {"id": person.id})
    assert found["name"] == found["slug"]


async def test_both_forms_of_update_env_variable(api: Api) -> None:
    admin = await api.user("admin")
    old = 'mutation { updateEnvVariable(key: "FEATURE_REGISTRATION", value: "on") }'
    new = 'mutation { updateEnvVariable(variable: {key: "FEATURE_REGISTRATION", value: "off", type: "string"}) }'
    read = "{ getEnvVariables { variables { key value } } }"

    def value(sections: list[dict[str, object]]) -> object:
        return next(v["value"] for s in sections for v in s["variables"]  # type: ignore[attr-defined]
                    if v["key"] == "FEATURE_REGISTRATION")

    assert await api(old, user=admin) is True and value(await api(read, user=admin)) == "on"
    assert await api(new, user=admin) is True and value(await api(read, user=admin)) == "off"
    assert await api.error("mutation { updateEnvVariable }", user=admin) == "BAD_USER_INPUT"
    both = 'mutation { updateEnvVariable(key: "A", value: "1", variable: {key: "A", value: "1", type: "string"}) }'
    assert await api.error(both, user=admin) == "BAD_USER_INPUT"
    assert await api.error(new, user=await api.user()) == "FORBIDDEN"
