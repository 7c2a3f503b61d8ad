-- spec/129-planner_memory_spec.lua -- what route planners and queries hold between plans (issue 31,
-- goal 3: memory beyond the tree). A planner's node array, heap, node map and stamps are sized to its
-- world graph (csrc/world/route_fit.c: a header and the portals of each tile with a graph, a
-- missing-tile node a tile, the goal), at most the max_nodes asked for, and sized again at a plan's
-- start once the graph changed: the seed's world graph (3,635 portals) needs 3,764 nodes, where every
-- planner held arrays for 65,536 (4.98 MB each, 2 of them at 1,000 navigators). q:bytes() reports what a
-- query keeps between searches (its node pool grown to its largest search).
-- Run: busted --lua=lua5.4 spec/129-planner_memory_spec.lua
local octonav = require "octonav"
local core = require "octonav.core"
local route = core.route

-- nx x 1 x nz tiles of 2^depth leaves with random walls and pillars (seeded); the graph holds the
-- tiles `keep(i, k)` says (all without it).
local function world(seed, nx, nz, depth, keep)
  local rnd = core.xorshift(seed)
  local n = math.floor(2 ^ depth)
  local t = octonav.tree.new { depth = depth, tiles = { nx, 1, nz } }
  for _ = 1, 4 * nx * nz do
    local x, z = rnd() * nx * n, rnd() * nz * n
    local lo = { math.floor(x), 0, math.floor(z) }
    t:add_box(lo, { lo[1] + 1 + math.floor(rnd() * n * 0.4), math.floor(n * 0.75), lo[3] + 1 })
  end
  local g = route.world(t)
  for i = 0, nx - 1 do
    for k = 0, nz - 1 do
      if not keep or keep(i, k) then assert(g:add_tile(i, 0, k, assert(route.build(t, i, 0, k)))) end
    end
  end
  return t, g, n
end

-- A free point near p (the first of a scan along x).
local function free_near(t, p)
  for d = 0, 12 do
    local q = { p[1] + (p[1] < 32 and d or -d), p[2], p[3] }
    if t:locate(q) == "free" then return q end
  end
  error("no free point near " .. table.concat(p, ","))
end

-- The nodes a plan over g can make: the goal, a missing-tile node for each of the grid's tiles, and
-- a header and the portals of each tile with a graph.
local function graph_nodes(g, ntiles)
  local st = g:stats()
  return 1 + ntiles + st.tiles + st.portals
end

describe("a route planner's node arrays", function()
  it("are sized to its world graph, not to max_nodes (65,536 by default)", function()
    local _, g = world(7, 4, 4, 4)
    local need = graph_nodes(g, 16)
    assert.is_true(need > 40 and need < 2000, "need " .. need)
    local fitted = g:planner(need):bytes()
    assert.are.equal(fitted, g:planner():bytes()) -- 65,536 nodes' arrays before (+3.9 MB)
    assert.are.equal(fitted, g:planner(65536):bytes())
    assert.is_true(fitted < 200000, "planner bytes " .. fitted)
    -- a planner asked for fewer nodes than the graph's holds fewer
    assert.is_true(g:planner(64):bytes() < fitted)
  end)

  it("plan the routes a planner made on the whole graph plans, when tiles come after it was made", function()
    local t, g, n = world(11, 4, 4, 4, function(i) return i < 2 end)
    local early = g:planner()
    local before = early:bytes()
    -- a route inside the tiles it had
    assert(early:plan(t, { 2.5, 6.5, 2.5 }, { 2 * n - 2.5, 6.5, 4 * n - 2.5 }))
    for i = 2, 3 do
      for k = 0, 3 do assert(g:add_tile(i, 0, k, assert(route.build(t, i, 0, k)))) end
    end
    local late = g:planner()
    local checked = 0
    for _, pair in ipairs {
      { { 2.5, 6.5, 2.5 }, { 4 * n - 2.5, 6.5, 4 * n - 2.5 } },
      { { 2.5, 6.5, 4 * n - 2.5 }, { 4 * n - 2.5, 6.5, 2.5 } },
      { { 1.5, 3.5, 30.5 }, { 60.5, 3.5, 33.5 } },
    } do
      if t:locate(pair[1]) == "free" and t:locate(pair[2]) == "free" then
        local r1, why1 = early:plan(t, pair[1], pair[2])
        local r2, why2 = late:plan(t, pair[1], pair[2])
        assert.are.equal(why2, why1)
        if r2 then
          assert.are.equal(r2.cost, r1.cost)
          assert.are.equal(#r2.steps, #r1.steps)
          checked = checked + 1
        end
      end
    end
    assert.is_true(checked >= 2, "routes checked " .. checked)
    assert.is_true(early:bytes() > before) -- (sized again for the 16 tiles at its next start)
  end)

  it("still stop at max_nodes: out_of_nodes", function()
    local t, g, n = world(7, 4, 4, 4)
    local a, b = free_near(t, { 2.5, 13.5, 2.5 }), free_near(t, { 4 * n - 2.5, 13.5, 4 * n - 2.5 })
    assert(g:planner():plan(t, a, b))
    local r, why = g:planner(3):plan(t, a, b)
    assert.is_nil(r)
    assert.are.equal("out_of_nodes", why)
  end)
end)

describe("q:bytes()", function()
  it("reports the node pool a query keeps: grown by a large search, the same after it", function()
    local t = octonav.tree.new { depth = 6 }
    t:add_box({ 30, 0, 0 }, { 34, 60, 64 })
    local q = octonav.query.new(t)
    local fresh = q:bytes()
    assert.is_true(fresh > 0)
    assert(q:find({ 1, 1, 1 }, { 62, 1, 62 }))
    local grown = q:bytes()
    assert.is_true(grown > fresh, ("%d after a search, %d fresh"):format(grown, fresh))
    assert(q:find({ 1, 1, 1 }, { 62, 1, 62 }))
    assert.are.equal(grown, q:bytes())
    assert.has_error(function() q.bytes(t) end)
  end)
end)
