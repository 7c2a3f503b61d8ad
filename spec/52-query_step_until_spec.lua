-- spec/52-query_step_until_spec.lua -- q:step_until(max_expansions, deadline) (csrc/lua/lua_query.c): a
-- search step that also stops once core.clock() reads the deadline (checked after each expansion, at
-- least one made), and says how many expansions it made; a navigator under a budget with a frame time
-- on the real clock steps its searches with it (lua/octonav/navigator.lua), one with a clock of its
-- own with q:step. Counts only: a deadline in the past (one expansion a call) or never reached.
-- Run: busted --lua=lua5.4 spec/52-query_step_until_spec.lua
local octonav = require "octonav"
local navigator = require "octonav.navigator"

local hw = dofile("spec/support/handworld.lua")
local geometry = dofile("spec/support/geometry.lua")

local A, B = { 2.5, 8.5, 8.5 }, { 56.5, 8.5, 8.5 } -- (through the openings of three walls)

-- the query methods, to count which step a navigator calls
local qmethods
do
  local probe = octonav.query.new(octonav.tree.new { depth = 1 }, { max_nodes = 16 })
  qmethods = getmetatable(probe).__index
  probe:close()
end

describe("q:step_until", function()
  it("stops at the deadline after one expansion, runs to max_expansions or the end before it", function()
    local w = hw.make_world { tiles = 4 }
    local q = octonav.query.new(w.tree)
    local ref, rinfo = q:find(A, B)
    assert.is_not_nil(ref)
    local E = rinfo.expansions
    assert.is_true(E > 10, "expansions " .. E)
    assert.equal("running", q:start(A, B))
    assert.same({ "running", 3 }, { q:step_until(3, math.huge) })
    assert.same({ "running", 1 }, { q:step_until(1000, 0) }) -- the deadline passed: one expansion
    assert.same({ "running", 1 }, { q:step_until(1000, octonav.core.clock() - 1) })
    local st, did = q:step_until(1073741824, octonav.core.clock() + 3600)
    assert.same({ "found", E - 5 }, { st, did })
    local path, info = q:result()
    assert.equal(E, info.expansions)
    assert.same(ref, path) -- the same search as an unsliced one
    -- one expansion a call to the end: E calls
    q:start(A, B)
    local calls, total = 0, 0
    repeat
      st, did = q:step_until(50, 0)
      calls, total = calls + 1, total + did
      assert.equal(1, did)
    until st ~= "running"
    assert.same({ "found", E, E }, { st, calls, total })
  end)

  it("raises on misuse", function()
    local w = hw.make_world { tiles = 2 }
    local q = octonav.query.new(w.tree)
    assert.has_error(function() q:step_until(5, 0) end, "query:step_until: no search started (call start first)")
    q:start(A, { 24.5, 8.5, 8.5 })
    assert.has_error(function() q:step_until(0, 0) end)
    assert.has_error(function() q:step_until(5, 0 / 0) end)
    assert.has_error(function() q:step_until(5, "soon") end)
    assert.has_error(function() q:step_until(5) end)
    assert.matches("deadline must be a number", select(2, pcall(q.step_until, q, 5, 0 / 0)))
    assert.matches("max_expansions must be >= 1", select(2, pcall(q.step_until, q, 0, 0)))
  end)
end)

describe("a navigator under a budget with a frame time", function()
  local real_step, real_until = qmethods.step, qmethods.step_until
  local calls
  before_each(function()
    calls = { step = 0, step_until = 0, did = 0 }
    qmethods.step = function(q, n)
      calls.step = calls.step + 1
      return real_step(q, n)
    end
    qmethods.step_until = function(q, n, deadline)
      calls.step_until = calls.step_until + 1
      local st, did, tile = real_until(q, n, deadline)
      calls.did = calls.did + did
      return st, did, tile
    end
  end)
  after_each(function() qmethods.step, qmethods.step_until = real_step, real_until end)

  local function walk(budget, query_budget)
    local w = hw.make_world { tiles = 4 }
    local nav = navigator.new(w, { budget = budget, query_budget = query_budget })
    nav:go(B)
    local pos, st = { A[1], A[2], A[3] }, nil
    for _ = 1, 400 do
      budget:frame()
      local wp
      st, wp = nav:update(pos)
      if st == "arrived" then break end
      if st == "moving" then pos = geometry.step_toward(pos, wp, 0.5) end
    end
    assert.equal("arrived", st)
    local stats = nav:stats()
    nav:close()
    return stats
  end

  it("on the real clock steps with q:step_until, counting exactly what it expanded", function()
    -- (a frame of an hour: the deadline is never reached, each update spends its query_budget)
    local stats = walk(navigator.budget { ms = 3.6e6 }, 7)
    assert.equal(0, calls.step)
    assert.is_true(calls.step_until >= 2)
    assert.equal(calls.did, stats.expansions)
    local q = octonav.query.new(hw.make_world({ tiles = 4 }).tree)
    local _, info = q:find(A, B)
    assert.equal(info.expansions, stats.expansions) -- one leg, searched once
    assert.equal(math.ceil(info.expansions / 7), calls.step_until) -- 7 a call, the last the rest
  end)

  it("with a clock of its own steps with q:step (cut by the learnt costs)", function()
    local now = 0
    walk(navigator.budget { ms = 3.6e6, clock = function() return now end }, 7)
    assert.equal(0, calls.step_until)
    assert.is_true(calls.step >= 2)
  end)
end)
