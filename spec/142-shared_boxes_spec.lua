-- spec/142-shared_boxes_spec.lua -- the box sets a route's joins build in unprepared tiles are one cache
-- per world graph, shared by all its planners (issue 31, goals 1 and 3: more planners at once without
-- a copy of each tile's set apiece): graph:joins_bytes([max_box_bytes]) -> the bytes of the join scratch
-- and the sets, the sets' bytes, their count, their bound (set first when given). A planner pins a set only while a call reads
-- it: a join suspended at its limit over a set another planner built into, or dropped, or whose tile a
-- streamer removed, starts again or fails with its reason, never reads freed memory (csrc/world/
-- route_boxes.h).
-- Run: busted --lua=lua5.4 spec/142-shared_boxes_spec.lua
--
-- The world: spec/42's 3 x 1 x 3 tiles of 128 leaves (depth 7: a set is built block by block, 8^3
-- blocks of 16 leaves), nothing prepared.
local world_mod = require "octonav.world"
local streamer = require "octonav.streamer"

local boxpack = dofile("spec/support/boxpack.lua")

local pack
setup(function() pack = boxpack.bake_walled() end)
teardown(boxpack.cleanup)

-- Far pairs (start tile column, goal tile column): both ends in tiles of their own.
local A = { { 20, 3, 20 }, { 360, 3, 360 } }   -- tiles 0 and 8
local B = { { 360, 3, 20 }, { 20, 3, 360 } }   -- tiles 2 and 6

-- The graph's box sets: bytes, count, bound (the bound set first when given).
local function boxes(g, max_bytes)
  local _, bytes, sets, bound = g:joins_bytes(max_bytes)
  return bytes, sets, bound
end

local function steps_of(route)
  local out = {}
  for i, st in ipairs(route.steps) do
    out[i] = ("%d %d %d %d %.9g %.9g %.9g"):format(st.tile, st.portal, st.to_tile, st.to_portal, st.point[1],
      st.point[2], st.point[3])
  end
  return table.concat(out, "\n")
end

-- A sliced plan on p (join limit `limit` units): start, then steps until it ends; status, reason, tile.
local function start_sliced(p, tree, pr, limit)
  p:join_limit(limit)
  return p:start(tree, pr[1], pr[2])
end

local function finish(p)
  local st, reason, tile = "running", nil, nil
  local n = 0
  while st == "running" do
    st, reason, tile = p:step(1)
    n = n + 1
    assert.is_true(n < 100000)
  end
  return st, reason, tile
end

