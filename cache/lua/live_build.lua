-- A structure built from SQL stored, unless a write was announced (and pending for less than $timeout s)
-- or applied since the reader noted the meta (cache/live/structures.py). It is marked built under the epoch
-- the reader noted: if the epoch moved since, readers take it for unbuilt and build it again. Elements go in
-- commands of at most $chunk (seed 004).
-- KEYS: the meta, the structure.
-- ARGV: the noted version, the noted epoch, now, the TTL, the structure's name, its type ('hash' or 'zset'),
-- then its data.
-- Returns 1 when stored, 0 when not.
local meta = KEYS[1]
if (redis.call('HGET', meta, 'v') or '') ~= ARGV[1] then return 0 end
local pending = tonumber(redis.call('HGET', meta, 'p') or '0')
if pending > 0 then
  if tonumber(ARGV[3]) - tonumber(redis.call('HGET', meta, 'pt') or '0') < $timeout then return 0 end
  redis.call('HSET', meta, 'p', 0)
end
local key, ttl = KEYS[2], tonumber(ARGV[4])
redis.call('UNLINK', key)
local verb = ARGV[6] == 'hash' and 'HSET' or 'ZADD'
local i = 7
while i <= #ARGV do
  local last = math.min(i + $chunk * 2 - 1, #ARGV)
  redis.call(verb, key, unpack(ARGV, i, last))
  i = last + 1
end
if #ARGV >= 7 then redis.call('EXPIRE', key, ttl + $margin) end
redis.call('HSET', meta, ARGV[5], ARGV[2])
redis.call('EXPIRE', meta, ttl)
return 1
