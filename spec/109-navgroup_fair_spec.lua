-- spec/109-navgroup_fair_spec.lua -- budget:update is fair under load (issue 31, goal 1): navigators
-- that reached their waypoint are updated while the frame's time lasts, round robin, not all of them
-- whatever the time; and they cannot take every frame from the rest. Before, every navigator at its
-- waypoint was updated each frame whatever the time left: 30 of them at 0.1 ms each made every frame
-- 3 ms of a 1 ms budget, and a planning navigator beside them was never updated.
-- The clock is a work-unit clock (the budget's `clock` option) that the navigators' updates advance;
-- the navigators are stand-ins with what budget:update reads (epoch, state, cfg.arrive_distance, update):
-- deterministic, no timing.
-- Run: busted --lua=lua5.4 spec/109-navgroup_fair_spec.lua
local navigator = require "octonav.navigator"

describe("budget:update under load", function()
  local now = 0
  local function clock() return now end
  local COST = 1e-4 -- an update: 0.1 ms of the work clock

  -- a navigator whose every update answers "moving" to the point it stands on: it is at its waypoint
  -- again each frame (an agent stepping through a dense path)
  local function walker()
    local nav = { epoch = 1, state = "moving", cfg = { arrive_distance = 0.5 }, served = {} }
    function nav.update(self, p)
      now = now + COST
      self.served[#self.served + 1] = self.frame_no
      return "moving", { p[1], p[2], p[3] }
    end
    return nav
  end
  -- a navigator whose route is being searched (not starting a plan): it needs updates to go on
  local function planner_nav()
    local nav = { epoch = 1, state = "planning", cells = {}, cfg = { arrive_distance = 0.5 }, served = {} }
    function nav.update(self)
      now = now + COST
      self.served[#self.served + 1] = self.frame_no
      return "planning", nil
    end
    return nav
  end

  local function run(frames)
    now = 0
    local budget = navigator.budget { ms = 1, clock = clock, plans = 0 }
    local navs, pos = {}, {}
    for i = 1, 30 do
      navs[i], pos[i] = walker(), { i, 0, 0 }
    end
    navs[31], pos[31] = planner_nav(), { 0, 5, 0 }
    local st, wp = {}, {}
    local times = {}
    for f = 1, frames do
      for i = 1, #navs do navs[i].frame_no = f end
      local t0 = now
      budget:update(navs, pos, st, wp)
      times[f] = (now - t0) * 1e3
    end
    return navs, times
  end

  it("keeps each frame within ms + 0.5, navigators at their waypoint served round robin", function()
    local navs, times = run(40)
    for f = 1, 40 do
      assert.is_true(times[f] <= 1.5, ("frame %d: %.2f ms of a 1 ms budget"):format(f, times[f]))
    end
    -- every walker served, none waiting more than 8 frames between updates
    for i = 1, 30 do
      local s = navs[i].served
      assert.is_true(#s >= 4, ("navs[%d] served %d times in 40 frames"):format(i, #s))
      local last = 0
      for _, f in ipairs(s) do
        assert.is_true(f - last <= 8, ("navs[%d] waited %d frames"):format(i, f - last))
        last = f
      end
      assert.is_true(40 - last <= 8, ("navs[%d] last served in frame %d"):format(i, last))
    end
  end)

  it("does not starve a navigator that is not at a waypoint", function()
    local navs = run(40)
    local s = navs[31].served
    assert.is_true(#s >= 3, ("the planning navigator served %d times in 40 frames"):format(#s))
    assert.is_true(s[1] <= 10, "first served in frame " .. tostring(s[1]))
  end)
end)