describe("box sets shared by a world's planners", function()
  it("two planners planning in the same tiles hold one copy of their sets", function()
    local w = assert(world_mod.load(pack))
    local g = w.graph
    local p1, p2 = g:planner(), g:planner()
    local b0 = p1:bytes()
    assert.are.equal(b0, p2:bytes())
    local _, none = boxes(g)
    assert.are.equal(0, none)
    local r1 = assert(p1:plan(w.tree, A[1], A[2]))
    local bytes1, sets1, limit = boxes(g)
    assert.are.equal(4 * 1024 * 1024, limit) -- (the default bound: route_boxes.h)
    assert.are.equal(2, sets1)              -- the start's tile and the goal's
    -- exactly (an empty cache: its own record): its slots, and per set its 512 block records (36 + 4 B
    -- each) and built bits (64 B), its entry and lazy set records, and the boxes its joins built with
    -- their block-face lists (route_boxes.c's ent_bytes, boxes.c's count)
    assert.are.equal(50780, bytes1)
    local d1 = p1:bytes() - b0
    assert.is_true(d1 < 20544, ("a plan left %d bytes on its planner: a set's block records are 20,544"):format(d1))
    -- the second planner, the same pair: the sets are found, none built, none copied
    local r2 = assert(p2:plan(w.tree, A[1], A[2]))
    local bytes2, sets2 = boxes(g)
    assert.are.same({ bytes1, 2 }, { bytes2, sets2 })
    assert.are.equal(d1, p2:bytes() - b0)
    assert.are.equal(r1.cost, r2.cost)
    assert.are.equal(steps_of(r1), steps_of(r2))
    -- the graph's count: the join scratch and the sets, each once
    local all = g:joins_bytes()
    assert.is_true(all > bytes1)
    p1:close()
    p2:close()
    w:close()
  end)

  it("holds at most its bound between calls, the least recently used set dropped first", function()
    local w = assert(world_mod.load(pack))
    local g = w.graph
    local p = g:planner()
    assert(p:plan(w.tree, A[1], A[2]))
    local two = boxes(g)                 -- A's two sets
    assert(p:plan(w.tree, B[1], B[2]))
    assert.are.equal(4, select(2, boxes(g)))
    -- a bound of A's bytes: B's sets, the last used, stay; A's go
    local bytes, sets = boxes(g, two)
    assert.are.equal(2, sets)
    assert.is_true(bytes <= two)
    -- planned again, A's sets come back in place of B's (the bound held)
    local ra = assert(p:plan(w.tree, A[1], A[2]))
    bytes, sets = boxes(g)
    assert.are.same({ two, 2 }, { bytes, sets })
    -- bound 0: nothing kept beyond a call, the route the same
    boxes(g, 0)
    local _, left, bound = boxes(g)
    assert.are.same({ 0, 0 }, { left, bound })
    local rb = assert(p:plan(w.tree, A[1], A[2]))
    assert.are.equal(0, select(2, boxes(g)))
    assert.are.equal(steps_of(ra), steps_of(rb))
    assert.has_error(function() g:joins_bytes(-1) end, "graph:joins_bytes: argument #1: max_box_bytes must be >= 0")
    p:close()
    w:close()
  end)

  it("joins sliced on two planners in one set, interleaved, give the whole start's route", function()
    local ref = assert(world_mod.load(pack))
    local w = assert(world_mod.load(pack))
    local whole = {}
    for i, pr in ipairs { A, B } do whole[i] = assert(ref.graph:planner():plan(ref.tree, pr[1], pr[2])) end
    local p1, p2 = w.graph:planner(), w.graph:planner()
    for i, pr in ipairs { A, B } do
      -- both stop at their limit inside the same tiles' sets and go on in turns: each step of one
      -- builds blocks the other's suspended search has not seen (it starts its search again)
      assert.are.equal("running", start_sliced(p1, w.tree, pr, 4))
      assert.are.equal("running", start_sliced(p2, w.tree, pr, 4))
      assert.is_true(p1:joining() and p2:joining())
      local s1, s2 = "running", "running"
      local n = 0
      while s1 == "running" or s2 == "running" do
        if s1 == "running" then s1 = p1:step(1) end
        if s2 == "running" then s2 = p2:step(1) end
        n = n + 1
        assert.is_true(n < 100000)
      end
      assert.are.same({ "found", "found" }, { s1, s2 })
      for _, p in ipairs { p1, p2 } do
        local r = p:result()
        assert.are.equal(whole[i].cost, r.cost)
        assert.are.equal(steps_of(whole[i]), steps_of(r))
      end
    end
    ref:close()
    w:close()
  end)

  it("a tile a streamer removes while a plan joins in its set: the plan fails as loading, then plans again",
    function()
      local ref = assert(world_mod.load(pack))
      local whole = assert(ref.graph:planner():plan(ref.tree, A[1], A[2]))
      local s = assert(streamer.new(pack, { load_padding = 0, unload_padding = 1, workers = 0 }))
      for i = 0, 8 do s:force_load(i) end
      s:update(true)
      local w = s.world
      local p1, p2 = w.graph:planner(), w.graph:planner()
      assert.are.equal("running", start_sliced(p1, w.tree, A, 4))
      assert.are.equal("running", start_sliced(p2, w.tree, A, 4))
      assert.is_true(p1:joining())
      local sets = select(2, boxes(w.graph))
      assert.is_true(sets >= 1)
      -- the goal's tile (8: its join runs first) goes, its memory freed, while both joins stand in it
      s:force_unload(8)
      s:update(true)
      assert.is_false(s:is_loaded(8))
      -- (the streamer removed the tile's graph too: a step sees the graph changed and stops)
      for _, p in ipairs { p1, p2 } do
        local st, reason = finish(p)
        assert.are.same({ nil, "graph_changed" }, { st, reason })
      end
      -- a plan started while it is away waits for it
      for _, p in ipairs { p1, p2 } do
        assert.are.same({ nil, "loading", 8 }, { p:start(w.tree, A[1], A[2]) })
      end
      -- loaded again (new contents' memory): a new set, the same route as a world never streamed; the
      -- stale one (the tile's contents changed: never handed out again) is freed when its tile's set is
      -- next asked for: two sets, not three
      s:force_load(8)
      s:update(true)
      for _, p in ipairs { p1, p2 } do
        p:join_limit(0)
        local r = assert(p:plan(w.tree, A[1], A[2]))
        assert.are.equal(whole.cost, r.cost)
        assert.are.equal(steps_of(whole), steps_of(r))
      end
      assert.are.equal(sets, select(2, boxes(w.graph)))
      s:close()
      ref:close()
    end)
end)
