-- A write answered: each of its graces' chains loses what comes before the generation the write moved to,
-- so that nothing stale by its move is served any more; a chain left with one generation is deleted. A chain
-- that no longer holds it (a later write answered first, or it expired) is left as it is. Then the write's
-- live messages are published: whoever they tell of the write reads after its graces have ended.
-- KEYS: the grace keys.
-- ARGV: the generation each moved to, in the order of KEYS; then channel, message, channel, message, ...
-- Returns how many messages were published.
for i, key in ipairs(KEYS) do
  local chain = redis.call('GET', key)
  if chain then
    local at = string.find('>' .. chain .. '>', '>' .. ARGV[i] .. '>', 1, true)
    if at then
      local rest = string.sub(chain, at)
      if string.find(rest, '>', 1, true) then redis.call('SET', key, rest, 'KEEPTTL')
      else redis.call('DEL', key) end
    end
  end
end
for i = #KEYS + 1, #ARGV, 2 do
  redis.call('PUBLISH', ARGV[i], ARGV[i + 1])
end
return (#ARGV - #KEYS) / 2
