-- spec/138-stream_first_move_spec.lua -- issue 31, goal 1 (first move, streamed): a streamed navigator
-- under a budget with `ms` takes its lead move while the tiles of its route stream in.
--   Before, lead moves were off with a streamer (navigator.lua: lead_ready only without one), so a
--   navigator held ("planning") until the tiles of its start and goal (locked before planning) were
--   loaded: on the seed's world streamed (seed 23, 100 navigators ms 2, one worker decoding the 64
--   tiles) first-move waits p50 22-39, max 954-1,040 frames, 128-130 of ~470 goals over 60.
--   Now its lead move waits only for the tiles of the agent and of the lead point: a try is not spent
--   while one of them is unloaded (an unloaded tile reads blocked: the line of sight would fail).
-- Run: busted --lua=lua5.4 spec/138-stream_first_move_spec.lua
--
-- The world: spec/42's 3 x 1 x 3 tiles of 128 leaves (boxpack.bake_walled), streamed with padding 0
-- (a tile loads for an agent in it or a lock); tiles are installed only by s:update(), so a frame loop
-- that does not call it keeps the goal tiles out for as long as it runs.
local octonav = require "octonav"
local navigator = require "octonav.navigator"
local world_mod = require "octonav.world"

local boxpack = dofile("spec/support/boxpack.lua")
local rng = dofile("spec/support/prng.lua").lcg

local pack

setup(function() pack = boxpack.bake_walled() end)
teardown(boxpack.cleanup)

local function dist(a, b)
  return math.sqrt((a[1] - b[1]) ^ 2 + (a[2] - b[2]) ^ 2 + (a[3] - b[3]) ^ 2)
end

-- A streamed world and a budget with ms whose clock never advances (frames are counted, not timed);
-- draw(tree) -> points drawn on the whole world before the streamer unloads its tiles.
local function streamed(draw)
  local world = assert(world_mod.load(pack))
  local pts = draw(world.tree)
  local s = octonav.streamer.new(world, { workers = 1, load_padding = 0, unload_padding = 1 })
  local budget = navigator.budget { ms = 2, clock = function() return 0 end }
  return world, s, budget, pts
end

