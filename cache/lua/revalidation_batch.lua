-- Waiting marks moved into the processing set (cache/revalidator.py), at most a step of them per call, so
-- that no reply and no command grows with the queue; they join a batch a crashed worker left behind.
-- KEYS: the waiting marks, the processing set.
-- ARGV: the most marks to move.
-- Returns how many moved (fewer than asked: the waiting set is empty).
local moved = redis.call('SPOP', KEYS[1], ARGV[1])
if #moved > 0 then redis.call('SADD', KEYS[2], unpack(moved)) end
return #moved
