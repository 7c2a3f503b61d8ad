-- spec/156-plan_weight_scratch_spec.lua -- issue 31, goal 1's throughput (session 28): what a plan's
-- sliced joins cost between their slices, and the world search's heuristic weight in Lua.
--
-- (1) The join scratch (route.h, route_plan.h: the local searches' per-box arrays, ~15 MB in a 512^3
-- tile) is shared by a world graph's planners; a start that stops at its join limit keeps the one it
-- borrowed and the shared one is left empty. Before, when those joins ended the planner gave it home
-- and the smaller of the two was freed: on the seed's world (bench/frames.lua, 1,000 navigators, ms 4,
-- two planners joining in turns) that free took 0.8-1.3 ms of one step, and the next start that found
-- the shared scratch empty grew and first touched a new one inside its slices (0.5-1.2 ms in reach's
-- reserve). Now the planner keeps the other scratch (csrc/world/route_start.c, joins_home) and uses its
-- own when the shared one is no larger (borrow): two plans interleaved a third time, over the same pairs,
-- grow no scratch (main 82177db: each round's second start grew one, freed when the joins ended).
-- (2) world:plan{ weight = w } and planner:start_multi(..., { weight = w }) (1 .. 4; default 1.5, the
-- C planner's ROUTE_WEIGHT, route.h): costs pinned at weights 1 and 1.5 on spec/127's world and pairs;
-- a pooled planner's weight does not stay for the next plan; bad values and unknown options raise
-- naming the option (main: "unknown option 'weight'").
-- Run: busted --lua=lua5.4 spec/156-plan_weight_scratch_spec.lua
local world_mod = require "octonav.world"
local rough = dofile("spec/support/roughworld.lua")

local pack

-- spec/42's walled world with a rough floor (300 small blocks, seed 5) and 10 pairs near the ground
-- from the first tile column to the last (seed 9): spec/support/roughworld.lua
setup(function() pack = rough.bake() end)
teardown(rough.cleanup)
local pairs_of = rough.pairs_of

-- world:plan's costs of those pairs at weight 1.5 (spec/127's, the default) and 1 (the cheapest route
-- over the world graph: pairs 3, 5, 6, 8 and 9 cheaper, the others the same); measured on this branch
local COSTS_15 = { "213.0996504", "533.4501691", "454.927496", "231.3224744", "437.4255266", "590.4376386",
  "359.3923137", "420.3986878", "470.8309613", "335.2831384" }
local COSTS_1 = { "213.0996504", "533.4501691", "439.864996", "231.3224744", "421.9880266", "573.8126386",
  "359.3923137", "409.0861878", "455.7684613", "335.2831384" }

local function fmt(c) return ("%.10g"):format(c) end

describe("a plan's sliced joins", function()
  it("keep the join scratch between interleaved plans: a third round grows none", function()
    local world = assert(world_mod.load(pack))
    local prs = pairs_of(world.tree)
    local g = world.graph
    local a, b = g:planner(), g:planner()
    a:join_limit(8)
    b:join_limit(8) -- (units only: the same slices every run)
    local function scratch()
      local all, boxes = g:joins_bytes()
      return a:bytes() + b:bytes() + all - boxes
    end
    local function round(i, j)
      local most = 0
      local sa = a:start_multi(world.tree, { prs[i][1] }, { prs[i][2] })
      assert.are.equal("running", sa)
      assert.is_true((a:joining()))
      local sb = b:start_multi(world.tree, { prs[j][1] }, { prs[j][2] })
      assert.are.equal("running", sb)
      assert.is_true((b:joining()))
      most = math.max(most, scratch())
      while sa == "running" or sb == "running" do
        if sa == "running" then sa = a:step(100000) end
        if sb == "running" then sb = b:step(100000) end
        most = math.max(most, scratch())
      end
      assert.are.equal("found", sa)
      assert.are.equal("found", sb)
      assert.are.equal(COSTS_15[i], fmt(a:flat().cost))
      assert.are.equal(COSTS_15[j], fmt(b:flat().cost))
      return most
    end
    round(3, 5)
    round(3, 5) -- (each planner's own scratch, and the shared one, grown to what these joins need)
    local after = scratch()
    assert.is_true(after > 0)
    local most = round(3, 5)
    assert.are.equal(after, most) -- (main: a scratch more, grown by the second start every round)
    assert.are.equal(after, scratch())
    a:close()
    b:close()
    world:close()
  end)
end)

describe("world:plan's weight", function()
  it("plans at weight 1 and 1.5 with the pinned costs, 1.5 by default", function()
    local world = assert(world_mod.load(pack))
    local prs = pairs_of(world.tree)
    for k, pr in ipairs(prs) do
      local route, cost = world:plan(pr[1], pr[2], { weight = 1 })
      assert.is_truthy(route, tostring(cost))
      assert.are.equal(COSTS_1[k], fmt(cost), "weight 1, pair " .. k)
      -- the world's pooled planner does not keep the weight for the next plan
      route, cost = world:plan(pr[1], pr[2])
      assert.is_truthy(route, tostring(cost))
      assert.are.equal(COSTS_15[k], fmt(cost), "default, pair " .. k)
      route, cost = world:plan(pr[1], pr[2], { weight = 1.5 })
      assert.is_truthy(route, tostring(cost))
      assert.are.equal(COSTS_15[k], fmt(cost), "weight 1.5, pair " .. k)
    end
    world:close()
  end)

  it("is an option of the C planner's start_multi", function()
    local world = assert(world_mod.load(pack))
    local prs = pairs_of(world.tree)
    local p = world.graph:planner()
    for _, w in ipairs { 1, 1.5 } do
      local st = p:start_multi(world.tree, { prs[5][1] }, { prs[5][2] }, { weight = w })
      while st == "running" do st = p:step(100000) end
      assert.are.equal("found", st)
      assert.are.equal(w == 1 and COSTS_1[5] or COSTS_15[5], fmt(p:flat().cost))
    end
    -- start_multi without it, and start, plan at the default again
    local st = p:start_multi(world.tree, { prs[5][1] }, { prs[5][2] }, { weight = 1 })
    while st == "running" do st = p:step(100000) end
    st = p:start_multi(world.tree, { prs[5][1] }, { prs[5][2] })
    while st == "running" do st = p:step(100000) end
    assert.are.equal(COSTS_15[5], fmt(p:flat().cost))
    st = p:start_multi(world.tree, { prs[5][1] }, { prs[5][2] }, { weight = 1 })
    while st == "running" do st = p:step(100000) end
    st = p:start(world.tree, prs[5][1], prs[5][2])
    while st == "running" do st = p:step(100000) end
    assert.are.equal(COSTS_15[5], fmt(p:flat().cost))
    assert.has_error(function() p:start_multi(world.tree, { prs[5][1] }, { prs[5][2] }, { weight = 5 }) end,
      "planner:start_multi: weight must be a finite number in [1, 4]")
    assert.has_error(function() p:start_multi(world.tree, { prs[5][1] }, { prs[5][2] }, { weight = 0.99 }) end,
      "planner:start_multi: weight must be a finite number in [1, 4]")
    assert.has_error(function() p:start_multi(world.tree, { prs[5][1] }, { prs[5][2] }, { weight = "x" }) end,
      "planner:start_multi: option 'weight': number expected, got string")
    p:close()
    world:close()
  end)

  it("raises naming the option on a bad value or an unknown option", function()
    local world = assert(world_mod.load(pack))
    local a, b = { 20, 10, 20 }, { 360, 10, 360 }
    for _, bad in ipairs { 0.5, 5, "x", true } do
      assert.has_error(function() world:plan(a, b, { weight = bad }) end,
        "world:plan: option 'weight' must be a number from 1 to 4, got " .. tostring(bad))
    end
    assert.has_error(function() world:plan(a, b, { weight = 0 / 0 }) end)
    assert.has_error(function() world:plan(a, b, { wieght = 1 }) end, "world:plan: unknown option 'wieght'")
    world:close()
  end)
end)
