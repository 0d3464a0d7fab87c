"""The topic tree of the August 2025 contract: `Topic.parent_ids` and `Topic.community`, topics placed
under others (`set_topic_parent`, `TopicInput.parent_ids`) with cycles and other communities refused, and
`merge_topics` moving followers, shouts, drafts and subtopics to the target in one transaction. Every read
is made once before the write, so a cached answer that the write left in place would fail it."""

from __future__ import annotations

import uuid
from typing import Any

import orjson
from sqlalchemy import select

from orm import DraftTopic
from tests.helpers import Api, User

CREATE = "mutation($t: TopicInput!) { create_topic(topic_input: $t) { error topic { id slug community parent_ids } } }"
TOPIC = "query($s: String!) { get_topic(slug: $s) { id slug community parent_ids } }"
PLACE = ("mutation($t: Int!, $p: Int) { set_topic_parent(topic_id: $t, parent_id: $p) "
         "{ success error topic { id parent_ids } } }")
MERGE = "mutation($m: TopicMergeInput!) { merge_topics(merge_input: $m) { success error message stats topic { id } } }"


async def _topic(api: Api, editor: User, **values: Any) -> dict[str, Any]:
    made = await api(CREATE, {"t": {"slug": f"tree-{uuid.uuid4().hex[:10]}", "title": "Тема", **values}}, editor)
    return dict(made["topic"])


async def test_a_topic_sits_under_topics_of_its_community_and_never_under_itself(api: Api) -> None:
    editor, reader = await api.user("editor"), await api.user()
    root = await _topic(api, editor)
    child = await _topic(api, editor, parent_ids=[root["id"]])
    leaf = await _topic(api, editor)
    assert child["community"] == 1 and child["parent_ids"] == [root["id"]]
    assert (await api(TOPIC, {"s": leaf["slug"]}))["parent_ids"] is None  # read, so the next read is a cached one

    assert await api.error(PLACE, {"t": root["id"], "p": child["id"]}, editor) == "BAD_USER_INPUT"  # a cycle
    assert await api.error(PLACE, {"t": root["id"], "p": root["id"]}, editor) == "BAD_USER_INPUT"
    assert await api.error(PLACE, {"t": leaf["id"], "p": child["id"]}, reader) == "FORBIDDEN"
    assert await api.error(PLACE, {"t": 10**9, "p": child["id"]}, editor) == "NOT_FOUND"
    assert (await api(TOPIC, {"s": root["slug"]}))["parent_ids"] is None

    placed = await api(PLACE, {"t": leaf["id"], "p": child["id"]}, editor)
    assert placed["success"] is True and placed["topic"]["parent_ids"] == [child["id"]]
    assert (await api(TOPIC, {"s": leaf["slug"]}))["parent_ids"] == [child["id"]]
    assert await api.error(PLACE, {"t": root["id"], "p": leaf["id"]}, editor) == "BAD_USER_INPUT"  # two levels down
    await api(PLACE, {"t": leaf["id"], "p": None}, editor)
    assert (await api(TOPIC, {"s": leaf["slug"]}))["parent_ids"] is None

    # A community of its founder's, with a topic of its own: no parent of community 1's topics, and
    # community 1's editor may not make topics there.
    founder = await api.user()
    club = await api("mutation($c: CommunityInput!) { create_community(community_input: $c) { community { id } } }",
                     {"c": {"slug": f"club-{uuid.uuid4().hex[:8]}", "name": "Клуб"}}, founder)
    club_id = club["community"]["id"]
    theirs = await _topic(api, founder, community=club_id)
    assert theirs["community"] == club_id
    assert await api.error(CREATE, {"t": {"slug": f"tree-{uuid.uuid4().hex[:10]}", "community": club_id}},
                           editor) == "FORBIDDEN"
    assert await api.error(PLACE, {"t": leaf["id"], "p": theirs["id"]}, editor) == "BAD_USER_INPUT"
    assert await api.error(CREATE, {"t": {"slug": f"tree-{uuid.uuid4().hex[:10]}", "community": club_id,
                                          "parent_ids": [root["id"]]}}, founder) == "BAD_USER_INPUT"


async def test_deleting_a_topic_moves_its_subtopics_up_a_level(api: Api) -> None:
    editor = await api.user("editor")
    top = await _topic(api, editor)
    middle = await _topic(api, editor, parent_ids=[top["id"]])
    low = await _topic(api, editor, parent_ids=[middle["id"]])
    assert (await api(TOPIC, {"s": low["slug"]}))["parent_ids"] == [middle["id"]]
    await api("mutation($id: Int!) { delete_topic_by_id(id: $id) { error } }", {"id": middle["id"]}, editor)
    assert (await api(TOPIC, {"s": low["slug"]}))["parent_ids"] == [top["id"]]


