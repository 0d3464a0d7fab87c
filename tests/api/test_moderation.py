"""Moderation through the admin API: soft delete and restore of shouts and comments bring back exactly
what was there (in lists, threads and counts), moderators' lists filter and page with their totals, a
list past a hundred is never cut short, and every write lands in the audit trail. Each read is made once
before the write it follows: a cached answer the write left in place fails the test."""

from __future__ import annotations

from typing import Any

from cache.live.counters import get_counters
from tests.helpers import Api, User

SHOUTS = ("query($l: Int, $o: Int, $s: String, $st: String, $c: Int) { adminGetShouts(limit: $l, offset: $o, "
          "search: $s, status: $st, community: $c) { total page perPage totalPages shouts { id title deleted_at "
          "published_at authors { id } created_by { id } deleted_by { id } community { id } stat { comments_count } } } }")
REACTIONS = ("query($l: Int, $o: Int, $s: String, $k: ReactionKind, $sh: Int, $st: String) { adminGetReactions("
             "limit: $l, offset: $o, search: $s, kind: $k, shout_id: $sh, status: $st) { total totalPages reactions "
             "{ id kind body deleted_at deleted_by { id } created_by { id } shout { id title } } } }")
AUDIT = ("query($e: String, $i: String) { adminGetAuditLog(entity: $e, entity_id: $i) { total entries "
         "{ actor action entity entity_id community before after } } }")
THREAD = ("query($s: Int!) { load_reactions_by(by: {shout_id: $s, kinds: [COMMENT, QUOTE]}, limit: 50) "
          "{ id body } }")
FEED = "query { load_shouts_by(options: {limit: 100}) { id } }"


async def _comment(api: Api, who: User, shout: int, body: str, reply_to: int | None = None) -> int:
    made = await api("mutation($r: ReactionInput!) { create_reaction(reaction: $r) { reaction { id } } }",
                     {"r": {"kind": "COMMENT", "shout": shout, "body": body, "reply_to": reply_to}}, who)
    return int(made["reaction"]["id"])


async def _comments(api: Api, shout: int) -> int:
    """The shout's live comment count (a `stat` in a stored response follows it within a revalidation
    interval, docs/cache-correctness.md)."""
    counts = await get_counters("shout", [shout], live=api.deps.live, db=api.deps.db)
    return int(counts[0]["comments"])


async def test_a_hidden_comment_comes_back_where_it_was(api: Api) -> None:
    editor, author, reader = await api.user("editor"), await api.user(), await api.user()
    shout = await api.published(author)
    first = await _comment(api, reader, shout, "первый")
    spam = await _comment(api, reader, shout, "спам спам")
    reply = await _comment(api, author, shout, "ответ на спам", reply_to=spam)
    thread = await api(THREAD, {"s": shout})
    assert [c["id"] for c in thread] == [reply, spam, first]
    assert await _comments(api, shout) == 3

    hide = "mutation($i: Int!) { adminDeleteReaction(reaction_id: $i) { success error } }"
    restore = "mutation($i: Int!) { adminRestoreReaction(reaction_id: $i) { success error } }"
    assert await api.error(hide, {"i": spam}, reader) == "FORBIDDEN"
    assert await api.error(hide, {"i": 10**9}, editor) == "NOT_FOUND"
    assert await api(hide, {"i": spam}, editor) == {"success": True, "error": None}
    assert [c["id"] for c in await api(THREAD, {"s": shout})] == [reply, first]
    assert await _comments(api, shout) == 2
    assert await api.error(hide, {"i": spam}, editor) == "BAD_USER_INPUT"  # hidden already

    deleted = await api(REACTIONS, {"sh": shout, "st": "deleted"}, editor)
    assert deleted["total"] == 1 and deleted["reactions"][0]["id"] == spam
    assert deleted["reactions"][0]["deleted_by"] == {"id": editor.id}
    assert deleted["reactions"][0]["shout"]["id"] == shout
    assert (await api(REACTIONS, {"sh": shout, "st": "active"}, editor))["total"] == 2
    assert (await api(REACTIONS, {"sh": shout, "s": "спам"}, editor))["total"] == 2  # the spam and the reply

    assert await api(restore, {"i": spam}, editor) == {"success": True, "error": None}
    assert await api(THREAD, {"s": shout}) == thread
    assert await _comments(api, shout) == 3
    assert await api.error(restore, {"i": spam}, editor) == "BAD_USER_INPUT"

    edit = "mutation($r: AdminReactionUpdateInput!) { adminUpdateReaction(reaction: $r) { success } }"
    await api(edit, {"r": {"id": first, "body": "исправлено модератором"}}, editor)
    assert {"id": first, "body": "исправлено модератором"} in await api(THREAD, {"s": shout})

    trail = await api(AUDIT, {"e": "reaction", "i": str(spam)}, await api.user("admin"))
    assert [e["action"] for e in trail["entries"]] == ["reaction.restore", "reaction.delete"]
    assert trail["entries"][1]["actor"] == editor.id and trail["entries"][1]["community"] == 1
    assert trail["entries"][1]["before"] == {"deleted_at": None, "deleted_by": None}
    assert trail["entries"][1]["after"]["deleted_by"] == editor.id
    assert await api.error(AUDIT, {"e": "reaction"}, editor) == "FORBIDDEN"  # administrators read the trail


