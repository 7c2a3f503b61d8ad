-- Point queries on the tree (csrc/core/pointquery.c, csrc/lua/lua_points.c): reachable from the free space's
-- components (checked against searches), random free points (free, inside the sphere, spread by
-- volume), the nearest free point.
local compat = require "octonav.compat" -- Lua 5.1 .. 5.4 (issue 34)
local LUA = os.getenv("OCTONAV_LUA") or "lua5.4" -- the Lua under test (tools/runtests.sh)
local octonav = require "octonav"
local Tree = octonav.tree
local prng = dofile("spec/support/prng.lua")

-- a wall across x = 7..9 with a window at y 2..4, z 2..4 (leaves)
local function walled(window)
  local t = Tree.new { tiles = { 2, 1, 1 }, depth = 3 }
  if window then
    t:add_box({ 7, 0, 0 }, { 9, 2, 8 })
    t:add_box({ 7, 4, 0 }, { 9, 8, 8 })
    t:add_box({ 7, 2, 0 }, { 9, 4, 2 })
    t:add_box({ 7, 2, 4 }, { 9, 4, 8 })
  else
    t:add_box({ 7, 0, 0 }, { 9, 8, 8 })
  end
  return t
end

describe("tree:reachable", function()
  it("says which points free space connects, and why not", function()
    local t = walled(false)
    assert.is_true(t:reachable({ 1, 1, 1 }, { 6.5, 7, 7 }))
    assert.are.same({ false, "unreachable" }, { t:reachable({ 1, 1, 1 }, { 12, 5, 5 }) })
    assert.are.same({ nil, "a: blocked" }, { t:reachable({ 8, 1, 1 }, { 12, 5, 5 }) })
    assert.are.same({ nil, "b: outside" }, { t:reachable({ 1, 1, 1 }, { 17, 5, 5 }) })
    assert.are.same({ true }, { walled(true):reachable({ 1, 1, 1 }, { 12, 5, 5 }) })
  end)

  it("follows edits: closing the window separates the sides, in the same tree", function()
    local t = walled(true)
    assert.is_true(t:reachable({ 1, 1, 1 }, { 12, 5, 5 }))
    t:add_box({ 7, 2, 2 }, { 9, 4, 4 })
    assert.are.same({ false, "unreachable" }, { t:reachable({ 1, 1, 1 }, { 12, 5, 5 }) })
  end)

  it("agrees with a search on random scenes (found iff reachable)", function()
    local r = prng.xorshift(21)
    local agree = { [true] = 0, [false] = 0 }
    for _ = 1, 12 do
      local t = Tree.new { tiles = { 2, 1, 2 }, depth = 3 }
      local ext = { 16, 8, 16 }
      for _ = 1, 4 do
        -- a slab across the grid, thin along one axis; half of them stop short on another axis (a gap)
        local axis = r.int(1, 3)
        local a, b = { 0, 0, 0 }, { ext[1], ext[2], ext[3] }
        a[axis] = r.range(1, ext[axis] - 3)
        b[axis] = a[axis] + r.range(0.5, 2)
        if r.chance(0.5) then
          local other = axis % 3 + 1
          b[other] = ext[other] * r.range(0.5, 0.9)
        end
        t:add_box(a, b)
      end
      local q = octonav.query.new(t)
      for _ = 1, 50 do
        local p1 = { r.range(0.1, 15.9), r.range(0.1, 7.9), r.range(0.1, 15.9) }
        local p2 = { r.range(0.1, 15.9), r.range(0.1, 7.9), r.range(0.1, 15.9) }
        local ok = t:reachable(p1, p2)
        local path, why = q:find(p1, p2)
        if type(why) == "table" then why = why.reason end
        if ok == nil then
          assert.is_nil(path)
          assert.is_truthy(why == "start_blocked" or why == "goal_blocked", tostring(why))
        else
          if ok ~= (path ~= nil) then
            error(("reachable %s, search %s (%g %g %g) -> (%g %g %g)"):format(tostring(ok), tostring(why), p1[1], p1[2],
              p1[3], p2[1], p2[2], p2[3]))
          end
          agree[ok] = agree[ok] + 1
        end
      end
    end
    -- both answers occur often enough for the comparison to mean something
    assert.is_true(agree[true] >= 30 and agree[false] >= 30, agree[true] .. " connected, " .. agree[false] .. " not")
  end)

  it("rejects bad arguments", function()
    local t = walled(false)
    assert.has_error(function() t:reachable({ 1, 1 }, { 2, 2, 2 }) end)
    assert.has_error(function() t:reachable({ 0 / 0, 1, 1 }, { 2, 2, 2 }) end)
    assert.has_error(function() Tree.reachable(42, { 1, 1, 1 }, { 2, 2, 2 }) end)
  end)
end)

