"""A database the Discours backend made, for the adoption's tests and benchmark: the schema its own models
create (`discours_schemas/`, pg_dumps of them, each naming its source commit) and a small, realistic set of
rows for `discours adopt` to carry over.

What makes it a Discours database and not ours (each a case the adopter handles, see orm/adopt/):
- its base class gives every model an `id`; in link tables that did not remove it, `id` ends up inside a
  composite primary key with no default (`community_author`, `notification_seen`, `invite`), so the natural
  keys may repeat;
- `community_author` is mapped twice: (author, community, joined_at, roles) and (id, community_id,
  author_id, roles);
- unbounded VARCHAR everywhere, JSON `null` beside SQL NULL, PostgreSQL's default constraint names, no ON
  DELETE rules, and NULL where ours requires a value (slugs, `topic.community`, `*_topic.main`,
  `author_rating.plus`, `community_author.roles`, `invite.status`, `collection.created_at/by`);
- no community for a draft, and a notification of `id, created_at, entity, action, payload` only;
- notifications named `follower:{id}`, carrying the whole object, some payloads a JSON string holding JSON;
- reactions of kinds retired in 2023 (REMARK, FOOTNOTE);
- `draft_author.shout` / `draft_topic.shout` where ours says `draft`, and a `draft.description`.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

SCHEMAS = Path(__file__).with_name("discours_schemas")
# Discours-backend-next as of Feb 2025: the shape the adopter carries over.
FEB_2025 = SCHEMAS / "discours-backend-next-8cd0c8ea.sql"
# The 2021-2024 backend: a Discours database the adopter does not carry over (its check says why).
FEB_2024 = SCHEMAS / "discours-backend-fbd0e03a.sql"
# Of FEB_2025's 21 tables, those its start does not make (only a full create_all of its models does).
CREATE_ALL_TABLES = ("invite", "collection", "shout_collection", "author_bookmark")


@cache
def dump_statements(dump: Path) -> list[str]:
    """A pg_dump's SQL statements one by one, its comments and psql's own lines left out."""
    lines = [line for line in dump.read_text().splitlines() if not line.startswith(("--", "\\"))]
    return [statement.strip() for statement in "\n".join(lines).split(";\n") if statement.strip()]


async def load_dump(conn: AsyncConnection, dump: Path) -> None:
    """The tables of a pg_dump (--schema-only) in the database `conn` is connected to."""
    for statement in dump_statements(dump):
        await conn.exec_driver_sql(statement)
    await conn.exec_driver_sql("RESET search_path")  # the dump empties it for its session


async def create_discours_schema(conn: AsyncConnection, *, full: bool = True) -> None:
    """The tables of a Discours database (Feb 2025): the 17 its start creates and, with `full`, the 4 more of
    a full `create_all` of its models."""
    await load_dump(conn, FEB_2025)
    if not full:
        await conn.exec_driver_sql(f"DROP TABLE {', '.join(CREATE_ALL_TABLES)}")


T0 = 1_700_000_000  # when the rows below happened, give or take


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


async def fill_discours_rows(conn: AsyncConnection, *, full: bool = True) -> None:
    """Rows as a Discours deployment holds them: authors (one without a slug, two sharing nothing but an
    Authorizer id each), communities, members with duplicate rows, topics (one without a slug or a community),
    shouts (published, featured, unpublished, deleted, one without a slug), threaded reactions (a retired
    kind among them), follows, ratings, drafts with authors and topics, notifications in each of its
    shapes, and (with `full`) invites with a duplicate, collections and bookmarks."""
    async def rows(table: str, columns: str, values: list[tuple[Any, ...]]) -> None:
        names = [c.strip() for c in columns.split(",")]
        params = ", ".join(f":{n.strip(chr(34))}" for n in names)
        await conn.execute(text(f"INSERT INTO {table} ({columns}) VALUES ({params})"),
                           [dict(zip([n.strip(chr(34)) for n in names], v, strict=True)) for v in values])

    await rows("author", '"user", name, slug, bio, about, pic, links, created_at, last_seen, updated_at, '
               "deleted_at, id", [
        ("auth0|a1", "Мария Иванова", "maria", "редактор", "<p>О себе</p>", "https://images.discours.io/m.jpg",
         _json([{"url": "https://t.me/maria"}]), T0, T0 + 900, T0 + 10, None, 1),
        ("auth0|a2", "Пётр Сидоров", "petr", None, None, None, None, T0 + 1, T0 + 800, T0 + 11, None, 2),
        ("auth0|a3", "Без слага", None, "nobody knew my slug", None, None, "null", T0 + 2, T0 + 700, T0 + 12, None, 3),
        ("auth0|a4", "Анна", "anna", None, None, None, None, T0 + 3, T0 + 600, T0 + 13, None, 4),
        (None, "Удалённый", "deleted-one", None, None, None, None, T0 + 4, T0 + 500, T0 + 14, T0 + 400, 5),
        ("auth0|a6", "Author Six", "author-3", None, None, None, None, T0 + 5, T0 + 400, T0 + 15, None, 6),
    ])
    await conn.execute(text("SELECT setval('author_id_seq', 6)"))
    await rows("community", 'name, slug, "desc", pic, created_at, created_by, id', [
        ("Дискурс", "discours", "Главное сообщество", "", T0, 1, 1),
        ("Кино", "kino", "", "", T0 + 100, 2, 2),
    ])
    await conn.execute(text("SELECT setval('community_id_seq', 2)"))
    await rows("community_author", "author, community, joined_at, roles, id, community_id, author_id", [
        (1, 1, T0, "reader,author,editor", 1, 1, 1),
        (2, 1, T0 + 5, "reader,author", 1, None, None),
        (2, 1, T0 + 50, "author,expert", 2, 1, 2),  # the same member twice: roles unioned, joined at the first
        (3, 1, T0 + 6, None, 1, None, None),  # no roles: a reader
        (4, 2, T0 + 7, "reader", 1, 2, 4),
        (6, 1, T0 + 8, "reader", 1, None, None),
    ])
    await rows("topic", "slug, title, body, pic, community, oid, parent_ids, id", [
        ("culture", "Культура", "<p>о культуре</p>", None, 1, "t-oid-1", None, 1),
        ("cinema", "Кино", None, None, 2, None, _json([1]), 2),
        (None, "Без слага", None, None, None, None, "null", 3),
        ("society", "Общество", None, "https://images.discours.io/s.png", None, None, None, 4),
    ])
    await conn.execute(text("SELECT setval('topic_id_seq', 4)"))
    await rows("topic_followers", "follower, topic, created_at, auto", [
        (2, 1, T0 + 20, False), (3, 1, T0 + 21, True), (4, 2, T0 + 22, False),
    ])
    await rows("draft", "created_at, created_by, layout, slug, title, subtitle, lead, description, body, "
               "media, cover, cover_caption, lang, seo, updated_at, deleted_at, updated_by, deleted_by, id", [
        (T0 + 30, 1, "article", "first-draft", "Черновик", None, "<p>лид</p>", "Описание черновика",
         "<p>текст</p>", "null", None, None, "ru", None, T0 + 31, None, 1, None, 1),
        (T0 + 32, 2, None, None, None, None, None, "только описание", "", None, None, None, "ru", None,
         None, None, None, None, 2),
        (T0 + 33, 2, "music", "published-draft", "Опубликованный", "sub", None, None, "<p>музыка</p>",
         _json([{"url": "https://x/y.mp3", "title": "трек"}]), None, None, "ru", None, None, None, None, None, 3),
    ])
    await conn.execute(text("SELECT setval('draft_id_seq', 3)"))
    await rows("draft_author", "shout, author, caption", [(1, 1, ""), (1, 2, None), (2, 2, None), (3, 2, "")])
    await rows("draft_topic", "shout, topic, main", [(1, 1, True), (1, 2, None), (3, 4, None)])
    shout_columns = ("created_at, updated_at, published_at, featured_at, deleted_at, created_by, updated_by, "
                     "deleted_by, community, body, slug, cover, cover_caption, lead, description, title, subtitle, "
                     "layout, media, lang, version_of, oid, seo, draft, id")
    await rows("shout", shout_columns, [
        (T0 + 40, T0 + 41, T0 + 42, T0 + 43, None, 1, 1, None, 1, "<p>Первая</p>", "first", "https://c/1.jpg",
         "обложка", "<p>лид</p>", "описание", "Первая публикация", "подзаголовок", "article", None, "ru", None,
         "oid-1", None, None, 1),
        (T0 + 44, None, T0 + 45, None, None, 2, None, None, 1, "<p>Вторая</p>", "second", None, None, None, None,
         "Вторая", None, "music", _json([{"url": "https://x/y.mp3", "title": "трек"}]), "ru", None, None,
         '{"title": "SEO"}', 3, 2),
        (T0 + 46, None, None, None, None, 2, None, None, 1, "<p>Не опубликована</p>", "unpublished", None, None,
         None, None, "Не опубликована", None, "article", "null", "ru", None, None, None, None, 3),
        (T0 + 47, None, T0 + 48, None, T0 + 49, 4, None, 4, 2, "<p>Удалена</p>", "removed", None, None, None,
         None, "Удалена", None, "article", None, "en", None, None, None, None, 4),
        (T0 + 50, None, T0 + 51, None, None, 4, None, None, 2, "<p>Без слага</p>", None, None, None, None, None,
         "Без слага", None, "video", None, "ru", None, None, None, None, 5),
    ])
    await conn.execute(text("SELECT setval('shout_id_seq', 5)"))
    await rows("shout_author", "shout, author, caption", [(1, 1, ""), (1, 2, None), (2, 2, None), (3, 2, None),
                                                          (4, 4, None), (5, 4, "")])
    await rows("shout_topic", "shout, topic, main", [(1, 1, True), (1, 2, None), (2, 4, None), (3, 1, False),
                                                     (4, 2, True), (5, 2, None)])
    await rows("shout_reactions_followers", "follower, shout, auto, created_at, deleted_at", [
        (1, 1, True, T0 + 42, None), (3, 1, False, T0 + 60, None), (2, 2, True, T0 + 45, None),
        (4, 2, False, T0 + 61, T0 + 70),
    ])
    await rows("reaction", "body, created_at, updated_at, deleted_at, deleted_by, reply_to, quote, shout, "
               "created_by, kind, oid, id", [
        ("Отличный текст", T0 + 100, None, None, None, None, None, 1, 3, "COMMENT", None, 1),
        ("Согласен", T0 + 101, T0 + 105, None, None, 1, None, 1, 4, "COMMENT", None, 2),
        ("цитата", T0 + 102, None, None, None, None, "«Первая»", 1, 2, "QUOTE", None, 3),
        (None, T0 + 103, None, None, None, None, None, 1, 4, "LIKE", None, 4),
        (None, T0 + 104, None, None, None, 1, None, 1, 2, "LIKE", None, 5),
        (None, T0 + 105, None, None, None, None, None, 2, 3, "DISLIKE", None, 6),
        ("удалён", T0 + 106, None, T0 + 107, 3, None, None, 1, 3, "COMMENT", None, 7),
        ("замечание редактора", T0 + 108, None, None, None, None, "фраза", 1, 1, "REMARK", "old-1", 8),
        ("сноска", T0 + 109, None, None, None, 1, None, 1, 1, "FOOTNOTE", None, 9),
        ("вопрос", T0 + 110, None, None, None, None, None, 2, 4, "ASK", None, 10),
    ])
    await conn.execute(text("SELECT setval('reaction_id_seq', 10)"))
    await rows("author_follower", "follower, author, created_at, auto", [
        (2, 1, T0 + 200, False), (3, 1, T0 + 201, False), (4, 2, T0 + 202, True), (1, 4, T0 + 203, False),
    ])
    await rows("author_rating", "rater, author, plus", [(2, 1, True), (3, 1, False), (4, 1, None)])
    await rows("notification", "created_at, entity, action, payload, id", [
        (T0 + 300, "reaction", "create",
         _json({"id": 1, "body": "Отличный текст", "shout": 1, "reply_to": None, "created_by": 3, "kind": "COMMENT"}),
         1),
        (T0 + 301, "reaction", "create",
         _json(_json({"id": 2, "body": "Согласен", "shout": 1, "reply_to": 1, "created_by": 4, "kind": "COMMENT"})),
         2),  # the payload a JSON string holding JSON
        (T0 + 302, "follower:1", "follow", _json({"id": 3, "name": "Без слага", "slug": None, "pic": None}), 3),
        (None, "shout", "create", _json({"id": 2, "slug": "second", "title": "Вторая", "created_by": 2}), 4),
        (T0 + 304, "reaction", "delete", "null", 5),
    ])
    await conn.execute(text("SELECT setval('notification_id_seq', 5)"))
    await rows("notification_seen", "viewer, notification, id", [(1, 1, 1), (1, 1, 2), (2, 2, 1), (1, 3, 1)])
    if not full:
        return
    await rows("invite", "inviter_id, author_id, shout_id, status, id", [
        (1, 2, 1, "ACCEPTED", 1), (1, 2, 1, "PENDING", 2), (2, 4, 2, None, 1), (4, 1, 4, "REJECTED", 3),
    ])
    await rows("collection", "slug, title, body, pic, created_at, created_by, published_at, id", [
        ("best", "Лучшее", None, None, T0 + 400, 1, T0 + 401, 1), ("old", "Старое", None, None, None, None, None, 2),
    ])
    await conn.execute(text("SELECT setval('collection_id_seq', 2)"))
    await rows("shout_collection", "shout, collection", [(1, 1), (2, 1), (2, 2)])
    await rows("author_bookmark", "author, shout", [(1, 2), (3, 1)])
