-- spec/37-navbudget_spec.lua -- octonav.navigator.budget: one frame budget shared by many navigators
-- (lua/octonav/navbudget.lua). The budget's own accounting on exact sequences of asks (the line, the
-- reservations, forget); then 100 navigators on the hand world of spec/10 and spec/11 sharing one
-- small budget, the work of every frame counted from outside the navigator (q:step's expansions,
-- route plans started, searches found, line-of-sight checks), and all of them arriving.
-- Run: busted --lua=lua5.4 spec/37-navbudget_spec.lua
local navigator = require "octonav.navigator"

local hw = dofile("spec/support/handworld.lua")
local geometry = dofile("spec/support/geometry.lua")
local dist, step_toward = geometry.dist, geometry.step_toward

describe("octonav.navigator.budget", function()
  it("has documented defaults and rejects unknown or bad options", function()
    local b = navigator.budget()
    assert.same({ expansions = 1000, portals = 1024, plans = 2, results = 3, checks = 200 }, b:stats().per_frame)
    assert.same({ expansions = 7, portals = 1024, plans = 0, results = 3, checks = 200 },
      navigator.budget { expansions = 7, plans = 0 }:stats().per_frame)
    assert.has_error(function() navigator.budget { expansion = 5 } end,
      "octonav.navigator.budget: unknown option 'expansion'")
    assert.has_error(function() navigator.budget { checks = -1 } end,
      "octonav.navigator.budget: option 'checks' must be an integer >= 0")
    assert.has_error(function() navigator.budget { plans = 1.5 } end,
      "octonav.navigator.budget: option 'plans' must be an integer >= 0")
    assert.has_error(function() navigator.budget(3) end, "octonav.navigator.budget: opts must be a table")
    assert.has_error(function() navigator.new(hw.make_world(), { budget = {} }) end,
      "octonav.navigator.new: option 'budget' must be an octonav.navigator.budget")
    assert.equal("octonav.navigator.budget: frame 0, 0 of 1000 expansions used, 0 waiting", tostring(b))
  end)

  it("hands out first come first served, then reserves for the line in its order", function()
    local b = navigator.budget { expansions = 10 }
    local A, B, C, D = {}, {}, {}, {}
    b:frame()
    assert.equal(8, b:take("expansions", A, 8))
    assert.equal(2, b:take("expansions", B, 8)) -- short: B joins the line
    assert.equal(0, b:take("expansions", C, 8)) -- refused: C joins the line behind B
    b:give("expansions", A, 0, true)             -- A spent all and wants more: in line behind C
    b:give("expansions", B, 0, true)
    b:give("expansions", C, 0, true)
    assert.equal(3, b:stats().waiting.expansions)
    assert.equal(10, b:stats().used.expansions)
    b:frame() -- B gets 8 reserved, C the 2 left, A nothing
    assert.equal(0, b:take("expansions", A, 8)) -- A asks first in this frame, but the line decides
    assert.equal(2, b:take("expansions", C, 8))
    assert.equal(8, b:take("expansions", B, 8))
    b:give("expansions", B, 3, false) -- B's search ended with 3 over: it leaves the line, the 3 are free
    b:give("expansions", C, 0, true)  -- C keeps its place (first now), A behind it
    b:give("expansions", A, 0, true)
    assert.equal(2, b:stats().waiting.expansions)
    assert.equal(7, b:stats().used.expansions)
    assert.equal(3, b:take("expansions", D, 5)) -- a newcomer gets what B left, and joins the line
    b:give("expansions", D, 0, true)
    b:frame()
    assert.equal(10, b:stats().max.expansions)
    assert.equal(8, b:take("expansions", C, 8)) -- C: its 8, A: the 2 after it, D: none
    assert.equal(0, b:take("expansions", D, 5))
    assert.equal(2, b:take("expansions", A, 8))
    b:give("expansions", C, 8, false)            -- C needed none of it: back to the frame, C leaves
    assert.equal(8, b:take("expansions", B, 8))
    assert.equal(2, b:stats().waiting.expansions) -- A, D
  end)

  it("drops from the line a navigator that did not ask in the last frame, and one forgotten", function()
    local b = navigator.budget { checks = 4 }
    local A, B, C = {}, {}, {}
    b:frame()
    assert.equal(4, b:take("checks", A, 4))
    assert.equal(0, b:take("checks", B, 4))
    assert.equal(0, b:take("checks", C, 4))
    b:frame() -- B holds the 4 reserved; C is behind
    assert.equal(0, b:take("checks", C, 4))
    b:frame() -- B did not ask in the last frame: its place goes; C is served
    assert.equal(1, b:stats().waiting.checks)
    assert.equal(4, b:take("checks", C, 4))
    b:give("checks", C, 0, true)
    b:frame()
    b:forget(C) -- its reservation comes back at once
    assert.equal(0, b:stats().waiting.checks)
    assert.equal(4, b:take("checks", A, 4))
  end)
end)

---------------------------------------------------------------------------------------------------
-- Many navigators, one budget, the work counted from outside.

local count = { steps = 0, found = 0, plans = 0, checks = 0 }
local spy = dofile("spec/support/workspy.lua")
local per_update = 0 -- the expansions of the update running now

local function install()
  spy.install {
    step = function(did, _, st)
      count.steps, per_update = count.steps + did, per_update + did
      if st == "found" then count.found = count.found + 1 end
    end,
    visible = function() count.checks = count.checks + 1 end,
    plan = function() count.plans = count.plans + 1 end,
  }
end
local uninstall = spy.uninstall

