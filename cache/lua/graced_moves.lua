-- A library: stamp_moves (included), and where a generation stands in its tag's grace chain
-- (cache/refresh.py: `$grace_prefix{tag}` holds the generations of writes not yet answered, the current one
-- last). grace_chain(tag); in_chain(chain, generation): a position to compare, or false; all_graced(moves):
-- whether every move is one that such writes made (the chain ends at the current generation and holds the
-- stamp's); tags_of(moves): the moved tags, comma-separated.
-- include: stamp_moves
local function grace_chain(tag)
  return redis.call('GET', '$grace_prefix' .. tag)
end
local function in_chain(chain, generation)
  return chain and string.find('>' .. chain .. '>', '>' .. generation .. '>', 1, true)
end
local function all_graced(moves)
  for _, move in ipairs(moves) do
    if not move[3] then return false end
    local chain = grace_chain(move[1])
    if not chain or string.sub(chain, -#move[3] - 1) ~= '>' .. move[3] or not in_chain(chain, move[2]) then
      return false
    end
  end
  return true
end
local function tags_of(moves)
  local tags = {}
  for i, move in ipairs(moves) do tags[i] = move[1] end
  return table.concat(tags, ',')
end
