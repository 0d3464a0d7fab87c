"""Discours notifications converted to ours, so that adopted notifications show and are marked seen like ours.

Discours stores a notification per event with the whole object as its payload (a reaction, a shout, a
follower's card; some payloads a JSON string holding JSON) and names follows `follower:{author id}`; it shows
every notification to everyone the event concerns by recomputing that at read time. Ours store what the event
was about (ids) and who it concerns, once (`notification_recipient`, resolvers/events.py). So each adopted
notification gets our payload and its recipients by our rules, from the adopted rows:

- `reaction` create: the shout's authors, the followers of its discussion (a public shout only) and the author
  of the comment it answers, never the reaction's own author; edits and deletions concern nobody;
- `follower:{id}` follow: the followed author;
- `shout` create or publish of a shout that is public: the followers of its authors and topics (at most
  `fanout` people, as a new publication would);
- anything else is kept as it was and concerns nobody.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

NOTIFICATION_RULES = (
    "payloads decoded (also when stored as a JSON string holding JSON) and reduced to what ours keep (ids)",
    "`follower:{id}` becomes entity `follower` with the followed author in the payload",
    "recipients derived by our rules: a new comment's shout authors, discussion followers and the author "
    "answered; a follow's followed author; a publication's followers of its authors and topics",
    "a missing status is `unread`, a missing kind `general`, a missing time the update's or the adoption's",
)
BATCH = 1000


def decoded(payload: Any) -> Any:
    """A payload as the object it stands for: JSON text inside JSON is decoded again."""
    for _ in range(3):
        if not isinstance(payload, str):
            return payload
        try:
            payload = json.loads(payload)
        except ValueError:
            return payload
    return payload


def converted(entity: str, action: str, payload: Any) -> tuple[str, str, dict[str, Any] | None]:
    """(entity, action, payload) as ours write them for the same event."""
    value = decoded(payload)
    if entity.startswith("follower:"):
        follower = value.get("id") if isinstance(value, dict) else None
        return "follower", action, {"follower": follower, "author": _int(entity.split(":", 1)[1])}
    if not isinstance(value, dict):
        return entity, action, None if value is None else {"value": value}
    if entity == "reaction":
        return entity, action, {"reaction": value.get("id"), "shout": _int(value.get("shout")),
                                "reply_to": _int(value.get("reply_to")), "created_by": _int(value.get("created_by")),
                                "kind": value.get("kind")}
    if entity == "shout":
        shown = "publish" if action in ("create", "publish") else action
        return entity, shown, {"shout": _int(value.get("id")), "created_by": _int(value.get("created_by"))}
    return entity, action, value


def _int(value: Any) -> int | None:
    if isinstance(value, dict):
        value = value.get("id")
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


async def convert_notifications(conn: AsyncConnection, legacy: str, *, fanout: int,
                                absent: Mapping[str, str]) -> tuple[int, int]:
    """Copy `legacy`.notification into ours, converted, then derive recipients from the adopted rows; returns
    (notifications, recipients). `absent`: the columns this database lacks, each with the SQL read instead
    (the notification transfer's `optional_columns`, transfers.py)."""
    now = int(time.time())
    maybe = ", ".join(f"{absent[name]} AS {name}" if name in absent else name
                      for name in ("updated_at", "status", "kind"))
    copied = 0
    last = -(2**31)
    while True:  # a batch at a time, by id
        rows = (await conn.execute(text(
            f"SELECT id, created_at, entity, action, payload::text AS payload, {maybe} "
            f"FROM {legacy}.notification WHERE id > :last ORDER BY id LIMIT {BATCH}"),
            {"last": last})).all()
        if not rows:
            break
        last = rows[-1].id
        batch = []
        for row in rows:
            entity, action, payload = converted(row.entity, row.action,
                                                json.loads(row.payload) if row.payload is not None else None)
            batch.append({"id": row.id, "created_at": row.created_at or row.updated_at or now,
                          "updated_at": row.updated_at, "entity": entity, "action": action,
                          "payload": json.dumps(payload, ensure_ascii=False) if payload is not None else None,
                          "status": row.status or "unread", "kind": row.kind or "general"})
        await conn.execute(text("INSERT INTO notification (id, created_at, updated_at, entity, action, payload, "
                                "status, kind) VALUES (:id, :created_at, :updated_at, :entity, :action, "
                                "CAST(:payload AS json), :status, :kind)"), batch)
        copied += len(batch)
    recipients = 0
    for statement in _RECIPIENTS:
        recipients += (await conn.execute(text(statement), {"fanout": fanout})).rowcount or 0
    return copied, recipients


_PUBLIC = "s.published_at IS NOT NULL AND s.deleted_at IS NULL"
_RECIPIENTS = (
    # a comment or any reaction created: the shout's authors, its discussion's followers (public shouts only),
    # the author of the comment answered; never the reaction's author
    f"""INSERT INTO notification_recipient (notification, author)
    SELECT DISTINCT n.id, p.person FROM notification n
    JOIN LATERAL (
        SELECT sa.author AS person FROM shout_author sa WHERE sa.shout = (n.payload->>'shout')::int
        UNION SELECT f.follower FROM shout_reactions_followers f JOIN shout s ON s.id = f.shout
            WHERE f.shout = (n.payload->>'shout')::int AND f.deleted_at IS NULL AND {_PUBLIC}
        UNION SELECT r.created_by FROM reaction r JOIN shout s ON s.id = r.shout
            WHERE r.id = (n.payload->>'reply_to')::int AND {_PUBLIC}
    ) p ON true
    WHERE n.entity = 'reaction' AND n.action = 'create' AND p.person IS NOT NULL
      AND p.person IS DISTINCT FROM (n.payload->>'created_by')::int
      AND EXISTS (SELECT 1 FROM author a WHERE a.id = p.person)""",
    # a follow: the followed author
    """INSERT INTO notification_recipient (notification, author)
    SELECT n.id, a.id FROM notification n JOIN author a ON a.id = (n.payload->>'author')::int
    WHERE n.entity = 'follower' AND n.action = 'follow'
      AND a.id IS DISTINCT FROM (n.payload->>'follower')::int""",
    # a publication: followers of its authors and of its topics, not its authors, at most `fanout`
    f"""INSERT INTO notification_recipient (notification, author)
    SELECT id, person FROM (
        SELECT n.id, p.person, row_number() OVER (PARTITION BY n.id ORDER BY p.person) AS nth
        FROM notification n JOIN shout s ON s.id = (n.payload->>'shout')::int AND {_PUBLIC}
        JOIN LATERAL (
            SELECT af.follower AS person FROM author_follower af JOIN shout_author sa ON sa.author = af.author
                WHERE sa.shout = s.id
            UNION SELECT tf.follower FROM topic_followers tf JOIN shout_topic st ON st.topic = tf.topic
                WHERE st.shout = s.id
        ) p ON true
        WHERE n.entity = 'shout' AND n.action = 'publish'
          AND p.person NOT IN (SELECT author FROM shout_author WHERE shout = s.id)
          AND p.person IS DISTINCT FROM (n.payload->>'created_by')::int
    ) chosen WHERE nth <= :fanout""",
)
