-- Many messages published in one command (cache/messaging/pubsub.py).
-- KEYS: none.
-- ARGV: channel, message, channel, message, ...
-- Returns how many were published.
for i = 1, #ARGV, 2 do
  redis.call('PUBLISH', ARGV[i], ARGV[i + 1])
end
return #ARGV / 2
