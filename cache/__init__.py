"""Redis, for a server whose readers never get what a committed write made wrong.

A read's path through this package opens `response/` (the whole answer, kept under the stamps of what it
read), then the stamped-value core here (one value, or a composite of values), which talks to Redis through
`redis/`. A write's path opens the core's invalidation (a generation moved per tag, at commit) and `live/`
(the structures the write updates in place), then `messaging/` (what is announced once it is committed).

The core, at this level:

- `keys`: every key and channel name, its TTL or bound
- `store`: a value kept under the generations it was computed at, read through (`cached_query`)
- `stamps`: what a value is stored as, and the stamp it was computed under
- `containment`: a lost invalidation contained, so nothing computed before it is served after
- `response_capture`: what one computation's reads depended on (the stamps a response is kept under)
- `composite`: values computed from other cached reads, in one round trip
- `entities`: entity caches by id and slug, in batches
- `refresh`: hot responses computed again by the write that made them stale; graces
- `invalidation`: the seed's named invalidation functions
- `failover`: a Redis that another server wrote (a promoted replica) made harmless before it is used
- `wal_floor`: the WAL position a replica read must have replayed
- `revalidator`: `CacheRevalidationManager`: marks batched, revalidated on a loop
- `precache`: warming at start
- `periodic`, `redis_metrics`, `inventory`: a background loop; metrics kept in Redis; what the cache holds

Below it, `redis/` (the client, its guard and breaker, auto-pipelining, locks) and `lua/` (every script
the cache runs in Redis, a file each, and their loader); above it, `response/`,
`live/` and `messaging/`, which the core never imports (pyproject.toml, the import contracts).
"""
