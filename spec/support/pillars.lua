-- spec/support/pillars.lua -- the query-room scene of specs 151 and 159: one 64^3 tile, pillars every
-- other leaf (the free cells stay leaves) and a wall at x = 32 across the whole tile, so that a search
-- from one side to the other reaches every node it may (max_nodes).
local octonav = require "octonav"

return function()
  local t = octonav.tree.new { depth = 6 }
  for x = 0, 62, 2 do
    for z = 0, 62, 2 do t:add_box({ x, 0, z }, { x + 1, 60, z + 1 }) end
  end
  t:add_box({ 32, 0, 0 }, { 33, 64, 64 })
  return t
end
