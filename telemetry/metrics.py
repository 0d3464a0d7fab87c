"""The process's Prometheus instruments (prometheus-client), declared once and read from every layer.

With several workers (`discours serve --workers N`) prometheus-client's multiprocess mode adds up the
counters and histograms of all of them (PROMETHEUS_MULTIPROC_DIR, set by the serve command), so a scrape
that reaches any worker sees the whole server. Values that live in Redis (queue depths) are read when
scraped (app/metrics_route.py) and are the same from every worker.

Every label takes a bounded set of values: key families and layers are the code's own, and operation names,
which clients choose, are kept to the first `OPERATIONS_CAP` distinct ones a process sees (then `other`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.metrics import MetricWrapperBase

from telemetry.version import VERSION

OPERATIONS_CAP = 200
# Sessions seen since the last flush to Redis (cache/redis_metrics.py), at most this many.
SESSIONS_SEEN_CAP = 10_000
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_seen_operations: set[str] = set()

# Which version answers (the value is always 1; the version is the label): what a dashboard shows during a
# rolling upgrade.
BUILD_INFO = Gauge("discours_build_info", "The server's version, as a label", ["version"],
                   multiprocess_mode="livemax")
BUILD_INFO.labels(version=VERSION).set(1)

REQUESTS = Counter("discours_requests", "GraphQL HTTP requests by operation name and outcome "
                   "(hit: the response cache's bytes; ok; error: GraphQL errors; refused: a limit or bad "
                   "request; timeout)", ["operation", "outcome"])
# Finer between 5 and 50 ms: where a read that waited for a recomputation after a write lands (the read
# p99 under writes, bench/mixed.py), which 10 and 25 ms alone could not tell apart.
REQUEST_SECONDS = Histogram("discours_request_seconds", "Time to answer a GraphQL HTTP request",
                            ["operation", "outcome"],
                            buckets=(.0005, .001, .0025, .005, .0075, .01, .015, .02, .025, .035, .05, .1, .25, .5,
                                     1, 2.5, 5, 15))
CACHE_READS = Counter("discours_cache_reads", "Cache lookups by layer (response: whole responses; value: "
                      "entities and lists) and key family; result hit, miss or stale (a stored value whose "
                      "stamp an invalidation made old), or graced (a stored response stale by a write not yet "
                      "answered, served while it refreshes it: cache/refresh.py)", ["layer", "family", "result"])
RESPONSE_CLAIMS = Counter("discours_response_claims", "Responses a worker was to compute, by how they were "
                          "answered: claimed (computed under its claim), elsewhere (the answer another worker "
                          "computed meanwhile under its claim), unclaimed (computed without a claim: Redis "
                          "unavailable, answers not shared, the wait for another worker's ran out)", ["outcome"])
RESPONSE_REFRESHES = Counter("discours_response_refreshes", "Hot responses a write computed again before its answer "
                             "(cache/refresh.py), by outcome: computed (answered 200; kept if still current), "
                             "failed (an error, or an answer not 200), late (given up past half the grace)",
                             ["outcome"])
VALUES_TOO_BIG = Counter("discours_cache_values_too_big", "Values not kept: over CACHE_MAX_VALUE_BYTES once "
                         "compressed (seed 004), by what was to be kept and key family", ["what", "family"])
INVALIDATIONS = Counter("discours_cache_invalidations", "Cache tags invalidated (generation moves), by tag family",
                        ["family"])
LOST_INVALIDATIONS = Counter("discours_cache_invalidations_lost",
                             "Commits whose invalidation could not reach Redis (answered by forgetting the epochs)")
LOST_WRITES_CONTAINED = Counter("discours_cache_lost_writes_contained",
                                "Lost invalidations contained before their write answered (every epoch forgotten)")
REVALIDATION_BATCH_SECONDS = Histogram("discours_revalidation_batch_seconds",
                                       "Time to process one revalidation batch, by entity type", ["entity_type"])
REVALIDATED = Counter("discours_revalidated", "Entities brought up to date by the revalidator", ["entity_type"])
WRITES = Counter("discours_writes", "Committed row changes, by entity and action", ["entity", "action"])
REDIS_ERRORS = Counter("discours_redis_errors", "Redis calls that failed, by what was being done", ["during"])
DATABASE_ERRORS = Counter("discours_database_errors", "Database statements that failed, by error class",
                          ["error"])
BREAKER_OPEN = Gauge("discours_redis_breaker_open", "1 while the Redis circuit breaker sends reads to the "
                     "database (the largest over workers)", multiprocess_mode="livemax")
BREAKER_TRIPS = Counter("discours_redis_breaker_trips", "Times the Redis circuit breaker opened")
DB_POOL_IN_USE = Gauge("discours_db_pool_in_use", "Database connections checked out of the pools",
                       multiprocess_mode="livesum")
DB_READS = Counter("discours_db_reads", "Read statements of sessions that may read a replica, by the database "
                   "role that answered (replica, or primary: no replica had replayed every commit the cache knows "
                   "of, or none is usable)", ["role"])
REPLICA_READS_RETRIED = Counter("discours_db_replica_reads_retried", "Reads a replica could not finish (lost, or "
                                "cancelled by a recovery conflict) that were read again on the primary")
REPLICA_LAG = Gauge("discours_db_replica_lag_seconds", "How far each replica's replay is behind its primary at "
                    "the last check (0: it has replayed all it received; -1: it did not answer)", ["replica"],
                    multiprocess_mode="livemax")
WRITES_REFUSED = Counter("discours_writes_refused", "State-changing requests answered 503: no turn came within "
                         "WRITE_WAIT_SECONDS (app/http/write_gate.py)")
QUEUE_REFUSED = Counter("discours_queue_refused", "Messages the delayed queue refused at its bound (QUEUE_MAX_QUEUED), "
                        "by kind: their sweep queues them again from the database", ["kind"])
HIT_READS_DROPPED = Counter("discours_hit_reads_dropped", "Reads of response-cache hits not counted: more than "
                            "HIT_READS_MAX_PENDING were waiting (app/http/hit_reads.py)")
SESSIONS_CHECKED = Counter("discours_sessions_checked", "Session checks by result (valid, invalid, grace: "
                           "valid from memory while Redis did not answer, unavailable)", ["result"])


@functools.lru_cache(maxsize=4096)
def child(metric: MetricWrapperBase, *values: str) -> Any:
    """`metric.labels(*values)`, looked up once: prometheus-client converts and checks every label value
    on each call, which showed in a response-cache hit's profile (three a hit). Bounded twice: by the
    cache's size, and because every label takes a bounded set of values."""
    return metric.labels(*values)


def operation_label(name: object) -> str:
    """A client's operation name as a label: its own while it is a plain name among the first
    OPERATIONS_CAP this process has seen, `other` past that, `anonymous` without one."""
    if not isinstance(name, str) or not name:
        return "anonymous"
    if name in _seen_operations:
        return name
    if not _NAME.match(name) or len(_seen_operations) >= OPERATIONS_CAP:
        return "other"
    _seen_operations.add(name)
    return name


sessions_seen: set[str] = set()


def note_session(token_id: str) -> None:
    """A valid session was used; counted in Redis's hourly active sessions at the next flush."""
    if len(sessions_seen) < SESSIONS_SEEN_CAP:
        sessions_seen.add(token_id)


def total(counter: Counter, **match: str | tuple[str, ...]) -> float:
    """This process's count of `counter`, summed over the labels that match (a value, or any of a tuple)."""
    def matches(labels: Mapping[str, str]) -> bool:
        return all(labels[name] in (wanted if isinstance(wanted, tuple) else (wanted,))
                   for name, wanted in match.items())

    return sum(sample.value for metric in counter.collect() for sample in metric.samples
               if sample.name.endswith("_total") and matches(sample.labels))
