"""Search on PostgreSQL (resolvers/search.py, orm/search.py, migration 0009): word forms in Russian and
English, phrases and exclusions, title matches first, an edit or an unpublication seen by the next
search, authors by a part of a name or with a typo, comments by their words, bad input answered cleanly,
the index in the plan, the cached value as seed 000 has it, and the corpus every lemma of which is found
in all its forms.

The shouts here carry words the seeded corpus does not have (черника, маяк, lighthouse, kayak), so that
what a search finds is exactly what the test wrote."""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio import Redis
from sqlalchemy import func, select, text

from app.cli.corpus import VOCABULARY
from cache import keys
from cache.stamps import decode
from orm import Author, Reaction, Shout
from resolvers.deps import Deps, SearchLimits
from resolvers.errors import Busy, RateLimited
from resolvers.reaction_query import ReactionsQuery
from resolvers.reaction_reads import load_reactions_by
from resolvers.search import count_shouts_search, load_authors_search, load_shouts_search
from resolvers.shout_query import ShoutsQuery
from resolvers.writes import transaction
from tests.helpers import inside_one_window

NOW = int(time.time())
TEXTS: dict[str, dict[str, Any]] = {
    # a title match, a body that repeats the word (more relevant by weight alone), a lead, a caption
    "title": {"title": "Черника на болоте", "body": "<p>Ничего о ягодах.</p>", "age": 5},
    "body": {"title": "Лесные заметки", "body": "<p>" + "Мы собирали чернику. " * 20 + "</p>", "age": 1},
    "lead": {"title": "Осенний сбор", "lead": "<p>О черниках и <b>брусничниках</b></p>", "age": 2},
    "phrase": {"title": "Дневник", "body": "<p>Белая черника встречается редко.</p>", "age": 3},
    "caption": {"title": "Фотографии", "media": [{"title": "Черникой перепачканы руки", "body": None}], "age": 4},
    "en": {"title": "Lighthouses of the north", "body": "<p>A keeper studied kayaking.</p>", "lang": "en",
           "age": 6},
    "en_body": {"title": "Harbour", "body": "<p>The old lighthouse and two kayaks&nbsp;nearby.</p>",
                "lang": "en", "age": 7},
    "ru_latin": {"title": "Заметки моряка", "body": "<p>Маяк, lighthouse, стоял без kayak.</p>", "age": 8},
    "unpublished": {"title": "Черника в черновике", "published": False, "age": 9},
}


@pytest.fixture(scope="module")
async def written(engine: Any) -> AsyncIterator[dict[str, int]]:
    """The shouts above (published `age` days ago), and two authors and a comment; removed afterwards."""
    from orm.engine import make_session_factory

    db = make_session_factory(engine)
    tag = secrets.token_hex(3)
    ids: dict[str, int] = {}
    async with db() as session, session.begin():
        author = Author(name="Анастасия Иванова", slug=f"anastasia-ivanova-{tag}", bio="Пишет о севере",
                        created_at=NOW, last_seen=NOW, updated_at=NOW)
        other = Author(name="Pyotr Kovalenko", slug=f"pyotr-kovalenko-{tag}", bio="Sea and lighthouses",
                       created_at=NOW, last_seen=NOW, updated_at=NOW)
        session.add_all([author, other])
        await session.flush()
        for name, fields in TEXTS.items():
            published = None if fields.get("published") is False else NOW - fields["age"] * 86_400
            shout = Shout(slug=f"search-{name}-{tag}", title=fields["title"], body=fields.get("body", ""),
                          lead=fields.get("lead"), media=fields.get("media"), lang=fields.get("lang", "ru"),
                          created_by=author.id, created_at=NOW, published_at=published, community=1)
            session.add(shout)
            await session.flush()
            ids[name] = shout.id
        comment = Reaction(shout=ids["body"], created_by=other.id, kind="COMMENT", created_at=NOW,
                           body="<p>Спасибо за рассказ о чернике и маяках</p>")
        session.add(comment)
        await session.flush()
        ids.update(author=author.id, other=other.id, comment=comment.id)
    yield ids
    async with db() as session, session.begin():
        await session.execute(Reaction.__table__.delete().where(Reaction.id == ids["comment"]))
        await session.execute(Shout.__table__.delete().where(Shout.id.in_([ids[n] for n in TEXTS])))
        await session.execute(Author.__table__.delete().where(Author.id.in_([ids["author"], ids["other"]])))


