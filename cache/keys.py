"""Every Redis key and channel name of the project, in one place (seeds 000 and 002).

Key names follow `{entity}:{property}:{value}`; user input never goes into a key raw: slugs are
normalised and free text (search queries, long parameter lists) is hashed, so keys carry no spaces,
quotes or control characters and stay short (seed 004).

Redis Cluster: keys that one command, script or MULTI uses together carry the same hash tag, the part in
braces, which decides their slot: an entity's live structures and its meta hash (`{id}`), a user's
sessions and their set, a user's verification tokens, a delayed queue's five keys, the view counters
with their pending set, the settings store with its index. Everything else is read key by key (or by
MGETs split by slot), so it needs no tag and spreads over the cluster.
"""

from __future__ import annotations

import binascii
import functools
import hashlib
import re
from collections.abc import Iterable
from datetime import UTC, datetime

_SAFE = re.compile(r"[^0-9A-Za-z_.\-]")
# Longer slugs are hashed so that every key stays under 64 characters (seed 004, section 2.2).
_MAX_PART = 40
MAX_KEY = 64


def _part(value: object) -> str:
    """A key-safe rendering of one value: short safe text as is, anything else hashed."""
    text = str(value)
    if len(text) <= _MAX_PART and not _SAFE.search(text):
        return text
    return "h" + hashlib.blake2b(text.encode(), digest_size=10).hexdigest()


def _fit(key: str, family: int = 2) -> str:
    """Seed 004: at most MAX_KEY characters for any input. A longer key keeps its family (its first
    `family` segments, so prefix tools still find it) and replaces the rest with a hash of the whole."""
    if len(key) <= MAX_KEY:
        return key
    tail = ":h" + hashlib.blake2b(key.encode(), digest_size=10).hexdigest()
    return ":".join(key.split(":")[:family])[:MAX_KEY - len(tail)] + tail


def params(**values: object) -> str:
    """`limit=20:offset=0:sort=x`: the seed's collection suffix, in the order given, None left out."""
    return ":".join(f"{name}={_part(v)}" for name, v in values.items() if v is not None)


def digest(*parts: object) -> str:
    """A short stable hash of structured parameters (filters, option objects)."""
    return hashlib.blake2b(repr(parts).encode(), digest_size=10).hexdigest()


def normalize_query(text: str) -> str:
    """Seed 000 section 4: lower case, single spaces."""
    return " ".join(text.lower().split())


# --- entities (seed 000 section 3, seed 002 "Ключи") ---------------------------------------------

def author_id(author: int) -> str:
    return f"author:id:{author}"


def author_slug(slug: str) -> str:
    return f"author:slug:{_part(slug)}"


def author_user(user: str) -> str:
    return f"author:user_id:{_part(user)}"


def topic_id(topic: int) -> str:
    return f"topic:id:{topic}"


def topic_slug(slug: str) -> str:
    return f"topic:slug:{_part(slug)}"


def topic_authors(topic: int) -> str:
    return f"topic:authors:{topic}"


def community_id(community: int) -> str:
    return f"community:id:{community}"


def community_slug(slug: str) -> str:
    return f"community:slug:{_part(slug)}"


def community_authors(community: int, limit: int, offset: int, sort: str, filters: str | None = None) -> str:
    """Seed 002 `community:authors:{id}`: a page of a community's authors (`load_authors_by` by community)."""
    return _fit(f"community:authors:{community}:{params(limit=limit, offset=offset, sort=sort, by=filters)}",
                family=3)


def community_shouts(community: int, limit: int, offset: int) -> str:
    """Seed 002 `community:shouts:{id}:limit={n}:offset={m}`: a community's feed, newest first
    (`load_shouts_by` filtered by community alone)."""
    return _fit(f"community:shouts:{community}:{params(limit=limit, offset=offset)}", family=3)


def shout_id(shout: int) -> str:
    # Seed 002 lists `shouts:{id}` for a shout by id.
    return f"shouts:{shout}"


def shout_slug(slug: str) -> str:
    return f"shout:slug:{_part(slug)}"


