-- spec/55-idle_queries_sweep_spec.lua -- world:close_idle_queries (lua/octonav/world.lua): the
-- navigators' idle queries (world.idle_queries: tree -> max_nodes -> list) of trees no longer the
-- world's are closed and dropped, the others kept; with all, every one; a navigator's search end
-- sweeps them (lua/octonav/navigator.lua, end_search). Identities and states only.
-- Run: busted --lua=lua5.4 spec/55-idle_queries_sweep_spec.lua
local octonav = require "octonav"
local navigator = require "octonav.navigator"
local World = require("octonav.world").World

local hw = dofile("spec/support/handworld.lua")
local geometry = dofile("spec/support/geometry.lua")

local query_new = octonav.core.query.new
local A, B = { 2.5, 8.5, 8.5 }, { 56.5, 8.5, 8.5 }

local function closed(q) return tostring(q):find("(closed)", 1, true) ~= nil end

describe("world:close_idle_queries", function()
  it("closes the idle queries of trees no longer the world's and keeps the others; all closes every one", function()
    local w = hw.make_world { tiles = 4 }
    local cave = w.holes[1].tree
    local qw1, qw2 = query_new(w.tree, { max_nodes = 64 }), query_new(w.tree, { max_nodes = 128 })
    local qc1, qc2 = query_new(cave, { max_nodes = 64 }), query_new(cave, { max_nodes = 64 })
    w.idle_queries = { [w.tree] = { [64] = { qw1 }, [128] = { qw2 } }, [cave] = { [64] = { qc1, qc2 } } }
    World.close_idle_queries(w) -- every tree live: nothing goes
    assert.same({ [w.tree] = { [64] = { qw1 }, [128] = { qw2 } }, [cave] = { [64] = { qc1, qc2 } } }, w.idle_queries)
    for _, q in ipairs { qw1, qw2, qc1, qc2 } do assert.is_false(closed(q)) end
    -- the cave's tree replaced (as the streamer replaces a hole's tree): its two queries go
    w.holes[1].tree = hw.make_world({ tiles = 4 }).holes[1].tree
    World.close_idle_queries(w)
    assert.same({ [w.tree] = { [64] = { qw1 }, [128] = { qw2 } } }, w.idle_queries)
    assert.is_true(closed(qc1))
    assert.is_true(closed(qc2))
    assert.is_false(closed(qw1))
    assert.is_false(closed(qw2))
    -- all: the live tree's as well; the pool stays, empty
    World.close_idle_queries(w, true)
    assert.same({}, w.idle_queries)
    assert.is_true(closed(qw1))
    assert.is_true(closed(qw2))
    w.holes[1].tree:close()
    w.holes[1].tree = cave
    World.close(w)
    assert.is_nil(w.idle_queries)
  end)

  it("raises for an all that is not a boolean", function()
    local w = { idle_queries = {} }
    local ok, err = pcall(World.close_idle_queries, w, 1)
    assert.is_false(ok)
    assert.matches("close_idle_queries: all must be a boolean, got number", err, 1, true)
  end)

  it("a world without idle queries is left as it is", function()
    local w = hw.make_world { tiles = 2 }
    World.close_idle_queries(w)
    World.close_idle_queries(w, true)
    assert.is_nil(w.idle_queries)
    World.close(w)
  end)

  it("a navigator's search end closes the idle queries of a tree no longer the world's", function()
    local w = hw.make_world { tiles = 4 }
    local old = hw.make_world { tiles = 4 }.tree -- a tree the world had before (its queries idle)
    local stale = query_new(old, { max_nodes = 65536 })
    local nav = navigator.new(w, { query_budget = 3 })
    w.idle_queries = setmetatable({ [old] = { [65536] = { stale } } }, { __mode = "k" })
    nav:go(B)
    local pos, st, held = { A[1], A[2], A[3] }, nil, nil
    for _ = 1, 600 do
      local wp
      st, wp = nav:update(pos)
      held = held or select(2, next(nav.queries))
      if st == "arrived" or st == "failed" then break end
      if st == "moving" then pos = geometry.step_toward(pos, wp, 0.5) end
    end
    assert.equal("arrived", st)
    assert.is_true(closed(stale))
    assert.is_nil(w.idle_queries[old])
    assert.same({ [w.tree] = { [65536] = { held } } }, w.idle_queries) -- the navigator's query kept, idle
    assert.is_false(closed(held))
    nav:close()
    World.close(w)
    old:close()
  end)
end)

describe("util.subtable (the pools' lists: navigator.lua's idle queries, planner.lua's idle planners)", function()
  it("puts an empty table at t[k] on first use and returns the same one after", function()
    local util = require "octonav.util"
    local key, t = {}, { have = { 1 } }
    local a = util.subtable(t, key)
    assert.same({}, a)
    assert.equal(a, t[key])
    a[1] = "x"
    assert.equal(a, util.subtable(t, key))
    assert.same({ 1 }, util.subtable(t, "have"))
    local inner = util.subtable(util.subtable(t, "by"), 64)
    assert.equal(inner, t.by[64])
    assert.same({ [key] = { "x" }, have = { 1 }, by = { [64] = {} } }, t)
  end)
end)