async def _found(deps: Deps, query: str) -> list[int]:
    return [s["id"] for s in await load_shouts_search(deps, query, ShoutsQuery(limit=50))]


@pytest.mark.parametrize("query", ["черника", "чернику", "черникой", "черниках", "ЧЕРНИКИ"])
async def test_every_russian_word_form_finds_every_other(deps: Deps, written: dict[str, int], query: str) -> None:
    found = await _found(deps, query)
    expected = [written[n] for n in ("title", "lead", "phrase", "caption", "body")]
    assert sorted(found) == sorted(expected)  # the unpublished one is not listed
    assert found[0] == written["title"]  # the title match first, though the body repeats the word twenty times


@pytest.mark.parametrize("query", ["lighthouse", "lighthouses", "kayak", "kayaking", "kayaks"])
async def test_english_word_forms_in_english_and_in_russian_texts(deps: Deps, written: dict[str, int],
                                                                  query: str) -> None:
    found = set(await _found(deps, query))
    assert found == {written["en"], written["en_body"], written["ru_latin"]}  # Russian's config stems Latin too


async def test_the_order_is_title_tier_then_relevance_then_recency(deps: Deps, written: dict[str, int]) -> None:
    results = await load_shouts_search(deps, "черника", ShoutsQuery(limit=10))
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True)
    assert scores[0] >= 1 > scores[1]  # the title match in a tier of its own
    # the two lighthouse texts whose titles do not match, equally relevant: the more recent first
    english = await load_shouts_search(deps, "lighthouse", ShoutsQuery(limit=10))
    assert english[0]["id"] == written["en"]


async def test_the_count_of_a_search_is_what_it_finds(deps: Deps, written: dict[str, int]) -> None:
    """`get_search_results_count`: the five listed shouts about bilberries, not the unpublished sixth; a
    search that finds nothing counts none."""
    assert await count_shouts_search(deps, "черника") == len(await _found(deps, "черника")) == 5
    assert await count_shouts_search(deps, "черника -болото") == 4
    assert await count_shouts_search(deps, "и") == 0  # a stop word: nothing to search for


async def test_phrases_and_exclusions(deps: Deps, written: dict[str, int]) -> None:
    assert await _found(deps, '"белая черника"') == [written["phrase"]]
    assert await _found(deps, '"черника белая"') == []  # the words, not in that order
    without = set(await _found(deps, "черника -болото"))
    assert written["title"] not in without and written["body"] in without
    # an exclusion holds in every language the matches are in
    assert set(await _found(deps, "lighthouse -kayak")) == set()
    assert set(await _found(deps, "lighthouse or маяк")) == {written["en"], written["en_body"], written["ru_latin"]}


@pytest.mark.parametrize("query", ["", "   ", "и в на", "the of and", "!!! ,,, ---", "-черника", "-the"])
async def test_nothing_to_search_for_is_an_empty_answer(deps: Deps, written: dict[str, int], query: str,
                                                        sql_counter: Any) -> None:
    sql_counter.reset()
    assert await load_shouts_search(deps, query, ShoutsQuery(limit=10)) == []
    assert not any("FROM shout" in statement for statement in sql_counter.statements), sql_counter.statements


