-- One view counted (cache/live/views.py): once an hour per viewer and shout, and not for a viewer past the
-- cap of shouts an hour (a crawler).
-- KEYS: the viewer's hourly set, the counter, the pending set.
-- ARGV: the shout, the cap.
-- Returns 1 (counted), 0 (seen this hour, or a crawler) or 2 (the counter is missing: build it, count again).
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 0 end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then return 2 end
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], $hour)
redis.call('INCR', KEYS[2])
redis.call('SADD', KEYS[3], ARGV[1])
return 1
