-- The WAL floor raised, never lowered (cache/wal_floor.py). Positions are 16 hex digits, which compare as
-- strings the way they compare as numbers (Lua's numbers are doubles).
-- KEYS: the floor.
-- ARGV: the position, the floor's TTL.
-- Returns 1.
local current = redis.call('GET', KEYS[1])
if not current or ARGV[1] > current then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
else
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
return 1
