-- spec/46-nav_plan_garbage_spec.lua -- the garbage a navigator's plans leave (issue 11: the frames
-- where the collector runs are the slowest), after spec/44: asking whether a point is blocked makes
-- no cell table (tree:locate_status), a point's tile makes no table (tilegrid.tile_of), and a
-- navigator's smoothers keep the points of the query's paths instead of copying each one
-- (smoother.adopt, s:extend_adopt). Counted with the collector stopped (bytes, deterministic).
-- Run: busted --lua=lua5.4 spec/46-nav_plan_garbage_spec.lua
local octonav = require "octonav"
local tilegrid = require "octonav.tilegrid"
local smoother = require "octonav.smoother"
local navigator = require "octonav.navigator"
local util = require "octonav.util"

local hw = dofile("spec/support/handworld.lua")

local garbage = dofile("spec/support/garbage.lua").bytes

-- A tree with nothing in it: every segment visible.
local function open_sky() return octonav.tree.new { tiles = { 1, 1, 1 }, depth = 4 } end

describe("a navigator plan's garbage", function()
  -- LuaJIT's compiler keeps its traces in the heap collectgarbage("count") measures: off while these
  -- count the library's own garbage (issue 34)
  local jit = rawget(_G, "jit")
  setup(function() if jit then jit.off() jit.flush() end end)
  teardown(function() if jit then jit.on() end end)

  it("tree:locate_status answers what locate does, with nothing allocated", function()
    local tree = octonav.tree.new { tiles = { 2, 1, 1 }, depth = 4 }
    tree:add_box({ 4, 0, 0 }, { 8, 16, 16 })
    local cases = {
      { { 2.5, 8.5, 8.5 }, "free" }, { { 6.5, 8.5, 8.5 }, "blocked" }, { { 20.5, 3.5, 1.5 }, "free" },
      { { 4, 8.5, 8.5 }, "blocked" }, -- (a leaf face reads as the leaf on its + side, as locate does)
      { { -1, 8.5, 8.5 }, "outside" }, { { 40, 8.5, 8.5 }, "outside" },
    }
    for _, c in ipairs(cases) do
      local st = tree:locate(c[1])
      assert.are.equal(c[2], st or "outside")
      assert.are.equal(c[2], tree:locate_status(c[1]))
      local bytes, got = garbage(function() return tree:locate_status(c[1]) end)
      assert.are.equal(c[2], got)
      assert.are.equal(0, bytes)
    end
    -- locate of a free point makes its cell ({min, size, code, tile}): what locate_status saves
    local bytes, st, cell = garbage(function() return tree:locate { 2.5, 8.5, 8.5 } end)
    assert.are.equal("free", st)
    assert.are.equal(0, cell.tile[1])
    assert.is_true(bytes > 0)
    assert.has_error(function() tree:locate_status { 1, 2 } end)
    tree:close()
    assert.has_error(function() tree:locate_status { 1, 2, 3 } end)
  end)

  it("tilegrid.tile_of makes no table, and its indices are the grid's", function()
    local g = tilegrid.new({ -8, 0, 4 }, { 3, 2, 4 }, 3, 0.5, 0) -- tiles of 4 world units
    local n = 0
    for k = 0, 3 do
      for j = 0, 1 do
        for i = 0, 2 do
          local p = { -8 + 4 * i + 1.25, 4 * j + 3.5, 4 + 4 * k + 0.5 }
          local bytes, t = garbage(function() return tilegrid.tile_of(g, p) end)
          assert.are.equal(0, bytes)
          assert.are.equal(tilegrid.index(g, i, j, k), t)
          assert.are.same({ i, j, k }, tilegrid.ijk(g, t))
          n = n + 1
        end
      end
    end
    assert.are.equal(24, n)
    assert.are.equal(tilegrid.index(g, 2, 1, 3), tilegrid.tile_of(g, { 4, 8, 20 })) -- the max faces count
    assert.are.equal(tilegrid.index(g, 1, 0, 0), tilegrid.tile_of(g, { -4, 0, 4 })) -- a border: the + side
    assert.is_nil(tilegrid.tile_of(g, { 4.001, 1, 5 }))
    assert.is_nil(tilegrid.tile_of(g, { 0, -0.001, 5 }))
    assert.is_nil(tilegrid.tile_of(g, { 0, 1, 3.999 }))
    assert.is_nil(tilegrid.tile_of(g, { 0 / 0, 1, 5 }))
  end)

  it("smoother.adopt keeps the path's points; new copies them, one point's table each", function()
    local tree = open_sky()
    local path = {}
    for i = 1, 40 do path[i] = { 0.5 + i * 0.25, 8.5, 8.5 } end
    local more = {}
    for i = 1, 10 do more[i] = { 10.5 + 0.25 * i, 8.5, 8.5 } end
    smoother.new(tree, path):extend(more) -- (strings interned, methods warm)
    smoother.adopt(tree, path):extend_adopt(more)
    local point_bytes = garbage(function() return util.copy(path[1]) end)
    local new_bytes, s1 = garbage(function() return smoother.new(tree, path):extend(more) end)
    local adopt_bytes, s2 = garbage(function() return smoother.adopt(tree, path):extend_adopt(more) end)
    assert.is_true(point_bytes > 0)
    assert.are.equal(50 * point_bytes, new_bytes - adopt_bytes)
    assert.are.equal(50, s1:remaining() + 1)
    assert.are.equal(50, s2:remaining() + 1)
    for i = 1, 40 do
      assert.are.same(path[i], s1.path[i])
      assert.are_not.equal(path[i], s1.path[i]) -- a copy
      assert.are.equal(path[i], s2.path[i])     -- the same table
    end
    for i = 1, 10 do assert.are.equal(more[i], s2.path[40 + i]) end
    -- the array is the smoother's: extending it leaves the caller's path as it was
    assert.are.equal(40, #path)
    -- the same checks as new
    assert.has_error(function() smoother.adopt(tree, { { 1, 2 } }) end,
      "octonav.smoother.adopt: path[1] must be a point {x, y, z} of finite numbers, got table")
    assert.has_error(function() smoother.adopt(tree, {}) end, "octonav.smoother.adopt: path must have at least one point")
    assert.has_error(function() smoother.adopt(tree, path, { speed = 1 }) end,
      "octonav.smoother.adopt: unknown option 'speed'")
    assert.has_error(function() s2:extend_adopt { "x" } end,
      "smoother:extend_adopt: path[1] must be a point {x, y, z} of finite numbers, got string")
    assert.has_error(function() smoother.new(tree, { { 1, 2 } }) end,
      "octonav.smoother.new: path[1] must be a point {x, y, z} of finite numbers, got table")
    tree:close()
  end)

  it("a navigator's walk keeps its paths' points: copying them would cost one point's table each", function()
    local w = hw.make_world { tiles = 4, obstacles = true }
    local a, b = { 2.5, 8.5, 8.5 }, { 56.5, 8.5, 8.5 }
    local point_bytes = garbage(function() return util.copy(a) end)
    -- a walk from a to b, its garbage and the points of the paths its searches found
    local function walk()
      local nav = navigator.new(w)
      local points, frames = 0, 0
      local bytes = garbage(function()
        nav:go(b)
        local pos, st, wp = { a[1], a[2], a[3] }
        repeat
          st, wp = nav:update(pos)
          frames = frames + 1
          if st == "moving" then
            local d = hw.dist(pos, wp)
            local t = d > 0 and math.min(1, 0.5 / d) or 0
            for k = 1, 3 do pos[k] = pos[k] + (wp[k] - pos[k]) * t end
          end
        until st == "arrived" or st == "failed" or frames == 2000
        assert.are.equal("arrived", st)
      end)
      for _, p in ipairs(nav.step_paths) do points = points + #p end
      -- the smoothers' points: how many are the searches' own
      local seen, held, own = {}, 0, 0
      for _, p in ipairs(nav.step_paths) do for _, q in ipairs(p) do seen[q] = true end end
      for _, leg in ipairs(nav.legs) do
        if leg.smoother then
          for _, q in ipairs(leg.smoother.path) do
            held = held + 1
            if seen[q] then own = own + 1 end
          end
        end
      end
      nav:close()
      return bytes, points, frames, held, own
    end
    -- (both walks at the same call depth: a deeper call may make one of Lua's call records)
    assert(pcall(walk)) -- (planners, queries and strings made once)
    local adopt = smoother.adopt
    local ok0, bytes, points, frames, held, own = pcall(walk)
    assert(ok0, bytes)
    smoother.adopt = smoother.new -- the copying smoother, as before
    local ext = smoother.adopt
    local proto = getmetatable(smoother.new(w.tree, { a }))
    local ext_adopt = proto.__index.extend_adopt
    proto.__index.extend_adopt = proto.__index.extend
    local ok, copy_bytes, copy_points, copy_frames, copy_held, copy_own = pcall(walk)
    smoother.adopt, proto.__index.extend_adopt = adopt, ext_adopt
    assert(ok, copy_bytes)
    assert.are.equal(ext, smoother.new)
    assert.are.equal(frames, copy_frames)
    assert.are.equal(points, copy_points)
    assert.is_true(points >= 4, points .. " points")
    assert.are.equal(copy_held, held)
    assert.is_true(held >= 4)
    assert.are.equal(held, own)   -- the searches' points themselves
    assert.are.equal(0, copy_own) -- copies
    assert.are.equal(points * point_bytes, copy_bytes - bytes)
  end)
end)
