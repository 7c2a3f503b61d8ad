-- spec/125-first_move_spec.lua -- issue 31, goal 1: no navigator of a budget waits for ever (nor long)
-- for its first move; plan starts are first come first served.
--   1. Plan starts in line: under a budget's ms at most navigator_plan.MAX_PLANNING navigators of a
--      world plan at once. Before, a navigator that found every planner busy did not join the budget's
--      plans' line, and a planner freed later in the frame went to whoever asked next: in a crowd that
--      keeps asking (agents given a new goal as they arrive) the navigators late in the group's turn
--      order never started (on the seed's world, 1,000 navigators ms 4: one asked 1,593 times in 3,000
--      frames and never moved). Counted in frames, not time: the budget's clock is a function that
--      never advances (the frame's deadline never cuts) and SLICE_MS is lifted, so the joins are cut
--      by JOIN_SLICE units (and the C clock, far off).
--   2. With time left in a frame, a plan under way gets more than one update (slice) a frame
--      (navgroup.lua's 3c, up to PLAN_ROUNDS): before, one a frame, so a plan's joins of tens of slices
--      took tens of frames while the frame had time left, and with at most MAX_PLANNING plans at once
--      plans ended about 0.1 a frame at 1,000 navigators ms 4 on the seed's world (the throughput's limit).
--   3. Under a budget with `ms` a navigator takes a lead move by default (lead_distance: 16 leaves on a
--      world of tiles): with no plan starting at all (plans = 0), every navigator moves within a few
--      frames of its goal; before, none ever moved (lead_distance defaulted to 0; on the seed's world
--      at 1,000 navigators ms 4 the first-move waits' median was 999 of 1,000 frames, max 21 with leads).
-- Run: busted --lua=lua5.4 spec/125-first_move_spec.lua
--
-- The world: spec/42's 3 x 1 x 3 tiles of 128 leaves (boxpack.bake_walled), nothing prepared.
local navigator = require "octonav.navigator"
local navplan = require "octonav.navigator_plan"

local boxpack = dofile("spec/support/boxpack.lua")
local rng = dofile("spec/support/prng.lua").lcg
local world_mod = require "octonav.world"

local pack

setup(function() pack = boxpack.bake_walled() end)
teardown(boxpack.cleanup)

local free_point = boxpack.free_point

-- n navigators sharing one budget (ms, a clock that never advances), updated by budget:update for
-- `frames` frames, flying `speed` leaves a frame; each given a new goal (a random free point) when it
-- arrives or fails. Returns the longest wait for a first move (frames from a go to the first "moving"
-- answer with a waypoint, those still waiting at the end counted to the end), the number of goals
-- that never saw a first move, and the arrivals.
local function crowd(n, frames, speed, opts)
  local world = assert(world_mod.load(pack))
  local tree = world.tree
  local r = rng(5)
  local budget = navigator.budget { ms = 4, clock = function() return 0 end, plans = opts and opts.plans }
  local navs, pos, since, moved = {}, {}, {}, {}
  for k = 1, n do
    pos[k] = free_point(tree, r)
    navs[k] = navigator.new(world, { budget = budget })
    navs[k]:go(free_point(tree, r))
    since[k], moved[k] = 1, false
  end
  local st, wp = {}, {}
  local longest, arrived = 0, 0
  for f = 1, frames do
    budget:update(navs, pos, st, wp)
    for k = 1, n do
      local s, w = st[k], wp[k]
      if s == "moving" and w then
        if not moved[k] then
          moved[k] = true
          if f - since[k] > longest then longest = f - since[k] end
        end
        local p = pos[k]
        local dx, dy, dz = w[1] - p[1], w[2] - p[2], w[3] - p[3]
        local d = math.sqrt(dx * dx + dy * dy + dz * dz)
        local t = d > speed and speed / d or 1
        p[1], p[2], p[3] = p[1] + dx * t, p[2] + dy * t, p[3] + dz * t
      elseif s == "arrived" or s == "failed" then
        if s == "arrived" then arrived = arrived + 1 end
        if not moved[k] and f - since[k] > longest then longest = f - since[k] end
        navs[k]:go(free_point(tree, r))
        since[k], moved[k] = f + 1, false
      end
    end
  end
  local never = 0
  for k = 1, n do
    if not moved[k] then
      never = never + 1
      if frames - since[k] > longest then longest = frames - since[k] end
    end
  end
  for k = 1, n do navs[k]:close() end
  world:close()
  return longest, never, arrived
end

describe("a budget's navigators all move", function()
  local slice
  before_each(function() slice = navplan.SLICE_MS; navplan.SLICE_MS = 1e6 end)
  after_each(function() navplan.SLICE_MS = slice end)

  it("plan starts are first come first served: no navigator waits for ever to start", function()
    -- 40 navigators, fast agents (24 leaves a frame: short walks, so the crowd keeps asking for plans
    -- at about the rate two planners serve), 400 frames
    local longest, never, arrived = crowd(40, 400, 24)
    assert.is_true(arrived >= 100, arrived .. " arrivals")
    assert.is_true(longest <= 120, ("a navigator waited %d frames for its first move (%d goals never moved)")
      :format(longest, never))
  end)

  it("under a budget's ms every navigator moves toward its goal before any plan starts (lead moves)", function()
    local longest, never = crowd(40, 30, 1, { plans = 0 })
    assert.are.equal(0, never)
    assert.is_true(longest <= 3, longest .. " frames")
  end)

  it("a plan under way gets several slices a frame while the frame has time left", function()
    navplan.SLICE_MS = slice -- (3c keeps two slices' time before the deadline: the module's own)
    local world = assert(world_mod.load(pack))
    -- (portals enough for every slice: with a clock that never advances no portal cost is learnt, and
    -- a step's slice would take all of the frame's 1,024)
    local budget = navigator.budget { ms = 4, clock = function() return 0 end, portals = 1000000 }
    local a, b = { 20, 10, 20 }, { 360, 10, 360 }
    assert(world.tree:locate(a) == "free" and world.tree:locate(b) == "free")
    local nav = navigator.new(world, { budget = budget })
    nav:go(b)
    local navs, pos, st, wp = { nav }, { a }, {}, {}
    local frames = 0
    while nav.cells == nil do
      budget:update(navs, pos, st, wp)
      frames = frames + 1
      assert(frames < 1000, "the plan did not end")
    end
    -- (nav.frame counts its updates; the plan took several slices: joins of more than JOIN_SLICE units)
    assert.is_true(nav.frame >= 3, nav.frame .. " updates")
    assert.is_true(frames < nav.frame, ("%d frames for %d updates"):format(frames, nav.frame))
    nav:close()
    world:close()
  end)
end)
