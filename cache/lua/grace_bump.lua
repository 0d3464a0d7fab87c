-- Moves the generations of a write's tags, each grace's chain with it, then the invalidation clock, and
-- returns the requests of the responses noted in the tags' refresh indexes (cache/refresh.py `Refreshing`).
-- A generation with no value yet (expired, forgotten) starts no chain: no stamp names its old one. A chain
-- whose last generation is not the one moved from (a move without a grace came between) starts again from
-- it; a chain keeps at most $chain_most generations, the oldest dropping out.
-- A grace TTL of 0 sets no grace (a write answered right after its moves); then the messages given after the
-- generations are published, after the moves: whoever they tell of the write reads what it wrote.
-- KEYS: the generation keys, then the grace keys, then the refresh index keys (n of each), then the clock.
-- ARGV: the generations' TTL (s), the grace TTL (ms), the clock's new value, the most requests returned,
-- then the new generations, then channel, message, channel, message, ...
-- Returns the requests to compute again.
local n = (#KEYS - 1) / 3
for i = 1, n do
  local old, new = redis.call('GET', KEYS[i]), ARGV[4 + i]
  redis.call('SET', KEYS[i], new, 'EX', ARGV[1])
  if old and ARGV[2] ~= '0' then
    local chain = redis.call('GET', KEYS[n + i])
    if chain and string.sub(chain, -#old - 1) == '>' .. old then
      local _, links = string.gsub(chain, '>', '')
      if links + 1 >= $chain_most then chain = string.sub(chain, string.find(chain, '>', 1, true) + 1) end
      chain = chain .. '>' .. new
    else
      chain = old .. '>' .. new
    end
    redis.call('SET', KEYS[n + i], chain, 'PX', ARGV[2])
  end
end
redis.call('SET', KEYS[#KEYS], ARGV[3], 'EX', ARGV[1])
local most, seen, requests = tonumber(ARGV[4]), {}, {}
for i = 1, n do
  for _, member in ipairs(redis.call('ZREVRANGE', KEYS[2 * n + i], 0, most - 1)) do
    if not seen[member] and #requests < most then
      seen[member] = true
      local request = redis.call('GET', member)
      if request then requests[#requests + 1] = request end
    end
  end
end
for i = 5 + n, #ARGV, 2 do
  redis.call('PUBLISH', ARGV[i], ARGV[i + 1])
end
return requests
