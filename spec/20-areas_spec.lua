-- spec/20-areas_spec.lua -- area costs (csrc/search/areas.c, search.c, tighten.c; lua_areas.c): opts.areas of
-- q:find / q:start and tree:set_areas / tree:areas. Exact answers on one hand-built scene in world
-- units other than the nav lattice's (scale 0.5, origin {10, 0, -5}).
-- Run: busted --lua=lua5.4 spec/20-areas_spec.lua
local octonav = require "octonav"

local S, O = 0.5, { 10, 0, -5 }
local function W(p) return { O[1] + S * p[1], O[2] + S * p[2], O[3] + S * p[3] } end

-- A 16^3-leaf tile with a wall x in [7, 9] (leaves) closed but for two gaps along z: A at y in [2, 4],
-- on the straight line between the ends, and B at y in [12, 14].
local function two_gaps()
  local t = octonav.tree.new { depth = 4, scale = S, origin = O }
  t:add_box(W { 7, 0, 0 }, W { 9, 2, 16 })
  t:add_box(W { 7, 4, 0 }, W { 9, 12, 16 })
  t:add_box(W { 7, 14, 0 }, W { 9, 16, 16 })
  return t
end

local A, B = W { 2, 3, 8 }, W { 14, 3, 8 }
local GAP_A = { min = W { 6, 0, 0 }, max = W { 10, 6, 16 } }
local ROUND = S * (2 * math.sqrt(106) + 2) -- through B's near edges (7, 12) and (9, 12)

local function area(base, extra)
  local a = { min = base.min, max = base.max }
  for k, v in pairs(extra or {}) do a[k] = v end
  return a
end

-- Does segment p -> q run strictly inside area a for a positive length?
local function enters(p, q, a)
  local t0, t1 = 0, 1
  for k = 1, 3 do
    local d = q[k] - p[k]
    if d == 0 then
      if not (p[k] > a.min[k] and p[k] < a.max[k]) then return false end
    else
      local u, v = (a.min[k] - p[k]) / d, (a.max[k] - p[k]) / d
      if u > v then u, v = v, u end
      t0, t1 = math.max(t0, u), math.min(t1, v)
    end
  end
  return t1 - t0 > 1e-9
end

local function expect_avoids(path, a)
  for i = 2, #path do assert.is_false(enters(path[i - 1], path[i], a)) end
end

local function near(x, y) return math.abs(x - y) < 1e-9 end

