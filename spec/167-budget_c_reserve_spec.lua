-- spec/167-budget_c_reserve_spec.lua -- the end of a frame at 1,000 navigators (issue 31 goal 1, session 30):
--   1. budget:c_deadline(), the deadline of a search's C steps (q:step_until, q:result_step), is the frame's
--      deadline less budget.reserve: what the Lua after such a step took until its navigator's update ended,
--      learnt by navgroup.after_c as a unit's cost is (half way to a higher sample, an eighth of the way to a
--      lower one, a sample at most 4 times the reserve) and capped at navgroup.RESERVE_SHARE of `ms`;
--      budget:update learns it from each update that stepped a search in C (stats().reserve).
--   2. A navigator starts no search (q:start: C work that is not sliced) once the frame's time is spent:
--      the start waits for its next update. On a work clock (each reading 0.2 ms later, ms 2) six
--      navigators flying 400 frames started 38 of 193 searches past the deadline before; none now.
-- Run: busted --lua=lua5.4 spec/167-budget_c_reserve_spec.lua
local octonav = require "octonav"
local navigator = require "octonav.navigator"
local navbudget = require "octonav.navbudget"
local navgroup = require "octonav.navgroup"

local hw = dofile("spec/support/handworld.lua")

local function close(a, b) return math.abs(a - b) < 1e-12 end

describe("budget: the C steps' reserve", function()
  it("c_deadline is the deadline less the reserve, learnt by navgroup.after_c and capped at RESERVE_SHARE of ms", function()
    assert.equal(0.125, navgroup.RESERVE_SHARE)
    local t = 10
    local b = navigator.budget { ms = 20, clock = function() return t end }
    assert.equal(0, b.reserve)
    assert.is_nil(b:c_deadline())
    b:frame()
    assert.equal(10.02, b.deadline)
    assert.equal(b.deadline, b:c_deadline())
    navgroup.after_c(b, 0.001) -- the first sample: the reserve
    assert.is_true(close(0.001, b.reserve))
    assert.is_true(close(b.deadline - 0.001, b:c_deadline()))
    navgroup.after_c(b, 0.002) -- higher: half way
    assert.is_true(close(0.0015, b.reserve))
    navgroup.after_c(b, 0) -- lower: an eighth of the way
    assert.is_true(close(0.0013125, b.reserve))
    navgroup.after_c(b, -1) -- (a negative reading counts as 0)
    assert.is_true(close(0.0013125 * 7 / 8, b.reserve))
    navgroup.after_c(b, 1) -- a sample of 4 times the reserve at most, the whole capped at 20 ms * 0.125
    assert.is_true(close(0.0025, b.reserve))
    assert.is_true(close(b.deadline - 0.0025, b:c_deadline()))
    assert.is_true(close(0.0025, b:stats().reserve))
    -- "thread": the wall clock now plus the thread's time left, the reserve off it
    local bt = navigator.budget { ms = 50, clock = "thread" }
    bt:frame()
    navgroup.after_c(bt, 0.004)
    local w0 = octonav.core.clock()
    local d = bt:c_deadline()
    local left = bt.deadline - octonav.core.thread_clock()
    assert.is_true(d <= octonav.core.clock() + left - 0.004 + 0.002 and d >= w0 + left - 0.004 - 0.002,
      ("c_deadline %.6f, wall %.6f, left %.6f"):format(d, w0, left))
  end)

  it("budget:update learns it from the updates that stepped a search in C (at most RESERVE_SHARE of ms)", function()
    local w = hw.make_world { tiles = 4, obstacles = true }
    local budget = navigator.budget { ms = 50 }
    local navs, pos = {}, {}
    local goals = { { 60, 8, 8 }, { 40, 8, 12 }, { 50, 12, 3 }, { 30, 8, 8 } }
    for i = 1, 4 do
      navs[i] = navigator.new(w, { budget = budget })
      pos[i] = { 2 + i, 8, 8 }
      navs[i]:go(goals[i])
    end
    local steps = 0
    local qm = getmetatable(octonav.query.new(w.tree, { max_nodes = 16 })).__index
    local real = qm.step_until
    qm.step_until = function(...)
      steps = steps + 1
      return real(...)
    end
    local ok, err = pcall(function()
      local statuses, waypoints
      for _ = 1, 40 do
        statuses, waypoints = budget:update(navs, pos, statuses, waypoints)
      end
    end)
    qm.step_until = real
    assert(ok, err)
    assert.is_true(steps >= 4, "q:step_until calls " .. steps)
    local r = budget:stats().reserve
    assert.is_true(r > 0 and r <= 0.050 * navgroup.RESERVE_SHARE, "reserve " .. tostring(r))
    for i = 1, 4 do navs[i]:close() end
  end)
end)