-- n navigators sharing `budget` (or none) walk fixed pairs of the 3-tile hand world until all arrived.
-- Returns the most work of each kind seen in one frame and in one update, and the frames.
local function crowd(w, n, budget, nav_opts, max_frames)
  local pts = { { 2, 8, 2 }, { 30, 6, 2 }, { 46, 8, 8 }, { 6, 6, 8 }, { 24, 6, 8 }, { 40, 8, 14 } }
  local agents = {}
  for i = 1, n do
    local a, b = pts[(i - 1) % #pts + 1], pts[(i * 2) % #pts + 1]
    if a == b then b = pts[(i * 2 + 1) % #pts + 1] end
    local opts = { budget = budget }
    for k, v in pairs(nav_opts or {}) do opts[k] = v end
    local nav = navigator.new(w, opts)
    nav:go(b)
    agents[i] = { nav = nav, pos = { a[1], a[2], a[3] }, goal = b }
  end
  local most = { frame = {}, update = 0 }
  local left = n
  local frames = 0
  for frame = 1, max_frames do
    frames = frame
    count.steps, count.found, count.plans, count.checks = 0, 0, 0, 0
    if budget then budget:frame() end
    for _, a in ipairs(agents) do
      if not a.done then
        per_update = 0
        local status, wp = a.nav:update(a.pos)
        most.update = math.max(most.update, per_update)
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
    for k, v in pairs(count) do most.frame[k] = math.max(most.frame[k] or 0, v) end
    if left == 0 then break end
  end
  return most, frames, left
end

describe("navigators sharing one budget", function()
  setup(install)
  teardown(uninstall)
  local w = hw.make_world { tiles = 3, obstacles = true }

  it("no frame does more work than the budget, no update more than its share, and all arrive", function()
    local limits = { expansions = 40, portals = 64, plans = 1, results = 1, checks = 6 }
    local budget = navigator.budget(limits)
    local most, frames, left = crowd(w, 100, budget, { query_budget = 25 }, 6000)
    assert.equal(0, left, "all 100 arrive")
    assert.is_true(most.frame.steps <= 40, "expansions in one frame: " .. most.frame.steps)
    assert.is_true(most.update <= 25, "expansions in one update: " .. most.update)
    assert.is_true(most.frame.plans <= 1, "route plans started in one frame: " .. most.frame.plans)
    assert.is_true(most.frame.found <= 1, "searches found in one frame: " .. most.frame.found)
    assert.is_true(most.frame.checks <= 6, "line-of-sight checks in one frame: " .. most.frame.checks)
    local st = budget:stats()
    assert.equal(frames, st.frames)
    for kind, v in pairs(limits) do assert.is_true(st.max[kind] <= v, kind) end
    assert.equal(40, st.max.expansions) -- the budget was the bound: some frame used all of it
    assert.equal(1, st.max.plans)
    -- the same crowd with no shared budget does more in some frame (so the budget above did bind)
    local free = crowd(w, 100, nil, { query_budget = 25 }, 6000)
    assert.is_true(free.frame.steps > 40 and free.frame.plans > 1 and free.frame.checks > 6)
  end)

  it("a budget of 0 of a kind holds every navigator needing it, and work resumes once there is some", function()
    local budget = navigator.budget { plans = 0 }
    local nav = navigator.new(w, { budget = budget })
    nav:go { 30, 6, 2 }
    for _ = 1, 5 do
      budget:frame()
      count.plans = 0
      assert.same({ "planning" }, { nav:update { 2, 8, 2 } })
      assert.equal(0, count.plans)
    end
    local b2 = navigator.budget { expansions = 0 }
    local nav2 = navigator.new(w, { budget = b2 })
    nav2:go { 30, 6, 2 }
    for _ = 1, 5 do
      b2:frame()
      count.steps = 0
      assert.equal("planning", (nav2:update { 2, 8, 2 }))
      assert.equal(0, count.steps)
    end
    assert.equal(1, b2:stats().waiting.expansions)
    nav:close()
    nav2:close()
    assert.equal(0, b2:stats().waiting.expansions) -- close leaves the line
  end)

  it("serves the line first come first served: with room for one search a frame, one navigator at a time", function()
    -- query_budget = the whole frame: the navigator at the head of the line takes it all until its
    -- search ends, the others wait their turn in line order (they all asked in frame 1)
    local budget = navigator.budget { expansions = 30 }
    local navs, first_move = {}, {}
    for i = 1, 6 do
      navs[i] = navigator.new(w, { budget = budget, query_budget = 30 })
      navs[i]:go { 46, 8, 8 }
    end
    local pos = { 2, 8, 2 }
    for frame = 1, 400 do
      budget:frame()
      for i = 6, 1, -1 do -- updated in reverse order: the line, not the call order, decides
        local st = navs[i]:update(pos)
        if st == "moving" and not first_move[i] then first_move[i] = frame end
      end
    end
    if os.getenv("OCTONAV_VERBOSE") then io.stderr:write("first moves: " .. table.concat(first_move, " ") .. "\n") end
    for i = 1, 6 do
      assert.is_number(first_move[i], "navigator " .. i .. " got its path")
      navs[i]:close()
    end
    -- they plan in frames 1..3 (2 plans a frame, updated 6 to 1) and their searches join the line in
    -- that order: each gets its path after every navigator ahead of it, never two at once
    for i = 1, 5 do
      assert.is_true(first_move[i + 1] < first_move[i],
        ("navigator %d (frame %d) before navigator %d (frame %d)"):format(i + 1, first_move[i + 1], i, first_move[i]))
    end
  end)
end)
