-- spec/170-walk_streamed_spec.lua -- issue 31, goal 1 (streamed): the group's C walk (core.walker,
-- csrc/lua/lua_walk.c; lua/octonav/navgroup_walk.lua) holds streamed navigators too.
--   Before, navgroup_walk.attach refused every navigator with a streamer: at 1,000 streamed navigators
--   each went through budget:update's first pass in Lua every frame (budget:stats().group.held 0).
--   Now a streamed navigator walking its smoothed path is held, and each C update moves its streamer
--   agent to the position (navlocks.lua's move_agent) and hands it back before a step's locks are due
--   for release (release_passed): its answers, its agent, its locks are the Lua path's frame for frame.
-- Run: busted --lua=lua5.4 spec/170-walk_streamed_spec.lua
--
-- The world: spec/42's 3 x 1 x 3 tiles of 128 leaves (boxpack.bake_walled), streamed with one worker,
-- every tile pinned and loaded before the first frame (so nothing depends on the worker's speed). The
-- budget's clock is the spec's own (it never advances). Agents step 2 units a frame toward their
-- waypoint.
local octonav = require "octonav"
local navigator = require "octonav.navigator"
local world_mod = require "octonav.world"
local gwalk = require "octonav.navgroup_walk"

local boxpack = dofile("spec/support/boxpack.lua")
local stream_wait = dofile("spec/support/stream_wait.lua")
local rng = dofile("spec/support/prng.lua").lcg

local pack

setup(function() pack = boxpack.bake_walled() end)
teardown(function()
  gwalk.STREAM = true
  boxpack.cleanup()
end)

local N, FRAMES, SPEED, RELOAD = 8, 500, 2, 40

-- One run: N navigators between drawn points, the C walk holding streamed navigators or not
-- (gwalk.STREAM). -> the log (a line a frame), the frames some navigator was held, the frames each
-- agent stood where its navigator did, the number of (navigator, frame) pairs checked.
local function run(stream)
  gwalk.STREAM = stream
  local world = assert(world_mod.load(pack))
  local s = octonav.streamer.new(world, { workers = 1, load_padding = 0, unload_padding = 8 })
  for i = 0, 2 do
    for k = 0, 2 do s:force_load({ i, 0, k }) end
  end
  s:update()
  assert.are.equal(9, stream_wait.decoded(s, 9, 10))
  for _ = 1, 9 do s:update() end
  for i = 0, 2 do
    for k = 0, 2 do assert.is_true(s:is_loaded({ i, 0, k })) end
  end
  local budget = navigator.budget { ms = 4, clock = function() return 0 end }
  local r = rng(170)
  local navs, pos, st, wp = {}, {}, {}, {}
  for i = 1, N do
    local a, b = boxpack.free_point(world.tree, r), boxpack.free_point(world.tree, r)
    navs[i] = navigator.new(world, { budget = budget, streamer = s })
    navs[i]:go(b)
    pos[i] = { a[1], a[2], a[3] }
  end
  local log, held_frames, at_agent, checked = {}, 0, 0, 0
  local reloaded = 0
  for f = 1, FRAMES do
    if f == RELOAD then -- every tile no lock holds unloaded, then loaded again (the tree's revision
      -- changes twice: a held navigator's update is Lua's then, its stale-path check)
      for i = 0, 2 do
        for k = 0, 2 do s:force_unload({ i, 0, k }) end
      end
      for i = 0, 2 do
        for k = 0, 2 do
          if not s:is_loaded({ i, 0, k }) then reloaded = reloaded + 1 end
          s:force_load({ i, 0, k })
        end
      end
      s:update()
      assert.are.equal(9 + reloaded, stream_wait.decoded(s, 9 + reloaded, 10))
      for _ = 1, reloaded do s:update() end
    end
    s:update()
    budget:frame()
    budget:update(navs, pos, st, wp)
    if budget:stats().group.held > 0 then held_frames = held_frames + 1 end
    local line = {}
    for i = 1, N do
      local nav, p, w = navs[i], pos[i], wp[i]
      if nav.agent then
        checked = checked + 1
        local ap = s:agent_position(nav.agent)
        if ap[1] == p[1] and ap[2] == p[2] and ap[3] == p[3] then at_agent = at_agent + 1 end
      end
      line[i] = ("%s %.9g,%.9g,%.9g r%d p%d"):format(st[i], p[1], p[2], p[3], nav.locks.released, nav.replans)
      if st[i] == "moving" and type(w) == "table" then -- (a step of SPEED toward the waypoint)
        local dx, dy, dz = w[1] - p[1], w[2] - p[2], w[3] - p[3]
        local d = math.sqrt(dx * dx + dy * dy + dz * dz)
        local t = d > SPEED and SPEED / d or 1
        pos[i] = { p[1] + dx * t, p[2] + dy * t, p[3] + dz * t }
      end
    end
    log[f] = table.concat(line, " | ")
  end
  for i = 1, N do navs[i]:close() end
  s:close()
  world:close()
  return log, held_frames, at_agent, checked, reloaded
end

describe("the C walk with streamed navigators", function()
  it("holds them, moves their agents, and answers as the Lua path frame for frame", function()
    local clog, cheld, cat, cchecked, creloaded = run(true)
    local llog, lheld = run(false)
    gwalk.STREAM = true
    -- held (before: never, group.held stayed 0 with a streamer)
    assert.is_true(cheld > 100, "frames with a navigator held: " .. cheld)
    assert.are.equal(0, lheld)
    assert.is_true(creloaded >= 1) -- (a tile unloaded and loaded again at frame RELOAD)
    -- every agent at its navigator's position after each frame (the positions the update was given)
    assert.is_true(cchecked > N * 100)
    assert.are.equal(cchecked, cat)
    -- answers, positions, released locks: the same every frame; every navigator arrived
    for f = 1, FRAMES do assert.are.equal(llog[f], clog[f], "frame " .. f) end
    local last = clog[FRAMES]
    local arrived = select(2, last:gsub("arrived", ""))
    assert.are.equal(N, arrived, last)
  end)
end)
