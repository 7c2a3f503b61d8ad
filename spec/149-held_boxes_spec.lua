-- spec/149-held_boxes_spec.lua -- a join suspended at its limit holds its tile's box set between calls
-- (issue 31, goal 3: the world's shared box sets kept small without starving plans): a planner's
-- join that stops at its limit resumes over the same set at its next step whatever the cache's bound
-- (graph:joins_bytes(max_box_bytes)); before, a bound below the sets of the planners joining at once
-- dropped the set between calls and the join started again at every step, so no plan ended (2
-- planners with a 2 MB bound on the seed's world: 0 arrivals in 1,500 frames). The held set is let
-- go when the join ends, at the planner's next start, or when the planner is closed
-- (csrc/world/route_boxes.h, on_route_boxes_hold).
-- Run: busted --lua=lua5.4 spec/149-held_boxes_spec.lua
--
-- The world: spec/42's 3 x 1 x 3 tiles of 128 leaves (depth 7: a set is built block by block, 8^3
-- blocks of 16 leaves), nothing prepared.
local world_mod = require "octonav.world"

local boxpack = dofile("spec/support/boxpack.lua")

local pack
setup(function() pack = boxpack.bake_walled() end)
teardown(boxpack.cleanup)

local A = { { 20, 3, 20 }, { 360, 3, 360 } }   -- tiles 0 and 8
local B = { { 360, 3, 20 }, { 20, 3, 360 } }   -- tiles 2 and 6

-- The graph's sets: bytes, count.
local function sets(g)
  local _, bytes, n = g:joins_bytes()
  return bytes, n
end

local function steps_of(route)
  local out = {}
  for i, st in ipairs(route.steps) do
    out[i] = ("%d %d %d %d %.9g %.9g %.9g"):format(st.tile, st.portal, st.to_tile, st.to_portal, st.point[1],
      st.point[2], st.point[3])
  end
  return table.concat(out, "\n")
end

-- Steps p until its plan ends (at most `most` steps: a join that starts again at every step never
-- ends); the status and the steps taken.
local function finish(p, most)
  local st, n = "running", 0
  while st == "running" and n < most do
    st = p:step(1)
    n = n + 1
  end
  return st, n
end

describe("a suspended join's box set held between calls", function()
  local ref, whole
  setup(function()
    ref = assert(world_mod.load(pack))
    whole = {}
    for i, pr in ipairs { A, B } do whole[i] = assert(ref.graph:planner():plan(ref.tree, pr[1], pr[2])) end
  end)
  teardown(function() ref:close() end)

  it("bound 0: a sliced plan ends, with the whole start's route, and holds one set while it joins", function()
    local w = assert(world_mod.load(pack))
    local g = w.graph
    local p = g:planner()
    g:joins_bytes(0) -- nothing kept beyond a call but the held set
    p:join_limit(4)
    assert.are.equal("running", p:start(w.tree, A[1], A[2]))
    assert.is_true(p:joining())
    local bytes, n = sets(g)
    local st, steps = finish(p, 2000)
    assert.are.equal("found", st, ("%d steps, still %s"):format(steps, tostring(st)))
    assert.are.equal(1, n) -- while it joined: the set its join stands over (the goal's tile: joined first)
    assert.is_true(bytes > 20544) -- (its 512 block records alone are 20,544 bytes)
    local r = p:result()
    assert.are.equal(whole[1].cost, r.cost)
    assert.are.equal(steps_of(whole[1]), steps_of(r))
    assert.are.equal(0, select(2, sets(g))) -- the plan ended: nothing held, nothing kept
    p:close()
    w:close()
  end)

  it("two planners joining at once in four tiles, bound 0, interleaved: both end", function()
    local w = assert(world_mod.load(pack))
    local g = w.graph
    g:joins_bytes(0)
    local p1, p2 = g:planner(), g:planner()
    p1:join_limit(4)
    p2:join_limit(4)
    assert.are.equal("running", p1:start(w.tree, A[1], A[2]))
    assert.are.equal("running", p2:start(w.tree, B[1], B[2]))
    local held = select(2, sets(g))
    local s1, s2, n = "running", "running", 0
    while (s1 == "running" or s2 == "running") and n < 2000 do
      if s1 == "running" then s1 = p1:step(1) end
      if s2 == "running" then s2 = p2:step(1) end
      n = n + 1
    end
    assert.are.same({ "found", "found" }, { s1, s2 })
    assert.are.equal(2, held) -- one held each while they joined
    assert.are.equal(whole[1].cost, p1:result().cost)
    assert.are.equal(whole[2].cost, p2:result().cost)
    assert.are.equal(0, select(2, sets(g)))
    w:close()
  end)

  it("a planner started anew or closed mid-join lets its held set go", function()
    local w = assert(world_mod.load(pack))
    local g = w.graph
    g:joins_bytes(0)
    local p = g:planner()
    p:join_limit(4)
    assert.are.equal("running", p:start(w.tree, A[1], A[2]))
    assert.are.equal(1, select(2, sets(g)))
    -- started anew, unlimited: the old join's set let go, the new plan's sets not kept (bound 0)
    p:join_limit(0)
    assert(p:plan(w.tree, B[1], B[2]))
    assert.are.equal(0, select(2, sets(g)))
    -- closed while joining
    p:join_limit(4)
    assert.are.equal("running", p:start(w.tree, A[1], A[2]))
    assert.are.equal(1, select(2, sets(g)))
    p:close()
    assert.are.equal(0, select(2, sets(g)))
    -- with a bound again, unheld sets are dropped to it as before
    local q = g:planner()
    assert(q:plan(w.tree, A[1], A[2]))
    assert.are.equal(0, select(2, sets(g)))
    g:joins_bytes(8 * 1024 * 1024)
    assert(q:plan(w.tree, A[1], A[2]))
    assert.are.equal(2, select(2, sets(g)))
    w:close()
  end)

  it("a graph closed before its planner: the planner's close touches nothing freed", function()
    local w = assert(world_mod.load(pack))
    local p = w.graph:planner()
    p:join_limit(4)
    assert.are.equal("running", p:start(w.tree, A[1], A[2]))
    w:close()
    p:close()
    assert.has_error(function() p:step(1) end)
  end)
end)
