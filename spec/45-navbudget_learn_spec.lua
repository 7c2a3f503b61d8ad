-- spec/45-navbudget_learn_spec.lua -- a budget with a frame time learns what an expansion and a plan's
-- start cost (lua/octonav/navbudget.lua): a search step near the end of the frame is cut to what the
-- time left holds, a plan whose start would not fit waits for the next frame (never two in a row). The
-- clock is the budget's `clock` option, driven here (no timing).
-- Run: busted --lua=lua5.4 spec/45-navbudget_learn_spec.lua
local navigator = require "octonav.navigator"

local hw = dofile("spec/support/handworld.lua")
local geometry = dofile("spec/support/geometry.lua")

local now = 0
local function clock() return now end

describe("a budget with a frame time", function()
  it("cuts a search step to the expansions the frame's time left holds", function()
    now = 0
    local b = navigator.budget { ms = 2, clock = clock }
    b:frame() -- deadline 0.002
    assert.equal(64, b:step_size(200)) -- nothing learnt: the step
    assert.equal(30, b:step_size(30))
    b:spent("expansions", 64, 64 * 1e-5) -- 10 us an expansion
    assert.equal(64, b:step_size(200)) -- 2 ms left hold 200
    now = 0.002 - 0.000505
    assert.equal(50, b:step_size(200))
    assert.equal(20, b:step_size(20))
    assert.equal(5, b:step_size(200, 1e-4)) -- a search's own cost (100 us) before the budget's
    now = 0.0019999
    assert.equal(1, b:step_size(200)) -- at least one
    -- half way to a higher cost, an eighth of the way to a lower one, a sample at most 4 times it
    b:spent("expansions", 10, 10 * 3e-5) -- 20 us
    now = 0.002 - 0.000505
    assert.equal(25, b:step_size(200))
    b:spent("expansions", 100, 100 * 1e-6) -- 20 - 19 / 8 = 17.625 us
    assert.equal(28, b:step_size(200))
    b:spent("expansions", 1, 1) -- a second: counted as 4 x 17.625 us, half way: 44.0625 us
    assert.equal(11, b:step_size(200))
    b:spent("expansions", 0, 1) -- (nothing expanded: nothing learnt)
    assert.equal(11, b:step_size(200))
  end)

  it("starts no plan that would not fit, but holds one back one frame at most", function()
    now = 0
    local b = navigator.budget { ms = 2, clock = clock, plans = 5 }
    local A, B = {}, {}
    b:frame()
    assert.equal(1, b:take("plans", A, 1)) -- nothing learnt yet
    b:spent("plans", 1, 0.0015)
    now = 0.0004 -- 0.4 + 1.5 < 2 ms
    assert.equal(1, b:take("plans", B, 1))
    now = 0.0006 -- 0.6 + 1.5 > 2 ms: held back
    assert.equal(0, b:take("plans", A, 1))
    assert.equal(1, b:take("expansions", A, 1)) -- (other work still fits)
    assert.equal(1, b:stats().cut)
    now = 1
    b:frame() -- the frame after one that held a plan back: none is held back
    now = 1.0019
    assert.equal(1, b:take("plans", A, 1))
    now = 2
    b:frame()
    now = 2.0006
    assert.equal(0, b:take("plans", A, 1))
    assert.equal(2, b:stats().cut)
  end)

  it("learns from its navigators' steps and starts", function()
    local b = navigator.budget { ms = 50 } -- (the real clock: the costs are measured, not checked)
    local w = hw.make_world { tiles = 3 }
    local nav = navigator.new(w, { budget = b, query_budget = 500 })
    nav:go { 40, 8, 8 }
    local pos, st = { 2, 8, 2 }, nil
    for _ = 1, 400 do
      b:frame()
      local wp
      st, wp = nav:update(pos)
      if st == "arrived" then break end
      if st == "moving" then pos = geometry.step_toward(pos, wp, 0.5) end
    end
    assert.equal("arrived", st)
    assert.is_true(b.exp_cost > 0 and b.plan_cost > 0)
    nav:close()
  end)
end)
