-- A library: stamp_is_current(stamp, prefix), whether none of a stamp's generations moved.
-- include: stamp_moves
local function stamp_is_current(stamp, prefix)
  return #stamp_moves(stamp, prefix) == 0
end
