-- Stored values read, each only if its stamp (what precedes the first '|', cache/store.py `encode`) is
-- current (cache/composite.py).
-- KEYS: the stored values.
-- ARGV: the generation key prefix.
-- Returns each value whose stamp is current, and false (nil in the reply) for any other.
-- include: stamp_is_current
local found = {}
for i, key in ipairs(KEYS) do
  found[i] = false
  local raw = redis.call('GET', key)
  if raw then
    local bar = string.find(raw, '|', 1, true)
    if bar and stamp_is_current(string.sub(raw, 1, bar - 1), ARGV[1]) then found[i] = raw end
  end
end
return found
