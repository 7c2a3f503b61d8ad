-- spec/support/slabs.lua: the scene of specs 68 and 135 (line of sight's deferred masks and their byte
-- budget): a 4 x 1 x 2 tree of 64^3 tiles with 60 slabs and posts drawn by a seeded LCG, the same boxes
-- every call and on every Lua. Loaded with dofile("spec/support/slabs.lua"); returns { lcg, scene }:
--   lcg(st) -> the next state of st' = (st * 1103515245 + 12345) mod 2^31, exact on every Lua: the
--     product is split in two halves of the multiplier so that no term passes 2^53 (doubles before 5.3
--     would round st * 1103515245, up to 2^61, and draw another scene: issue 34)
--   scene() -> a new octonav.tree of the scene (nothing prepared)
local octonav = require "octonav"

local function lcg(st)
  local lo = st * 20077 -- (1103515245 = 16838 * 65536 + 20077)
  local hi = (st * 16838) % 32768 * 65536
  return (lo + hi + 12345) % 2147483648
end

local function scene()
  local t = octonav.tree.new { tiles = { 4, 1, 2 }, depth = 6 }
  local st = 12345
  local function rnd(n)
    st = lcg(st)
    return st % n
  end
  for _ = 1, 60 do
    local x, y, z = rnd(250), rnd(60), rnd(124)
    t:add_box({ x, y, z }, { x + 1 + rnd(6), y + 1 + rnd(20), z + 1 + rnd(6) })
  end
  return t
end

return { lcg = lcg, scene = scene }
