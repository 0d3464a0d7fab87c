-- One cached value read with its generations, and when it must be computed, its fill lock taken in the same
-- round trip (`Cache.cached_query` on one Redis server). The stamp and the lock's name are built as
-- cache/store.py `stamp_parts` and keys.fill_lock build them.
-- KEYS: the value, then its tags' generation keys.
-- ARGV: the fill locks' prefix, the lock's TTL (ms), then the tags, in the order of their keys.
-- Returns {value, generations, taken, stamp}: taken is 1 (the lock is the caller's), 0 (another holds it) or
-- -1 (not tried: the value is current, or a generation is missing, which the caller creates).
local gens = redis.call('MGET', unpack(KEYS, 2))
local value = redis.call('GET', KEYS[1])
local parts = {}
for i = 1, #KEYS - 1 do
  if not gens[i] then return {value, gens, -1, ''} end
  parts[i] = ARGV[i + 2] .. '=' .. gens[i]
end
local stamp = table.concat(parts, ',')
if value and string.sub(value, 1, #stamp + 1) == stamp .. '|' then return {value, gens, -1, stamp} end
local taken = redis.call('SET', ARGV[1] .. redis.sha1hex(KEYS[1] .. '\0' .. stamp), '1', 'NX', 'PX', ARGV[2])
return {value, gens, taken and 1 or 0, stamp}
