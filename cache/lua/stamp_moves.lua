-- A library: what moved of a stamp's generations (cache/store.py `stamp_parts` builds a stamp).
-- stamp_moves(stamp, prefix): for each generation that differs, {tag, the generation the stamp names, the
-- current one (false when there is none)}; `prefix` is the generation keys' prefix. Generations are read in
-- MGETs of at most 100 keys (seed 004).
local function stamp_moves(stamp, prefix)
  local tags, names, wanted, n = {}, {}, {}, 0
  for tag, generation in string.gmatch(stamp, '([^,=]+)=([^,]*)') do
    n = n + 1
    tags[n] = tag
    names[n] = prefix .. tag
    wanted[n] = generation
  end
  local moves = {}
  for first = 1, n, 100 do
    local last = math.min(first + 99, n)
    local current = redis.call('MGET', unpack(names, first, last))
    for i = first, last do
      local now = current[i - first + 1]
      if now ~= wanted[i] then moves[#moves + 1] = {tags[i], wanted[i], now} end
    end
  end
  return moves
end
