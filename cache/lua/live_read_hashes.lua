-- HASH structures read with what says whether they are built (cache/live/structures.py).
-- KEYS: the kind's epoch, then each entity's meta and structure.
-- ARGV: the structure's name.
-- Returns the epoch, then per entity its meta's `v`, the epoch its structure was built under, and the
-- structure's fields and values (HGETALL).
local found = {redis.call('GET', KEYS[1])}
for i = 2, #KEYS, 2 do
  local meta = redis.call('HMGET', KEYS[i], 'v', ARGV[1])
  found[#found + 1] = meta[1]
  found[#found + 1] = meta[2]
  found[#found + 1] = redis.call('HGETALL', KEYS[i + 1])
end
return found
