-- spec/94-join_slices_spec.lua -- a plan's joins cut to fit (issue 31): the local searches that join a
-- route's start and goal to their tiles' portals (C, reach.c over boxes built block by block) run under
-- a work limit set on the planner (planner:join_limit(work [, ms])): a start and each step spend at
-- most `work` units (a box settled, a lazy block built counts 8) and go on in the next step; the route
-- is the one a whole start gives, exactly. The unit limit is the deterministic clock of these checks;
-- the navigators' budget uses `ms` (the frame's time left).
-- Run: busted --lua=lua5.4 spec/94-join_slices_spec.lua
--
-- The world: spec/42's 3 x 1 x 3 tiles of 128 leaves (depth 7: the planner builds its 16-leaf blocks
-- as the joins reach them), nothing prepared: a fresh planner's first joins build blocks.
local world_mod = require "octonav.world"
local planner = require "octonav.planner"

local boxpack = dofile("spec/support/boxpack.lua")
local rng = dofile("spec/support/prng.lua").lcg

local OVERSHOOT = 1 + 6 * 8 -- one unit's worth past the limit at most: a box and its 6 neighbour blocks
local pack

setup(function() pack = boxpack.bake_walled() end)
teardown(boxpack.cleanup)

local function pairs_of(tree)
  local r, out = rng(7), {}
  local function free_in(ti, tk) return boxpack.free_in(tree, r, ti, tk) end
  local corners = { { 0, 0, 2, 2 }, { 2, 0, 0, 2 }, { 0, 2, 2, 0 }, { 2, 2, 0, 0 }, { 0, 0, 2, 1 }, { 1, 0, 1, 2 } }
  for n = 1, 12 do
    local c = corners[(n - 1) % #corners + 1]
    out[n] = { free_in(c[1], c[2]), free_in(c[3], c[4]) }
  end
  return out
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

describe("joins cut to fit (planner:join_limit)", function()
  it("a start and each step join within the limit and give the whole start's route", function()
    local whole_world = assert(world_mod.load(pack))
    local cut_world = assert(world_mod.load(pack))
    local prs = pairs_of(whole_world.tree)
    for _, limit in ipairs({ 4, 40 }) do
      local p = cut_world.graph:planner()
      p:join_limit(limit)
      local cut, most = 0, 0
      for _, pr in ipairs(prs) do
        local route, cost = whole_world:plan(pr[1], pr[2])
        assert.is_truthy(route, tostring(cost))
        local job = planner.start(cut_world, pr[1], pr[2], p)
        local joining, units = p:joining()
        local calls, stopped = 1, joining
        most = math.max(most, units)
        local st, reason = "running", nil
        while st == "running" do
          st, reason = job:step(1)
          units = select(2, p:joining())
          most = math.max(most, units)
          calls = calls + 1
          assert.is_true(calls < 100000)
        end
        assert.are.equal("found", st, reason)
        if stopped then cut = cut + 1 end
        local r2, c2 = job:result()
        assert.are.equal(cost, c2)
        assert.are.same(flat_route(route), flat_route(r2))
      end
      -- the limit held (no call joined more than it plus one unit's worth), and it cut: a start
      -- joined whole would have spent hundreds of units in one call
      assert.is_true(most <= limit + OVERSHOOT, ("a call spent %d units (limit %d)"):format(most, limit))
      assert.is_true(cut >= 10, ("%d of 12 starts stopped at the limit"):format(cut))
      p:close()
    end
    whole_world:close()
    cut_world:close()
  end)

  it("without a limit a start joins whole; join_limit(0) lifts it", function()
    local world = assert(world_mod.load(pack))
    local pr = pairs_of(world.tree)[1]
    local p = world.graph:planner()
    assert.are.equal("running", p:start_multi(world.tree, { pr[1] }, { pr[2] }))
    local joining, units = p:joining()
    assert.is_false(joining)
    assert.is_true(units > 4 + OVERSHOOT, "a whole start's joins: " .. units .. " units") -- (what the limit cuts)
    p:join_limit(4)
    assert.are.equal("running", p:start_multi(world.tree, { pr[2] }, { pr[1] }))
    assert.is_true((p:joining()))
    p:join_limit(0)
    local st = p:step(1048576)
    assert.are.equal("found", st)
    p:close()
    world:close()
  end)

  it("rejects a bad limit, naming the argument", function()
    local world = assert(world_mod.load(pack))
    local p = world.graph:planner()
    assert.has_error(function() p:join_limit(-1) end, "planner:join_limit: argument #1: work must be >= 0")
    assert.has_error(function() p:join_limit(1, -1) end,
      "planner:join_limit: argument #2: ms must be a finite number >= 0")
    assert.has_error(function() p:join_limit(1, 1 / 0) end,
      "planner:join_limit: argument #2: ms must be a finite number >= 0")
    p:close()
    world:close()
  end)
end)