SHOUT_TOPICS = "query($id: Int) { get_shout(shout_id: $id) { topics { id } main_topic { id } } }"
FOLLOWERS = "query($s: String) { get_topic_followers(slug: $s) { id } }"
WITH_TOPIC = "query($s: String) { load_shouts_with_topic(slug: $s, options: {limit: 50}) { id } }"


async def test_a_merge_moves_everything_to_the_target_and_removes_the_sources(api: Api) -> None:
    editor, reader, author = await api.user("editor"), await api.user(), await api.user()
    target = await _topic(api, editor)
    first, second = await _topic(api, editor), await _topic(api, editor)
    under_first = await _topic(api, editor, parent_ids=[first["id"]])
    both, only_first, only_second = await api.user(), await api.user(), await api.user()
    follow = "mutation($s: String!) { follow(what: TOPIC, slug: $s) { error } }"
    for person, topics in ((both, (target, first)), (only_first, (first,)), (only_second, (second,))):
        for topic in topics:
            await api(follow, {"s": topic["slug"]}, person)
    in_first = await api.published(author, first["id"])  # its main topic
    in_second = await api.published(author, second["id"])
    draft = await api("mutation($d: DraftInput!) { create_draft(draft_input: $d) { draft { id } } }",
                      {"d": {"title": "Черновик", "body": "<p>b</p>", "topic_ids": [second["id"]]}}, author)

    # Read before: each of these is cached now.
    assert {a["id"] for a in await api(FOLLOWERS, {"s": target["slug"]})} == {both.id}
    assert await api(WITH_TOPIC, {"s": target["slug"]}) == []
    assert (await api(SHOUT_TOPICS, {"id": in_first}))["main_topic"] == {"id": first["id"]}
    assert (await api(TOPIC, {"s": under_first["slug"]}))["parent_ids"] == [first["id"]]

    merge = {"target_topic_id": target["id"], "source_topic_ids": [first["id"], second["id"]]}
    assert await api.error(MERGE, {"m": merge}, reader) == "FORBIDDEN"
    assert await api.error(MERGE, {"m": {**merge, "source_topic_ids": [target["id"]]}}, editor) == "BAD_USER_INPUT"
    assert await api.error(MERGE, {"m": {**merge, "source_topic_ids": [10**9]}}, editor) == "NOT_FOUND"
    assert await api(TOPIC, {"s": first["slug"]}) is not None  # refused merges changed nothing

    # a dry run says what the merge will move and changes nothing (every cached read above stays right)
    dry = await api(MERGE, {"m": {**merge, "dry_run": True}}, editor)
    assert orjson.loads(dry["stats"]) == {"followers_moved": 2, "publications_moved": 2, "drafts_moved": 3,
                                          "source_topics_deleted": 2}
    assert await api(TOPIC, {"s": first["slug"]}) is not None and await api(WITH_TOPIC, {"s": target["slug"]}) == []
    assert {a["id"] for a in await api(FOLLOWERS, {"s": target["slug"]})} == {both.id}

    merged = await api(MERGE, {"m": merge}, editor)
    assert merged["success"] is True and merged["error"] is None and merged["topic"] == {"id": target["id"]}
    # drafts: the unpublished one and the two shouts' own drafts (a published shout keeps its draft)
    assert orjson.loads(merged["stats"]) == {"followers_moved": 2, "publications_moved": 2, "drafts_moved": 3,
                                             "source_topics_deleted": 2}

    assert await api(TOPIC, {"s": first["slug"]}) is None and await api(TOPIC, {"s": second["slug"]}) is None
    assert {a["id"] for a in await api(FOLLOWERS, {"s": target["slug"]})} == {both.id, only_first.id, only_second.id}
    assert {s["id"] for s in await api(WITH_TOPIC, {"s": target["slug"]})} == {in_first, in_second}
    assert await api(SHOUT_TOPICS, {"id": in_first}) == {"topics": [{"id": target["id"]}],
                                                         "main_topic": {"id": target["id"]}}
    assert (await api(TOPIC, {"s": under_first["slug"]}))["parent_ids"] == [target["id"]]
    async with api.deps.db() as session:
        assert (await session.scalars(select(DraftTopic.topic).where(
            DraftTopic.draft == draft["draft"]["id"]))).all() == [target["id"]]


async def test_topics_of_two_communities_do_not_merge(api: Api) -> None:
    founder = await api.user()
    club = await api("mutation($c: CommunityInput!) { create_community(community_input: $c) { community { id } } }",
                     {"c": {"slug": f"club-{uuid.uuid4().hex[:8]}", "name": "Клуб"}}, founder)
    here = await _topic(api, founder, community=club["community"]["id"])
    admin = await api.user("admin")
    there = await _topic(api, admin)
    merge = {"target_topic_id": there["id"], "source_topic_ids": [here["id"]]}
    assert await api.error(MERGE, {"m": merge}, admin) == "BAD_USER_INPUT"
    assert await api(TOPIC, {"s": here["slug"]}) is not None
