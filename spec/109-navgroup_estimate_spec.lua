-- spec/109-navgroup_estimate_spec.lua -- budget:update starts no update it cannot finish (issue 31,
-- goal 1): it learns what each kind of update costs (following a path, a plan's start, a search's
-- step, its result, a route's steps) from the updates it times, and an update whose kind's cost does
-- not fit in the frame's time left waits; the next frame serves it first (plans and searches, then the
-- turns, before the navigators at their waypoints), so it is not starved. Before, an update was
-- started whenever the deadline had not passed: a plan's start of 1.6 ms begun 1 ms into a 2 ms frame
-- ended it at 2.6 ms and more, every frame.
-- The clock is a work-unit clock (the budget's `clock` option) that the stand-in navigators' updates
-- advance: deterministic, no timing.
-- Run: busted --lua=lua5.4 spec/109-navgroup_estimate_spec.lua
local navigator = require "octonav.navigator"

describe("budget:update's learnt update costs", function()
  local now = 0
  local function clock() return now end

  -- at its waypoint again after every update (0.05 ms each)
  local function walker()
    local nav = { epoch = 1, state = "moving", cfg = { arrive_distance = 0.5 }, served = 0 }
    function nav.update(self, p)
      now = now + 0.05e-3
      self.served = self.served + 1
      return "moving", { p[1], p[2], p[3] }
    end
    return nav
  end
  -- a navigator whose every update is a plan's start (1.6 ms of the clock)
  local function starter()
    local nav = { epoch = 1, state = "planning", cfg = { arrive_distance = 0.5 }, served = 0, frames = {} }
    function nav.update(self)
      now = now + 1.6e-3
      self.served = self.served + 1
      self.frames[#self.frames + 1] = self.frame_no
      return "planning", nil
    end
    return nav
  end

  it("keeps every frame after the first two within ms + 0.5, and still serves the long update", function()
    now = 0
    local budget = navigator.budget { ms = 2, clock = clock, plans = 4 }
    local navs, pos = {}, {}
    for i = 1, 20 do
      navs[i], pos[i] = walker(), { i, 0, 0 }
    end
    navs[21], pos[21] = starter(), { 0, 5, 0 }
    local st, wp = {}, {}
    local worst, worst_f = 0, 0
    for f = 1, 40 do
      navs[21].frame_no = f
      local t0 = now
      budget:update(navs, pos, st, wp)
      local ms = (now - t0) * 1e3
      if f > 2 and ms > worst then worst, worst_f = ms, f end
    end
    assert.is_true(worst <= 2.5, ("frame %d: %.2f ms of a 2 ms budget"):format(worst_f, worst))
    local fr = navs[21].frames
    assert.is_true(#fr >= 15, "the plan start served " .. #fr .. " times in 40 frames")
    for j = 2, #fr do
      assert.is_true(fr[j] - fr[j - 1] <= 3, ("the plan start waited %d frames"):format(fr[j] - fr[j - 1]))
    end
    for i = 1, 20 do
      assert.is_true(navs[i].served >= 15, ("navs[%d] served %d times"):format(i, navs[i].served))
    end
  end)
end)
