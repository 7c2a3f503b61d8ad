-- spec/103-nav_lead_spec.lua -- a navigator moves before its first path (option lead_distance,
-- lua/octonav/navigator.lua, "Moving before the path"): under a budget that starts no plan (or one a
-- frame for 40 navigators) every agent gets its first move at its first update, straight toward its
-- goal (or the route's first portal), along a segment a line of sight showed free; the path that
-- comes later starts where the agent is, so every step it walks is free and it arrives. Without the
-- option the navigator holds as before.
-- Run: busted --lua=lua5.4 spec/103-nav_lead_spec.lua
local navigator = require "octonav.navigator"

local hw = dofile("spec/support/handworld.lua")
local geometry = dofile("spec/support/geometry.lua")
local dist, step_toward = geometry.dist, geometry.step_toward

-- the point `len` from a toward b (as the navigator computes it)
local function toward(a, b, len)
  local dx, dy, dz = b[1] - a[1], b[2] - a[2], b[3] - a[3]
  local d = math.sqrt(dx * dx + dy * dy + dz * dz)
  local f = math.min(len, d) / d
  return { a[1] + dx * f, a[2] + dy * f, a[3] + dz * f }
end

-- Walks nav from `from` at `speed` a frame for at most `frames` updates (update budget `exp`);
-- returns the statuses' sequence of the first updates, the frames to arrival (nil), the walked length
-- and the number of steps that crossed blocked space (a line of sight on the world tree failed).
local function walk(w, nav, from, speed, frames, exp)
  local pos = { from[1], from[2], from[3] }
  local seen, len, bad = {}, 0, 0
  for f = 1, frames do
    local st, wp = nav:update(pos, exp)
    if f <= 8 then seen[f] = { st, wp and { wp[1], wp[2], wp[3] } } end
    if st == "arrived" then return seen, f, len, bad end
    assert(st == "moving" or st == "planning", tostring(st) .. " " .. tostring(wp))
    if st == "moving" then
      local nxt = step_toward(pos, wp, speed)
      if not w.tree:visible(pos, nxt) then bad = bad + 1 end
      len = len + dist(pos, nxt)
      pos = nxt
    end
  end
  return seen, nil, len, bad
end

describe("navigator lead_distance", function()
  local w = hw.make_world { tiles = 3, obstacles = true }
  local A, B = { 2, 8, 2 }, { 46, 8, 8 }

  it("moves toward the goal at its first update when no plan can start, and holds at the lead point", function()
    local budget = navigator.budget { plans = 0 }
    local nav = navigator.new(w, { budget = budget, lead_distance = 4 })
    nav:go(B)
    local seen = walk(w, nav, A, 0.5, 12)
    local L = toward(A, B, 4)
    assert.are.same({ "moving", L }, seen[1])
    assert.are.equal("moving", seen[8][1])
    local st, wp = nav:update(L) -- there: holds (its plan cannot start), no second lead move
    assert.are.same({ "planning", L }, { st, { wp[1], wp[2], wp[3] } })
    assert.are.same({ "planning", L }, { nav:update(L) })
    nav:close()
    -- without the option: holds where it is
    local plain = navigator.new(w, { budget = navigator.budget { plans = 0 } })
    plain:go(B)
    assert.are.same({ "planning" }, { plain:update(A) })
    plain:close()
  end)

  it("heads for the route's first portal while the first search runs, then walks the path from there", function()
    local nav = navigator.new(w, { lead_distance = 3 })
    nav:go(B)
    -- one expansion an update: the route comes at the first update, the first path many updates later
    local seen, arrived_at, len, bad = walk(w, nav, A, 0.5, 2000, 1)
    local portal = nav:route()[1].exit
    assert.are.same({ "moving", toward(A, portal, 3) }, seen[1])
    assert.is_truthy(arrived_at)
    assert.are.equal(0, bad)
    -- the walk: at most the lead segment twice longer than the same navigator's without the option
    local plain = navigator.new(w, {})
    plain:go(B)
    local pseen, parrived, plen, pbad = walk(w, plain, A, 0.5, 2000, 1)
    assert.are.same({ "planning" }, pseen[1])
    assert.is_truthy(parrived)
    assert.are.equal(0, pbad)
    assert.is_true(len <= plen + 2 * 3 + 1e-9, ("%.6f vs %.6f"):format(len, plen))
    assert.is_true(arrived_at < parrived, ("%d vs %d frames"):format(arrived_at, parrived))
    nav:close()
    plain:close()
  end)

  it("lead_distance 0 walks exactly as no option (the same waypoints, the same length)", function()
    local a = navigator.new(w, { lead_distance = 0 })
    local b = navigator.new(w, {})
    a:go(B)
    b:go(B)
    local _, fa, la, ba = walk(w, a, A, 0.5, 2000, 1)
    local _, fb, lb, bb = walk(w, b, A, 0.5, 2000, 1)
    assert.are.same({ fb, lb, bb }, { fa, la, ba })
    a:close()
    b:close()
  end)

  it("budget:update gives 40 navigators their first move within 2 updates with one plan start a frame", function()
    local pts = { { 2, 8, 2 }, { 30, 6, 2 }, { 46, 8, 8 }, { 24, 6, 14 }, { 40, 8, 14 }, { 14, 12, 2 } }
    local function run(lead)
      local budget = navigator.budget { plans = 1 }
      local navs, pos, goal, since, first = {}, {}, {}, {}, {}
      local n = 40
      for i = 1, n do
        local a, b = pts[(i - 1) % #pts + 1], pts[(i + 1) % #pts + 1]
        navs[i] = navigator.new(w, { budget = budget, lead_distance = lead })
        navs[i]:go(b)
        pos[i], goal[i], since[i] = { a[1], a[2], a[3] }, b, 1
      end
      local statuses, waypoints = {}, {}
      local wait, arrived, bad = 0, 0, 0
      for f = 1, 600 do
        budget:update(navs, pos, statuses, waypoints)
        for i = 1, n do
          local st, wp = statuses[i], waypoints[i]
          if st == "moving" then
            if not first[i] then
              first[i] = true
              wait = math.max(wait, f - since[i])
            end
            local nxt = step_toward(pos[i], wp, 0.5)
            if not w.tree:visible(pos[i], nxt) then bad = bad + 1 end
            pos[i] = nxt
          elseif st == "arrived" then
            arrived = arrived + 1
            navs[i]:go(goal[i][1] == pts[1][1] and pts[3] or pts[1])
            goal[i] = navs[i].goal
            since[i], first[i] = f + 1, nil
          else
            assert(st == "planning", tostring(st) .. " " .. tostring(wp))
          end
        end
      end
      for i = 1, n do navs[i]:close() end
      return wait, arrived, bad
    end
    local wait, arrived, bad = run(4)
    local pwait, parrived, pbad = run(nil)
    -- moving at the first update after go, or the next (from (24, 6, 14) toward (14, 12, 2) the lead
    -- point 4 away is in the den's hole: the next update tries a quarter of it)
    assert.are.equal(1, wait)
    assert.is_true(pwait >= 39, "without: longest first-move wait " .. pwait)
    assert.are.same({ 0, 0 }, { bad, pbad })
    assert.is_true(arrived >= 40 and parrived >= 40, arrived .. " and " .. parrived .. " arrivals")
  end)

  it("budget:update serves navigators that may take a lead move first: 400 navigators, 5 updates a frame", function()
    -- the frame's time is a work-unit clock: each update 100 us, ms = 0.5: about 5 updates a frame, so
    -- the round robin reaches a navigator once in about 80 frames. After 200 frames (every navigator
    -- has had its turns), 4 navigators get a new goal every 10 frames: each moves within 8 frames (6
    -- measured: a lead move may take 3 tries, and running plans go first); served in the round robin's
    -- order instead, the longest wait was 123 frames.
    local now = 0
    local budget = navigator.budget { ms = 0.5, clock = function() return now end, plans = 1 }
    local pts = { { 2, 8, 2 }, { 30, 6, 2 }, { 46, 8, 8 }, { 24, 6, 14 }, { 40, 8, 14 }, { 14, 12, 2 } }
    local n = 400
    local navs, pos, since, first = {}, {}, {}, {}
    for i = 1, n do
      local a, b = pts[(i - 1) % #pts + 1], pts[(i + 1) % #pts + 1]
      local nav = navigator.new(w, { budget = budget, lead_distance = 4 })
      local upd = nav.update
      nav.update = function(self, p) -- (an instance field: the update's cost, in work units)
        now = now + 100e-6
        return upd(self, p)
      end
      nav:go(b)
      navs[i], pos[i] = nav, { a[1], a[2], a[3] }
    end
    local statuses, waypoints = {}, {}
    local wait, regoes = 0, 0
    for f = 1, 400 do
      if f >= 200 and f % 10 == 0 and f < 390 then
        for k = 1, 4 do
          local i = (math.floor(f / 10) * 4 + k) % n + 1
          navs[i]:go(pts[(i + f) % #pts + 1])
          since[i], first[i], regoes = f, nil, regoes + 1
        end
      end
      budget:update(navs, pos, statuses, waypoints)
      for i = 1, n do
        local st, wp = statuses[i], waypoints[i]
        if st == "moving" then
          if since[i] and not first[i] then
            first[i] = true
            wait = math.max(wait, f - since[i] + 1)
          end
          -- (only lead moves are walked: an agent reaching a path's waypoint would be updated at once,
          -- before the round robin and the lead moves, and that is not what this measures)
          if navs[i].cells == nil then pos[i] = step_toward(pos[i], wp, 0.5) end
        end
      end
      now = now + 1
    end
    for i = 1, n do
      if since[i] and not first[i] then wait = math.max(wait, 401 - since[i]) end
      navs[i]:close()
    end
    assert.are.equal(76, regoes)
    assert.is_true(wait <= 8, "longest first-move wait after a new goal: " .. wait .. " frames")
  end)
end)
