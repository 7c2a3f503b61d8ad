-- spec/16-boxes_spec.lua -- the prepared search graph (csrc/search/boxes.c, tree:prepare, tree:boxes) and
-- searches over it (csrc/search/search.c, opts.graph, info.graph).
-- Run: busted --lua=lua5.4 spec/16-boxes_spec.lua
--
-- Every box set is checked against an independent voxel map of the scene (spec/support/scenes.lua):
-- each free voxel lies in exactly one box, no blocked voxel in any; neighbours are checked against all
-- pairs. Paths are checked as in spec/15: from a to b exactly, every segment visible to tree:visible
-- and to octonav.checker over the voxel map, info.length their length. Random scenes are seeded
-- (OCTONAV_SEED, default 20240611).
local octonav = require "octonav"
local checker = require "octonav.checker"

local BASE_SEED = tonumber(os.getenv("OCTONAV_SEED") or "") or 20240611
local geometry = dofile("spec/support/geometry.lua")
local scenes = dofile("spec/support/scenes.lua")
local rng = dofile("spec/support/prng.lua").xorshift
local dist, fmt = geometry.dist, geometry.fmt
local scene = scenes.scene
local random_free_point = scenes.free_points(10000)

-- Random boxes over a scene of tiles x 1 x tiles tiles of depth 4 (16 leaves a side), some crossing
-- tile borders.
local function random_scene(seed, tiles)
  local r = rng(seed)
  local s = scene { depth = 4, tiles = { tiles, 1, tiles } }
  for _ = 1, r.int(24, 40) do
    local mn = { r.int(0, s.X - 2), r.int(0, 14), r.int(0, s.Z - 2) }
    local mx = { mn[1] + r.int(1, 7), mn[2] + r.int(1, 7), mn[3] + r.int(1, 7) }
    mx[1], mx[2], mx[3] = math.min(mx[1], s.X), math.min(mx[2], 16), math.min(mx[3], s.Z)
    s:box(mn, mx)
  end
  return s, r
end

-- Each voxel of tile (i, 0, k): free ones in exactly one box, blocked ones in none.
local function expect_cover(s, i, k)
  local boxes = assert(s.tree:boxes(i, 0, k))
  local x0, z0 = 16 * i, 16 * k
  for z = z0, z0 + 15 do
    for y = 0, 15 do
      for x = x0, x0 + 15 do
        local cx, cy, cz, n = x + 0.5, y + 0.5, z + 0.5, 0
        for _, b in ipairs(boxes) do
          if cx > b.min[1] and cx < b.max[1] and cy > b.min[2] and cy < b.max[2] and cz > b.min[3] and cz < b.max[3] then
            n = n + 1
          end
        end
        local want = s:blocked(x, y, z) and 0 or 1
        assert(n == want, ("voxel (%d, %d, %d) in %d boxes, expected %d"):format(x, y, z, n, want))
      end
    end
  end
  return boxes
end

-- Do boxes a and b share a face of positive area?
local function share_face(a, b)
  local touch, overlap = 0, 0
  for k = 1, 3 do
    if a.max[k] == b.min[k] or b.max[k] == a.min[k] then
      touch = touch + 1
    elseif a.min[k] < b.max[k] and b.min[k] < a.max[k] then
      overlap = overlap + 1
    end
  end
  return touch == 1 and overlap == 2
end

