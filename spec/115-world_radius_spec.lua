-- spec/115-world_radius_spec.lua -- agents of any radius on a world (issue 33, "one tree for every agent
-- size"): world:plan(a, b, { radius = r }) and octonav.navigator.new(world, { radius = r }), checked by
-- an independent distance test: every point the agent walks is sampled and its Euclidean distance to
-- each box of the bake config's geometry computed here (no tree, no clearance code of the library).
-- Run: busted --lua=lua5.4 spec/115-world_radius_spec.lua
--
-- The slot world: 4 x 2 x 4 tiles of 8 leaves (scale 1, depth 3), box [0,32] x [0,16] x [0,32]. A wall
-- at z in [14, 18] (every height) leaves a gap 3 wide at x in [4, 7] and an opening 10 wide at
-- x in [20, 30]. From S = (6, 8, 4) to G = (6, 8, 28): radius 0 goes straight through the gap (length
-- 24); any radius >= 2 shuts the gap (it grows by r from both sides) and must go round through the
-- opening, keeping r from both of its sides.
local octonav = require "octonav"
local files = dofile("spec/support/files.lua")
local bake = require "octonav.bake"
local world_mod = require "octonav.world"

local slot = dofile("spec/support/slotworld.lua")
local S, G, slot_config, clearance = slot.S, slot.G, slot.config, slot.clearance

local walker = dofile("spec/support/walker.lua")
-- walks nav from a to b, 0.25 a frame: status, length, least clearance over the walked points
local function walk(nav, a, b)
  local status, len, least = walker.walk(nav, a, b, { clearance = clearance })
  return status, len, least
end

local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert(not ok, "expected an error")
  return tostring(e)
end

describe("a world's agents by radius", function()
  local dirs = {}
  local function baked(agents)
    local dir = files.tmpdir()
    dirs[#dirs + 1] = dir
    assert(bake.run(slot_config(dir, agents)))
    return assert(world_mod.load(dir))
  end

  teardown(function()
    for _, d in ipairs(dirs) do files.rm_rf(d) end
  end)

  it("walks a navigator of radius 2 round the gap it does not fit, never nearer than 2 to a wall", function()
    local w = baked { { name = "small", radius = 0 }, { name = "big", radius = 2 } }
    local status, len, least = walk(octonav.navigator.new(w, { arrive_distance = 0 }), S, G)
    assert.equal("arrived", status)
    assert.near(24, len, 1e-6) -- through the gap, the straight line
    assert.near(1, least, 1e-9) -- 1 from the gap's east side (x = 7)
    status, len, least = walk(octonav.navigator.new(w, { radius = 2, arrive_distance = 0 }), S, G)
    assert.equal("arrived", status)
    assert.is_true(len > 40, "went round: " .. len) -- through the opening at x in [22, 28]
    assert.is_true(least >= 2 - 1e-9, "clearance " .. least)
    -- the same as the agent's name picks
    local _, len_named = walk(octonav.navigator.new(w, { agent = "big", arrive_distance = 0 }), S, G)
    assert.near(len_named, len, 1e-9)
    w:close()
  end)

  it("serves a radius between the agents' from the smaller agent's tree, its searches keeping the rest", function()
    -- agents 0 and 1: radius 1.5 takes agent 1 (the largest below) and its searches keep ceil(0.5) = 1
    -- leaf more: 2 in all, so the gap (3 wide) is shut and the walk keeps >= 1.5 everywhere
    local w = baked { { name = "small", radius = 0 }, { name = "one", radius = 1 } }
    local status, len, least = walk(octonav.navigator.new(w, { radius = 1.5, arrive_distance = 0 }), S, G)
    assert.equal("arrived", status)
    assert.is_true(len > 40, "went round: " .. len)
    assert.is_true(least >= 1.5 - 1e-9, "clearance " .. least)
    -- radius 1 exactly is agent "one" alone: through the gap (3 - 2 = 1 wide)
    status, len, least = walk(octonav.navigator.new(w, { radius = 1, arrive_distance = 0 }), S, G)
    assert.equal("arrived", status)
    assert.near(24, len, 1e-6)
    assert.is_true(least >= 1 - 1e-9, "clearance " .. least)
    w:close()
  end)

  it("plans at a radius on the graph of the agent that serves it", function()
    local w = baked { { name = "small", radius = 0 }, { name = "big", radius = 2 } }
    local r0 = assert(w:plan(S, G, { radius = 0 }))
    local r2 = assert(w:plan(S, G, { radius = 2 }))
    local rb = assert(w:plan(S, G, { agent = "big" }))
    local function tiles(route)
      local out = {}
      for n, st in ipairs(route) do out[n] = st.tile end
      return out
    end
    assert.same(tiles(rb), tiles(r2))
    assert.is_true(#r2 > #r0, ("%d steps at radius 2, %d at 0"):format(#r2, #r0))
    assert.equal("world:plan: give option 'agent' or 'radius', not both",
      err_of(w.plan, w, S, G, { agent = "big", radius = 2 }))
    assert.equal("world:plan: radius must be a finite number >= 0, got -1", err_of(w.plan, w, S, G, { radius = -1 }))
    assert.equal("octonav.navigator.new: option 'radius' must be a finite number >= 0",
      err_of(octonav.navigator.new, w, { radius = "2" }))
    assert.equal("octonav.navigator.new: give option 'agent' (a name) or 'radius', not both",
      err_of(octonav.navigator.new, w, { radius = 2, agent = "big" }))
    w:close()
  end)

  it("tree:visible_radius: the line of sight of a sphere", function()
    local tree = octonav.tree.new { depth = 5 }
    tree:add_box({ 10, 0, 0 }, { 12, 20, 32 })
    -- over the wall's top (y = 20): a point passes at y = 21, a sphere of radius 2 does not
    assert.is_true(tree:visible({ 2, 21, 16 }, { 20, 21, 16 }))
    assert.is_false(tree:visible_radius({ 2, 21, 16 }, { 20, 21, 16 }, 2))
    assert.is_true(tree:visible_radius({ 2, 22, 16 }, { 20, 22, 16 }, 2))
    assert.is_true(tree:visible_radius({ 2, 22, 16 }, { 20, 22, 16 }, 0))
    assert.equal("visible_radius: radius must be a number in [0, 65536 leaves]",
      (err_of(tree.visible_radius, tree, { 2, 22, 16 }, { 20, 22, 16 }, -1):gsub("^.-visible_radius", "visible_radius")))
  end)
end)
