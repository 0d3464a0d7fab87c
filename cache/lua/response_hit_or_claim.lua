-- A hit, and when it finds nothing current, the response's claim (`ResponseCache.claim`) in the same step,
-- so that no answer can be kept, and its claim released, between the two. A claim holds the invalidation
-- clock its worker's look read ('c' and the clock): while the clock is where it was, the answer being
-- computed will be current, and it is waited for; once the clock has moved, it may not be, and the claim is
-- taken over by whoever finds it so.
-- KEYS: look_up's (response_look_up.lua), then the claim.
-- ARGV: look_up's, then the claim's TTL (ms).
-- Returns look_up's answer; a miss or a stale answer gets a third element: '' when the claim is now the
-- caller's, '1' (CLAIMED) when another holds it under the current clock, '0' (UNSHARED) when its last
-- answer was not kept.
-- include: response_look_up
local found = look_up()
if found[1] == 2 then return found end
local now = 'c' .. (found[2] or '')
local held = redis.call('GET', KEYS[3])
if held == now then return {found[1], found[2], '1', found[4]} end
if held == '0' then return {found[1], found[2], '0', found[4]} end
redis.call('SET', KEYS[3], now, 'PX', ARGV[#ARGV])
return {found[1], found[2], '', found[4]}
