"""Related rows read once per row event (triggers/related.py): within one event each question about each row
is asked once and answered for that row only; outside an event nothing is shared."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from orm import Reaction, Shout, ShoutAuthor, ShoutTopic
from orm.stats import is_listed
from tests.conftest import Counter
from triggers import related


async def test_each_question_about_each_row_is_asked_once_per_event(engine: AsyncEngine) -> None:
    async with engine.connect() as conn:
        reactions = (await conn.execute(select(Reaction.id, Reaction.created_by)
                                        .where(Reaction.created_by.is_not(None)).order_by(Reaction.id).limit(40))).all()
        a, b = next((x, y) for x in reactions for y in reactions if x.created_by != y.created_by)
        shouts = (await conn.execute(select(ShoutAuthor.shout).order_by(ShoutAuthor.shout).distinct().limit(2))).scalars().all()
        authors = {s: set((await conn.scalars(select(ShoutAuthor.author).where(ShoutAuthor.shout == s))).all())
                   for s in shouts}
        topics = {s: set((await conn.scalars(select(ShoutTopic.topic).where(ShoutTopic.shout == s))).all())
                  for s in shouts}
        listed = {s: await conn.scalar(select(Shout.id).where(Shout.id == s, is_listed())) is not None for s in shouts}

        def within_one_event(sync: Any) -> tuple[list[Any], int]:
            counter = Counter()
            from sqlalchemy import event

            event.listen(sync, "before_cursor_execute", counter)
            try:
                with related.one_event():
                    answers = [related.reaction_author(sync, a.id), related.reaction_author(sync, b.id),
                               related.reaction_author(sync, a.id), related.reaction_author(sync, b.id),
                               *(set(related.shout_authors(sync, s)) for s in shouts),
                               *(set(related.shout_topics(sync, s)) for s in shouts),
                               set(related.shout_authors(sync, shouts[0])),
                               *(related.shout_listed(sync, s) for s in shouts)]
            finally:
                event.remove(sync, "before_cursor_execute", counter)
            return answers, counter.count

        answers, statements = await conn.run_sync(within_one_event)
        assert answers[:4] == [a.created_by, b.created_by, a.created_by, b.created_by]
        assert answers[4:6] == [authors[s] for s in shouts] and answers[6:8] == [topics[s] for s in shouts]
        assert answers[8] == authors[shouts[0]]
        assert answers[9:] == [listed[s] for s in shouts]
        # each (question, row) once; a shout's authors, topics and whether it is public in one statement
        assert statements == 2 + 2

        def outside(sync: Any) -> int:
            counter = Counter()
            from sqlalchemy import event

            event.listen(sync, "before_cursor_execute", counter)
            related.reaction_author(sync, a.id)
            related.reaction_author(sync, a.id)
            event.remove(sync, "before_cursor_execute", counter)
            return counter.count

        assert await conn.run_sync(outside) == 2  # no event, nothing shared
