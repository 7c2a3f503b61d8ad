-- spec/127-plan_joins_spec.lua -- world:plan's joins over the planner's lazy box sets (issue 31, goal 2:
-- world:plan p99 <= 1 ms): a lazy set's block is built without the adjacency of its boxes (boxes.h,
-- on_boxlazy_block): a join settles 1-3 boxes of most blocks it builds, so a settled box finds its
-- neighbours inside its block by a scan of that block's boxes (on_box_touch, reach_run.c) instead of
-- every built block listing every neighbour pair. On the seed's world (bench/plan.lua, 200 pairs,
-- callgrind) a plan's instructions p99 5.15 M -> 4.31 M with the same routes (docs/benchmarks.md).
-- The same routes: the joins settle the same boxes in the same order (a settled box's neighbours
-- relaxed in another order get the same keys, and equal keys leave the heap in the order of the boxes'
-- corners), so world:plan's costs on a known world where the joins build blocks of many boxes are
-- pinned (measured before the change, identical after). That the lazy sets hold no adjacency is
-- tests/search/test_boxes.c's (test_lazy: a set's bytes are its boxes, face lists and block records).
-- Run: busted --lua=lua5.4 spec/127-plan_joins_spec.lua
local world_mod = require "octonav.world"
local rough = dofile("spec/support/roughworld.lua")

local pack

-- spec/42's walled world with a rough floor (300 small blocks, seed 5) and 10 pairs near the ground
-- from the first tile column to the last (seed 9): spec/support/roughworld.lua
setup(function() pack = rough.bake() end)
teardown(rough.cleanup)
local pairs_of = rough.pairs_of

-- world:plan's costs of those pairs (measured on main 1f30ec5, before the change). Session 27: the world graph
-- search's default weight 1.2 -> 1.5 (route.c's ROUTE_WEIGHT; the spec pins the default plan): pairs 3, 5, 6, 8
-- and 9 from 444.427496, 421.9880266, 573.8126386, 409.0861878 and 460.3309613; the others unchanged.
local COSTS = { "213.0996504", "533.4501691", "454.927496", "231.3224744", "437.4255266", "590.4376386",
  "359.3923137", "420.3986878", "470.8309613", "335.2831384" }

describe("world:plan's joins over lazy blocks", function()
  it("find the routes they found when every block listed its boxes' neighbours", function()
    local world = assert(world_mod.load(pack))
    local prs = pairs_of(world.tree)
    local p = world.graph:planner()
    for k, pr in ipairs(prs) do
      -- a planner of its own (its lazy sets built by these joins alone) and world:plan
      local st, reason = p:start_multi(world.tree, { pr[1] }, { pr[2] })
      while st == "running" do st, reason = p:step(1000000) end
      assert.are.equal("found", st, tostring(reason))
      local f = assert(p:flat())
      assert.are.equal(COSTS[k], ("%.10g"):format(f.cost), "pair " .. k)
      assert.is_true(f.join_boxes > 0)
      local route, cost = world:plan(pr[1], pr[2])
      assert.is_truthy(route, tostring(cost))
      assert.are.equal(COSTS[k], ("%.10g"):format(cost), "world:plan, pair " .. k)
    end
    p:close()
    world:close()
  end)
end)
