-- spec/173-radius_reverse_spec.lua -- issue 33, radius paths on one tree as long as on a tree baked
-- for r alone: a search for radius r on the one tree runs either way as a point's search on the tree
-- baked for r does (from the goal's end when the goal is the more hidden end, or turned round when it
-- stalls), the goal's hiding asked with the sphere's line of sight (csrc/search/search_start.c,
-- either_way and radius_reverse_pays). Before (main 51b2a95) the radius search always ran from the start
-- and went round the other side: on the scene below 24.1778 against 22.0124 (r 1, +9.8 %) and 29.4154
-- against 27.7579 (r 2, +6.0 %).
-- Run: busted --lua=lua5.4 spec/173-radius_reverse_spec.lua
local octonav = require "octonav"

local N = 32
-- three boxes in a 32^3 tree (a scene of a seeded random sample where the two trees' paths differed)
local BOXES = {
  { { 3, 5, 15 }, { 8, 16, 16 } },
  { { 9, 3, 13 }, { 16, 12, 24 } },
  { { 11, 13, 3 }, { 12, 20, 12 } },
}

-- The tree baked for a point, and the tree baked for radius r alone: every box grown by r (the bake's
-- inflation), the tree's border grown inwards by r (a plain tree's border counts as blocked).
local function trees(r)
  local t = octonav.tree.new { tiles = { 1, 1, 1 }, depth = 5 }
  local td = octonav.tree.new { tiles = { 1, 1, 1 }, depth = 5 }
  for _, b in ipairs(BOXES) do
    t:add_box(b[1], b[2])
    local lo, hi = {}, {}
    for k = 1, 3 do
      lo[k], hi[k] = math.max(0, b[1][k] - r), math.min(N, b[2][k] + r)
    end
    td:add_box(lo, hi)
  end
  for k = 1, 3 do
    local lo, hi = { 0, 0, 0 }, { N, N, N }
    hi[k] = r
    td:add_box(lo, hi)
    lo, hi = { 0, 0, 0 }, { N, N, N }
    lo[k] = N - r
    td:add_box(lo, hi)
  end
  return t, td
end

-- The least Euclidean distance from the path (sampled every 1/16 leaf) to the boxes and the border.
local least_along = dofile("spec/support/geometry.lua").least_along
local function clearance(p)
  local least = math.huge
  for k = 1, 3 do least = math.min(least, p[k], N - p[k]) end
  for _, box in ipairs(BOXES) do
    local d2 = 0
    for k = 1, 3 do
      local e = 0
      if p[k] < box[1][k] then e = box[1][k] - p[k] elseif p[k] > box[2][k] then e = p[k] - box[2][k] end
      d2 = d2 + e * e
    end
    least = math.min(least, math.sqrt(d2))
  end
  return least
end
local function least_clearance(path) return least_along(path, 16, clearance) end

describe("a radius search on one tree, run either way as on the tree baked for r", function()
  local cases = {
    { r = 1, a = { 11.5, 8.5, 1.5 }, b = { 6.5, 7.5, 20.5 }, length = 22.012354168311457, before = 24.177766297479248 },
    { r = 2, a = { 23.5, 4.5, 13.5 }, b = { 2.5, 19.5, 16.5 }, length = 27.757940680910416, before = 29.415440247040593 },
  }
  for _, c in ipairs(cases) do
    it(("radius %d: the one tree's path is the dedicated tree's length, %.4f (was %.4f)"):format(c.r, c.length, c.before),
      function()
        local t, td = trees(c.r)
        local q, qd = octonav.query.new(t), octonav.query.new(td)
        local path, info = q:find(c.a, c.b, { radius = c.r, graph = "cells" })
        assert.is_table(path, tostring(info.reason))
        local dpath, dinfo = qd:find(c.a, c.b, { graph = "cells" })
        assert.is_table(dpath, tostring(dinfo.reason))
        assert.is_true(math.abs(dinfo.length - c.length) < 1e-9, ("dedicated %.17g"):format(dinfo.length))
        assert.is_true(math.abs(info.length - c.length) < 1e-9, ("one tree %.17g"):format(info.length))
        assert.is_true(info.length <= 1.01 * dinfo.length)
        assert.is_true(least_clearance(path) >= c.r - 1e-9)
        q:close()
        qd:close()
        t:close()
        td:close()
      end)
  end
end)