async def test_a_deleted_shout_leaves_the_feed_and_comes_back_as_it_was(api: Api) -> None:
    editor, author = await api.user("editor"), await api.user()
    shout = await api.published(author)
    await _comment(api, author, shout, "мой комментарий")
    page = "query($s: Int) { get_shout(shout_id: $s) { id title stat { comments_count } } }"
    before = await api(page, {"s": shout})
    assert shout in [s["id"] for s in await api(FEED)]

    await api("mutation($i: Int!) { adminDeleteShout(id: $i) { success } }", {"i": shout}, editor)
    assert await api(page, {"s": shout}) is None
    assert shout not in [s["id"] for s in await api(FEED)]
    listed = await api(SHOUTS, {"st": "deleted", "s": str(shout), "l": 100}, editor)  # its id (and texts holding it)
    assert all(s["deleted_at"] is not None for s in listed["shouts"]) and listed["total"] == len(listed["shouts"])
    (found,) = [s for s in listed["shouts"] if s["id"] == shout]
    assert found["deleted_by"] == {"id": editor.id}
    assert found["authors"] == [{"id": author.id}] and found["community"] == {"id": 1}
    assert found["stat"] == {"comments_count": 1}  # a deleted shout's counters, as it had them

    await api("mutation($i: Int!) { adminRestoreShout(id: $i) { success } }", {"i": shout}, editor)
    assert await api(page, {"s": shout}) == before
    assert shout in [s["id"] for s in await api(FEED)]

    update = "mutation($s: AdminShoutUpdateInput!) { adminUpdateShout(shout: $s) { success } }"
    await api(update, {"s": {"id": shout, "title": "Новый заголовок"}}, editor)
    assert (await api(page, {"s": shout}))["title"] == "Новый заголовок"
    assert await api.error(update, {"s": {"id": shout, "title": "Захват"}}, author) == "FORBIDDEN"


async def test_moderators_lists_page_past_a_hundred_with_their_totals(api: Api) -> None:
    editor, author, reader = await api.user("editor"), await api.user(), await api.user()
    shout = await api.published(author)
    made = [await _comment(api, reader, shout, f"комментарий {i}") for i in range(105)]
    pages: list[dict[str, Any]] = [await api(REACTIONS, {"sh": shout, "l": 50, "o": o}, editor) for o in (0, 50, 100)]
    assert [p["total"] for p in pages] == [105] * 3 and pages[0]["totalPages"] == 3
    seen = [r["id"] for p in pages for r in p["reactions"]]
    assert sorted(seen) == sorted(made)  # every one, each once
    assert (await api(REACTIONS, {"sh": shout, "k": "LIKE"}, editor))["total"] == 0
    # a search's wildcards are the text's own characters ("комментарий 100" holds "00", not "0_")
    assert (await api(REACTIONS, {"sh": shout, "s": "0_"}, editor))["total"] == 0
    assert (await api(REACTIONS, {"sh": shout, "s": "рий 10"}, editor))["total"] == 6  # 10 and 100-104
    assert await api.error(REACTIONS, {"st": "hidden"}, editor) == "BAD_USER_INPUT"
    everything = await api(SHOUTS, {"l": 10, "st": "all"}, editor)
    assert everything["perPage"] == 10 and everything["totalPages"] == -(-everything["total"] // 10)
    assert await api.error(SHOUTS, {}, reader) == "FORBIDDEN"


async def test_an_editor_sets_a_shouts_topics_and_its_drafts_follow(api: Api) -> None:
    editor, author = await api.user("editor"), await api.user()
    create = "mutation($t: AdminTopicInput!) { adminCreateTopic(topic: $t) { topic { id slug } } }"
    first, second = [(await api(create, {"t": {"id": 0, "slug": f"t{n}-{author.id}", "title": f"T{n}"}},
                                editor))["topic"] for n in (1, 2)]
    shout = await api.published(author, topic=first["id"])
    feed = "query($s: String) { load_shouts_with_topic(slug: $s, options: {limit: 50}) { id } }"
    update = "mutation($s: AdminShoutUpdateInput!) { adminUpdateShout(shout: $s) { success } }"
    await api(update, {"s": {"id": shout, "topic_ids": [second["id"]]}}, editor)
    assert {"id": shout} not in await api(feed, {"s": first["slug"]})
    assert {"id": shout} in await api(feed, {"s": second["slug"]})
    found = await api("query($i: Int) { get_shout(shout_id: $i) { main_topic { slug } topics { slug } } }", {"i": shout})
    assert found == {"main_topic": {"slug": second["slug"]}, "topics": [{"slug": second["slug"]}]}
    drafts = await api("{ load_drafts { drafts { shout { id } topics { id } } } }", user=author)
    assert [d["topics"] for d in drafts["drafts"] if (d["shout"] or {}).get("id") == shout] == [[{"id": second["id"]}]]
    refused = "mutation($s: AdminShoutUpdateInput!) { adminUpdateShout(shout: $s) { success } }"
    assert await api.error(refused, {"s": {"id": shout, "topic_ids": [10_000_000]}}, editor) == "BAD_USER_INPUT"
    assert await api.error(refused, {"s": {"id": shout, "topic_ids": [second["id"]], "main_topic_id": first["id"]}},
                           editor) == "BAD_USER_INPUT"
