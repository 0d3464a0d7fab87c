"""Live structures (seeds 001 and 003): what writes keep current in Redis in place of recomputing it.

- `structures`: the rules every structure follows: per-entity metas, epochs, a build that loses to any write
- `counters`: `count:*` hashes
- `follows`: the follow graph
- `threads`: comment threads
- `boards`: leaderboards
- `views`: views and reading histories
- `views_import`: views carried over from Discours
- `rebuild`: every structure rebuilt from SQL
"""