def drafts_by_author(author: int) -> str:
    return f"drafts:author:{author}"


def viewer_list(viewer: int, name: str, params_digest: str = "") -> str:
    """A list that depends on who asks (feed, bookmarks, rates): keyed by the viewer, never shared."""
    return _fit(f"viewer:{viewer}:{name}" + (f":{params_digest}" if params_digest else ""), family=3)


# One script counts a view against the viewer's hourly set, the shout's counter and the pending set
# (cache/live/views.py): the three share the `{views}` tag, so on a cluster every view key lives on one node.
VIEWS_SLOT = "{views}"


def viewed(shout: int) -> str:
    """Seed 000 section 5: the view counter of a shout."""
    return f"viewed:{VIEWS_SLOT}:{shout}"


def views_seen(viewer: str, hour: int) -> str:
    """The shouts one viewer (an author or a hashed anonymous client) read in one hour: a view counts
    once per viewer, shout and hour. Expires after the hour."""
    return f"views:{VIEWS_SLOT}:seen:{_part(viewer)}:{hour}"


def views_pending() -> str:
    """Ids of shouts whose view counters changed since the last flush to the database."""
    return f"views:{VIEWS_SLOT}:pending"


# A Discours deployment's Redis as seed 000 section 5 lays it out, read (never written) by `discours adopt
# --views-redis`: `migrated_views_{timestamp}` HASHes of shout id -> views (with `_timestamp` and `_total`
# fields), the newest one the current; `migrated_views_slugs` (slug -> id); `viewed:{shout_id}` counters.
LEGACY_MIGRATED_VIEWS = "migrated_views_*"
LEGACY_VIEWED = "viewed:*"


def legacy_viewed_shout(key: str) -> int | None:
    """The shout id of an old `viewed:{shout_id}` key (None for any other key, ours included)."""
    rest = key.removeprefix("viewed:")
    return int(rest) if rest != key and rest.isdigit() else None


def reading_history(author: int) -> str:
    """Seed 003: the shouts an author read, scored by time (the newest 100)."""
    return f"user:{author}:his:reading"


def search_history(author: int) -> str:
    """Seed 003: what an author searched for, scored by time (the newest 50)."""
    return f"user:{author}:his:searching"


# --- live structures (seeds 001 and 003) ----------------------------------------------------------
# Kept current by the write side after each commit instead of being recomputed (cache/live/structures.py). Sorted
# sets of ids hold zero-padded members, so that equal scores order by id exactly as SQL does. A script
# updates an entity's meta hash and its structures together, so they all carry the entity's id as their
# hash tag (`user:{5}:fans`, `live:author:{5}`): the seed's names, with the braces kept.

BOARD_ENTITY = 0  # the boards are the structures of one entity: (board|weekly, 0)

LIVE_KINDS = ("shout", "author", "topic", "community", "comment", "board", "weekly")


def member(entity_id: int) -> str:
    return f"{entity_id:010d}"


def live_meta(kind: str, entity_id: int) -> str:
    """Per entity: the write version, writes under way, and the epoch each structure was built under."""
    return f"live:{kind}:{{{entity_id}}}"


def live_epoch(kind: str) -> str:
    """Bumped when writes of a kind could not be applied (Redis was down, a bulk statement): every
    structure of the kind is then rebuilt from SQL on its next read."""
    return f"gen:live:{kind}"


def counters(kind: str, entity_id: int) -> str:
    """Seed 003 `count:*`: the counters of one entity (a HASH of metric -> value)."""
    return f"count:{kind}:{{{entity_id}}}"


def fans(kind: str, entity_id: int) -> str:
    """Seed 003 `user:{id}:fans`: who follows an author (and the same for topics, communities, shouts),
    scored by follow time."""
    return f"user:{{{entity_id}}}:fans" if kind == "author" else f"{kind}:{{{entity_id}}}:fans"


