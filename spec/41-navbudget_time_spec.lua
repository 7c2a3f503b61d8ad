-- spec/41-navbudget_time_spec.lua -- a shared navigator budget with a frame time (option `ms`,
-- lua/octonav/navbudget.lua): once `ms` milliseconds of the frame have passed every ask gets nothing
-- until the next frame, and navigators step their searches TIME_STEP expansions at a time. The clock is
-- the budget's `clock` option, driven by the spec (no timing here): it advances by a fixed amount at each
-- q:step, so the work a frame does is exact.
-- Run: busted --lua=lua5.4 spec/41-navbudget_time_spec.lua
local navigator = require "octonav.navigator"
local navbudget = require "octonav.navbudget"

local hw = dofile("spec/support/handworld.lua")
local geometry = dofile("spec/support/geometry.lua")
local dist, step_toward = geometry.dist, geometry.step_toward

local now = 0
local function clock() return now end

describe("a budget with a frame time", function()
  it("grants nothing of any kind once its time is spent, until the next frame; checks its options", function()
    now = 10
    local b = navigator.budget { expansions = 100, ms = 2, clock = clock }
    local A, B = {}, {}
    b:frame()
    assert.equal(30, b:take("expansions", A, 30))
    now = 10.0019
    assert.equal(1, b:take("plans", A, 1))
    now = 10.002 -- the frame's 2 ms are spent
    assert.equal(0, b:take("expansions", B, 30))
    assert.equal(0, b:take("checks", A, 5))
    assert.equal(0, b:take("plans", B, 1))
    assert.equal(0, b:take("portals", B, 10))
    local st = b:stats()
    assert.same({ 2, 1, 1 }, { st.ms, st.cut, st.frames })
    assert.same({ expansions = 1, portals = 1, plans = 1, results = 0, checks = 1 }, st.waiting) -- B, B, B, A in line
    assert.equal(30, st.used.expansions)
    b:give("expansions", A, 0, false)
    b:give("expansions", B, 0, true)
    now = 10.003
    b:frame() -- a new deadline (10.005): B first in line gets its 30 reserved
    assert.equal(30, b:take("expansions", B, 30))
    assert.equal(70, b:take("expansions", A, 80))
    assert.equal(1, b:stats().cut)
    now = 10.006
    assert.equal(0, b:take("results", A, 1))
    assert.equal(2, b:stats().cut)
    -- without ms the clock is never read
    local c = navigator.budget { clock = function() error("read") end }
    c:frame()
    assert.equal(5, c:take("expansions", A, 5))
    assert.same({ nil, 0 }, { c:stats().ms, c:stats().cut })
    assert.is_nil(c.step)
    assert.equal(64, navbudget.TIME_STEP)
    assert.equal(64, b.step)
    for _, bad in ipairs { 0, -1, "3", math.huge, 0 / 0 } do
      assert.has_error(function() navigator.budget { ms = bad } end,
        "octonav.navigator.budget: option 'ms' must be a finite number > 0")
    end
    assert.has_error(function() navigator.budget { clock = 5 } end,
      "octonav.navigator.budget: option 'clock' must be \"wall\", \"thread\" or a function")
  end)
end)

-- q:step and planner starts seen from outside: each q:step advances the clock by TICK seconds.
local TICK = 0.001
local count = { steps = 0, expanded = 0, plans = 0 }
local most_step = 0
local spy = dofile("spec/support/workspy.lua")

local function install()
  spy.install {
    step = function(did, n)
      count.steps, count.expanded = count.steps + 1, count.expanded + did
      most_step = math.max(most_step, n)
      now = now + TICK
    end,
  }
end
local uninstall = spy.uninstall

-- n navigators sharing `budget` walk fixed pairs of the 3-tile hand world until all arrived: the most
-- q:step calls in one frame, the frames.
local function crowd(w, n, budget, max_frames)
  local pts = { { 2, 8, 2 }, { 30, 6, 2 }, { 46, 8, 8 }, { 6, 6, 8 }, { 24, 6, 8 }, { 40, 8, 14 } }
  local agents = {}
  for i = 1, n do
    local a, b = pts[(i - 1) % #pts + 1], pts[(i * 2) % #pts + 1]
    if a == b then b = pts[(i * 2 + 1) % #pts + 1] end
    local nav = navigator.new(w, { budget = budget, query_budget = 200 })
    nav:go(b)
    agents[i] = { nav = nav, pos = { a[1], a[2], a[3] }, goal = b }
  end
  local most, left, frames = 0, n, 0
  most_step = 0
  for frame = 1, max_frames do
    frames = frame
    count.steps = 0
    budget:frame()
    for _, a in ipairs(agents) do
      if not a.done then
        local status, wp = a.nav:update(a.pos)
        if status == "arrived" then
          assert(dist(a.pos, a.goal) <= a.nav.cfg.arrive_distance + 1e-12)
          a.done, left = true, left - 1
          a.nav:close()
        elseif status == "failed" then
          error("a navigator failed: " .. tostring(wp))
        elseif status == "moving" then
          a.pos = step_toward(a.pos, wp, 0.5)
        end
      end
    end
    most = math.max(most, count.steps)
    if left == 0 then break end
  end
  return most, frames, left
end

describe("navigators sharing a budget with a frame time", function()
  setup(install)
  teardown(uninstall)
  local w = hw.make_world { tiles = 3, obstacles = true }

  it("stop stepping their searches once the frame's time is spent, 64 expansions a step, and all arrive", function()
    now = 0
    local budget = navigator.budget { ms = 2.5, clock = clock, expansions = 5000, results = 100, plans = 10 }
    local most, frames, left = crowd(w, 60, budget, 6000)
    assert.equal(0, left, "all 60 arrive")
    -- each step costs 1 ms of the fake clock: the third step of a frame starts at 2 ms, the fourth
    -- would start at 3 ms, past the 2.5 ms
    assert.equal(3, most)
    assert.equal(64, most_step)
    assert.is_true(budget:stats().cut > 0)
    assert.equal(frames, budget:stats().frames)
    -- the same crowd with the same counts and no time: more steps in some frame, steps of 200
    local free = navigator.budget { expansions = 5000, results = 100, plans = 10 }
    local most2, _, left2 = crowd(w, 60, free, 6000)
    assert.equal(0, left2)
    assert.is_true(most2 > 3, "steps in one frame without ms: " .. most2)
    assert.equal(200, most_step)
  end)
end)
