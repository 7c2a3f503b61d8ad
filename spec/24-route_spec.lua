-- spec/24-route_spec.lua -- octonav.core.route (csrc/lua/lua_route.c): tile graphs as blobs, the world
-- graph, the sliced planner; the C tests (tests/world/test_portals.c, tests/world/test_route.c) check the maths
-- against Dijkstra over the cells, this spec the binding: round trips, the room whose only exit is on
-- the far side of its tile, loading, near endpoints, endpoint sets, errors naming the argument.
-- Run: busted --lua=lua5.4 spec/24-route_spec.lua
local octonav = require "octonav"
local core = require "octonav.core"
local route = core.route

-- 4 x 1 x 1 tiles of 16 leaves; tile 0 holds a room [1,7)^3 whose only exit is a corridor to x = 16.
local function room_world()
  local t = octonav.tree.new { depth = 4, tiles = { 4, 1, 1 } }
  local boxes = {
    { 0, 0, 0, 1, 8, 8 }, { 0, 0, 0, 8, 1, 8 }, { 0, 7, 0, 8, 8, 8 }, { 0, 0, 0, 8, 8, 1 }, { 0, 0, 7, 8, 8, 8 },
    { 7, 0, 0, 8, 3, 8 }, { 7, 5, 0, 8, 8, 8 }, { 7, 3, 0, 8, 5, 3 }, { 7, 3, 5, 8, 5, 8 },
    { 8, 2, 2, 16, 3, 6 }, { 8, 5, 2, 16, 6, 6 }, { 8, 2, 2, 16, 6, 3 }, { 8, 2, 5, 16, 6, 6 },
  }
  for _, b in ipairs(boxes) do t:add_box({ b[1], b[2], b[3] }, { b[4], b[5], b[6] }) end
  return t
end

local function full_graph(t)
  local g = route.world(t)
  for i = 0, 3 do assert(g:add_tile(i, 0, 0, assert(route.build(t, i, 0, 0)))) end
  return g
end

