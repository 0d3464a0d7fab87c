"""Deterministic demo data with bulk inserts (`discours seed`).

Popularity is skewed the way it is on a real platform: who gets followed, which shouts get comments
and which topics get shouts follow a Zipf-like law, so caches and indexes meet realistic hot spots.
The same `seed` gives the same rows on PostgreSQL and SQLite.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import func, insert, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from app.cli.corpus import Corpus, Zipf
from app.cli.progress import Bars
from orm import (
    Author,
    AuthorBookmark,
    AuthorFollower,
    AuthorRating,
    Community,
    CommunityAuthor,
    CommunityFollower,
    Draft,
    DraftAuthor,
    DraftTopic,
    Reaction,
    Shout,
    ShoutAuthor,
    ShoutReactionsFollower,
    ShoutTopic,
    Topic,
    TopicFollower,
)
from orm.engine import make_engine

BATCH = 5_000
DAY = 86_400


@dataclass(frozen=True)
class Size:
    authors: int
    topics: int
    shouts: int
    reactions: int
    follows: int
    communities: int = 3

    def scaled(self, *, authors: int) -> Size:
        factor = authors / self.authors
        return replace(self, authors=authors, topics=max(5, int(self.topics * factor ** 0.5)),
                       shouts=int(self.shouts * factor), reactions=int(self.reactions * factor),
                       follows=int(self.follows * factor))


SIZES = {
    "test": Size(authors=40, topics=15, shouts=150, reactions=1_500, follows=400),
    "demo": Size(authors=120, topics=30, shouts=600, reactions=5_000, follows=2_000),
    "bench": Size(authors=2_000, topics=300, shouts=50_000, reactions=300_000, follows=100_000),
    # ten times bench's content under the same topics: what a request costs as a site grows (bench/scale.py)
    "bench10": Size(authors=20_000, topics=300, shouts=500_000, reactions=3_000_000, follows=1_000_000),
}

FIRST = ["Анна", "Борис", "Вера", "Глеб", "Дарья", "Егор", "Жанна", "Илья", "Кира", "Лев", "Мария",
         "Никита", "Ольга", "Павел", "Роза", "Семён", "Таисия", "Фёдор", "Юлия", "Ян", "Alex", "Maya"]
LAST = ["Иванов", "Смирнова", "Кузнецов", "Попова", "Соколов", "Лебедева", "Козлов", "Новикова",
        "Морозов", "Волкова", "Орлов", "Зайцева", "Stone", "Rivers"]
TOPIC_WORDS = ["culture", "society", "art", "music", "cinema", "theatre", "poetry", "prose", "science",
               "history", "politics", "ecology", "education", "city", "travel", "technology", "psychology",
               "philosophy", "photo", "design", "media", "economics", "health", "sport", "food", "religion",
               "language", "law", "architecture", "comics"]
LAYOUTS = ["article", "article", "article", "article", "music", "video", "image", "literature"]


def _batches(rows: Sequence[dict[str, Any]]) -> Iterator[Sequence[dict[str, Any]]]:
    for start in range(0, len(rows), BATCH):
        yield rows[start:start + BATCH]


class Seeder:
    def __init__(self, size: Size, seed: int, progress: Bars) -> None:
        self.size = size
        self.rng = random.Random(seed)
        self.text = Corpus(self.rng)  # Russian and English prose with word forms and a Zipf-like spread
        self.progress = progress
        self.now = 1_760_000_000  # a fixed "now" keeps the data identical between runs

    async def insert(self, conn: AsyncConnection, model: Any, rows: Sequence[dict[str, Any]], label: str) -> None:
        done = 0
        columns = list(dict.fromkeys(name for row in rows for name in row))
        for chunk in _batches(rows):
            # executemany needs every row to carry the same keys
            await conn.execute(insert(model), [{c: row.get(c) for c in columns} for row in chunk])
            done += len(chunk)
            self.progress.show(label, done, len(rows))
        if not rows:
            self.progress.show(label, 0, 0)

    def authors(self) -> list[dict[str, Any]]:
        rows = []
        for i in range(1, self.size.authors + 1):
            name = f"{self.rng.choice(FIRST)} {self.rng.choice(LAST)}"
            created = self.now - self.rng.randint(30, 1500) * DAY
            rows.append({
                "id": i, "user": f"user-{i:06d}", "name": name, "slug": f"author-{i}",
                "bio": self.text.sentence("ru", 8), "about": self.text.paragraphs("ru", 1),
                "pic": f"https://images.example.org/authors/{i}.jpg",
                "links": [f"https://example.org/@author{i}"], "created_at": created,
                "last_seen": self.now - self.rng.randint(0, 60) * DAY, "updated_at": created,
            })
        return rows

    def communities(self) -> list[dict[str, Any]]:
        names = [("discours", "Дискурс"), ("poetry-club", "Клуб поэзии"), ("science-lab", "Научная лаборатория")]
        return [{"id": i + 1, "slug": slug, "name": name, "desc": self.text.sentence("ru", 10),
                 "pic": f"https://images.example.org/communities/{slug}.png", "created_at": self.now - 2000 * DAY,
                 "created_by": 1} for i, (slug, name) in enumerate(names[: self.size.communities])]

    async def communities_into(self, conn: AsyncConnection) -> None:
        """A migrated database has the default community already (migration 0012): it takes the seed's values."""
        rows = self.communities()
        existing = set((await conn.scalars(select(Community.id))).all())
        for row in rows:
            if row["id"] in existing:
                await conn.execute(update(Community).where(Community.id == row["id"]).values(row))
        await self.insert(conn, Community, [row for row in rows if row["id"] not in existing], "communities")

    def topics(self) -> list[dict[str, Any]]:
        rows = []
        for i in range(1, self.size.topics + 1):
            base = TOPIC_WORDS[(i - 1) % len(TOPIC_WORDS)]
            suffix = "" if i <= len(TOPIC_WORDS) else f"-{(i - 1) // len(TOPIC_WORDS)}"
            parent = [((i - 1) % len(TOPIC_WORDS)) + 1] if i > len(TOPIC_WORDS) else None
            rows.append({"id": i, "slug": f"{base}{suffix}", "title": f"{base.capitalize()}{suffix}",
                         "body": self.text.sentence("ru", 12), "pic": f"https://images.example.org/topics/{i}.png",
                         "community": 1 if i % 7 else min(2, self.size.communities), "parent_ids": parent})
        return rows

    def shouts(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        author_pick = Zipf(self.size.authors, 1.0, self.rng)
        topic_pick = Zipf(self.size.topics, 0.9, self.rng)
        shouts: list[dict[str, Any]] = []
        authors: list[dict[str, Any]] = []
        topics: list[dict[str, Any]] = []
        for i in range(1, self.size.shouts + 1):
            created = self.now - self.rng.randint(0, 730 * DAY)
            published = None if self.rng.random() < 0.04 else created + self.rng.randint(60, DAY)
            creator = author_pick.draw() + 1
            lang = "en" if self.rng.random() < 0.15 else "ru"
            title = self.text.sentence(lang, self.rng.randint(2, 7))
            shouts.append({
                "id": i, "created_at": created, "updated_at": created, "published_at": published,
                "featured_at": published if published and self.rng.random() < 0.12 else None,
                "deleted_at": created + DAY if self.rng.random() < 0.01 else None,
                "created_by": creator, "community": 1, "slug": f"shout-{i}", "title": title,
                "subtitle": self.text.sentence(lang, 6), "lead": f"<p>{self.text.sentence(lang, 20)}</p>",
                "body": self.text.paragraphs(lang, self.rng.randint(2, 8)),
                "cover": f"https://images.example.org/shouts/{i}.jpg",
                "cover_caption": self.text.sentence(lang, 4), "layout": self.rng.choice(LAYOUTS), "lang": lang,
                "media": [{"url": f"https://media.example.org/{i}.mp3", "title": self.text.sentence(lang, 3),
                           "artist": "Artist", "pic": None, "body": None}] if self.rng.random() < 0.1 else None,
            })
            coauthors = {creator} | {author_pick.draw() + 1 for _ in range(self.rng.choice((0, 0, 0, 1, 2)))}
            authors.extend({"shout": i, "author": a, "caption": None} for a in sorted(coauthors))
            chosen = {topic_pick.draw() + 1 for _ in range(self.rng.randint(1, 3))}
            main = self.rng.choice(sorted(chosen))
            topics.extend({"shout": i, "topic": t, "main": t == main} for t in sorted(chosen))
        return shouts, authors, topics

    def reactions(self, shouts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        listed = [s for s in shouts if s["published_at"] and not s["deleted_at"]]
        shout_pick = Zipf(len(listed), 1.05, self.rng)
        author_pick = Zipf(self.size.authors, 0.8, self.rng)
        comments_of: dict[int, list[int]] = {}
        rows: list[dict[str, Any]] = []
        # Each reaction is a little later than the one before, on a clock that ends at `now`.
        clock = self.now - 365 * DAY
        step = max(1, (365 * DAY) // max(self.size.reactions, 1))
        for i in range(1, self.size.reactions + 1):
            shout = listed[shout_pick.draw()]
            clock += self.rng.randint(1, 2 * step)
            created = max(clock, shout["published_at"] + 60)
            author = author_pick.draw() + 1
            roll = self.rng.random()
            thread = comments_of.setdefault(shout["id"], [])
            if roll < 0.55 or not thread:
                kind, reply_to = "COMMENT", (self.rng.choice(thread) if thread and self.rng.random() < 0.35 else None)
                body = f"<p>{self.text.sentence('ru', self.rng.randint(4, 30))}</p>"
                thread.append(i)
            elif roll < 0.85:
                kind, reply_to, body = ("LIKE" if self.rng.random() < 0.8 else "DISLIKE"), None, None
            elif roll < 0.97:
                kind = "LIKE" if self.rng.random() < 0.75 else "DISLIKE"
                reply_to, body = self.rng.choice(thread), None
            else:
                kind = self.rng.choice(("AGREE", "DISAGREE", "ASK", "PROPOSE", "PROOF", "QUOTE"))
                reply_to, body = self.rng.choice(thread), self.text.sentence("ru", 8)
            rows.append({"id": i, "shout": shout["id"], "created_by": author, "kind": kind, "reply_to": reply_to,
                         "body": body, "created_at": created, "updated_at": None,
                         "deleted_at": created + 3600 if self.rng.random() < 0.01 else None})
        return rows

    def follows(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        author_pick = Zipf(self.size.authors, 1.0, self.rng)
        topic_pick = Zipf(self.size.topics, 0.9, self.rng)
        authors: set[tuple[int, int]] = set()
        topics: set[tuple[int, int]] = set()
        target_authors = int(self.size.follows * 0.8)
        target_topics = self.size.follows - target_authors
        max_author_pairs = self.size.authors * (self.size.authors - 1)
        while len(authors) < min(target_authors, max_author_pairs // 2):
            follower, author = self.rng.randint(1, self.size.authors), author_pick.draw() + 1
            if follower != author:
                authors.add((follower, author))
        while len(topics) < min(target_topics, self.size.authors * self.size.topics // 2):
            topics.add((self.rng.randint(1, self.size.authors), topic_pick.draw() + 1))
        created = self.now - 100 * DAY
        author_rows = [{"follower": f, "author": a, "created_at": created + (f * 7919 + a) % (90 * DAY),
                        "auto": False} for f, a in sorted(authors)]
        topic_rows = [{"follower": f, "topic": t, "created_at": created + (f * 7919 + t) % (90 * DAY),
                       "auto": False} for f, t in sorted(topics)]
        community_rows = [{"follower": a, "community": 1, "created_at": created}
                          for a in range(1, self.size.authors + 1) if a % 3 == 0]
        return author_rows, topic_rows, community_rows

    def memberships(self) -> list[dict[str, Any]]:
        rows = []
        for a in range(1, self.size.authors + 1):
            roles = "reader,author"
            if a == 1:
                roles = "reader,author,editor,admin"
            elif a % 50 == 0:
                roles = "reader,author,editor"
            rows.append({"community": 1, "author": a, "joined_at": self.now - 1000 * DAY, "roles": roles})
            if a % 5 == 0 and self.size.communities > 1:
                rows.append({"community": 2, "author": a, "joined_at": self.now - 500 * DAY, "roles": "reader"})
        return rows

    def drafts(self, shouts: list[dict[str, Any]], shout_authors: list[dict[str, Any]],
               shout_topics: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], ...]:
        """A draft for every tenth shout (its working copy) and one unpublished draft per 5 authors."""
        drafts: list[dict[str, Any]] = []
        d_authors: list[dict[str, Any]] = []
        d_topics: list[dict[str, Any]] = []
        links: list[dict[str, Any]] = []
        authors_of: dict[int, list[int]] = {}
        for row in shout_authors:
            authors_of.setdefault(row["shout"], []).append(row["author"])
        topics_of: dict[int, list[dict[str, Any]]] = {}
        for row in shout_topics:
            topics_of.setdefault(row["shout"], []).append(row)
        next_id = 1
        for shout in shouts[::10]:
            fields = {k: shout[k] for k in ("title", "subtitle", "lead", "body", "cover", "cover_caption",
                                            "layout", "lang", "media", "slug")}
            drafts.append({"id": next_id, "created_at": shout["created_at"], "created_by": shout["created_by"],
                           "community": 1, "updated_at": shout["updated_at"], **fields})
            d_authors.extend({"draft": next_id, "author": a, "caption": None} for a in authors_of[shout["id"]])
            d_topics.extend({"draft": next_id, "topic": t["topic"], "main": t["main"]} for t in topics_of[shout["id"]])
            links.append({"id": shout["id"], "draft": next_id})
            next_id += 1
        for author in range(1, self.size.authors + 1, 5):
            drafts.append({"id": next_id, "created_at": self.now - DAY, "created_by": author, "community": 1,
                           "title": self.text.sentence("ru", 4), "body": self.text.paragraphs("ru", 2),
                           "layout": "article", "lang": "ru", "slug": f"draft-{next_id}", "updated_at": self.now - DAY})
            d_authors.append({"draft": next_id, "author": author, "caption": None})
            next_id += 1
        return drafts, d_authors, d_topics, links


async def _reset_sequences(conn: AsyncConnection, tables: Sequence[str]) -> None:
    """Rows were inserted with explicit ids: move PostgreSQL's sequences past them."""
    if conn.dialect.name != "postgresql":
        return
    for table in tables:
        await conn.execute(text(
            f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), COALESCE((SELECT MAX(id) FROM \"{table}\"), 1))"
        ))


async def seed_connection(conn: AsyncConnection, size: Size, *, seed: int = 1, progress: bool = False) -> None:
    seeder = Seeder(size, seed, Bars(progress))
    started = time.monotonic()
    authors = seeder.authors()
    await seeder.insert(conn, Author, authors, "authors")
    await seeder.communities_into(conn)
    await seeder.insert(conn, CommunityAuthor, seeder.memberships(), "community members")
    await seeder.insert(conn, Topic, seeder.topics(), "topics")
    shouts, shout_authors, shout_topics = seeder.shouts()
    drafts, draft_authors, draft_topics, links = seeder.drafts(shouts, shout_authors, shout_topics)
    await seeder.insert(conn, Draft, drafts, "drafts")
    await seeder.insert(conn, DraftAuthor, draft_authors, "draft authors")
    await seeder.insert(conn, DraftTopic, draft_topics, "draft topics")
    draft_of = {link["id"]: link["draft"] for link in links}
    for shout in shouts:
        shout["draft"] = draft_of.get(shout["id"])
    await seeder.insert(conn, Shout, shouts, "shouts")
    await seeder.insert(conn, ShoutAuthor, shout_authors, "shout authors")
    await seeder.insert(conn, ShoutTopic, shout_topics, "shout topics")
    await seeder.insert(conn, ShoutReactionsFollower,
                        [{"follower": r["author"], "shout": r["shout"], "auto": True,
                          "created_at": seeder.now} for r in shout_authors], "shout followers")
    await seeder.insert(conn, Reaction, seeder.reactions(shouts), "reactions")
    author_follows, topic_follows, community_follows = seeder.follows()
    await seeder.insert(conn, AuthorFollower, author_follows, "author follows")
    await seeder.insert(conn, TopicFollower, topic_follows, "topic follows")
    await seeder.insert(conn, CommunityFollower, community_follows, "community follows")
    ratings = {(seeder.rng.randint(1, size.authors), seeder.rng.randint(1, size.authors))
               for _ in range(size.authors * 2)}
    await seeder.insert(conn, AuthorRating, [{"rater": r, "author": a, "plus": (r + a) % 4 != 0}
                                             for r, a in sorted(ratings) if r != a], "author ratings")
    bookmarks = {(seeder.rng.randint(1, size.authors), seeder.rng.randint(1, size.shouts))
                 for _ in range(size.authors)}
    await seeder.insert(conn, AuthorBookmark, [{"author": a, "shout": s, "created_at": seeder.now}
                                               for a, s in sorted(bookmarks)], "bookmarks")
    await _reset_sequences(conn, ["author", "community", "topic", "shout", "reaction", "draft"])
    if conn.dialect.name == "postgresql":
        # Fresh bulk-loaded tables have no planner statistics; without them PostgreSQL picks nested
        # loops over 100k-row joins (bench/RESULTS.md, figures behind the code's rules).
        await conn.execute(text("ANALYZE"))
    seeder.progress.close()
    if progress:
        print(f"seeded in {time.monotonic() - started:.1f}s", file=sys.stderr)


async def seed_database(url: str, size: Size, *, seed: int = 1, only_if_empty: bool = False,
                        progress: bool = True) -> bool:
    """Returns False (and writes nothing) when `only_if_empty` and the database has authors."""
    engine = make_engine(url)
    try:
        async with engine.begin() as conn:
            if only_if_empty and await conn.scalar(select(func.count()).select_from(Author)):
                return False
            await seed_connection(conn, size, seed=seed, progress=progress)
        if engine.dialect.name == "postgresql":
            # VACUUM moves the full-text indexes' pending entries (GIN's fast update) into the indexes,
            # which every search would otherwise read whole, hundreds of pages for a rare word.
            # Autovacuum does it in time on a live database; a bulk load is done at once.
            async with engine.connect() as conn:
                await conn.execution_options(isolation_level="AUTOCOMMIT")
                await conn.execute(text("VACUUM shout, reaction, author"))
        return True
    finally:
        await engine.dispose()
