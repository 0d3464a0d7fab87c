-- One committed write's operations applied to one entity's structures (cache/live/structures.py). The keys
-- share the entity's hash tag (cache/keys.py), so the script runs on a Redis Cluster too; the kind's epoch is
-- not one of them: a structure built under an older epoch may be changed here, but readers never take it for
-- built (its meta names the old epoch) and its next build replaces it.
-- KEYS: the meta, then the structure keys.
-- ARGV: the TTL, announced ('1'), the set cap, the thread cap, then the operations:
--   incr  <key#> <name> <field> <delta>       HINCRBY
--   max   <key#> <name> <field> <value>       HSET if greater (a maximum such as a last comment time)
--   drop  <key#> <name>                       UNLINK: rebuilt from SQL on the next read
--   zadd  <key#> <name> <score> <member>      ZADD, trimmed to the newest `cap`
--   zrem  <key#> <name> <member>              ZREM; a capped set that loses a member is dropped
--   zput  <key#> <name> <score> <member>      ZADD to a set that is whole or nothing (a comment thread,
--                                             read from both ends): dropped when it outgrows the thread cap
--   zdel  <key#> <name> <member>              ZREM from such a set
--   zincr <key#> <name> <delta> <member>      ZINCRBY of a member that is there (a comment's rating)
--   rank  <key#> <name> <delta> <member>      a leaderboard (cache/live/boards.py): ZINCRBY a member that is
--                                             there, else raise the board's floor by a positive delta
--   place <key#> <name> <score> <member>      a leaderboard's absolute, growing score (views): ZADD GT a
--                                             member that is there; one above the floor of a capped board
--                                             enters, and the lowest member leaves (its score the floor)
-- Structure keys outlive their meta by $margin seconds; a board's floor below $complete means it is whole.
-- Returns 1.
local meta = KEYS[1]
local ttl, cap, thread_cap = tonumber(ARGV[1]), tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('HINCRBY', meta, 'v', 1)
if ARGV[2] == '1' and redis.call('HINCRBY', meta, 'p', -1) < 0 then redis.call('HSET', meta, 'p', 0) end
local arity = {incr = 5, max = 5, drop = 3, zadd = 5, zrem = 4, zput = 5, zdel = 4, zincr = 5, rank = 5,
               place = 5}
local i = 5
while i <= #ARGV do
  local verb, key, name = ARGV[i], KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2]
  if not redis.call('HGET', meta, name) or verb == 'drop' then
    redis.call('UNLINK', key)
    redis.call('HDEL', meta, name)
  elseif verb == 'incr' then
    redis.call('HINCRBY', key, ARGV[i + 3], ARGV[i + 4])
  elseif verb == 'max' then
    local current = redis.call('HGET', key, ARGV[i + 3])
    if (not current) or tonumber(current) < tonumber(ARGV[i + 4]) then
      redis.call('HSET', key, ARGV[i + 3], ARGV[i + 4])
    end
  elseif verb == 'zadd' then
    redis.call('ZADD', key, ARGV[i + 3], ARGV[i + 4])
    local size = redis.call('ZCARD', key)
    if cap > 0 and size > cap then redis.call('ZREMRANGEBYRANK', key, 0, size - cap - 1) end
  elseif verb == 'zput' then
    redis.call('ZADD', key, ARGV[i + 3], ARGV[i + 4])
    if thread_cap > 0 and redis.call('ZCARD', key) > thread_cap then
      redis.call('UNLINK', key)
      redis.call('HDEL', meta, name)
    end
  elseif verb == 'rank' then
    if redis.call('ZSCORE', key, ARGV[i + 4]) then
      redis.call('ZINCRBY', key, ARGV[i + 3], ARGV[i + 4])
    else
      local floor = tonumber(redis.call('ZSCORE', key, 'floor') or '$complete')
      if floor > $complete and tonumber(ARGV[i + 3]) > 0 then redis.call('ZINCRBY', key, ARGV[i + 3], 'floor') end
    end
  elseif verb == 'place' then
    local score, member = tonumber(ARGV[i + 3]), ARGV[i + 4]
    local floor = tonumber(redis.call('ZSCORE', key, 'floor') or '$complete')
    if redis.call('ZSCORE', key, member) then
      redis.call('ZADD', key, 'GT', score, member)
    elseif floor > $complete and score > floor then
      redis.call('ZADD', key, score, member)
      local low = redis.call('ZRANGE', key, 0, 1, 'WITHSCORES')
      if low[1] == 'floor' then low = {low[3], low[4]} end
      redis.call('ZREM', key, low[1])
      if tonumber(low[2]) > floor then redis.call('ZADD', key, low[2], 'floor') end
    end
  elseif verb == 'zdel' then
    redis.call('ZREM', key, ARGV[i + 3])
  elseif verb == 'zincr' then
    if redis.call('ZSCORE', key, ARGV[i + 4]) then redis.call('ZINCRBY', key, ARGV[i + 3], ARGV[i + 4]) end
  elseif verb == 'zrem' then
    if redis.call('ZSCORE', key, ARGV[i + 3]) then
      if cap > 0 and redis.call('ZCARD', key) >= cap then
        redis.call('UNLINK', key)
        redis.call('HDEL', meta, name)
      else
        redis.call('ZREM', key, ARGV[i + 3])
      end
    end
  end
  if redis.call('EXISTS', key) == 1 then redis.call('EXPIRE', key, ttl + $margin) end
  i = i + arity[verb]
end
redis.call('EXPIRE', meta, ttl)
return 1
