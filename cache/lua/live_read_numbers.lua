-- Numbers of HASH structures read, judged built here, so that a reader parses one integer per field and
-- nothing else (cache/live/structures.py).
-- KEYS: as live_read_hashes.lua.
-- ARGV: the structure's name, then the fields to read.
-- Returns the epoch, then per entity either its fields' values as integers (nil where absent), when its
-- structure was built under the epoch, or else its meta's `v` (what a build must be noted under).
local epoch = redis.call('GET', KEYS[1])
local found = {epoch}
local fields = {unpack(ARGV, 2)}
for i = 2, #KEYS, 2 do
  local meta = redis.call('HMGET', KEYS[i], 'v', ARGV[1])
  if epoch and meta[2] == epoch then
    local values = redis.call('HMGET', KEYS[i + 1], unpack(fields))
    for j = 1, #values do values[j] = values[j] and tonumber(values[j]) end
    found[#found + 1] = values
  else
    found[#found + 1] = meta[1]
  end
end
return found