def following(author: int, kind: str = "author") -> str:
    """Seed 003 `user:{id}:following`: what an author follows, scored by follow time."""
    return f"user:{{{author}}}:following" if kind == "author" else f"user:{{{author}}}:following:{kind}s"


def post_comments(shout: int, order: str = "") -> str:
    """Seed 001 `post:{id}:comments`: a shout's top-level comments scored by time; `:best` the same
    scored by rating; `:all` every comment of the shout (replies too) scored by time."""
    return f"post:{{{shout}}}:comments" + (f":{order}" if order else "")


def leaderboard(board: str) -> str:
    """Seed 001 `leaderboard:{board}`: the top entities of a board (`shouts:rating`, ...) by score,
    all time, or in one ISO week (`shouts:rating:2026-W47`). Tagged with the boards' entity."""
    return f"leaderboard:{{{BOARD_ENTITY}}}:{board}"


WEEK_NAME = re.compile(r"^(\d{4})-W(\d{2})$")


def week_of(timestamp: float) -> str:
    """The ISO week (UTC) a moment falls in: `2026-W47`."""
    year, week, _ = datetime.fromtimestamp(timestamp, UTC).isocalendar()
    return f"{year}-W{week:02d}"


def weekly_board(board: str, week: str) -> str:
    """The name of a board's weekly edition: `shouts:rating:2026-W47`."""
    return f"{board}:{week}"


def split_board(board: str) -> tuple[str, str | None]:
    """(all-time board, week or None) of a board name."""
    base, _, week = board.rpartition(":")
    return (base, week) if WEEK_NAME.match(week) else (board, None)


def board_kind(board: str) -> str:
    """The live kind a board belongs to (cache/live/structures.py): all-time boards and weekly editions have an
    epoch each."""
    return "board" if split_board(board)[1] is None else "weekly"


def comment(comment_id: int) -> str:
    """Seed 001 `comment:{id}`: one comment's fields (a HASH), `status` active or deleted."""
    return f"comment:{{{comment_id}}}"


def comment_replies(comment_id: int, order: str = "") -> str:
    """Seed 001 `comment:{id}:replies`: a comment's direct replies scored by time (`:best`: by rating)."""
    return f"comment:{{{comment_id}}}:replies" + (f":{order}" if order else "")


# --- the delayed queue (seed 001) ---------------------------------------------------------------------
# Every family is bounded: the queue and its leased set hold at most QUEUE_MAX_QUEUED messages together, the
# parked set at most QUEUE_PARKED_CAP (seed 004: 5,000 each), the two hashes one field per message in them.
# The five keys of a queue meet in its scripts: the queue's name is their hash tag.

def delayed_queue(name: str) -> str:
    """Seed 001: messages (`{id}|{kind}|{json payload}`) scored by the time they are due."""
    return f"delayed_queue:{{{_part(name)}}}"


def delayed_leased(name: str) -> str:
    """Messages a consumer took, scored by the end of its lease: back in the queue if it dies."""
    return delayed_queue(name) + ":leased"


def delayed_deliveries(name: str) -> str:
    """How many times each message still in flight was handed out (its attempts)."""
    return delayed_queue(name) + ":deliveries"


def delayed_parked(name: str) -> str:
    """Messages that failed every attempt, scored by when they were parked (`discours queue` shows them)."""
    return delayed_queue(name) + ":parked"


def delayed_errors(name: str) -> str:
    """The last error of each parked message."""
    return delayed_queue(name) + ":errors"


# --- pub/sub channels (seed 000, section 6) --------------------------------------------------------
# Channels hold nothing: a message reaches whoever is subscribed at that moment, so they need no TTL.

CHANNEL_GLOBAL = "notifications:global"


def channel_user(author: int) -> str:
    """Personal notifications: the events that concern one author."""
    return f"notifications:{author}"


def channel_topic(topic: int) -> str:
    """Publications in a topic, for everyone watching it."""
    return f"notifications:topic:{topic}"


def channel_moderation(community: int) -> str:
    """New comments and reactions in a community, for whoever moderates it (the editors' panel)."""
    return f"notifications:moderation:{community}"


