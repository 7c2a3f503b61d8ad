-- spec/support/boxpack.lua: packs baked from boxes (octonav.bake, scale 1, no holes) over n x 1 x n
-- tiles into temporary directories: the worlds of spec/39 (streamed line-of-sight masks), spec/42
-- (streamed route join sets) and spec/47 (bench_world.as_loaded).
-- Loaded with dofile("spec/support/boxpack.lua"); returns { bake, bake_walled, cleanup, free_in, free_point,
-- column_pairs }:
--   bake(n, t, depth, boxes) -> dir: n x 1 x n tiles of t leaves (depth levels: t = 2^depth), solid in
--     each box ({ min, max }); raises when the bake fails
--   bake_walled(extra) -> dir: the 3 x 1 x 3 world of 128-leaf tiles (depth 7: the planner's lazy sets
--     build its 16-leaf blocks) of spec/42 and spec/47: a ground slab 2 high, a wall at x 100..104 with
--     one gap (z 150..170), two pillars and a low block, and the boxes in extra
--   cleanup(): removes every pack this copy of the file baked (a spec's teardown)
--   free_in(tree, r, ti, tk) -> a free point of tile column (ti, tk) of bake_walled's world, drawn with
--     the generator r (spec/support/prng.lua) at heights 3..103; raises when 10,000 draws find none
--   free_point(tree, r) -> the same anywhere in bake_walled's world (x and z 1..383: specs 125, 133)
--   column_pairs(tree) -> 12 { a, b } pairs from one tile column to the far one (specs 118, 176)
local compat = require "octonav.compat" -- Lua 5.1 .. 5.4 (issue 34)
local octonav = require "octonav"
local files = dofile("spec/support/files.lua")

local tmp = files.tracker(files.rm_rf)

local function bake(n, t, depth, boxes)
  local dir = tmp.dir(true)
  local geometry = {}
  for i, b in ipairs(boxes) do geometry[i] = { box = { min = b[1], max = b[2] } } end
  local ok, err = octonav.bake {
    range = { min = { 0, 0, 0 }, max = { n * t, t, n * t } }, depth = depth, scale = 1,
    geometry = geometry, output = dir, progress = function() end,
  }
  assert(ok, tostring(err))
  return dir
end

local WALLED = {
  { { 0, 0, 0 }, { 384, 2, 384 } },
  { { 100, 0, 0 }, { 104, 60, 150 } }, { { 100, 0, 170 }, { 104, 60, 384 } }, -- the wall, its gap between
  { { 30, 0, 30 }, { 38, 90, 38 } }, { { 300, 0, 60 }, { 310, 128, 70 } },     -- the pillars
  { { 180, 0, 300 }, { 200, 20, 330 } },                                       -- the block
}

local function bake_walled(extra)
  local boxes = { compat.unpack(WALLED) }
  for _, b in ipairs(extra or {}) do boxes[#boxes + 1] = b end
  return bake(3, 128, 7, boxes)
end

local T = 128 -- bake_walled's tile size
local function free_in(tree, r, ti, tk)
  for _ = 1, 10000 do
    local p = { ti * T + 1 + r() * (T - 2), 3 + r() * 100, tk * T + 1 + r() * (T - 2) }
    if tree:locate(p) == "free" then return p end
  end
  error("no free point")
end

local function free_point(tree, r)
  for _ = 1, 10000 do
    local p = { 1 + r() * 382, 3 + r() * 100, 1 + r() * 382 }
    if tree:locate(p) == "free" then return p end
  end
  error("no free point")
end

-- 12 pairs of free points of bake_walled's world, each from one tile column to the far one (the first
-- three columns' rows to the last's), drawn with the LCG of spec/support/prng.lua at seed 7 (spec/118, 176).
local function column_pairs(tree)
  local r, out = dofile("spec/support/prng.lua").lcg(7), {}
  for n = 1, 12 do out[n] = { free_in(tree, r, n % 3, 0), free_in(tree, r, 2 - n % 3, 2) } end
  return out
end

return { bake = bake, bake_walled = bake_walled, cleanup = tmp.cleanup, free_in = free_in, free_point = free_point,
  column_pairs = column_pairs }
