-- spec/137-plan_radius_tile_spec.lua -- world:plan with a radius whose start and goal lie in one tile
-- (issue 31 goal 2's planner, issue 33's radius): the start's local search joined a goal in its own tile
-- directly over the tree's boxes as if the agent were a point (route_start.c), so on a one-tree pack a
-- plan at radius 2 went through a gap 3 wide (cost 10, one tile step) where the pack baked with a tree
-- per agent goes round through the next tile (41.78, three steps). Now the local searches of a plan with
-- a radius whose ends share a tile enter a box only along a segment that keeps the radius (the sphere's
-- line of sight, tree:visible_radius's test: on_route_set_join_radius, planner:start_multi's option
-- `radius`), so the direct join is taken only by a way that keeps it, else the route goes through the
-- agent's portals. An end whose search so meets nothing joins as a point (as before).
-- The world: 32 x 16 x 32, depth 4 (2 x 1 x 2 tiles of 16), a wall at z 6-10 with a gap 3 wide at x 4-7
-- (tile 0) and an opening 10 wide at x 20-30 (tile 1); S and G in tile 0 on either side of the gap.
-- Run: busted --lua=lua5.4 spec/137-plan_radius_tile_spec.lua
local octonav = require "octonav"
local files = dofile("spec/support/files.lua")
local bake = require "octonav.bake"

local BOXES = {
  { min = { -8, -8, 6 }, max = { 4, 24, 10 } },
  { min = { 7, -8, 6 }, max = { 20, 24, 10 } },
  { min = { 30, -8, 6 }, max = { 40, 24, 10 } },
}
local S, G = { 5.5, 8, 3 }, { 5.5, 8, 13 }
local AGENTS = { { name = "small", radius = 0 }, { name = "big", radius = 2 } }

local function config(dir, one_tree)
  local geometry = {}
  for n, b in ipairs(BOXES) do geometry[n] = { box = b } end
  return { range = { min = { 0, 0, 0 }, max = { 32, 16, 32 } }, depth = 4, scale = 1, agents = AGENTS,
    geometry = geometry, output = dir, progress = function() end, one_tree = one_tree }
end

local function tiles_of(route)
  local out = {}
  for n, s in ipairs(route) do out[n] = s.kind .. " " .. tostring(s.tile) end
  return table.concat(out, ", ")
end

describe("world:plan with a radius inside one tile", function()
  local one, per
  setup(function()
    one, per = files.tmpdir(), files.tmpdir()
    assert(bake.run(config(one, true)))
    assert(bake.run(config(per, false)))
  end)
  teardown(function()
    files.rm_rf(one)
    files.rm_rf(per)
  end)

  it("goes round a gap narrower than the agent, as the pack of a tree per agent does", function()
    local w1, w2 = assert(octonav.world.load(one)), assert(octonav.world.load(per))
    local r2, c2 = w2:plan(S, G, { agent = "big" })
    assert.equal("tile 0, tile 1, tile 0", tiles_of(r2))
    for _, opts in ipairs({ { radius = 2 }, { agent = "big" } }) do
      local r1, c1 = w1:plan(S, G, opts)
      assert.is_table(r1, tostring(c1))
      assert.equal("tile 0, tile 1, tile 0", tiles_of(r1)) -- (before: "tile 0", cost 10)
      assert.equal(("%.6f"):format(c2), ("%.6f"):format(c1)) -- 41.782523
    end
    -- a point, and a radius the gap holds (1.5 each side of x 5.5; radii count in whole leaves): one step
    for _, opts in ipairs({ {}, { radius = 1 }, { agent = "small" } }) do
      local r, c = w1:plan(S, G, next(opts) and opts or nil)
      assert.equal("tile 0", tiles_of(r))
      assert.equal(10, c)
    end
    w1:close()
    w2:close()
  end)

  it("settles the boxes of the start's side only: an exact count", function()
    local w = assert(octonav.world.load(one))
    local p = w:agent("big").graph:planner()
    local function joined(opts)
      local st, reason = p:start_multi(w.tree, { S }, { G }, opts)
      while st == "running" do st, reason = p:step(1000000) end
      assert.equal("found", st, tostring(reason))
      local f = assert(p:flat())
      return f.join_boxes, f.n, ("%.6f"):format(f.cost)
    end
    local b0, n0, c0 = joined(nil)
    assert.same({ 0, "10.000000" }, { n0, c0 }) -- a point: the direct join through the gap
    local b2, n2, c2 = joined({ radius = 2 })
    assert.same({ 2, "41.782523" }, { n2, c2 })
    assert.same({ 7, 4 }, { b0, b2 }) -- boxes the two ends' searches settled (at radius 2: not the gap's)
    -- the planner keeps no radius between starts: the next start without one joins as a point again
    assert.same({ b0, 0, "10.000000" }, { joined({ start_costs = { 0 }, goal_costs = { 0 } }) })
    assert.has_error(function() p:start_multi(w.tree, { S }, { G }, { radius = -1 }) end,
      "planner:start_multi: option 'radius' must be a finite number >= 0")
    p:close()
    w:close()
  end)
end)