describe("octonav.core.route", function()
  it("encodes a tile graph and reads it back", function()
    local t = room_world()
    local blob = assert(route.build(t, 0, 0, 0, { tag = 7 }))
    assert.are.equal("ONTG", blob:sub(1, 4))
    local info = assert(route.info(blob))
    assert.are.equal(4, info.depth)
    assert.are.equal(16, info.bound)
    assert.are.equal(7, info.tag)
    assert.is_true(info.portals > 0 and info.components == 2)
    -- a graph built from the tree equals the blob's
    local g1, g2 = route.world(t), route.world(t)
    assert.is_true(g1:add_tile(0, 0, 0, blob))
    assert.is_true(g2:add_tile(0, 0, 0, t))
    assert.are.same(g1:stats(), g2:stats())
    -- damaged blobs
    assert.are.same({ nil, "corrupt" }, { route.info(blob:sub(1, -2)) })
    assert.are.same({ nil, "corrupt" }, { g1:add_tile(1, 0, 0, blob:sub(1, 10) .. "x" .. blob:sub(12)) })
    local deeper = octonav.tree.new { depth = 5, tiles = { 1, 1, 1 } }
    assert.are.same({ nil, "depth" }, { g1:add_tile(1, 0, 0, assert(route.build(deeper, 0, 0, 0))) })
  end)

  it("leaves the room through its only exit, on the far side of its tile", function()
    local t = room_world()
    local g = full_graph(t)
    local p = g:planner()
    local r = assert(p:plan(t, { 1.5, 4, 4 }, { 60, 8, 8 }))
    assert.is_nil(r.near)
    assert.are.equal(3, #r.steps)
    local s1 = r.steps[1]
    assert.are.equal(0, s1.tile)
    assert.are.equal(1, s1.to_tile)
    assert.are.equal(16, s1.point[1])
    assert.is_true(s1.point[2] >= 3 and s1.point[2] <= 5 and s1.point[3] >= 3 and s1.point[3] <= 5)
    assert.is_true(r.cost >= 14.5 + math.sqrt(44 * 44 + 32) - 1e-9)
    assert.is_true(r.length <= r.cost + 1e-9)
    assert.are.equal(1, r.start)
    assert.are.equal(1, r.goal)
  end)

  it("runs sliced, reports near endpoints, loading tiles and unreachable goals", function()
    local t = room_world()
    local g = full_graph(t)
    local p = g:planner(1000)
    assert.are.equal("running", p:start(t, { 1.5, 4, 4 }, { 60, 8, 8 }))
    local status, steps = "running", 0
    while status == "running" do
      status = assert(p:step(1))
      steps = steps + 1
    end
    assert.are.equal("found", status)
    assert.is_true(steps > 1)
    assert.are.equal(3, #assert(p:result()).steps)
    -- near
    assert.are.equal("same_tile", assert(p:plan(t, { 10, 10, 10 }, { 12, 12, 12 })).near)
    assert.are.equal("neighbours", assert(p:plan(t, { 10, 10, 10 }, { 20, 12, 12 })).near)
    -- a tile graph missing on the way
    g:remove_tile(2, 0, 0)
    assert.is_false(g:has_tile(2, 0, 0))
    assert.are.same({ nil, "loading", 2 }, { p:plan(t, { 1.5, 4, 4 }, { 60, 8, 8 }) })
    assert.is_true(g:add_tile(2, 0, 0, t))
    -- the graph changed under a running route
    assert.are.equal("running", p:start(t, { 1.5, 4, 4 }, { 60, 8, 8 }))
    g:add_tile(1, 0, 0, t)
    assert.are.same({ nil, "graph_changed" }, { p:step(10) })
    -- blocked and outside endpoints
    assert.are.same({ nil, "goal_blocked" }, { p:plan(t, { 60, 8, 8 }, { 0.5, 4, 4 }) })
    assert.are.same({ nil, "start_outside" }, { p:plan(t, { -1, 8, 8 }, { 60, 8, 8 }) })
    -- a sealed pocket
    local t2 = room_world()
    for _, b in ipairs { { 19, 4, 4, 27, 5, 12 }, { 19, 11, 4, 27, 12, 12 }, { 19, 4, 4, 20, 12, 12 },
      { 26, 4, 4, 27, 12, 12 }, { 19, 4, 4, 27, 12, 5 }, { 19, 4, 11, 27, 12, 12 } } do
      t2:add_box({ b[1], b[2], b[3] }, { b[4], b[5], b[6] })
    end
    local p2 = full_graph(t2):planner()
    assert.are.same({ nil, "unreachable" }, { p2:plan(t2, { 60, 8, 8 }, { 23, 8, 8 }) })
  end)

  it("plans between endpoint sets (doors) with their costs", function()
    local t = room_world()
    local p = full_graph(t):planner()
    assert.are.equal("running", p:start_multi(t, { { 1.5, 4, 4 } }, { { 60, 8, 8 }, { 50, 8, 8 } },
      { goal_costs = { 0, 100 } }))
    repeat local s = assert(p:step(8)) until s == "found"
    assert.are.equal(1, p:result().goal)
    p:start_multi(t, { { 1.5, 4, 4 } }, { { 60, 8, 8 }, { 50, 8, 8 } }, { goal_costs = { 100, 0 } })
    repeat local s = assert(p:step(8)) until s == "found"
    assert.are.equal(2, p:result().goal)
    -- without an options table (the points must not be read as the options)
    assert.are.equal("running", p:start_multi(t, { { 1.5, 4, 4 } }, { { 60, 8, 8 }, { 50, 8, 8 } }))
    repeat local s = assert(p:step(8)) until s == "found"
    assert.are.equal(2, p:result().goal)
    -- goals joined directly inside the start's tile: the goal named is the one that won, not the last
    for _, c in ipairs { { { 0, 100 }, 1 }, { { 100, 0 }, 2 } } do
      local st = p:start_multi(t, { { 1.5, 4, 4 } }, { { 3, 4, 4 }, { 6, 4, 4 } }, { goal_costs = c[1] })
      while st == "running" do st = assert(p:step(8)) end
      assert.are.equal("found", st)
      local r = p:result()
      assert.are.equal(c[2], r.goal)
      assert.is_true(r.cost < 100)
    end
  end)

  it("a portal blocked after its graph was built is not reached (never 'corrupt')", function()
    local t = room_world()
    local g = full_graph(t)
    local p = g:planner()
    assert.is_table((p:plan(t, { 1.5, 4, 4 }, { 60, 8, 8 })))
    -- the room's only way out: the portal of tile 0 on its +x face; an obstacle over it (the tile's
    -- boxes now come from the tree as edited, the graph from before the edit)
    local exit
    for _, q in ipairs(assert(route.portals(assert(route.build(t, 0, 0, 0))))) do
      if q.face == 1 and q[2] < 8 then exit = q end
    end
    assert.is_truthy(exit)
    t:add_obstacle { min = { exit[1] - 1, exit[2] - 1, exit[3] - 1 }, max = { exit[1] + 1, exit[2] + 1, exit[3] + 1 } }
    assert.are.same({ nil, "unreachable" }, { p:plan(t, { 1.5, 4, 4 }, { 60, 8, 8 }) })
  end)

  it("raises on misuse, naming the argument", function()
    local t = room_world()
    local g = full_graph(t)
    local p = g:planner()
    assert.has_error(function() route.build(t, 4, 0, 0) end, "octonav.route.build: argument #2: tile i index must be 0..3")
    assert.has_error(function() g:add_tile(0, 0, 0, 42) end,
      "graph:add_tile: argument #4: graph must be a tile graph string or an open tree")
    assert.has_error(function() route.build(t, 0, 0, 0, { bogus = 1 }) end)
    assert.has_error(function() route.build(t, 0, 0, 0, { stretch = 0.5 }) end,
      "octonav.route.build: option 'stretch' must be a finite number >= 1")
    assert.has_error(function() p:start(t, { 1, 2 }, { 3, 4, 5 }) end)
    assert.has_error(function() p:step(0) end, "planner:step: argument #1: budget must be >= 1")
    assert.has_error(function() p:start_multi(t, {}, { { 1, 1, 1 } }) end)
    assert.has_error(function() p:start_multi(t, { { 1.5, 4, 4 } }, { { 60, 8, 8 } }, { goal_costs = { -1 } }) end,
      "planner:start_multi: option 'goal_costs' must hold finite numbers >= 0")
    local other = octonav.tree.new { depth = 4, tiles = { 2, 1, 1 } }
    assert.has_error(function() p:start(other, { 1, 1, 1 }, { 20, 1, 1 }) end,
      "planner:start: argument #1: tree has another tile grid than the graph")
    assert.matches("^octonav.route.graph: 4 tiles", tostring(g))
    assert.matches("^octonav.route.planner: ", tostring(p))
    assert.is_true(p:bytes() > 0)
    g:close()
    assert.has_error(function() p:plan(t, { 1.5, 4, 4 }, { 60, 8, 8 }) end, "planner:plan: its world graph was closed")
    do
      local g3 = full_graph(t)
      assert.is_true(g3:stats().bytes > 0)
      g3:close()
    end
    p:close()
    assert.are.equal("octonav.route.planner (closed)", tostring(p))
  end)
end)
