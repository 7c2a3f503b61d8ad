-- spec/176-plan_join_pause_spec.lua -- a planner call that has spent its join limit begins no other
-- endpoint's local search (issue 31 goal 1, streamed: the C calls of the slowest frames).
-- A plan's joins (the local searches from its start and goal to their tiles' portals, csrc/world/
-- route_start.c) are cut per call by planner:join_limit(work [, ms]); a search suspended at the limit
-- goes on in the next call. Before session 32, a call in which one endpoint's search ended at the limit
-- went on to begin the next endpoint's search: its set-up (the per-box arrays reserved, the portals
-- mapped to their boxes, the blocks holding its point built), which no work unit counts, ran past the
-- limit, and the search stopped after it (bench/frames.lua --trace: planner steps of 1.9-4.7 ms thread
-- CPU against a limit of 0.25 ms). Now the next search begins in the next call (route_start.c's
-- jpause); the joins, and so the routes, are the same.
--   1. Counts, not the machine's time: with a limit of 1 unit a call, no call (start or step) runs more
--      than one endpoint search (planner:last_call()'s joins, a probe), and each call's units stay
--      within one unit's worth (a box and the blocks built for it, 1 + 8); fails on the code before
--      (calls of 2 searches).
--   2. The routes are the whole joins': every pair's route (planner:flat(), its numbers compared
--      exactly) and cost as one whole start's (join_limit 0), found in more calls.
-- Run: busted --lua=lua5.4 spec/176-plan_join_pause_spec.lua
--
-- The world: spec/42's 3 x 1 x 3 tiles of 128 leaves (depth 7: the planner builds its 16-leaf blocks as
-- the joins reach them), nothing prepared.
local world_mod = require "octonav.world"

local boxpack = dofile("spec/support/boxpack.lua")

local pack

setup(function() pack = boxpack.bake_walled() end)
teardown(boxpack.cleanup)

-- 12 pairs from one tile column to the far one (boxpack.column_pairs).
local pairs_of = boxpack.column_pairs

-- A copy of the flat route (planner:flat()'s numbers, n of them and the scalar fields).
local function copy_flat(f)
  local out = { n = f.n, cost = f.cost, length = f.length, start = f.start, goal = f.goal }
  for k = 1, 7 * f.n do out[k] = f[k] end
  return out
end

-- Pair pr planned by planner p (its join limit set by the caller): the flat route, and each call's
-- last_call() values { units, joins } (with `calls`).
local function plan(p, tree, pr, calls)
  local st, reason = p:start(tree, pr[1], pr[2])
  local function note()
    if not calls then return end
    local units, _, _, joins = p:last_call()
    calls[#calls + 1] = { units = units, joins = joins }
  end
  note()
  local n = 0
  while st == "running" do
    st, reason = p:step(64)
    note()
    n = n + 1
    assert(n < 100000, "the plan did not end")
  end
  assert.are.equal("found", st, tostring(reason))
  return copy_flat(p:flat())
end

describe("a planner call that spent its join limit begins no other endpoint's search", function()
  it("one search a call at 1 unit a call; the routes are the whole joins'", function()
    local world = assert(world_mod.load(pack))
    local prs = pairs_of(world.tree)
    local whole, sliced = world.graph:planner(), world.graph:planner()
    whole:join_limit(0)
    sliced:join_limit(1)
    local most_units, most_joins, two = 0, 0, 0
    local ncalls = 0
    for k, pr in ipairs(prs) do
      local want = plan(whole, world.tree, pr)
      local c = {}
      local got = plan(sliced, world.tree, pr, c)
      assert.are.same(want, got, "pair " .. k)
      for _, x in ipairs(c) do
        if x.units > most_units then most_units = x.units end
        if x.joins > most_joins then most_joins = x.joins end
        if x.joins > 1 then two = two + 1 end
      end
      ncalls = ncalls + #c
    end
    -- the joins were cut: far more calls than pairs (a whole join here settles hundreds of boxes)
    assert.is_true(ncalls > 20 * #prs, "calls " .. ncalls)
    assert.are.equal(0, two, ("%d calls of %d ran two endpoint searches"):format(two, ncalls))
    assert.are.equal(1, most_joins)
    assert.is_true(most_units <= 1 + 8, "a call's units " .. most_units)
    whole:close()
    sliced:close()
    world:close()
  end)

  it("the probe reads zeros before any call, and raises on a closed planner", function()
    local world = assert(world_mod.load(pack))
    local p = world.graph:planner()
    local v = { p:last_call() }
    assert.are.equal(13, #v)
    for k = 1, 13 do assert.are.equal(0, v[k]) end
    p:close()
    assert.has_error(function() p:last_call() end)
    world:close()
  end)
end)
