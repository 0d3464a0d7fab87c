-- Messages added to the delayed queue (cache/messaging/delayed.py) within its bound (seed 004: a sorted
-- set of at most 5,000 members): the queue and the leased set together hold at most `cap`, so a retry or
-- an expired lease, which move a message between them, never pass it. A message already queued keeps its
-- place (ZADD NX); one that finds no room is refused, and the database it came from queues it again.
-- KEYS: the queue, the leased set.
-- ARGV: the cap, the time the messages are due, the messages.
-- Returns, per message, 1 queued, 0 queued already, -1 refused.
local room = tonumber(ARGV[1]) - redis.call('ZCARD', KEYS[1]) - redis.call('ZCARD', KEYS[2])
local out = {}
for i = 3, #ARGV do
  local m = ARGV[i]
  if redis.call('ZSCORE', KEYS[1], m) or redis.call('ZSCORE', KEYS[2], m) then
    out[#out + 1] = 0
  elseif room > 0 then
    redis.call('ZADD', KEYS[1], ARGV[2], m)
    room = room - 1
    out[#out + 1] = 1
  else
    out[#out + 1] = -1
  end
end
return out
