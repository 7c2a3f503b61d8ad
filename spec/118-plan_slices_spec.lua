-- spec/118-plan_slices_spec.lua -- a navigator's plan starts are slices (issue 31, goal 1's frames and
-- goal 2): under a budget with `ms`, the joins of a plan's start (the local searches from its ends to
-- their tiles' portals, C) are cut per call at navigator_plan.JOIN_SLICE work units (a box settled, a
-- lazy block built 8: planner:join_limit) and SLICE_MS of the clock, whatever the frame's time left, and
-- go on in the next updates; before, a start joined until the frame's deadline, so a whole join (0.4-1.3
-- ms on the seed's world) ran in one call whenever the frame had room (bench/frames.lua --trace).
--   1. The work-unit clock: every C planner call a navigator makes (start_multi, step) is spied on and
--      its join units read back (planner:joining()); with ms = 100 (the frame's deadline never cuts) no
--      call joins more than JOIN_SLICE units plus one unit's worth (a box and its 6 neighbour blocks),
--      and the starts were cut (a whole join here is 265-1,350 units).
--   2. The routes are the unsliced ones: each navigator's route crosses where world:plan's (joined
--      whole) does, and world:plan's costs on this known world are pinned.
--   2b. At most navigator_plan.MAX_PLANNING navigators of a world plan at once under a budget's ms
--      (planner.busy: the C planners acquired), the others wait their turn: sliced plans hold a planner
--      over several updates (8 at once here before, and the C memory beyond the tree of 1,000
--      navigators on the seed's world grew 11 -> 27 MB in 1,000 frames).
--   3. The planner's `ms` (planner:join_limit) bounds a step's portals too: a step stops expanding once
--      it has passed (read before each portal but the first: one portal a step when passed at once);
--      the route is the same.
--   4. Without `ms` a start still joins whole (one call).
-- Run: busted --lua=lua5.4 spec/118-plan_slices_spec.lua
--
-- The worlds: spec/42's 3 x 1 x 3 tiles of 128 leaves (depth 7: the planner builds its 16-leaf blocks as
-- the joins reach them), nothing prepared; for 3, 8 x 1 x 8 tiles of 32 leaves with 40 blocks.
local navigator = require "octonav.navigator"
local navplan = require "octonav.navigator_plan"
local planner = require "octonav.planner"
local world_mod = require "octonav.world"

local boxpack = dofile("spec/support/boxpack.lua")
local rng = dofile("spec/support/prng.lua").lcg

local OVERSHOOT = 1 + 6 * 8
local SLICE = navplan.JOIN_SLICE or 256 -- (the module field; the same number before it was one)
local MAX_PLANNING = navplan.MAX_PLANNING or 2
local pack, blocks_pack

-- 8 x 1 x 8 tiles of 32 leaves over a ground slab with 40 blocks (seed 3): routes of 8-14 crossings
-- that expand 22-44 portals
local function bake_blocks()
  local boxes, r = { { { 0, 0, 0 }, { 256, 2, 256 } } }, rng(3)
  for _ = 1, 40 do
    local x, z = math.floor(r() * 240), math.floor(r() * 240)
    boxes[#boxes + 1] = { { x, 0, z }, { x + 4 + math.floor(r() * 20), 20 + math.floor(r() * 12), z + 4 + math.floor(r() * 20) } }
  end
  return boxpack.bake(8, 32, 5, boxes)
end

setup(function()
  pack = boxpack.bake_walled()
  blocks_pack = bake_blocks()
end)
teardown(boxpack.cleanup)

-- 12 pairs from one tile column to the far one (boxpack.column_pairs).
local pairs_of = boxpack.column_pairs

-- world:plan's costs of those pairs (the joins whole; measured on this world, session 22)
-- Session 27, the world graph search's default weight 1.2 -> 1.5 (route.c's ROUTE_WEIGHT: the spec pins the
-- default plan): pairs 5, 8 and 11 from 435.44695053848, 421.328660126 and 468.56597159223; the others unchanged.
local COSTS = { 235.00771835282, 356.4176610613, 369.85258209513, 251.98312482935, 460.19695053848,
  411.37114550804, 299.10441237818, 462.141160126, 312.24769086294, 331.73746089824, 486.62847159223,
  437.30699982165 }

-- The C planners' calls spied on (their metatable's methods, shared by every planner): each start_multi
-- and step's join units (planner:joining(): the last call's) and whether its joins go on appended to
-- `calls`. Returns the list and a function that restores the methods.
local function spy_planners(world)
  local p = world.graph:planner()
  local idx = getmetatable(p).__index
  p:close()
  local saved, calls = {}, {}
  for _, name in ipairs({ "start_multi", "step" }) do
    local f = idx[name]
    saved[name] = f
    idx[name] = function(self, ...)
      local a, b, c = f(self, ...)
      local joining, units = self:joining()
      calls[#calls + 1] = { name = name, units = units, joining = joining }
      return a, b, c
    end
  end
  return calls, function() for name, f in pairs(saved) do idx[name] = f end end
end

-- A route's crossings as a flat list of numbers (tiles, portals, points).
local function flat_route(route)
  local out = {}
  for _, st in ipairs(route) do
    out[#out + 1] = st.tile
    out[#out + 1] = st.via or -1
    for k = 1, 3 do out[#out + 1] = st.exit[k] end
  end
  return out
end

-- Each pair planned by a navigator of its own under `budget` (standing at the start) until its plan
-- ends: its route's crossings (flat_route) and the number of updates it took.
local function plan_all(world, budget, prs)
  local out = {}
  for k, pr in ipairs(prs) do
    -- (no lead move: the plan's updates are counted until its route; lead moves default on under ms)
    local nav = navigator.new(world, { budget = budget, lead_distance = 0 })
    nav:go(pr[2])
    local st, n = "planning", 0
    while st == "planning" do
      if budget then budget:frame() end
      st = nav:update(pr[1])
      n = n + 1
      assert(n < 10000, "plan " .. k .. " did not end")
    end
    assert.are_not.equal("failed", st, tostring(nav.reason))
    local route = nav:route()
    out[k] = { flat = flat_route(route), updates = n }
    nav:close()
  end
  return out
end

describe("a navigator's plan starts are slices", function()
  it("no plan call joins more than JOIN_SLICE units under a budget's ms; the routes are the whole joins'", function()
    local world = assert(world_mod.load(pack))
    local prs = pairs_of(world.tree)
    local calls, restore = spy_planners(world)
    local ok, res = pcall(plan_all, world, navigator.budget { ms = 100 }, prs)
    restore()
    assert(ok, res)
    local most, starts, cut = 0, 0, 0
    for _, c in ipairs(calls) do
      if c.units > most then most = c.units end
      if c.name == "start_multi" then
        starts = starts + 1
        if c.joining then cut = cut + 1 end -- (its joins go on in the next calls)
      end
    end
    assert.is_true(starts >= 12, starts .. " starts")
    assert.is_true(most <= SLICE + OVERSHOOT,
      ("a plan call joined %d units (slice %d)"):format(most, SLICE))
    assert.is_true(cut >= 6, ("%d of %d starts went on joining in later calls"):format(cut, starts))
    -- the same routes as world:plan's (joined whole in one call), whose costs are pinned
    local whole = assert(world_mod.load(pack))
    for k, pr in ipairs(prs) do
      local route, cost = whole:plan(pr[1], pr[2])
      assert.is_truthy(route, tostring(cost))
      assert.is_true(math.abs(cost - COSTS[k]) < 1e-9, ("pair %d: cost %.14g, pinned %.14g"):format(k, cost, COSTS[k]))
      assert.are.same(flat_route(route), res[k].flat)
    end
    whole:close()
    world:close()
  end)

  it("under a budget's ms at most MAX_PLANNING navigators plan at once (each holds a C planner)", function()
    -- 8 navigators asking for plans together (the budget's plans = 8 a frame): sliced plans last
    -- several updates, so without the bound all 8 held a planner at once (8 planners made, each
    -- with its own join scratch while joining); with it, at most 2, and every plan ends
    local world = assert(world_mod.load(pack))
    local prs = pairs_of(world.tree)
    -- (a clock of the spec's own that never reaches the deadline: every navigator is updated every
    -- frame whatever the machine's load; with the wall clock, a frame over 100 ms under ASan at load
    -- 13-20 left the later navigators out and the plans ran one at a time)
    local budget = navigator.budget { ms = 100, plans = 8, clock = function() return 0 end }
    local navs = {}
    for k = 1, 8 do
      navs[k] = navigator.new(world, { budget = budget })
      navs[k]:go(prs[k][2])
    end
    local most, left, frames = 0, 8, 0
    local done = {}
    while left > 0 do
      budget:frame()
      for k = 1, 8 do
        if not done[k] then
          local st = navs[k]:update(prs[k][1])
          if planner.busy(world) > most then most = planner.busy(world) end
          if st ~= "planning" then
            assert.are_not.equal("failed", st)
            done[k], left = true, left - 1
          end
        end
      end
      frames = frames + 1
      assert(frames < 10000)
    end
    for k = 1, 8 do navs[k]:close() end
    assert.are.equal(MAX_PLANNING, most)
    world:close()
  end)

  it("a planner's ms bounds a step's portals too: the same route over more steps", function()
    -- join_limit(0, ms) with a deadline already passed when read (1e-6 ms, as the navigator's
    -- JOIN_MIN_MS): a step stops after 1 portal (the clock read before each but the first; session 24
    -- read it every 8: 8 a step, issue 31); before, a step expanded its whole budget (1,048,576: the
    -- route found in one call)
    local world = assert(world_mod.load(blocks_pack))
    local r = rng(7)
    local function free_in(ti, tk)
      for _ = 1, 10000 do
        local p = { ti * 32 + 1 + r() * 30, 3 + r() * 27, tk * 32 + 1 + r() * 30 }
        if world.tree:locate(p) == "free" then return p end
      end
      error("no free point")
    end
    local p = world.graph:planner()
    for k = 1, 6 do
      local pr = { free_in(k % 2, k % 3), free_in(7 - k % 2, 7 - k % 3) }
      local route, cost = world:plan(pr[1], pr[2])
      assert.are.equal("running", p:start_multi(world.tree, { pr[1] }, { pr[2] }))
      p:join_limit(0, 1e-6)
      local st, calls = "running", 0
      while st == "running" do
        st = p:step(1048576)
        calls = calls + 1
        assert(calls < 100000)
      end
      p:join_limit(0)
      assert.are.equal("found", st)
      local f = p:flat()
      assert.are.equal(cost, f.cost)
      assert.is_true(f.expansions > 8, f.expansions .. " portals")
      assert.are.equal(f.expansions, calls, f.expansions .. " portals")
      assert.are.equal(#route - 1, f.n)
    end
    p:close()
    world:close()
  end)

  it("without a budget's ms a start joins whole, in one call", function()
    local world = assert(world_mod.load(pack))
    local prs = pairs_of(world.tree)
    local calls, restore = spy_planners(world)
    local ok, res = pcall(plan_all, world, navigator.budget { plans = 4, portals = 100000 }, { prs[8] })
    restore()
    assert(ok, res)
    assert.are.equal("start_multi", calls[1].name)
    assert.is_false(calls[1].joining)
    assert.is_true(calls[1].units > SLICE + OVERSHOOT, calls[1].units .. " units") -- (1,350 here)
    world:close()
  end)
end)