local function expect_path(s, path, info, a, b)
  assert.is_table(path, "no path: " .. tostring(info and info.reason))
  for k = 1, 3 do
    assert(path[1][k] == a[k] and path[#path][k] == b[k], "path from " .. fmt(path[1]) .. " to " .. fmt(path[#path]))
  end
  local len = 0
  for i = 1, #path - 1 do
    assert(s.tree:visible(path[i], path[i + 1]), ("segment %d %s -> %s not visible"):format(i, fmt(path[i]), fmt(path[i + 1])))
    assert(checker.visible(s, path[i], path[i + 1]), ("segment %d not visible to the checker"):format(i))
    if i > 1 then assert(checker.turn(s, path[i - 1], path[i], path[i + 1]), ("turn %d refused by the checker"):format(i)) end
    len = len + dist(path[i], path[i + 1])
  end
  assert.near(len, info.length, 1e-9 * math.max(1, len))
  return len
end

describe("tree:prepare and tree:boxes", function()
  it("cover each tile's free space exactly, boxes disjoint, on random scenes", function()
    for n = 1, 3 do
      local s = random_scene(BASE_SEED + n, 2)
      local built = s.tree:prepare()
      local total = 0
      for i = 0, 1 do
        for k = 0, 1 do total = total + #expect_cover(s, i, k) end
      end
      assert.equal(total, built)
      assert.is_true(total < 4 * 16 ^ 3 / 20, total .. " boxes for " .. 4 * 16 ^ 3 .. " leaves")
    end
  end)

  it("neighbours are exactly the boxes of the tile sharing a face of positive area (symmetric)", function()
    local s = random_scene(BASE_SEED + 7, 2)
    s.tree:prepare()
    for i = 0, 1 do
      for k = 0, 1 do
        local boxes = s.tree:boxes(i, 0, k)
        for a = 1, #boxes do
          local listed = {}
          for _, b in ipairs(boxes[a].neighbors) do
            assert.is_nil(listed[b], "neighbour listed twice")
            listed[b] = true
          end
          for b = 1, #boxes do
            if b ~= a then
              assert(share_face(boxes[a], boxes[b]) == (listed[b] == true),
                ("tile (%d,0,%d): boxes %d and %d: share a face %s, listed %s"):format(i, k, a, b,
                  tostring(share_face(boxes[a], boxes[b])), tostring(listed[b] == true)))
            end
          end
        end
      end
    end
  end)

  it("an empty tile is one box, a solid one none; a world-space transform applies", function()
    local t = octonav.tree.new { depth = 3, tiles = { 2, 1, 1 }, scale = 0.5, origin = { 10, 20, 30 } }
    t:add_box({ 14, 20, 30 }, { 18, 24, 34 }) -- tile (1, 0, 0) wholly
    assert.equal(1, t:prepare())
    local b = t:boxes(0, 0, 0)
    assert.equal(1, #b)
    assert.same({ 10, 20, 30 }, b[1].min)
    assert.same({ 14, 24, 34 }, b[1].max)
    assert.same({}, b[1].neighbors)
    assert.same({}, t:boxes(1, 0, 0))
  end)

  it("a changed tile loses its graph; prepare builds only what is missing; stats count it", function()
    local s = random_scene(BASE_SEED + 11, 2)
    assert.same({ 0, 0, 0 }, { s.tree:stats().tiles_prepared, s.tree:stats().boxes, s.tree:stats().box_bytes })
    local ok, why = s.tree:boxes(0, 0, 0)
    assert.is_nil(ok)
    assert.equal("tile not prepared", why)
    local built = s.tree:prepare()
    local st = s.tree:stats()
    assert.equal(4, st.tiles_prepared)
    assert.equal(built, st.boxes)
    assert.is_true(st.box_bytes > 0)
    assert.equal(0, s.tree:prepare()) -- nothing to rebuild
    local before = s.tree:boxes(0, 0, 1)
    s:box({ 20, 3, 2 }, { 22, 5, 4 }) -- in tile (1, 0, 0) only
    assert.is_nil(s.tree:boxes(1, 0, 0))
    assert.equal(3, s.tree:stats().tiles_prepared)
    assert.same(before, s.tree:boxes(0, 0, 1))
    local again = s.tree:prepare(1, 0, 0)
    assert.equal(#s.tree:boxes(1, 0, 0), again)
    expect_cover(s, 1, 0)
    assert.equal(4, s.tree:stats().tiles_prepared)
  end)

  it("rejects a bad tile", function()
    local t = octonav.tree.new { depth = 3, tiles = { 2, 1, 1 } }
    assert.has_error(function() t:prepare(2, 0, 0) end, "tree:prepare: argument #1: tile index out of range (0..1)")
    assert.has_error(function() t:prepare("a", 0, 0) end)
    assert.has_error(function() t:boxes(0, 1, 0) end, "tree:boxes: argument #2: tile index out of range (0..0)")
  end)
end)

describe("searches over the prepared graph", function()
  it("run over boxes once prepared: the same pairs found, valid paths, lengths close to the cells'", function()
    -- measured with the default seed: 240 pairs, 128 of them searched; total length over boxes
    -- 1.0030 times the total over cells, worst pair 1.133; OCTONAV_SEED = 1..10: 99..130 searched,
    -- totals 1.0024..1.0047, worst pair 1.065..1.281
    local pairs_, searched, lb, lc, worst = 0, 0, 0, 0, 0
    for n = 1, 4 do
      local s, r = random_scene(BASE_SEED * 10 + n, 2)
      local q = octonav.query.new(s.tree)
      local list = {}
      for _ = 1, 60 do list[#list + 1] = { random_free_point(r, s), random_free_point(r, s) } end
      local cells = {}
      for i, ab in ipairs(list) do
        local p, info = q:find(ab[1], ab[2])
        assert.equal("cells", info.graph)
        cells[i] = { p, info }
      end
      s.tree:prepare()
      for i, ab in ipairs(list) do
        local p, info = q:find(ab[1], ab[2])
        assert.equal("boxes", info.graph)
        local pc, ic = cells[i][1], cells[i][2]
        assert.equal(ic.status, info.status)
        assert.equal(ic.reason, info.reason)
        if p then
          expect_path(s, p, info, ab[1], ab[2])
          pairs_ = pairs_ + 1
          if #pc > 2 or #p > 2 then searched = searched + 1 end
          lb, lc = lb + info.length, lc + ic.length
          worst = math.max(worst, info.length / ic.length)
        end
        -- and graph = "cells" still searches the cells, with the same path as before
        local p2, i2 = q:find(ab[1], ab[2], { graph = "cells" })
        assert.equal("cells", i2.graph)
        assert.same(pc, p2)
      end
    end
    assert.is_true(pairs_ >= 200 and searched >= 80, pairs_ .. " pairs, " .. searched .. " searched")
    assert.is_true(math.abs(lb / lc - 1) < 0.01, ("total over boxes / cells = %.4f"):format(lb / lc))
    assert.is_true(worst < 1.4, ("worst ratio %.4f"):format(worst))
  end)

  it("a wall with one hole: the analytic shortest path exactly, in fewer expansions", function()
    local wall = {
      { { 8, 0, 0 }, { 9, 16, 6 } }, { { 8, 0, 10 }, { 9, 16, 16 } },
      { { 8, 0, 6 }, { 9, 6, 10 } }, { { 8, 10, 6 }, { 9, 16, 10 } },
    }
    local s = scene({ depth = 4 }, wall)
    local a, b = { 2, 14, 8 }, { 14, 14, 8 }
    local rim1, rim2 = { 8, 10, 8 }, { 9, 10, 8 }
    local expected = dist(a, rim1) + dist(rim1, rim2) + dist(rim2, b)
    local q = octonav.query.new(s.tree)
    local _, ic = q:find(a, b)
    s.tree:prepare()
    for _, opts in ipairs { {}, { weight = 1 }, { smooth = "binary" } } do
      local path, info = q:find(a, b, opts)
      assert.equal("boxes", info.graph)
      expect_path(s, path, info, a, b)
      assert.near(expected, info.length, 1e-6)
      assert.equal(4, #path)
    end
    local _, info = q:find(a, b)
    assert.is_true(info.expansions < ic.expansions, info.expansions .. " vs " .. ic.expansions)
  end)

  it("sliced: the same path as find", function()
    local s, r = random_scene(BASE_SEED + 21, 2)
    s.tree:prepare()
    local q = octonav.query.new(s.tree)
    for _ = 1, 30 do
      local a, b = random_free_point(r, s), random_free_point(r, s)
      local p1, i1 = q:find(a, b, { direct = false })
      local st = q:start(a, b, { direct = false })
      while st == "running" do st = q:step(2) end
      local p2, i2 = q:result()
      assert.same(p1, p2)
      assert.equal(i1.expansions, i2.expansions)
      assert.equal("boxes", i2.graph)
    end
  end)

  it("a tile changed since prepare: the search goes back to the cells, and the path is valid", function()
    local s = scene { depth = 4, tiles = { 3, 1, 1 } }
    s:box({ 16, 0, 0 }, { 32, 16, 7 }) -- the middle tile, but for a gap z in [7, 9]
    s:box({ 16, 0, 9 }, { 32, 16, 16 })
    s.tree:prepare()
    local q = octonav.query.new(s.tree)
    local a, b = { 4, 8, 2 }, { 44, 8, 14 }
    local p, info = q:find(a, b)
    assert.equal("boxes", info.graph)
    expect_path(s, p, info, a, b)
    s:box({ 16, 0, 7 }, { 32, 4, 9 }) -- narrow the gap: the middle tile's graph is gone
    local p2, i2 = q:find(a, b)
    assert.equal("cells", i2.graph)
    expect_path(s, p2, i2, a, b)
    local p3, i3 = q:find(a, b, { graph = "cells" })
    assert.same(p2, p3)
    assert.equal(i2.expansions, i3.expansions)
    s.tree:prepare()
    local _, i4 = q:find(a, b)
    assert.equal("boxes", i4.graph)
    -- a search over boxes that is running when a tile changes reports the change
    assert.equal("running", q:start(a, b, { direct = false }))
    s:box({ 40, 12, 0 }, { 41, 13, 1 })
    assert.equal("failed", q:step(1))
    local _, i5 = q:result()
    assert.equal("tree_changed", i5.reason)
    -- and one found over boxes whose tiles then change (re-prepared: the old boxes are freed) before
    -- its result is read
    s.tree:prepare()
    local st = q:start(a, b, { direct = false })
    while st == "running" do st = q:step(5) end
    assert.equal("found", st)
    s:box({ 0, 12, 12 }, { 1, 13, 13 })
    s.tree:prepare()
    local p6, i6 = q:result()
    assert.is_nil(p6)
    assert.equal("tree_changed", i6.reason)
  end)

  it("graph = \"boxes\" searches the boxes alone: not_prepared names the tile instead of the cells", function()
    local s = scene { depth = 4, tiles = { 3, 1, 1 } }
    s:box({ 16, 0, 0 }, { 32, 16, 7 }) -- the middle tile, but for a gap z in [7, 9]
    s:box({ 16, 0, 9 }, { 32, 16, 16 })
    local q = octonav.query.new(s.tree)
    local a, b = { 4, 8, 2 }, { 44, 8, 14 }
    local p, info = q:find(a, b, { graph = "boxes" })
    assert.is_nil(p)
    assert.equal("not_prepared", info.reason)
    assert.same({ 0, 0, 0 }, info.tile)
    s.tree:prepare(0, 0, 0)
    s.tree:prepare(2, 0, 0)
    p, info = q:find(a, b, { graph = "boxes" })
    assert.is_nil(p)
    assert.equal("not_prepared", info.reason)
    assert.same({ 1, 0, 0 }, info.tile)
    assert.equal("boxes", info.graph)
    -- the same search in slices stops the same way
    local st = q:start(a, b, { graph = "boxes" })
    while st == "running" do st = q:step(1) end
    assert.equal("failed", st)
    local _, i2 = q:result()
    assert.equal("not_prepared", i2.reason)
    assert.same({ 1, 0, 0 }, i2.tile)
    s.tree:prepare()
    local p3, i3 = q:find(a, b, { graph = "boxes" })
    local p4, i4 = q:find(a, b)
    assert.equal("boxes", i3.graph)
    expect_path(s, p3, i3, a, b)
    assert.same(p4, p3)
    assert.equal(i4.expansions, i3.expansions)
  end)

  it("graph accepts \"auto\", \"cells\" and \"boxes\"; Lazy Theta* and cell centres search the cells", function()
    local s, r = random_scene(BASE_SEED + 31, 1)
    s.tree:prepare()
    local q = octonav.query.new(s.tree)
    local a, b = random_free_point(r, s), random_free_point(r, s)
    local msg = "query:find: option 'graph' must be \"auto\", \"cells\" or \"boxes\""
    assert.has_error(function() q:find(a, b, { graph = "box" }) end, msg)
    assert.has_error(function() q:find(a, b, { graph = 1 }) end, msg)
    assert.has_error(function() q:find(a, b, { graph = "boxes", any_angle = true }) end,
      "query:find: option 'graph' = \"boxes\" needs face points without any_angle")
    assert.has_error(function() q:find(a, b, { graph = "boxes", points = "centre" }) end,
      "query:find: option 'graph' = \"boxes\" needs face points without any_angle")
    for _, opts in ipairs { { any_angle = true }, { points = "centre" }, octonav.presets.seed } do
      local _, info = q:find(a, b, opts)
      assert.equal("cells", info.graph)
    end
  end)
end)