def channel_shout(shout: int) -> str:
    """Reactions on a shout (new, edited, deleted), for everyone watching it."""
    return f"notifications:shout:{shout}"


# --- collections (seed 002) ------------------------------------------------------------------------

def topics_all() -> str:
    return "topics:all:basic"


def authors_all() -> str:
    return "authors:all:basic"


def communities_all() -> str:
    return "communities:all:basic"


def topics_stats(limit: int, offset: int, sort: str, community: int) -> str:
    """Seed 002 `topics:stats:limit={n}:offset={m}:sort={field}`: a page of topics (shown with their stats), of
    one community (`get_topics_by_community`)."""
    return _fit(f"topics:stats:{params(limit=limit, offset=offset, sort=sort, community=community)}")


def collections_all() -> str:
    return "collections:all"


def collections_by_author(author: int) -> str:
    return f"collections:author:{author}"


def collection_slug(slug: str) -> str:
    """A curated collection by its slug: its row and its number of shouts (`get_collection`)."""
    return f"collection:slug:{_part(slug)}"


def topics_by_author(author: int) -> str:
    return f"topics:author:{author}"


def communities_by_author(author: int) -> str:
    return f"communities:author:{author}"


def authors_stats(limit: int, offset: int, sort: str, filters: str | None = None) -> str:
    return _fit(f"authors:stats:{params(limit=limit, offset=offset, sort=sort, by=filters)}")


def shouts_feed(limit: int, offset: int) -> str:
    """Seed 002 `shouts:feed:limit={n}:offset={m}`: the main feed, every listed shout newest first."""
    return _fit(f"shouts:feed:{params(limit=limit, offset=offset)}")


def shouts_by(options_digest: str) -> str:
    """`shouts:{params_hash}` of seed 000 section 3.3 for a filtered, ordered shout list."""
    return f"shouts:by:{options_digest}"


def shouts_random_top(pool: int, filters: str) -> str:
    return _fit(f"shouts:random_top:{params(limit=pool, f=filters)}")


def search(query: str) -> str:
    """Seed 000 section 4 `search_cache:{normalized_query}`: the ranked results of a query (its filters
    written after a `|`), pages cut from them; the query is hashed to keep the key safe."""
    return _fit(f"search_cache:{_part(normalize_query(query))}", family=1)


def search_window(size: int) -> str:
    """When the newest `size` listed shouts begin: where a search looks for a frequent word's recent matches."""
    return f"search:window:{size}"


def search_authors(query: str, limit: int, offset: int) -> str:
    return _fit(f"search:author:{_part(normalize_query(query))}:{params(limit=limit, offset=offset)}")


def reactions_by(filters_digest: str) -> str:
    return f"reactions:by:{filters_digest}"


def reactions_shout(shout: int, limit: int, offset: int, kind: str = "comments") -> str:
    return _fit(f"reactions:shout:{shout}:{params(kind=kind, limit=limit, offset=offset)}", family=3)


def reactions_comment(comment: int, limit: int, offset: int) -> str:
    return _fit(f"reactions:comment:{comment}:{params(limit=limit, offset=offset)}", family=3)


def comments_branch(shout: int, parent: int | None, branch_digest: str) -> str:
    return _fit(f"reactions:shout:{shout}:branch:{parent or 0}:{branch_digest}", family=3)


# --- tags and generations (the invalidation mechanism) ---------------------------------------------
# A cached value records the generation of every tag it depends on; invalidating a tag is one INCR,
# after which every value stamped with the old generation reads as a miss. See cache/store.py.

GLOBAL_TAG = "epoch"


def tag_author(author: int) -> str:
    return f"author:{author}"


def tag_topic(topic: int) -> str:
    return f"topic:{topic}"


def tag_community(community: int) -> str:
    return f"community:{community}"


def tag_shout(shout: int) -> str:
    return f"shout:{shout}"


def tag_shout_reactions(shout: int) -> str:
    return f"reactions:shout:{shout}"


