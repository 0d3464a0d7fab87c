"""The one settings object. Nothing else in the project reads the environment."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Literal, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

T = TypeVar("T", bound=BaseSettings)


class SettingsError(RuntimeError):
    """A setting is wrong; the message names the variable."""


# Used only with the embedded SQLite default, so a newcomer's first run needs no secret.
EMBEDDED_JWT_SECRET = "embedded-development-secret-not-for-production"
# An origin as CORS_ORIGINS takes it: scheme://host[:port], where * stands for a part of the host or the port.
ORIGIN = re.compile(r"^https?://[A-Za-z0-9.*-]+(:(\d+|\*))?$")
DEVELOPMENT_ORIGINS = ("http://localhost:*", "http://127.0.0.1:*", "https://localhost:*")


SENTINEL_SCHEME = "redis+sentinel://"


def parse_sentinel_url(url: str) -> tuple[list[tuple[str, int]], str, int, str | None]:
    """`redis+sentinel://[:password@]host:port[,host:port...]/service[/db]` -> (sentinels, the service
    name, db, the master's password)."""
    rest = url.removeprefix(SENTINEL_SCHEME)
    password = None
    if "@" in rest:
        credentials, rest = rest.rsplit("@", 1)
        password = credentials.split(":", 1)[-1] or None
    hosts, _, path = rest.partition("/")
    service, _, db = path.partition("/")
    if not hosts or not service:
        raise ValueError("a Sentinel URL is redis+sentinel://host:port[,host:port]/service[/db]")
    sentinels = []
    for host in hosts.split(","):
        name, _, port = host.rpartition(":")
        sentinels.append((name or host, int(port) if name else 26379))
    return sentinels, service, int(db or 0), password


class OAuthProvider(BaseModel):
    """One sign-in provider. A provider auth/oauth_profiles.py knows by its id (google, github, facebook,
    yandex, vk, x, telegram) needs only `client_id` and `client_secret` (Telegram: the bot's username and
    its token); the rest overrides its defaults. Any other id is a generic OAuth 2 provider: it needs
    `authorize_url`, `token_url` and `userinfo_url`, or an OpenID Connect `discovery_url`."""

    name: str = ""
    client_id: str
    client_secret: str = ""
    authorize_url: str = ""
    token_url: str = ""
    userinfo_url: str = ""
    # OpenID Connect: the issuer's /.well-known/openid-configuration; its ID tokens are then validated
    discovery_url: str = ""
    scope: str = ""
    # A generic provider that gives only addresses it has verified but sends no `email_verified` claim.
    # Otherwise an address counts as verified only with `email_verified: true`, and an unverified one
    # never signs in to an existing account.
    emails_verified: bool = False


def postgres_url(url: str) -> str:
    """A PostgreSQL URL as SQLAlchemy's asyncpg dialect reads it. Operators write libpq's form, which may name
    several hosts for failover (`postgresql://u@h1:5432,h2:5432/db?target_session_attrs=read-write`: the
    first that answers and is the primary); SQLAlchemy takes several hosts only as repeated `host`
    parameters (`postgresql+asyncpg://u@/db?host=h1:5432&host=h2:5432&...`), which is written here. A URL
    with one host, or in SQLAlchemy's form already, only gets the driver's name."""
    rest = url.split("://", 1)[1]
    authority, _, path = rest.partition("/")
    userinfo, at, hosts = authority.rpartition("@")
    if "," not in hosts:
        return "postgresql+asyncpg://" + rest
    database, _, query = path.partition("?")
    named = "&".join(f"host={quote(_with_port(host.strip()), safe=':')}" for host in hosts.split(",")
                     if host.strip())
    return (f"postgresql+asyncpg://{userinfo}{at}/{database}?{named}" + (f"&{query}" if query else ""))


def _with_port(host: str) -> str:
    """`host:port`, libpq's default port when none is named (SQLAlchemy wants one for every host; it takes
    no IPv6 address in a list of several: name such hosts)."""
    return host if ":" in host else f"{host}:5432"


class _Group(BaseSettings):
    """A group of settings, read from the environment (and `.env`) by their own names."""

    model_config = SettingsConfigDict(env_file=".env", extra="ignore")


class DatabaseSettings(_Group):
    """The database: what migrations need (no JWT_SECRET, no Redis), and the pools and replicas the server
    reads through."""

    # No DATABASE_URL: a SQLite file next to where the server starts (the embedded default).
    database_url: str = Field(default="sqlite+aiosqlite:///./discours.db")
    db_pool_size: int = 10
    # A pooled database connection idle longer than this is pinged before use (one used more recently
    # is trusted: the ping is a round trip that would cost every cold read; orm/engine.py).
    db_ping_after_idle: float = 5.0
    # Connections of the pool held between reads on the driver, lent to the next without a checkout
    # (orm/held.py); a checkout that finds no idle connection takes one back. 0: none held.
    db_held_for_reads: int = 2
    # DATABASE_URL names a transaction pooler (PgBouncer with pool_mode = transaction or statement), whose
    # server connections change from one transaction to the next: prepared statements are then named
    # uniquely and never cached on a connection (orm/engine.py). Migrations and `discours adopt` take a
    # direct URL of the primary instead (docs/operations.md, "Deploying and scaling out").
    db_transaction_pooler: bool = False
    # Streaming replicas of DATABASE_URL's primary (a JSON list of URLs, each in either form DATABASE_URL
    # takes): cache fills and other reads go to one that has replayed every commit the cache knows of
    # (orm/replicas.py), else to the primary. Empty: every read on the primary.
    database_replica_urls: list[str] = Field(default_factory=list)
    # A replica further behind its primary than this (seconds) is passed over until it catches up. Reads
    # never miss a commit whatever the lag (the WAL floor); this bounds how often they find a replica behind.
    replica_max_lag: float = 30.0
    # How often each replica's replay position and lag are checked (and a lost one tried again).
    replica_check_interval: float = 1.0
    # Connections opened at start and kept: of the database pool (at most DB_POOL_SIZE), and of each Redis
    # pool (at most REDIS_MAX_CONNECTIONS). A pool that opens them only as concurrency first asks grows at
    # each new peak of load, minutes into a run (bench/soak.py). A Redis pool opens more beyond these
    # only in a burst that needs them, and keeps them (redis-py closes none): two workers under the soak's
    # full load, opening theirs as needed, held 17-21 Redis connections in all (their pub/sub and the
    # sampler's among them). Replicas' pools open theirs as needed.
    db_connections_at_start: int = Field(default=10, ge=0)
    # false ("off") reads a usable replica whatever it has replayed, as a replica-unaware server would (no
    # WAL floor): the control of the replica drills, refused in production like CACHE_INVALIDATION=off.
    replica_floor: bool = True

    @field_validator("database_url")
    @classmethod
    def _normalise_database_url(cls, value: str) -> str:
        if value.startswith(("postgres://", "postgresql://", "postgresql+asyncpg://")):
            return postgres_url(value)
        if value.startswith("sqlite://") and "+aiosqlite" not in value:
            return value.replace("sqlite://", "sqlite+aiosqlite://", 1)
        if not value.startswith(("postgresql+asyncpg://", "sqlite+aiosqlite://")):
            raise ValueError(
                "DATABASE_URL must be postgresql://... (asyncpg) or sqlite:///path (aiosqlite), "
                f"got {value!r}"
            )
        return value

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")


class RedisSettings(_Group):
    """Redis: where the cache and the state live, the client's pools, the breaker."""

    # No REDIS_URL: an in-process Redis (fakeredis) with the same command set and Lua.
    redis_url: str | None = None
    # What must not be evicted (sessions, sign-in and OAuth tokens, rate limits, the settings store, the
    # delayed and revalidation queues, live structures, views) on a Redis of its own, run with
    # maxmemory-policy noeviction; then REDIS_URL holds only stamped cached values and may evict
    # (allkeys-lru). Unset: all on REDIS_URL.
    redis_state_url: str | None = None
    # REDIS_URL (and REDIS_STATE_URL) name any node of a Redis Cluster: the client finds the others, and
    # keys used together share a hash tag (cache/keys.py).
    redis_cluster: bool = False
    # Commands issued in the same moment go to Redis as one pipeline (cache/redis/coalesce.py): a page's
    # concurrent reads, and those of requests served side by side, share round trips. Not on a cluster.
    redis_coalesce: bool = True
    # The most commands one coalesced round trip carries (seed 004: a hundred a pipeline); one caller's own
    # longer pipeline still goes whole, alone.
    redis_coalesce_max_commands: int = Field(default=100, ge=1)
    redis_max_connections: int = 64
    # Connections of each Redis pool opened at start and kept (DB_CONNECTIONS_AT_START says why).
    redis_connections_at_start: int = Field(default=16, ge=0)
    # false ("off"): a Redis holding data another server wrote (a promoted replica, a restart) is trusted
    # as it is, as a server unaware of failovers would (cache/failover.py): the control of the failover
    # drills, refused in production like CACHE_INVALIDATION=off.
    redis_owner_check: bool = True
    # After a Redis error, go straight to the database for this long before trying Redis again.
    redis_breaker_seconds: float = 5.0


class ServingSettings(_Group):
    """The server process: the address, the workers, restarts, slow clients, CORS."""

    # On SIGTERM (app/graceful.py): seconds a worker keeps serving with /readyz at 503, so a load balancer
    # stops sending it requests (above its check interval times its fall count); then seconds the requests
    # in flight may take to finish before they are cancelled.
    shutdown_drain_seconds: float = 5.0
    shutdown_timeout: float = 30.0
    # Slow clients (app/http/slow_clients.py, and uvicorn's own options): seconds a request's headers may take
    # from their first byte, seconds its whole body may take after them (408 past either; 0: no
    # limit), seconds an idle keep-alive connection stays open, and connections (and tasks) a worker
    # takes before it answers 503 (above the 1,000 event streams and WebSockets a worker holds).
    header_read_timeout: float = Field(default=10.0, ge=0)
    body_read_timeout: float = Field(default=30.0, ge=0)
    keep_alive_timeout: int = Field(default=5, ge=1)
    max_connections: int = Field(default=2048, ge=1)
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    debug: bool = False
    # development or production; unset: development with the embedded SQLite database, else production.
    # Development allows what a developer's machine needs (browsers on localhost origins, for one).
    environment: Literal["development", "production"] | None = None
    # Browser origins allowed to call the API with credentials (CORS), as JSON: exact origins
    # ("https://discours.io") and patterns with * for a part of the host or the port
    # ("https://*.discours.io", "http://localhost:*"). Unset: localhost origins in development, none in
    # production (a same-origin deployment needs none).
    cors_origins: list[str] | None = None
    # Seconds a browser may keep a preflight's answer.
    cors_max_age: int = 3600
    # Every response names the worker process that answered (X-Worker: its pid); for tests and debugging.
    expose_worker: bool = False


class CacheSettings(_Group):
    """The stamped-value cache (cache/store.py): invalidation, revalidation, lifetimes, lost writes contained."""

    # false ("off") makes the after-commit invalidation a no-op: committed writes leave cached values as
    # they were. Only for tests and drills that show what the invalidation prevents; refused in production.
    cache_invalidation: bool = True
    # Background revalidation loop period, seconds (seed 002: 5 minutes).
    cache_revalidation_interval: int = 300
    precache_on_start: bool = True
    # Time-limited collections (seed 000 section 3.3: 5 minutes; search: 10 minutes).
    cache_ttl_shouts: int = 300
    cache_ttl_search: int = 600
    # Seed 004: every key expires. Cached values without a TTL of their own (entities, follow lists,
    # community pages) live this long; a lookup of something that does not exist is remembered this
    # briefly; generation keys live this long after their last move (longer than any value they stamp).
    cache_ttl_default: int = 7 * 86_400
    cache_ttl_missing: int = 60
    cache_ttl_generations: int = 30 * 86_400
    # Fraction of a TTL used as random spread so keys written together do not expire together.
    cache_ttl_jitter: float = 0.1
    # Seed 004: no string value over 10 KB. A value, composite, rendered answer or response body that is
    # larger once compressed is kept in parts of at most this many bytes (read in one more round trip); one
    # that would take more than a hundred parts is not kept, and its readers compute it (from the values it
    # is made of, or SQL) without waiting for a fill lock; an automatic persisted query's document over it is
    # not kept either (cache/stamps.py).
    cache_max_value_bytes: int = Field(default=10_240, ge=1024)
    # Composites (a page with its cards, every topic) a worker keeps decoded, with the bytes they were
    # decoded from: a composite read again as the same bytes is not parsed again. 0 parses every read.
    composites_kept_decoded: int = Field(default=64, ge=0)
    # A write whose invalidation was lost while Redis refuses commands for now (a Redis Cluster failing
    # over) waits up to this long for the loss to be contained before it answers (cache/store.py
    # `Cache.lose_write`): set it above the cluster's failover time (cluster-node-timeout and a second).
    redis_lost_write_wait: float = Field(default=10.0, ge=0)
    # ... and up to this long while no Redis answers at all: behind Sentinel the workers find a promoted
    # replica at different moments, and one that has found it may read there before this worker does.
    redis_unreachable_write_wait: float = Field(default=1.0, ge=0)


class LiveSettings(_Group):
    """Live structures, views and leaderboards (cache/live/)."""

    # Live structures (counters, follow sets, threads): idle ones expire after this many seconds and are
    # rebuilt from SQL when next read; follower sets keep the newest this many members (seed 004: 5,000).
    live_ttl: int = 7 * 86_400
    live_set_cap: int = 5000
    # A comment thread (top level, or one comment's replies) longer than this is read from SQL (seed 004).
    live_thread_cap: int = 5000
    # Views: flushed to the database every this many seconds; an anonymous client or author reading more
    # distinct shouts than this in an hour counts no more views that hour.
    views_flush_interval: int = 60
    views_per_hour_cap: int = 500
    # The reads response-cache hits answer (a view, a signed-in reader's history) are counted together,
    # this many seconds after the first since the last count (app/http/hit_reads.py): a crash loses at most
    # these seconds of them. At most this many wait; more are not counted.
    hit_reads_interval: float = Field(default=0.25, ge=0, le=60)
    hit_reads_max_pending: int = Field(default=10_000, ge=1)
    # Weekly leaderboards (`load_shouts_top(week:)`) can be read for this many weeks back: each week read
    # is one more board of at most `live_set_cap` members, kept `live_ttl`.
    board_weeks: int = 52


class QueueSettings(_Group):
    """The delayed queue (seed 001, cache/messaging/delayed.py) and what it delivers."""

    # The delayed queue (scheduled publication): polled every this many seconds, taken this many at a
    # time; a consumer that holds a message longer than the lease is taken for dead and the message
    # handed to another; a failing message is retried after backoff·2^(attempt-1) seconds (at most an
    # hour) and parked after this many attempts. At most this many messages are queued (leased ones
    # included) and at most this many parked (seed 004: a sorted set of at most 5,000); what finds the
    # queue full waits in the database for the sweep.
    queue_poll_interval: float = 1.0
    queue_batch: int = 100
    queue_lease: int = 60
    queue_backoff: float = 5.0
    queue_max_attempts: int = 5
    queue_max_queued: int = Field(default=5000, ge=1)
    queue_parked_cap: int = Field(default=5000, ge=1)
    # Pending messages (scheduled drafts, the current window's digests) are queued again from the
    # database this often, and at start: a full queue, or a Redis that lost its data, loses none.
    queue_sweep_interval: int = 600
    # An author notified directly gets at most one digest mail per this many seconds, when it ends.
    notification_digest_window: int = 3600


class SearchSettings(_Group):
    """Search (resolvers/search.py, orm/search.py)."""

    # Search (resolvers/search.py): a query longer than this is refused (BAD_USER_INPUT); the ranked shouts
    # kept per query in search_cache (seed 004: a value under 10 KB); the matches ranked beyond the title
    # matches (the most recent ones: a common word does not rank every shout), looked for among the newest
    # `search_window` shouts (what a cold search reads stays bounded as the table grows); the matches counted for the
    # total; how long a cold search may run; how close a name must be to be found (pg_trgm word
    # similarity, 0..1). How many cold searches a client address may make is an account rate
    # (COLD_SEARCHES_PER_ADDRESS, `AccountSettings`).
    search_max_length: int = 200
    search_kept_results: int = 200
    search_candidates: int = 1_000
    search_window: int = 20_000
    search_count_cap: int = 1_000
    search_statement_timeout: float = 2.0
    author_search_similarity: float = 0.4


class AnswerSettings(_Group):
    """How the HTTP view answers (app/http/): the response cache, rendered answers, persisted queries, the time
    limit, writes' turns and refreshes."""

    # Whole anonymous responses of public queries, seconds; 0 switches the response cache off.
    response_cache_ttl: int = 60
    # Root fields that declare it (schema/engine/rendered.py) keep their answer as rendered JSON, seconds; 0: off.
    rendered_answer_ttl: int = 60
    # The plain forms of stored gzip responses a worker keeps for clients that do not accept gzip, bytes.
    plain_bodies_kept_bytes: int = 16 * 1024 * 1024
    # Automatic persisted queries: a registered document is kept this many seconds after its last use.
    persisted_query_ttl: int = 86_400
    # Seconds a query or mutation may run; then its work is cancelled and the client told so (a commit
    # under way still finishes, with its cache invalidation).
    request_timeout: float = 15.0
    # State-changing requests (mutations) one worker runs at once, side by side; more wait at most
    # WRITE_WAIT_SECONDS for a turn, then are answered 503 with Retry-After, unchanged (app/http/write_gate.py).
    # 0: no bound. The wait rides out a Redis or PostgreSQL failover (the writes holding the turns wait for it
    # too) and ends before REQUEST_TIMEOUT.
    writes_in_flight: int = Field(default=8, ge=0)
    write_wait_seconds: float = Field(default=10.0, gt=0)
    # Writes that wait for a turn in one worker at most; the next is answered 503 at once (its memory, and
    # the worker's, stays bounded when writes arrive faster than the worker does them).
    writes_waiting: int = Field(default=64, ge=0)
    # The share of a flooded worker's time its writes may hold their turns: after a write that others waited
    # for, having held its turn w seconds, no turn is given for w * (1 - share) / share while reads are being
    # answered (never on a worker with nothing else to do, nor to writes slower than the turns take them), and
    # the writes past that are refused as above (503). At 1, every write the turns allow goes through and the
    # readers get what the writes leave.
    write_share: float = Field(default=0.5, gt=0, le=1)
    # Hot responses a write answered over HTTP computes again after its answer, joining a reader's computation of
    # the same answer (cache/refresh.py): at most this many a write; 0: none, and no grace.
    responses_refreshed_per_write: int = Field(default=4, ge=0, le=32)
    # How long a write's grace lasts at most (ms): deleted before the write is answered; a write's refreshes
    # that take longer than half of it are given up (their readers compute them as ever).
    refresh_grace_ms: int = Field(default=1000, ge=10, le=10_000)


class LimitSettings(_Group):
    """What one request may ask (schema/engine/limits.py, app/http/guards.py, resolvers/paging.py); each is
    refused before execution."""

    max_page_size: int = 100
    # Body bytes (413 above); the 2025 client's largest operation is about 120 tokens, depth 4, and costs
    # at most 8,400 with every page at its largest.
    max_body_bytes: int = 1_048_576
    max_query_tokens: int = 2000
    max_query_depth: int = 10
    max_query_aliases: int = 30
    max_query_cost: int = 20_000
    # A list field with no `limit` argument counts as this many items in the cost.
    query_cost_list_size: int = 20
    # Operations in one batched request (a JSON list of requests).
    max_batch_operations: int = 10
    # Variables nested deeper than this are refused (400) before anything else reads them.
    max_variables_depth: int = 32
    # Parsed documents kept per worker, by their text.
    parsed_documents_cache: int = 512


class ObservabilitySettings(_Group):
    """Watching it run (app/routes/observability.py, cache/redis_metrics.py)."""

    # /metrics answers loopback clients only; with a token set, a bearer token from anywhere instead.
    metrics_token: str | None = None
    # Seconds between flushes of this worker's counts to seed 000's metrics:* and stats:* keys in Redis.
    metrics_flush_interval: float = 10.0
    # prometheus-client's multiprocess mode: a directory the workers share their counts through, emptied
    # before each start. `discours serve --workers N` makes a fresh one when this is unset.
    prometheus_multiproc_dir: str | None = None
    # The least severe records logged, and their form: `plain` lines for a terminal, or `json`, one object a
    # line (a traceback inside it) with the request's id and operation name, for a log collector.
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO"
    log_format: Literal["plain", "json"] = "plain"
    # Error reports to Sentry, or GlitchTip under the name Discours gives it (SENTRY_DSN wins when both are
    # set): on when a DSN is set; the share of errors sent (1.0: every one). telemetry/error_reports.py.
    sentry_dsn: str | None = None
    glitchtip_dsn: str | None = None
    sentry_sample_rate: float = Field(default=1.0, ge=0, le=1)
    # Traces by OTLP over HTTP to this collector (its base URL; spans go to /v1/traces): on when set, off (and
    # costing nothing) when not. The service's name in them, and the share of requests traced (a trace that
    # arrives sampled by a proxy is kept whatever it is). telemetry/tracing.py.
    otel_exporter_otlp_endpoint: str | None = None
    otel_service_name: str = "discours-core"
    otel_traces_sample_rate: float = Field(default=1.0, ge=0, le=1)


class SubscriptionSettings(_Group):
    """Live events: pub/sub and subscriptions (seed 000 section 6, resolvers/events.py), and the web client's
    event stream (app/routes/connect.py)."""

    # Where the editors' panel is served (app/routes/admin_panel.py); empty: not at all.
    admin_path: str = "/admin"
    # Where the web client's event stream is served (its PUBLIC_REALTIME_EVENTS); empty: not at all.
    connect_path: str = "/connect"
    # Open event streams: of one worker, and of one viewer on one worker; past them a stream is refused
    # (503 and 429, with Retry-After). Each stream holds a connection, which MAX_CONNECTIONS counts too.
    connect_streams: int = Field(default=1000, ge=1)
    connect_streams_per_viewer: int = Field(default=8, ge=1)
    # Seconds between heartbeats (a comment line that keeps proxies from closing a quiet stream); the
    # session is checked again at each, and a signed-out or expired one ends the stream.
    connect_heartbeat: float = Field(default=15.0, gt=0)
    # Events a stream that comes back with Last-Event-ID is sent again at most (the notifications it missed).
    connect_backlog: int = Field(default=100, ge=0)

    # One event is pushed to at most this many people (it is stored and listed for all of them).
    notify_fanout_cap: int = 10_000
    # Messages a subscriber may fall behind before it is dropped (never slowing the others).
    subscription_queue_size: int = 100
    # Operations one WebSocket connection may run at once.
    subscriptions_per_connection: int = 20
    # Seconds a WebSocket may take to send connection_init.
    subscription_init_timeout: int = 10
    # Subscriptions that start together in a worker (the others wait their turn, schema/engine/stream_starts.py), and
    # the seconds one start may hold its turn (past them it waits for a service, not the loop).
    subscription_starts_at_once: int = Field(default=4, ge=1)
    subscription_start_hold: float = Field(default=1.0, gt=0)


class AccountSettings(_Group):
    """Accounts and sessions (seed 000 section 1), sign-in providers, mail."""

    jwt_secret: str | None = None
    session_ttl: int = 30 * 24 * 3600
    session_cookie: str = "session_token"
    # While Redis does not answer, a session this worker checked this many seconds ago or less stays valid.
    session_outage_grace: float = 60.0
    # Live sessions one account may hold; a sign-in past it revokes the oldest (auth/sessions.py).
    sessions_per_user: int = Field(default=50, ge=1)
    cookie_secure: bool = False
    # The session cookie's SameSite: lax (sent to this API from its own site, subdomains included);
    # none when the web client runs on another site (needs COOKIE_SECURE=true: browsers refuse it otherwise).
    cookie_samesite: Literal["lax", "strict", "none"] = "lax"
    verification_ttl: int = 3600
    login_max_failures: int = 5
    login_lock_seconds: int = 300
    # Per client address: login attempts a minute, registrations an hour, mails asked for (confirmation,
    # password reset, email change) an hour, cold searches (those not answered from the cache) a minute;
    # and mails one recipient address gets an hour. 0: no limit. One limiter keeps them all (auth/throttle.py).
    logins_per_address: int = 30
    registrations_per_address: int = 10
    mails_per_address: int = 20
    cold_searches_per_address: int = 60
    mails_per_recipient: int = 5
    # Password hashing runs in this many threads (argon2 releases the GIL), off the event loop; at most
    # `password_hash_queue` more wait, past that a sign-in is refused as busy.
    password_hash_threads: int = 1
    password_hash_queue: int = 64
    # argon2id cost; tests lower it, production keeps the library's defaults
    password_time_cost: int = 3
    password_memory_cost: int = 65536
    admin_emails: list[str] = Field(default_factory=list)
    public_url: str = "http://127.0.0.1:8000"
    # Where the links in our mail lead (…/confirm, …/reset, …/confirm-email-change with ?token=): a web client
    # that handles them; unset: this server's own small pages at PUBLIC_URL.
    links_url: str | None = None
    # OAuth providers by id, as JSON in OAUTH_PROVIDERS: {"github": {"client_id": ..., "client_secret": ...}}
    oauth_providers: dict[str, OAuthProvider] = Field(default_factory=dict)
    # How old a Telegram Login Widget answer may be (seconds since its auth_date); each is accepted once.
    telegram_login_max_age: int = 600
    # Where an OAuth flow may send the browser back to (prefixes); empty: only public_url.
    oauth_redirect_allowed: list[str] = Field(default_factory=list)
    # Seconds the token a web client's sign-in hands to its /oauth route (in the address) stays good, unless
    # the client's next getSession exchanges it for a session of the usual length first.
    oauth_token_ttl: int = Field(default=300, ge=30)
    # Mail: with no SMTP_HOST, messages are written to the log.
    smtp_host: str | None = None
    smtp_port: int = 587
    smtp_user: str | None = None
    smtp_password: str | None = None
    smtp_starttls: bool = True
    mail_from: str = "Discours <noreply@discours.io>"
    # Without SMTP, mail is logged by subject only; this adds the body (its sign-in link) to the log. Unset:
    # on in development, off in production (ENVIRONMENT; `Settings` decides it). Never set it on in production.
    mail_log_links: bool | None = None
    # The language of the server's pages and mail when the client names none and its Accept-Language names
    # none the server writes (auth/language.py).
    default_language: Literal["ru", "en"] = "ru"
    # A folder of mail templates to use instead of the server's own (auth/mail_templates/: the same names);
    # every template is written once at start, and one that is missing or broken stops it.
    mail_templates_dir: str | None = None


class Settings(DatabaseSettings, RedisSettings, ServingSettings, CacheSettings, LiveSettings, QueueSettings,
               SearchSettings, AnswerSettings, LimitSettings, ObservabilitySettings, SubscriptionSettings,
               AccountSettings):
    """Every setting: the groups together, each group what one part of the server is configured by."""

    @field_validator("database_replica_urls")
    @classmethod
    def _normalise_replica_urls(cls, value: list[str]) -> list[str]:
        for url in value:
            if not url.startswith(("postgres://", "postgresql://", "postgresql+asyncpg://")):
                raise ValueError(f"DATABASE_REPLICA_URLS: each must be a postgresql:// URL, got {url!r}")
        return [postgres_url(url) for url in value]

    @field_validator("redis_url", "redis_state_url")
    @classmethod
    def _check_redis_url(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        assert value is not None
        if not value.startswith(("redis://", "rediss://", "unix://", "redis+sentinel://")):
            raise ValueError(f"a Redis URL is redis://, rediss://, unix:// or redis+sentinel://, got {value!r}")
        if value.startswith(SENTINEL_SCHEME):
            parse_sentinel_url(value)
        return value

    @field_validator("cors_origins")
    @classmethod
    def _check_origins(cls, value: list[str] | None) -> list[str] | None:
        for origin in value or ():
            if not ORIGIN.match(origin):
                raise ValueError(f"{origin!r} is not an origin (scheme://host[:port], no path; * for a part "
                                 "of the host or the port)")
        return value

    @model_validator(mode="after")
    def _state_beside_a_cache(self) -> Settings:
        if self.redis_state_url and not self.redis_url:
            raise ValueError("REDIS_STATE_URL needs REDIS_URL (the cache's Redis) as well")
        return self

    @model_validator(mode="after")
    def _replicas_of_postgres(self) -> Settings:
        if self.database_replica_urls and self.is_sqlite:
            raise ValueError("DATABASE_REPLICA_URLS needs a PostgreSQL DATABASE_URL (SQLite has no replicas)")
        return self

    @model_validator(mode="after")
    def _cluster_urls(self) -> Settings:
        if not self.redis_cluster:
            return self
        if not self.redis_url:
            raise ValueError("REDIS_CLUSTER=true needs REDIS_URL naming a node of the cluster")
        for url in (self.redis_url, self.redis_state_url):
            if url and url.startswith(SENTINEL_SCHEME):
                raise ValueError("REDIS_CLUSTER=true takes redis:// or rediss:// node URLs, not Sentinels")
        return self

    @model_validator(mode="after")
    def _secure_cookie_for_cross_site(self) -> Settings:
        if self.cookie_samesite == "none" and not self.cookie_secure:
            raise ValueError("COOKIE_SAMESITE=none needs COOKIE_SECURE=true (browsers drop the cookie otherwise)")
        return self

    @property
    def state_redis_url(self) -> str | None:
        """Where what must not be evicted lives: REDIS_STATE_URL, else the one Redis."""
        return self.redis_state_url or self.redis_url

    @property
    def error_report_dsn(self) -> str | None:
        return self.sentry_dsn or self.glitchtip_dsn

    @property
    def is_production(self) -> bool:
        return self.environment == "production" if self.environment else not self.is_sqlite

    @property
    def allowed_origins(self) -> list[str]:
        if self.cors_origins is not None:
            return self.cors_origins
        return [] if self.is_production else list(DEVELOPMENT_ORIGINS)

    @model_validator(mode="after")
    def _require_secret_in_production(self) -> Settings:
        if self.jwt_secret is None:
            if self.is_production:
                raise ValueError("JWT_SECRET must be set in production (with PostgreSQL, or ENVIRONMENT=production)")
            self.jwt_secret = EMBEDDED_JWT_SECRET
        elif len(self.jwt_secret) < 32:
            raise ValueError("JWT_SECRET must be at least 32 characters")
        return self

    @model_validator(mode="after")
    def _invalidation_in_production(self) -> Settings:
        for name, on in (("CACHE_INVALIDATION", self.cache_invalidation), ("REPLICA_FLOOR", self.replica_floor),
                         ("REDIS_OWNER_CHECK", self.redis_owner_check)):
            if not on and self.is_production:
                raise ValueError(f"{name}=off serves stale data and is for tests and drills only; it is "
                                 "refused in production (set ENVIRONMENT=development for a drill)")
        return self

    @model_validator(mode="after")
    def _mail_bodies_logged_in_development(self) -> Settings:
        if self.mail_log_links is None:
            self.mail_log_links = not self.is_production
        return self


def _describe(err: Any) -> str:
    location = "_".join(str(p) for p in err["loc"]).upper()
    message = str(err["msg"]).removeprefix("Value error, ")
    return f"{location}: {message}" if location else message


def load_settings(**overrides: object) -> Settings:
    """Build settings from the environment; a wrong value raises SettingsError naming the variable."""
    return _load(Settings, overrides)


def load_database_settings() -> DatabaseSettings:
    return _load(DatabaseSettings, {})


def _load(kind: type[T], overrides: dict[str, Any]) -> T:
    from pydantic import ValidationError
    from pydantic_settings import SettingsError as SourceError

    try:
        return kind(**overrides)
    except ValidationError as exc:
        problems = "; ".join(_describe(err) for err in exc.errors())
        raise SettingsError(f"invalid settings: {problems}") from exc
    except SourceError as exc:  # a list or mapping setting that is not JSON
        field = re.search(r'field "(\w+)"', str(exc))
        name = field.group(1).upper() if field else "a setting"
        raise SettingsError(f"{name}: not valid JSON; a list is written [\"a\", \"b\"], a mapping "
                            "{\"key\": \"value\"}") from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return load_settings()