describe("navigator: no search started past the frame's deadline", function()
  it("on a work clock, no q:start once the clock reads the deadline; the flights go on", function()
    local w = hw.make_world { tiles = 4, obstacles = true }
    local qm = getmetatable(octonav.query.new(w.tree, { max_nodes = 16 })).__index
    local t = 0
    local function clock()
      t = t + 0.0002
      return t
    end
    local budget = navigator.budget { ms = 2, clock = clock }
    local real = qm.start
    local late, calls = 0, 0
    qm.start = function(self, ...)
      calls = calls + 1
      if budget.deadline and t >= budget.deadline then late = late + 1 end
      return real(self, ...)
    end
    local goals = { { 60, 8, 8 }, { 2, 8, 2 }, { 40, 8, 12 }, { 20, 3, 3 }, { 50, 12, 3 }, { 30, 8, 8 } }
    local navs, pos = {}, {}
    local arrived, deferred = 0, 0
    local ok, err = pcall(function()
      for i = 1, 6 do
        navs[i] = navigator.new(w, { budget = budget })
        pos[i] = { 2 + i, 8, 8 }
        navs[i]:go(goals[i])
      end
      for f = 1, 400 do
        budget:frame()
        for i = 1, 6 do
          local st, wp = navs[i]:update(pos[i])
          if st == "moving" and wp then pos[i] = { wp[1], wp[2], wp[3] } end
          if st == "arrived" then arrived = arrived + 1 end
          if st == "arrived" or st == "failed" then navs[i]:go(goals[(i + f) % 6 + 1]) end
        end
      end
      for i = 1, 6 do deferred = deferred + (navs[i].starts_deferred or 0) end
    end)
    qm.start = real
    assert(ok, err)
    assert.equal(0, late)
    assert.equal(156, calls)
    assert.equal(152, arrived)
    assert.is_true(deferred > 0, "starts deferred " .. deferred)
    for i = 1, 6 do navs[i]:close() end
  end)
end)

describe("budget: the thread's clock read every THREAD_RESYNC of the wall clock, estimated between", function()
  it("with clock \"thread\" the budget reads budget.now (navbudget.thread_now), not core.thread_clock each time", function()
    local b = navigator.budget { ms = 4, clock = "thread" }
    assert.equal(octonav.core.thread_clock, b.clock)
    assert.are_not.equal(b.clock, b.now)
    assert.equal(5e-4, navbudget.THREAD_RESYNC)
    local wb = navigator.budget { ms = 4 }
    assert.equal(wb.clock, wb.now)
  end)

  it("estimates the thread's time as its last reading plus the wall time since; reads it again past the window or the deadline", function()
    local wall, thread, reads = 100, 5, 0
    local function wclock() return wall end
    local function tclock()
      reads = reads + 1
      return thread
    end
    local self = { deadline = nil }
    local now = navbudget.thread_now(self, wclock, tclock)
    assert.equal(5, now()) -- the first: read
    assert.equal(1, reads)
    wall, thread = wall + 1e-4, thread + 0.5e-4 -- (the thread ran half of that wall time)
    assert.is_true(close(5 + 1e-4, now())) -- estimated: never less than the thread's time
    assert.equal(1, reads)
    wall, thread = wall + 3e-4, thread + 3e-4
    assert.is_true(close(5 + 4e-4, now()))
    assert.equal(1, reads)
    wall, thread = wall + 1e-4, thread + 1e-4 -- 5e-4 since the read: read again
    assert.is_true(close(thread, now()))
    assert.equal(2, reads)
    -- an estimate at or past the deadline is read again (the frame ends by the thread's own time)
    self.deadline = thread + 2e-4
    wall = wall + 3e-4 -- (waited for a core: the thread's time did not move)
    assert.is_true(close(thread, now()))
    assert.equal(3, reads)
    wall, thread = wall + 1e-4, thread + 1e-4
    assert.is_true(close(thread, now())) -- (below the deadline: estimated from the last read)
    assert.equal(3, reads)
    -- the wall clock going back (another clock's scale) reads again
    wall = wall - 1
    assert.is_true(close(thread, now()))
    assert.equal(4, reads)
  end)
end)