async def test_bad_input_over_graphql(gql: Any, written: dict[str, int]) -> None:
    long = await gql('query($t: String!) { load_shouts_search(text: $t) { slug } }', {"t": "ягода " * 50})
    assert long["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    for weird in ['"', '"""', "a & b | !c", "<->", ":*", "(", "\\", "'", "книга:*A"]:
        answer = await gql('query($t: String!) { load_shouts_search(text: $t) { slug } }', {"t": weird})
        assert "errors" not in answer, (weird, answer)
    authors = await gql('query($t: String!) { load_authors_search(text: $t) { slug } }', {"t": "x" * 500})
    assert authors["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"


async def test_an_edit_and_an_unpublication_are_seen_by_the_next_search(deps: Deps, written: dict[str, int]) -> None:
    assert written["unpublished"] not in await _found(deps, "черновик")
    async with transaction(deps) as session:
        (await session.get(Shout, written["unpublished"])).published_at = NOW  # type: ignore[union-attr]
    assert written["unpublished"] in await _found(deps, "черновике")  # the cached answer moved
    async with transaction(deps) as session:
        shout = await session.get(Shout, written["unpublished"])
        shout.title, shout.published_at = "Просто заметка", None  # type: ignore[union-attr]
    assert written["unpublished"] not in await _found(deps, "черновик")


async def test_the_cached_answer_is_seed_000s_and_pages_are_cut_from_it(deps: Deps, written: dict[str, int],
                                                                       redis: Redis, sql_counter: Any) -> None:
    first = await load_shouts_search(deps, "Черника", ShoutsQuery(limit=2))
    key = keys.search("черника|" + keys.digest([]))
    stored = await redis.get(key)
    assert stored is not None and len(stored) < 10_000  # seed 004: no big keys
    value = decode(stored)[1]
    assert set(value) == {"hits", "total", "cached_at"} and value["total"] == 5 and len(value["hits"]) == 5
    assert [h[0] for h in value["hits"][:2]] == [s["id"] for s in first]
    assert deps.ttl_search - 5 <= await redis.ttl(key) <= deps.ttl_search * (1 + deps.cache.ttl_jitter)  # seed 004 jitter
    sql_counter.reset()
    second = await load_shouts_search(deps, "черника", ShoutsQuery(limit=2, offset=2))
    assert [s["id"] for s in second] == [h[0] for h in value["hits"][2:4]]
    assert not any("FROM shout" in s and "ts_rank" in s for s in sql_counter.statements)  # cut, not ranked


async def test_a_cold_search_is_bounded_by_a_statement_timeout(deps: Deps, written: dict[str, int],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import resolvers.search

    slow = Deps(cache=deps.cache, db=deps.db, search=SearchLimits(statement_timeout=0.05))
    original = resolvers.search.searchable_configs_query

    def sleeping(needle: str) -> Any:  # as if the database were busy
        return original(needle).add_columns(func.pg_sleep(0.5))

    monkeypatch.setattr(resolvers.search, "searchable_configs_query", sleeping)
    with pytest.raises(Busy, match="took too long"):
        await load_shouts_search(slow, f"черника {secrets.token_hex(2)}", ShoutsQuery(limit=5))


async def test_cold_searches_are_limited_per_address_and_cached_ones_are_not(
        deps: Deps, settings: Any, redis: Redis, mailer: Any, written: dict[str, int]) -> None:
    from auth.services import build_auth

    limited = Deps(cache=deps.cache, db=deps.db,
                   auth=build_auth(settings.model_copy(update={"cold_searches_per_address": 2}), redis, mailer=mailer))
    client = f"203.0.113.{secrets.randbelow(250)}"
    await inside_one_window(60)  # the limit's window (auth/services.py)
    for query in ("черника", "брусничник"):
        await load_shouts_search(limited, query, ShoutsQuery(limit=5), client=client)
    with pytest.raises(RateLimited):
        await load_shouts_search(limited, "маяк", ShoutsQuery(limit=5), client=client)
    assert await load_shouts_search(limited, "черника", ShoutsQuery(limit=5), client=client)  # cached: answered
    assert await load_shouts_search(limited, "маяк", ShoutsQuery(limit=5), client="198.51.100.7")  # another address


async def test_the_plan_reads_the_gin_index(deps: Deps, written: dict[str, int], engine: Any) -> None:
    """The match is an expression the GIN index answers, in each language's branch (at benchmark size
    the planner takes it by itself: bench/search.py prints the plans; this database is too small)."""
    from sqlalchemy.dialects import postgresql

    from orm.search import shout_match

    stmt = select(Shout.id).where(shout_match("черника", ["russian", "english", "simple"]))
    compiled = stmt.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True})
    async with engine.connect() as conn:
        await conn.execute(text("SET LOCAL enable_seqscan = off"))
        plan = "\n".join(row[0] for row in await conn.execute(text(f"EXPLAIN {compiled}")))
    assert plan.count("Bitmap Index Scan on ix_shout_search_vector") == 3 and "Seq Scan" not in plan, plan


async def test_authors_by_a_part_of_a_name_a_typo_or_the_bio(deps: Deps, written: dict[str, int]) -> None:
    async def found(query: str) -> list[int]:
        return [a["id"] for a in await load_authors_search(deps, query, 20, 0)]

    for query in ("Иванова", "иванова", "Ивонова", "Анастасия", "anastasia", "ivanova", "Kovalenko", "kovalenko"):
        hits = await found(query)
        assert hits and hits[0] in (written["author"], written["other"]), (query, hits)
    assert (await found("Ивонова"))[0] == written["author"]  # a typo in Cyrillic
    assert (await found("kovalenk"))[0] == written["other"]  # a part of the slug in Latin
    assert written["other"] in await found("lighthouses")  # the bio
    assert written["author"] not in await found("Kovalenko")


async def test_comments_by_their_words(deps: Deps, written: dict[str, int]) -> None:
    for query in ("черника", "маяк"):
        found = await load_reactions_by(deps, ReactionsQuery(search=query, limit=10))  # no seeded comment has these words
        assert [r["id"] for r in found] == [written["comment"]], query
    assert await load_reactions_by(deps, ReactionsQuery(search="и в на", limit=10)) == []


async def test_every_lemma_of_the_corpus_is_found_in_every_form(engine: Any) -> None:
    """The promise of app/cli/corpus.py: each lemma's forms come to one lexeme in its language's config."""
    lexemes: dict[tuple[str, str], set[str]] = {}
    async with engine.connect() as conn:
        for lemma in VOCABULARY:
            config = "russian" if lemma.lang == "ru" else "english"
            rows = await conn.execute(
                text(f"SELECT f, (SELECT string_agg(lexeme, ' ') FROM unnest(to_tsvector('{config}', f))) "
                     "FROM unnest(CAST(:forms AS text[])) AS f"), {"forms": list(lemma.forms)})
            lexemes[(lemma.lemma, lemma.lang)] = {row[1] for row in rows}
    split = {lemma: found for lemma, found in lexemes.items() if len(found) != 1 or None in found}
    assert split == {}


async def test_a_frequent_words_recent_matches_come_from_the_newest_shouts_and_title_matches_from_all(
        deps: Deps, written: dict[str, int]) -> None:
    """The bound that keeps a cold search's cost flat as the table grows: matches outside the title tier
    are looked for among the newest `window` shouts (here those published since the phrase text, 3 days
    ago: the body, lead and phrase texts among them, not the caption's, 4 days old); a title match is
    ranked whatever its age."""
    from orm.stats import is_listed

    async with deps.db() as session:  # the phrase text's and every newer shout (other tests publish some)
        phrase_at = await session.scalar(select(Shout.published_at).where(Shout.id == written["phrase"]))
        window = await session.scalar(select(func.count()).where(is_listed(), Shout.published_at >= phrase_at))
    narrow = Deps(cache=deps.cache, db=deps.db, search=SearchLimits(window=int(window or 0)))
    await deps.cache.redis.unlink(keys.search_window(narrow.search.window))
    await deps.cache.invalidate_tags([keys.TAG_SHOUTS])  # what earlier tests found for the word is kept
    found = set(await _found(narrow, "черника"))
    assert found == {written["title"], written["body"], written["lead"], written["phrase"]}  # not the caption's
    await deps.cache.invalidate_tags([keys.TAG_SHOUTS])
    assert written["caption"] in await _found(deps, "черника")  # the default window holds every test shout