def tag_slug(kind: str, slug: str) -> str:
    """The slug -> id mapping of one entity kind; bumped when a slug is taken, freed or renamed."""
    return f"slug:{kind}:{_part(slug)}"


def tag_author_follows(author: int) -> str:
    return f"follows:author:{author}"


def tag_followers_of(kind: str, entity: int) -> str:
    return f"followers:{kind}:{entity}"


def tag_draft(draft: int) -> str:
    return f"draft:{draft}"


def tag_drafts_of(author: int) -> str:
    return f"drafts:author:{author}"


def tag_bookmarks_of(author: int) -> str:
    return f"bookmarks:author:{author}"


def tag_reactions_by(author: int) -> str:
    """Lists that depend on what one author reacted to (their rates, discussed, unrated)."""
    return f"reactions:author:{author}"


def tag_notifications_of(author: int) -> str:
    return f"notifications:author:{author}"


def tag_entities(kind: str) -> str:
    """Every cached entity of a kind (the revalidator's `all`)."""
    return f"entities:{kind}"


# Families: a change in membership or order of any list of that kind.
TAG_SHOUTS = "shouts"
TAG_AUTHORS = "authors"
TAG_TOPICS = "topics"
TAG_COMMUNITIES = "communities"
TAG_REACTIONS = "reactions"
TAG_COLLECTIONS = "collections"
TAG_INVITES = "invites"
TAG_NOTIFICATIONS = "notifications"

# A family tag that moves whenever a member's tag moves (cache/store.py `Cache.invalidate_tags` bumps it
# with them), so a stamp that names it need not name the members (`capture_stamp`): the answer listing
# every topic is checked against three generations, not three hundred. Only where the family tag moves
# with its members anyway: every change of a topic's row already moves `topics` (triggers/rules.py).
_COVERED_BY = {"topic": TAG_TOPICS}


def covering(tag: str) -> str | None:
    """The family tag that moves with `tag`, if any."""
    kind, _, rest = tag.partition(":")
    return _COVERED_BY.get(kind) if rest.isdigit() else None


def generation(tag: str) -> str:
    return f"gen:{tag}"


def generations(tags: Iterable[str]) -> list[str]:
    return [generation(t) for t in tags]


def invalidation_clock() -> str:
    """Moves with every invalidation, in the pipeline that moves the generations, and is forgotten with
    the epochs (cache/store.py): a stored response found current at the clock's value needs no check of
    its generations until the clock moves (cache/response/responses.py). One key, beside the generations. No tag
    is spelt with a `~`, so no generation key is this one."""
    return "gen:~clock"


# --- service keys (seed 002) -----------------------------------------------------------------------

def composite(of: str, made_of: str = "") -> str:
    """A value made of other cached values, kept whole (cache/composite.py): `of` is the key of the
    value it starts from (a list's, a slug's), kept readable while it fits; `made_of` names what else it
    holds, when that varies (`cards-authors`), so that each shape has a key of its own."""
    parts = of.split(":") + ([made_of] if made_of else [])
    # `name=value` parameters as params() writes them stay readable: their values are safe parts already
    return _fit("composite:" + ":".join(p if p and not _SAFE.search(p.replace("=", "", 1)) else _part(p)
                                        for p in parts))


def value_part(digest: str) -> str:
    """One part of a stored value too long for one string (seed 004; cache/stamps.py), named by the hash of
    its bytes: the same bytes are the same part, so no part is overwritten with other bytes under a reader."""
    return f"part:{digest}"


def rendered(selection_digest: str) -> str:
    """One root field's answer as rendered JSON, for one selection, arguments and variables
    (cache/response/rendered.py)."""
    return f"rendered:{selection_digest}"


def rendered_item(digest: str) -> str:
    """One item of a page as rendered JSON, for one root field's selection and the item as its list gave it
    (schema/engine/item_fragments.py); kept as long as rendered answers are."""
    return f"item:{digest}"


def response(request_digest: str) -> str:
    """A whole GraphQL response (the response cache)."""
    return f"response:{request_digest}"


