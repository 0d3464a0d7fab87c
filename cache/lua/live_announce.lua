-- A write announced before its commit (cache/live/structures.py `LiveStore.announce`): for each entity's
-- meta, one more write (`v`) and one more pending (`p`), since when (`pt`), and its expiry pushed out.
-- KEYS: the metas.
-- ARGV: now, the metas' TTL.
-- Returns 1.
for _, meta in ipairs(KEYS) do
  redis.call('HINCRBY', meta, 'v', 1)
  redis.call('HINCRBY', meta, 'p', 1)
  redis.call('HSET', meta, 'pt', ARGV[1])
  redis.call('EXPIRE', meta, ARGV[2])
end
return 1