describe("area costs", function()
  it("a dear gap: the search takes the longer way round, and its cost is its length", function()
    local t = two_gaps()
    local q = octonav.query.new(t)
    local p0, i0 = q:find(A, B)
    assert.equal(2, #p0)
    assert.equal(6, i0.length)
    assert.is_nil(i0.cost)
    local dear = area(GAP_A, { cost = 10 })
    local p, info = q:find(A, B, { areas = { dear }, relax = 20 })
    assert.equal(4, #p)
    assert.is_true(near(info.length, ROUND), info.length)
    assert.equal(info.length, info.cost)
    assert.is_true(near(p[2][1], 13.5) and near(p[2][2], 6) and near(p[3][1], 14.5) and near(p[3][2], 6))
    expect_avoids(p, dear)
    -- sliced, the same
    local st = q:start(A, B, { areas = { dear }, relax = 20 })
    while st == "running" do st = q:step(1) end
    local p2, i2 = q:result()
    assert.same(p, p2)
    assert.equal(info.cost, i2.cost)
    -- Lazy Theta* keeps out of it too
    local p3, i3 = q:find(A, B, { areas = { dear }, any_angle = true })
    expect_avoids(p3, dear)
    assert.equal(i3.length, i3.cost)
  end)

  it("a gap at twice the cost is still the cheaper way: the straight segment pays 2 leaves twice", function()
    local q = octonav.query.new(two_gaps())
    local p, info = q:find(A, B, { areas = { area(GAP_A, { cost = 2 }) } })
    assert.same({ A, B }, p)
    assert.is_true(near(info.length, 6) and near(info.cost, 8), info.cost)
  end)

  it("an excluded box is never entered; an end inside it is blocked; both gaps excluded: unreachable", function()
    local q = octonav.query.new(two_gaps())
    local ex = area(GAP_A, { exclude = true })
    local p, info = q:find(A, B, { areas = { ex }, relax = 20 })
    assert.is_true(near(info.length, ROUND))
    expect_avoids(p, ex)
    local p2, i2 = q:find(W { 8, 3, 8 }, B, { areas = { ex } })
    assert.is_nil(p2)
    assert.equal("start_blocked", i2.reason)
    local p3, i3 = q:find(A, B, { areas = { ex, { min = W { 6, 10, 0 }, max = W { 10, 16, 16 }, exclude = true } } })
    assert.is_nil(p3)
    assert.equal("unreachable", i3.reason)
  end)

  it("an area of cost 1 gives the same path as none", function()
    local t = two_gaps()
    t:add_box(W { 3, 0, 7 }, W { 4, 16, 9 }) -- something to go round, so that a search runs
    local q = octonav.query.new(t)
    local a, b = W { 1, 8, 8 }, W { 14, 8, 8 }
    local p0, i0 = q:find(a, b)
    local p1, i1 = q:find(a, b, { areas = { { min = W { 0, 0, 0 }, max = W { 16, 16, 16 }, cost = 1 } } })
    assert.same(p0, p1)
    assert.equal(i0.expansions, i1.expansions)
    assert.is_nil(i1.cost)
  end)

  it("an area in open space, inside one large free cell: the search goes round it", function()
    local t = octonav.tree.new { depth = 5, scale = S, origin = O }
    local q = octonav.query.new(t)
    local cube = { min = W { 12, 12, 12 }, max = W { 20, 20, 20 }, cost = 10 }
    local best = S * (2 * math.sqrt(116) + 8) -- over its top edge
    for _, any in ipairs { false, true } do
      local p, info = q:find(W { 2, 16, 16 }, W { 30, 16, 16 }, { areas = { cube }, relax = 20, any_angle = any })
      expect_avoids(p, cube)
      assert.equal(info.length, info.cost)
      assert.is_true(info.length >= best - 1e-9 and info.length < best + 0.0025, info.length)
    end
    cube.cost = 1.1 -- through is cheaper: 20 + 8 * 1.1 leaves
    local p, info = q:find(W { 2, 16, 16 }, W { 30, 16, 16 }, { areas = { cube } })
    assert.equal(2, #p)
    assert.is_true(near(info.cost, S * 28.8))
  end)

  it("the tree's areas apply to every search; set_areas / areas round-trip", function()
    local t = two_gaps()
    local q = octonav.query.new(t)
    assert.same({}, t:areas())
    local list = { area(GAP_A, { cost = 10 }), { min = W { 0, 0, 0 }, max = W { 1, 1, 1 }, exclude = true } }
    t:set_areas(list)
    assert.same({ area(GAP_A, { cost = 10 }), { min = W { 0, 0, 0 }, max = W { 1, 1, 1 }, exclude = true } },
      t:areas())
    local p, info = q:find(A, B, { relax = 20 })
    assert.is_true(near(info.length, ROUND))
    expect_avoids(p, list[1])
    t:set_areas {}
    assert.same({}, t:areas())
    local _, i2 = q:find(A, B)
    assert.equal(6, i2.length)
  end)

  it("bad areas raise errors naming the option", function()
    local t = two_gaps()
    local q = octonav.query.new(t)
    local cases = {
      { 5, "option 'areas' must be a list of areas" },
      { { 5 }, "option 'areas'[1] must be a table" },
      { { { min = { 0, 0, 0 }, max = { 1, 1, 1 }, colour = 1 } }, "option 'areas'[1]: unknown field 'colour'" },
      { { { max = { 1, 1, 1 } } }, "option 'areas'[1].min must be a point {x, y, z} of finite numbers" },
      { { { min = { 0, 0, 0 }, max = { 1, 0 / 0, 1 } } }, "option 'areas'[1].max must be a point {x, y, z} of finite numbers" },
      { { { min = { 0, 0, 0 }, max = { 1, 0, 1 } } }, "option 'areas'[1]: min must be below max on every axis" },
      { { { min = { 0, 0, 0 }, max = { 1, 1, 1 }, cost = 0.5 } }, "option 'areas'[1].cost must be a finite number >= 1" },
      { { { min = { 0, 0, 0 }, max = { 1, 1, 1 }, cost = "x" } }, "option 'areas'[1].cost must be a finite number >= 1" },
      { { { min = { 0, 0, 0 }, max = { 1, 1, 1 }, exclude = 1 } }, "option 'areas'[1].exclude must be a boolean" },
      { { { min = { 0, 0, 0 }, max = { 1, 1, 1 }, exclude = true, cost = 2 } },
        "option 'areas'[1]: cost and exclude = true together" },
    }
    for _, c in ipairs(cases) do
      assert.has_error(function() q:find(A, B, { areas = c[1] }) end, "query:find: " .. c[2])
      assert.has_error(function() q:start(A, B, { areas = c[1] }) end, "query:start: " .. c[2])
    end
    assert.has_error(function() t:set_areas { { min = { 0, 0, 0 }, max = { 1, 1, 1 }, cost = 0 } } end,
      "tree:set_areas: areas[1].cost must be a finite number >= 1")
    assert.has_error(function() t:set_areas(1) end, "tree:set_areas: areas must be a list of areas")
  end)
end)
