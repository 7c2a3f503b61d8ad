-- spec/96-navgroup_spec.lua -- many navigators updated in one call a frame: budget:update(navs,
-- positions, statuses, waypoints) (lua/octonav/navgroup.lua). The frame's time is a work-unit clock
-- (the budget's `clock` option) that the work itself advances: every navigator update entered costs
-- 5 us (its Lua: 5.5 us measured for a refused update on the seed's world), every search expansion
-- 1 us, every route plan started 40 us, every line of sight 1 us. A loop of nav:update over 400
-- navigators overruns a 1 ms frame by its Lua alone; the group
-- keeps every frame within ms + 0.5, and every navigator gets its first move within 60 frames and
-- arrives. Also: octonav.smoother steps on from a point of its path with no check left (a budget
-- refusing a navigator its checks stalled it at each waypoint), and budget:update's argument errors.
-- Run: busted --lua=lua5.4 spec/96-navgroup_spec.lua
local navigator = require "octonav.navigator"
local smoother = require "octonav.smoother"

local hw = dofile("spec/support/handworld.lua")
local geometry = dofile("spec/support/geometry.lua")
local dist, step_toward = geometry.dist, geometry.step_toward

local now = 0 -- the work-unit clock (seconds)
local function clock() return now end
local UPDATE, EXPANSION, PLAN, CHECK = 5e-6, 1e-6, 40e-6, 1e-6

local spy = dofile("spec/support/workspy.lua")
local tmethods = spy.tmethods

local function install()
  spy.install {
    step = function(did) now = now + did * EXPANSION end,
    visible = function() now = now + CHECK end,
    plan = function() now = now + PLAN end,
  }
end
local uninstall = spy.uninstall

-- n navigators sharing `budget` on fixed pairs of the 3-tile hand world, for `frames` frames (each
-- that arrives gets its next pair); `group`: budget:update, else a loop of nav:update. Returns the
-- frames' work-clock times (ms), the longest wait for a first move (frames), arrivals, failures.
local function crowd(w, n, budget, group, frames)
  local pts = { { 2, 8, 2 }, { 30, 6, 2 }, { 46, 8, 8 }, { 6, 6, 8 }, { 24, 6, 8 }, { 40, 8, 14 } }
  local navs, pos, agents = {}, {}, {}
  local next_pair = 0
  local function assign(i, frame)
    next_pair = next_pair + 1
    local a, b = pts[(next_pair - 1) % #pts + 1], pts[(next_pair * 2) % #pts + 1]
    if a == b then b = pts[(next_pair * 2 + 1) % #pts + 1] end
    local nav = navigator.new(w, { budget = budget })
    local upd = nav.update
    nav.update = function(self, p) -- (an instance field: the update's Lua, in work units)
      now = now + UPDATE
      return upd(self, p)
    end
    nav:go(b)
    navs[i], pos[i] = nav, { a[1], a[2], a[3] }
    agents[i] = { goal = b, since = frame, moved = false }
  end
  for i = 1, n do assign(i, 1) end
  local times, statuses, waypoints = {}, {}, {}
  local wait, arrived, failed = 0, 0, 0
  for f = 1, frames do
    local t0 = now
    if group then
      budget:update(navs, pos, statuses, waypoints)
    else
      budget:frame()
      for i = 1, n do statuses[i], waypoints[i] = navs[i]:update(pos[i]) end
    end
    times[f] = (now - t0) * 1e3
    for i = 1, n do
      local st, wp, a = statuses[i], waypoints[i], agents[i]
      if st == "moving" and not a.moved then
        a.moved = true
        wait = math.max(wait, f - a.since)
      end
      if st == "arrived" then
        assert(dist(pos[i], a.goal) <= navs[i].cfg.arrive_distance + 1e-12)
        arrived = arrived + 1
        navs[i]:close()
        assign(i, f + 1)
      elseif st == "failed" then
        failed = failed + 1
        navs[i]:close()
        assign(i, f + 1)
      elseif st == "moving" then
        pos[i] = step_toward(pos[i], wp, 0.5)
      end
    end
    now = now + 1 -- (the game's own work between frames)
  end
  -- the agents still on their way have moved (or waited no longer than the run)
  for i = 1, n do
    if not agents[i].moved then wait = math.max(wait, frames + 1 - agents[i].since) end
    navs[i]:close()
  end
  return times, wait, arrived, failed
end

local function worst(xs)
  local m = 0
  for _, x in ipairs(xs) do if x > m then m = x end end
  return m
end

describe("budget:update: 400 navigators in one call a frame", function()
  setup(install)
  teardown(uninstall)
  local w = hw.make_world { tiles = 3, obstacles = true }
  local opts = { ms = 1, clock = clock, plans = 16, results = 16, expansions = 100000, checks = 100000,
    portals = 100000 }

  it("a loop of nav:update overruns the frame by the navigators' Lua alone", function()
    local times = crowd(w, 400, navigator.budget(opts), false, 20)
    -- 400 updates of 5 us: 2 ms before any work
    assert.is_true(worst(times) > 1.5, "worst frame " .. worst(times) .. " ms")
    for _, t in ipairs(times) do assert.is_true(t >= 2 - 1e-9) end
  end)

  it("keeps every frame within ms + 0.5, moves everyone within 60 frames, and they arrive", function()
    local budget = navigator.budget(opts)
    local times, wait, arrived, failed = crowd(w, 400, budget, true, 300)
    assert.is_true(worst(times) <= 1.5, "worst frame " .. worst(times) .. " ms")
    assert.is_true(wait <= 60, "longest wait for a first move: " .. wait .. " frames")
    assert.equal(0, failed)
    assert.is_true(arrived >= 400, "arrivals in 300 frames: " .. arrived)
    local g = budget:stats().group
    assert.is_true(g.updated >= 1 and g.updated < 400, "updates in the last frame: " .. g.updated)
    assert.is_true(g.cursor >= 1 and g.cursor <= 400)
  end)

  it("without ms updates every navigator each frame, as a loop does", function()
    local budget = navigator.budget { plans = 600, results = 600 }
    local _, wait, arrived, failed = crowd(w, 60, budget, true, 200)
    assert.equal(60, budget:stats().group.updated)
    assert.equal(0, failed)
    assert.is_true(wait <= 4, "longest wait for a first move: " .. wait)
    assert.is_true(arrived >= 60)
  end)
end)

describe("budget:update", function()
  local w = hw.make_world { tiles = 2 }
  it("answers a moving navigator from its last update until its agent reaches the waypoint", function()
    local budget = navigator.budget()
    local nav = navigator.new(w, { budget = budget })
    nav:go { 24, 6, 8 }
    local pos = { { 2, 8, 2 } }
    local st, wp = budget:update({ nav }, pos)
    for _ = 1, 50 do
      if st[1] == "moving" then break end
      st, wp = budget:update({ nav }, pos)
    end
    assert.equal("moving", st[1])
    local w1 = wp[1]
    local frames = nav.frame
    -- without ms every navigator is updated: its update count grows each frame
    budget:update({ nav }, pos, st, wp)
    assert.equal(frames + 1, nav.frame)
    assert.equal(w1, wp[1])
    nav:close()
  end)

  it("names the function and the argument on misuse", function()
    local budget = navigator.budget()
    assert.has_error(function() budget:update(nil, {}) end, "budget:update: navs must be an array of navigators")
    assert.has_error(function() budget:update({}, 3) end, "budget:update: positions must be an array of points")
    assert.has_error(function() budget:update({}, {}, 1) end, "budget:update: statuses must be a table")
    assert.has_error(function() budget:update({}, {}, {}, "x") end, "budget:update: waypoints must be a table")
    assert.has_error(function() budget:update({ {} }, { { 0, 0, 0 } }) end,
      "budget:update: navs[1] must be an octonav.navigator")
  end)
end)

describe("budget:update and the masks", function()
  it("builds the frame's masks after the navigators' updates, budget:frame() before them", function()
    local w = hw.make_world { tiles = 2 }
    local order = {}
    local real_step = tmethods.los_step
    tmethods.los_step = function(t, o)
      order[#order + 1] = "masks"
      return real_step(t, o)
    end
    local ok, err = pcall(function()
      for _, group in ipairs { false, true } do
        local budget = navigator.budget { los = 100 }
        local nav = navigator.new(w, { budget = budget })
        local upd = nav.update
        nav.update = function(self, p)
          order[#order + 1] = "update"
          return upd(self, p)
        end
        nav:go { 24, 6, 8 }
        local pos = { { 2, 8, 2 } }
        for _ = 1, 3 do -- (the first update adopts the tree: from the second frame on it has masks to build)
          order = {}
          if group then
            budget:update({ nav }, pos)
          else
            budget:frame()
            nav:update(pos[1])
          end
        end
        assert.same(group and { "update", "masks" } or { "masks", "update" }, order)
        nav:close()
      end
    end)
    tmethods.los_step = real_step
    assert(ok, err)
  end)
end)

describe("octonav.smoother with no check left", function()
  it("steps on from a point of its path, and holds elsewhere", function()
    local tree = { visible = function() error("no check may be spent") end }
    local path = { { 0, 0, 0 }, { 4, 0, 0 }, { 4, 4, 0 }, { 8, 4, 0 } }
    local s = smoother.new(tree, path)
    local wp, used = s:update({ 2, 0, 0 }, 0) -- between points 1 and 2: heads for point 2
    assert.same({ 4, 0, 0 }, wp)
    assert.equal(0, used)
    wp = s:update({ 4, 0, 0 }, 0) -- on point 2: point 3 is visible from it (the path's promise)
    assert.same({ 4, 4, 0 }, wp)
    assert.equal(2, s:remaining())
    wp = s:update({ 4, 2, 0 }, 0)
    assert.same({ 4, 4, 0 }, wp)
    wp = s:update({ 4, 4, 0 }, 0)
    assert.same({ 8, 4, 0 }, wp)
    assert.equal(1, s:remaining())
    assert.equal(0, s:checks())
  end)
end)
