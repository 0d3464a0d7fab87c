-- A library: look_up(), a stored response as a hit finds it (cache/response/responses.py). The stamp is
-- checked only when the invalidation clock moved since the response was last found current (its `c`): every
-- generation moves with the clock, in the same pipeline (cache/store.py `invalidate_tags`), and the clock is
-- forgotten with the epochs; one that is not there starts at the random value given. A page's stamp names
-- some eighty generations, whose check was most of a hit's cost in Redis; a clock read is one GET. Noting `c`
-- may be refused (a full Redis): the hit is served all the same, checked in full next time. A response stale
-- by moves that graces cover alone is served, *graced*, and never noted current at the clock: once the
-- graces are gone, the next look finds it stale.
-- KEYS: the response, the invalidation clock.
-- ARGV: the generation key prefix, a random value and a TTL for a clock that is not there, then the stored
-- fields asked (they end at ARGV[$fields_end], `c`).
-- Returns {0, clock} (miss), {1, clock, '', the tags whose moves made it stale} (stale), the clock as it was
-- read (false when there is none), or {2, body, gzip flag, views, etag, max age, private flag, graced flag,
-- the clock it was found current at (false when graced)}.
-- include: graced_moves
local function look_up()
  local clock = redis.call('GET', KEYS[2])
  if redis.call('TYPE', KEYS[1]).ok ~= 'hash' then return {0, clock} end
  local stored = redis.call('HMGET', KEYS[1], unpack(ARGV, 4, $fields_end))
  if not stored[1] or not stored[2] then return {0, clock} end
  local graced = ''
  if not clock or clock ~= stored[8] then
    local moves = stamp_moves(stored[1], ARGV[1])
    if #moves > 0 then
      if not all_graced(moves) then return {1, clock, '', tags_of(moves)} end
      graced = '1'
    else
      if not clock then
        clock = ARGV[2]
        redis.pcall('SET', KEYS[2], clock, 'NX', 'EX', ARGV[3])
      end
      redis.pcall('HSET', KEYS[1], 'c', clock)
    end
  end
  return {2, stored[2], stored[3] or '', stored[4] or '', stored[5] or '', stored[6] or '', stored[7] or '', graced,
          graced == '' and clock}
end