def response_claim(response_key: str) -> str:
    """Held (with a TTL) by the worker computing the response under `response_key`, so that the other
    workers' readers of it wait for that answer instead of each computing it (cache/response/responses.py
    `ResponseCache.claim`). Named by a hash of the response's key, as a fill lock is."""
    return f"lock:{_part(response_key)}"


def grace(tag: str) -> str:
    """The moves of `tag` made by writes not yet answered, as a chain of generations (`g0>g1>g2`, the current one
    last), with a TTL of a second or so: a stored response stale by those moves alone may still be served while
    the writes refresh it (cache/refresh.py); each write cuts its move off before it is answered. Spelt as a
    generation key is (the hit script names it from the tag, by this prefix)."""
    return f"grace:{tag}"


def refresh_index(tag: str) -> str:
    """The responses read again after `tag` made them stale, most recent first (a sorted set of at most a few
    response keys, with the response cache's TTL): a write that moves `tag` computes them again before it is
    answered (cache/refresh.py)."""
    return _fit(f"refresh:tag:{tag}")


def refresh_request(response_key: str) -> str:
    """The request whose answer is kept under `response_key` (its document, operation and variables), for
    a write that computes it again (cache/refresh.py); with the response cache's TTL."""
    return f"refresh:req:{_part(response_key)}"


def metric(name: str, period: str) -> str:
    """Seed 000 section 8: a metric's value for one period (`daily:2026-11-23`, `hourly:2026-11-23T14`)."""
    return f"metrics:{name}:{period}"


def entity_stats(entity: str, timeframe: str) -> str:
    """Seed 000 section 8: one entity kind's statistics for a timeframe (`weekly:2026-W47`), a HASH."""
    return f"stats:{entity}:{timeframe}"


def persisted_query(sha256_hex: str) -> str:
    """An automatic persisted query's document by the SHA-256 of its text (hashed again to fit 64 chars)."""
    return f"persisted:{_part(sha256_hex)}"


def lock(resource: str) -> str:
    return f"lock:{resource}"


def precache_done() -> str:
    """Set by the worker that finished warming (with a TTL): workers starting later skip the warming."""
    return "precache:done"


def wal_floor() -> str:
    """The WAL position every replica read must have replayed (cache/wal_floor.py): one key, on the state
    Redis, 16 hex digits."""
    return "db:wal_floor"


def data_written_by() -> str:
    """The `run_id` of the Redis server that wrote this one's data (cache/failover.py); it replicates with
    the data, so a promoted replica (or a restarted server) holds another than its own."""
    return "redis:written_by"


def node_data_written_by(slot: int) -> str:
    """On a Redis Cluster, `data_written_by` of one node: kept in the first slot the node serves (the hash
    tag is chosen to fall there), so that each node has its own and it moves to a replica with the slots."""
    return f"redis:written_by:{{{slot_tag(slot)}}}"


CLUSTER_SLOTS = 16384


@functools.cache
def slot_tag(slot: int) -> str:
    """A short text whose Redis Cluster slot (CRC16-XMODEM of it, mod 16384) is `slot` (found by trying
    `n0`, `n1`, ...: some 16,000 CRCs, a few milliseconds, once per slot and process)."""
    if not 0 <= slot < CLUSTER_SLOTS:
        raise ValueError(f"a Redis Cluster has slots 0 to {CLUSTER_SLOTS - 1}, not {slot}")
    n = 0
    while binascii.crc_hqx(f"n{n}".encode(), 0) % CLUSTER_SLOTS != slot:
        n += 1
    return f"n{n}"


# What a node's failover must forget (cache/failover.py): keys whose lost writes would make a stale value
# look current, by prefix: generations and epochs (a missing one starts again at random), the live
# structures' meta hashes (a missing one is built again from SQL), the WAL floor (set again from the primary).
FORGOTTEN_ON_FAILOVER = (generation(""), "live:", wal_floor())


FILL_LOCK_PREFIX = "lock:fill:"


