-- The waiting marks moved into the processing set (cache/revalidator.py), joining a batch a crashed worker
-- left behind.
-- KEYS: the waiting marks, the processing set.
-- ARGV: none.
-- Returns the processing set's members.
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('SUNIONSTORE', KEYS[2], KEYS[2], KEYS[1])
  redis.call('DEL', KEYS[1])
end
return redis.call('SMEMBERS', KEYS[2])
