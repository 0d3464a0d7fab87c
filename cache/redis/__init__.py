"""The Redis transport every other part of the cache sends through.

- `client`: the client factory (a server, a cluster, Sentinel, or the embedded fakeredis) and the guard every
  call passes: errors mapped, the circuit breaker, metrics
- `seam`: every use of redis-py's and fakeredis' internals, each fenced by a canary test
- `coalesce`: commands of one moment sent together (auto-pipelining)
- `locks`: `lock:*`, released only by its owner
- `limits`: seed 004's bound on one call (`BATCH`)

It knows key names (`cache.keys`) and nothing else of the cache.
"""
