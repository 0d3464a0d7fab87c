-- Keeps a response if its stamp is current, with the clock it was found current at; else, if it is stale
-- by graced moves alone (the moves of writes not yet answered, cache/refresh.py) and no older than what is
-- stored, keeps it without the clock (it is served graced until those writes are answered, then found
-- stale). No older: for each tag whose move makes the new answer graced, the generation it names is no
-- earlier in the tag's chain than the one the stored answer names. A graced answer never replaces a current
-- one, and always replaces one stale past the graces.
-- Why the graced keep: two workers' writes on one tag, each refreshing the page it made stale. The first's
-- refresh read the generation its write moved to; the second moved it on before that refresh was kept, so a
-- store of current stamps only kept nothing, and once the first write was answered the page left stored (from
-- before both) was stale, and computed by its readers, until the second's refresh was kept.
-- KEYS: the response, the invalidation clock, and (when given) the response's claim, released after the
-- store whatever it kept.
-- ARGV: the generation key prefix, the TTL, a random value and a TTL for a clock that is not there (it starts
-- here, so that the first hit of what is kept finds it current without the look-up script), then the hash's
-- fields and values, its stamp `s` first.
-- Returns $kept (kept current), $kept_graced (kept graced) or 0 (nothing kept).
-- include: graced_moves
local function at(tag, generation)
  return in_chain(grace_chain(tag), generation) or 0
end
local function no_older(moves)
  local stamp = redis.call('TYPE', KEYS[1]).ok == 'hash' and redis.call('HGET', KEYS[1], 's')
  if not stamp then return true end
  local theirs = stamp_moves(stamp, ARGV[1])
  if #theirs == 0 then return false end
  if not all_graced(theirs) then return true end
  local theirs_at = {}
  for _, move in ipairs(theirs) do theirs_at[move[1]] = at(move[1], move[2]) end
  for _, move in ipairs(moves) do
    local other = theirs_at[move[1]]
    if not other or at(move[1], move[2]) < other then return false end
  end
  return true
end
local kept = 0
local moves = stamp_moves(ARGV[6], ARGV[1])
if #moves == 0 then kept = $kept elseif all_graced(moves) and no_older(moves) then kept = $kept_graced end
if kept ~= 0 then
  redis.call('UNLINK', KEYS[1])
  redis.call('HSET', KEYS[1], unpack(ARGV, 5))
  if kept == $kept then
    local clock = redis.call('GET', KEYS[2])
    if not clock then
      local started = redis.pcall('SET', KEYS[2], ARGV[3], 'NX', 'EX', ARGV[4])
      if type(started) == 'table' and started.ok then clock = ARGV[3] end
    end
    if clock then redis.call('HSET', KEYS[1], 'c', clock) end
  end
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
if KEYS[3] then redis.call('DEL', KEYS[3]) end
return kept