describe("tree:random_free", function()
  it("gives free points, the same for the same seed, spread by free volume", function()
    local t = walled(false) -- free: x 0..7 (7 x 8 x 8 = 448) and x 9..16 (7 x 8 x 8 = 448)
    local pts, state = t:random_free(7, { count = 4000 })
    assert.are.equal(4000, #pts)
    assert.is_true(compat.isinteger(state))
    local left = 0
    for _, p in ipairs(pts) do
      assert.are.equal("free", (t:locate(p)))
      if p[1] < 8 then left = left + 1 end
    end
    -- equal volumes: a binomial(4000, 1/2) lies within 4 standard deviations (126) of 2000
    assert.is_true(math.abs(left - 2000) < 126, tostring(left))
    -- an uneven split: a block in the right half leaves 448 - 64 = 384 there
    t:add_box({ 10, 2, 2 }, { 14, 6, 6 })
    pts = t:random_free(8, { count = 4000 })
    left = 0
    for _, p in ipairs(pts) do
      assert.are.equal("free", (t:locate(p)))
      if p[1] < 8 then left = left + 1 end
    end
    local want = 4000 * 448 / (448 + 384)
    assert.is_true(math.abs(left - want) < 4 * math.sqrt(4000 * 0.25), tostring(left))
    -- reproducible
    local a, sa = t:random_free(123)
    local b, sb = t:random_free(123)
    assert.are.same(a, b)
    assert.are.equal(sa, sb)
    local c = t:random_free(sa)
    assert.are_not.same(a, c)
  end)

  it("stays inside the sphere, takes an rng function, and says when there is no free space", function()
    local t = walled(false)
    local pts = t:random_free(function() return 0.25 end, { center = { 8, 4, 4 }, radius = 1.5, count = 200 })
    assert.are.equal(200, #pts)
    for _, p in ipairs(pts) do
      local d = math.sqrt((p[1] - 8) ^ 2 + (p[2] - 4) ^ 2 + (p[3] - 4) ^ 2)
      assert.is_true(d <= 1.5 + 1e-12)
      assert.is_true(p[1] <= 7 or p[1] >= 9)
    end
    assert.are.same({ nil, "no free space" }, { t:random_free(1, { center = { 8, 4, 4 }, radius = 0.9 }) })
    local full = Tree.new { tiles = { 1, 1, 1 }, depth = 2 }
    full:add_box({ 0, 0, 0 }, { 4, 4, 4 })
    assert.are.same({ nil, "no free space" }, { full:random_free(3) })
    assert.has_error(function() t:random_free(1, { count = -1 }) end, "tree:random_free: option 'count' must be 0..1000000")
    assert.has_error(function() t:random_free(1, { radius = 2 }) end, "tree:random_free: option 'radius' needs 'center'")
    assert.has_error(function() t:random_free(1, { center = { 1, 1, 1 } }) end,
      "tree:random_free: option 'radius' must be a positive number with 'center'")
    assert.has_error(function() t:random_free(1, { centre = { 1, 1, 1 } }) end, "tree:random_free: unknown option 'centre'")
    assert.has_error(function() t:random_free("x") end)
    assert.has_error(function() t:random_free(function() return 2 end) end)
  end)
end)

describe("tree:nearest_free", function()
  it("is the point itself when free, else the closest free point, within max_distance", function()
    local t = walled(false)
    local here = { 3, 4, 5 }
    assert.are.equal(here, t:nearest_free(here))
    local p = t:nearest_free({ 8.6, 4.5, 4.5 })
    assert.is_true(math.abs(p[1] - 9) < 2e-3 and p[2] == 4.5 and p[3] == 4.5)
    assert.are.equal("free", (t:locate(p)))
    p = t:nearest_free({ 7.3, 4.5, 4.5 }, 1)
    assert.is_true(math.abs(p[1] - 7) < 2e-3)
    assert.are.same({ nil, "no free point within max_distance" }, { t:nearest_free({ 8.2, 4, 4 }, 0.5) })
    assert.has_error(function() t:nearest_free({ 1, 1, 1 }, -1) end)
  end)

  -- Far outside the grid with a huge max_distance: the search walks only the grid's voxels. Run in a
  -- child under `timeout` so that a regression (hours of shells outside the grid) fails, not hangs.
  it("answers promptly and exactly for a point far outside the grid", function()
    local script, out = os.tmpname(), os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write(("package.path = %q\npackage.cpath = %q\n"):format(package.path, package.cpath), [[
      local t = require("octonav").tree.new { depth = 4 }
      local function show(p, d)
        local q, err = t:nearest_free(p, d)
        io.write(q and ("%.17g %.17g %.17g\n"):format(q[1], q[2], q[3]) or (tostring(err) .. "\n"))
      end
      show({ 4.5, 4.5, 1000 }, 1e4)
      show({ -500, 2000, 1000 }, 1e300)
      show({ 4.5, 4.5, 1000 }, 900)
      t:add_box({ 0, 0, 8 }, { 16, 16, 16 })
      show({ 4.5, 4.5, 1000 }, 1e4)
      show({ 4.5, 4.5, 1e6 }, 1e7)
    ]])
    f:close()
    local ok, _, code = os.execute(("timeout 60 " .. LUA .. " %s > %s 2>&1"):format(script, out))
    local text = assert(io.open(out)):read("*a")
    os.remove(script)
    os.remove(out)
    assert.are.equal(true, ok, ("exit %s: %s"):format(code, text))
    assert.are.equal(table.concat({
      "4.5 4.5 15.999000000000001",
      "0.001 15.999000000000001 15.999000000000001",
      "no free point within max_distance",
      "4.5 4.5 7.9989999999999997",
      "4.5 4.5 7.9989999999999997",
    }, "\n") .. "\n", text)
  end)
end)
