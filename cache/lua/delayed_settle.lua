-- What became of a leased message (cache/messaging/delayed.py): `ack` (done), `retry` (due again at a
-- time) or `park` (failed too often: kept, with its error, among at most a bound of parked messages).
-- KEYS: the queue, the leased set, the deliveries hash, the parked set, the parked errors.
-- ARGV: the message, the verdict, the time (retry: due; park: parked), the error, the parked cap.
-- Returns 1, or 0 for a retry or a park of a message no longer leased (another consumer settled it).
local m = ARGV[1]
if redis.call('ZREM', KEYS[2], m) == 0 and ARGV[2] ~= 'ack' then return 0 end
if ARGV[2] == 'retry' then
  redis.call('ZADD', KEYS[1], ARGV[3], m)
  return 1
end
redis.call('HDEL', KEYS[3], m)
if ARGV[2] == 'park' then
  redis.call('ZADD', KEYS[4], ARGV[3], m)
  redis.call('HSET', KEYS[5], m, ARGV[4])
  local extra = redis.call('ZCARD', KEYS[4]) - tonumber(ARGV[5])
  if extra > 0 then
    for _, old in ipairs(redis.call('ZRANGE', KEYS[4], 0, extra - 1)) do redis.call('HDEL', KEYS[5], old) end
    redis.call('ZREMRANGEBYRANK', KEYS[4], 0, extra - 1)
  end
end
return 1