def fill_lock(cache_key: str, stamp: bytes = b"") -> str:
    """Held by the one worker computing a missing value, so the others wait instead of piling on. For a
    cached value, of one generation of it (`stamp`, the generations it is computed under): a value
    computed under an older one is no use to a reader of this one, which need not wait for it. Named by
    the SHA-1 of the key and the stamp, which a script reading the value names it by too (redis.sha1hex:
    cache/store.py `_READ_OR_LEASE`)."""
    named = cache_key + "\0" + stamp.decode() if stamp else cache_key
    return FILL_LOCK_PREFIX + hashlib.sha1(named.encode(), usedforsecurity=False).hexdigest()


def revalidation_batch(entity_type: str) -> str:
    """Seed 002 `revalidation:batch:{entity_type}`: the SET of ids marked for revalidation. The braces
    are a Redis Cluster hash tag, so the batch and its processing copy live in one slot."""
    return f"revalidation:batch:{{{entity_type}}}"


def revalidation_processing(entity_type: str) -> str:
    return f"revalidation:processing:{{{entity_type}}}"


# --- accounts and sessions (seed 000 sections 1 and 2) -----------------------------------------------
# Tokens never appear in keys raw: `token_id` is a hash of the token (auth/tokens.py). A user's sessions
# and their set change in one MULTI, as do a user's verification tokens: the user id is their hash tag.

def session(user_id: int, token_id: str) -> str:
    return f"session:{{{user_id}}}:{token_id}"


def user_sessions(user_id: int) -> str:
    return f"user_sessions:{{{user_id}}}"


def oauth_state(state: str) -> str:
    return f"oauth_state:{_part(state)}"


def telegram_login(signature: str) -> str:
    """A Telegram Login Widget answer already used (auth/telegram.py); kept as long as it could be accepted."""
    return f"telegram_login:{_part(signature)}"


def oauth_access(user_id: int, provider: str) -> str:
    return f"oauth_access:{user_id}:{_part(provider)}"


def oauth_refresh(user_id: int, provider: str) -> str:
    return f"oauth_refresh:{user_id}:{_part(provider)}"


def verification(user_id: int, kind: str, token_id: str) -> str:
    return _fit(f"verification:{{{user_id}}}:{kind}:{token_id}", family=3)


def pending_verification(user_id: int, kind: str) -> str:
    """The token id of a user's outstanding verification of one kind (so it can be cancelled)."""
    return f"verification:{{{user_id}}}:{kind}:pending"


def login_failures(email_digest: str) -> str:
    return f"login_failures:{email_digest}"


def rate_window(action: str, subject_digest: str, window: int) -> str:
    """How often one client address or account did `action` in one fixed window (expires with it)."""
    return _fit(f"rate:{action}:{subject_digest}:{window}")


# The settings store's variables and their index change in one MULTI: one hash tag for all of them.
ENV_SLOT = "{env}"


def env_var(name: str) -> str:
    return f"env_vars:{ENV_SLOT}:{_part(name)}"


def author_account(author: int) -> str:
    """The private part of an author (email, roles): read only for the author themselves or an admin."""
    return f"author:account:{author}"


def tag_account(author: int) -> str:
    return f"account:{author}"


def env_index() -> str:
    """The names of all stored variables (variable names are upper case, so this never collides)."""
    return f"env_vars:{ENV_SLOT}:index"


_FAMILY_PART = re.compile(r"^[a-z_]+$")


def family(key: str) -> str:
    """The family a key belongs to, for metrics and `discours cache stats`: its leading word segments
    (at most two), so `author:id:5` is `author:id`, `shouts:17` is `shouts` and `topic_shouts_9` is
    `topic_shouts`. Never holds an id or a client's text: a label made from it is bounded by the code."""
    words: list[str] = []
    for part in key.split(":", 2)[:2]:
        if _FAMILY_PART.match(part):
            words.append(part)
            continue
        glued = part.rstrip("0123456789").rstrip("_")  # `topic_shouts_9`: a word with an id glued on
        if not words and _FAMILY_PART.match(glued):
            words.append(glued)
        break
    return ":".join(words) or "other"