describe("a streamed navigator's first move", function()
  it("comes while its goal's tile is not loaded: a lead move from a loaded tile (budget:update)", function()
    local world, s, budget, starts = streamed(function(tree)
      local r, pts = rng(7), {}
      for k = 1, 6 do pts[k] = boxpack.free_in(tree, r, 0, k % 2) end -- tiles (0,0,0), (0,0,1)
      return pts
    end)
    local tree = world.tree
    local goals = { { 330, 20, 330 }, { 340, 30, 250 }, { 300, 40, 350 }, { 350, 10, 300 }, { 320, 50, 280 },
      { 290, 60, 340 } } -- tiles (2,0,2), (2,0,1)
    -- the starts' tiles loaded first (a game's loading of the agents' surroundings)
    local ids = {}
    for k = 1, #starts do ids[k] = s:add_agent(starts[k]) end
    s:update(true)
    assert.is_true(s:is_loaded({ 0, 0, 0 }))
    assert.is_true(s:is_loaded({ 0, 0, 1 }))
    assert.is_false(s:is_loaded({ 2, 0, 2 }))
    local navs, pos, st, wp = {}, {}, {}, {}
    for k = 1, #starts do
      navs[k] = navigator.new(world, { budget = budget, streamer = s, agent = ids[k] })
      navs[k]:go(goals[k])
      pos[k] = { starts[k][1], starts[k][2], starts[k][3] }
    end
    local first = {}
    for f = 1, 40 do -- (no s:update(): the goals' tiles stay out)
      budget:update(navs, pos, st, wp)
      for k = 1, #navs do
        if st[k] == "moving" and wp[k] then
          if not first[k] then first[k] = { f = f, wp = wp[k] } end
          local p, w = pos[k], wp[k] -- (1 leaf a frame toward the waypoint)
          local d = dist(p, w)
          local t = d > 1 and 1 / d or 1
          p[1], p[2], p[3] = p[1] + (w[1] - p[1]) * t, p[2] + (w[2] - p[2]) * t, p[3] + (w[3] - p[3]) * t
        end
        assert.are_not.equal("failed", st[k])
      end
    end
    assert.is_false(s:is_loaded({ 2, 0, 2 }))
    assert.is_false(s:is_loaded({ 2, 0, 1 }))
    local lead = navs[1].cfg.lead_distance
    assert.are.equal(16, lead) -- (the default under ms: 16 leaves at scale 1)
    for k = 1, #navs do
      assert.is_table(first[k], "navigator " .. k .. " never moved")
      assert.is_true(first[k].f <= 3, "navigator " .. k .. " first moved at frame " .. first[k].f)
      -- the lead point: at most lead_distance from the start, in a loaded tile, its segment free
      assert.is_true(dist(starts[k], first[k].wp) <= lead + 1e-9)
      assert.is_true(s:is_loaded(world:tile_of(first[k].wp)))
      assert.is_true(tree:visible(starts[k], first[k].wp))
      -- and the agent held there, planning, since (its route waits for the goal's tile)
      assert.are.equal("planning", st[k])
      assert.is_true(dist(pos[k], first[k].wp) < 1e-6)
      assert.is_table(navs[k]:stats().waiting)
    end
    for k = 1, #navs do navs[k]:close() end
    s:close()
  end)

  it("waits for its own tile without spending its tries, then moves (nav:update)", function()
    local world, s, budget, start = streamed(function(tree) return boxpack.free_in(tree, rng(11), 1, 1) end)
    local goal = { 330, 20, 330 }
    local nav = navigator.new(world, { budget = budget, streamer = s })
    nav:go(goal)
    local pos = { start[1], start[2], start[3] }
    for _ = 1, 10 do -- its tile not loaded (no s:update()): it holds, a lead move still to take
      budget:frame()
      local status, w = nav:update(pos)
      assert.are.equal("planning", status)
      assert.is_nil(w)
    end
    assert.is_false(s:is_loaded({ 1, 0, 1 }))
    assert.is_true(nav.lead_ready)
    assert.are.equal(1, nav.lead_try) -- (before: a try spent on each blocked line of sight)
    -- its own tile in (the goal's too: locked), the next updates move it
    s:update(true)
    assert.is_true(s:is_loaded({ 1, 0, 1 }))
    local moved
    for _ = 1, 3 do
      budget:frame()
      local status, w = nav:update(pos)
      if status == "moving" and w then
        moved = w
        break
      end
    end
    assert.is_table(moved)
    assert.is_true(world.tree:visible(start, moved))
    nav:close()
    s:close()
  end)
end)

-- budget:begin(): the game's frame starts before budget:frame() (its streamer:update() first, which
-- installs a tile in one piece: up to 2 ms on the seed's world); before, `ms` ran from frame(), so a
-- streamed frame was the budget's ms plus the streamer's install (frames of 4.2 ms at ms 2, seed 23).
describe("budget:begin", function()
  it("counts the frame's ms from the game's frame start", function()
    local t = 0
    local budget = navigator.budget { ms = 2, clock = function() return t end }
    budget:begin()
    t = 0.0015 -- (the streamer's update took 1.5 ms)
    budget:frame()
    assert.are.equal(0.002, budget.deadline)
    t = 0.0021 -- past the frame's 2 ms: every ask refused
    local who = {}
    assert.are.equal(0, budget:take("plans", who, 1))
    -- the next frame without begin: from frame() as before
    t = 0.010
    budget:frame()
    local tail = budget.tail or 0 -- (learnt from the late ask above: 0.1 ms)
    assert.is_true(math.abs(budget.deadline - (0.012 - tail)) < 1e-12)
    assert.is_true(tail < 0.0002)
    assert.are.equal(1, budget:take("plans", who, 1))
  end)

  it("is nothing without ms", function()
    local budget = navigator.budget { expansions = 10 }
    budget:begin()
    budget:frame()
    assert.is_nil(budget.deadline)
    assert.are.equal(10, budget:take("expansions", {}, 20))
  end)
end)
