-- Due messages of the delayed queue taken under a lease (cache/messaging/delayed.py): first every leased
-- message whose lease ran out is due again, then up to `limit` due messages move to the leased set, each
-- with one more delivery counted.
-- KEYS: the queue, the leased set, the deliveries hash.
-- ARGV: now, limit, the lease's end.
-- Returns message, deliveries, message, deliveries, ...
local now, limit = ARGV[1], tonumber(ARGV[2])
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, limit)) do
  redis.call('ZREM', KEYS[2], m)
  redis.call('ZADD', KEYS[1], now, m)
end
local out = {}
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, limit)) do
  redis.call('ZREM', KEYS[1], m)
  redis.call('ZADD', KEYS[2], ARGV[3], m)
  out[#out + 1] = m
  out[#out + 1] = redis.call('HINCRBY', KEYS[3], m, 1)
end
return out
