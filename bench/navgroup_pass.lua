-- bench/navgroup_pass.lua [--navs N] [--frames F] [--passes P] [--starters K] [--waiting 1]
-- budget:update's own Lua (lua/octonav/navgroup.lua) at N navigators (1000): stand-in navigators
-- whose update costs nothing (the fields budget:update reads, an update returning "moving" to the
-- same far waypoint), N - K of them heading for a waypoint they have not reached (answered in the
-- first pass; their turns update them), K (200) waiting to start a plan (plans = 0: none starts).
-- A budget with ms = 4 on the thread CPU clock. Prints the thread CPU time of one budget:update
-- (us, the mean over F = 200 frames), the fastest of P = 5 passes, and us a navigator.
-- --waiting 1: instead, N real navigators (octonav.navigator) on spec/support/boxpack.lua's walled world
-- of 3 x 1 x 3 tiles (baked into a temporary directory), every one waiting to start its plan (plans = 0,
-- lead_distance = 0): the navigators navgroup.lua parks in its C walk (navgroup.PARK) and, before, the
-- first pass visited in Lua each frame.
-- Run (from the repository, after `make`): lua5.4 bench/navgroup_pass.lua
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("OCTONAV_BUILD") or "build") .. "/?.so;" .. package.cpath
local core = require "octonav.core"
local navigator = require "octonav.navigator"

local o = { navs = 1000, frames = 200, passes = 5, starters = 200, waiting = 0 }
local i = 1
while i <= #arg do
  local k = arg[i]:match("^%-%-(.+)$")
  local v = tonumber(arg[i + 1])
  if not k or o[k] == nil or not v then
    io.stderr:write("usage: lua5.4 bench/navgroup_pass.lua [--navs N] [--frames F] [--passes P] [--starters K] [--waiting 1]\n")
    os.exit(2)
  end
  o[k] = v
  i = i + 2
end

if o.waiting ~= 0 then
  local boxpack = dofile("spec/support/boxpack.lua")
  local rnd = dofile("spec/support/prng.lua").lcg(7)
  local world = assert(require("octonav.world").load(boxpack.bake_walled()))
  local function free_point()
    for _ = 1, 10000 do
      local p = { 1 + rnd() * 382, 3 + rnd() * 100, 1 + rnd() * 382 }
      if world.tree:locate(p) == "free" then return p end
    end
    error("no free point")
  end
  local budget = navigator.budget { ms = 4, clock = "thread", plans = 0 }
  local navs, pos, st, wp = {}, {}, {}, {}
  for j = 1, o.navs do
    pos[j] = free_point()
    navs[j] = navigator.new(world, { budget = budget, lead_distance = 0 })
    navs[j]:go(free_point())
  end
  for _ = 1, 5 do budget:update(navs, pos, st, wp) end
  local best = math.huge
  for _ = 1, o.passes do
    collectgarbage()
    local t0 = core.thread_clock()
    for _ = 1, o.frames do budget:update(navs, pos, st, wp) end
    local us = (core.thread_clock() - t0) / o.frames * 1e6
    if us < best then best = us end
  end
  local g = budget:stats().group
  print(("budget:update, %d navigators waiting to start a plan: %.1f us a frame, %.3f us a navigator (fastest of %d; parked %s, visited in Lua %s)")
    :format(o.navs, best, best / o.navs, o.passes, tostring(g.parked), tostring(g.visited)))
  for j = 1, o.navs do navs[j]:close() end
  world:close()
  boxpack.cleanup()
  return
end

local FAR = { 1e6, 0, 0 }
local function mover()
  return { epoch = 1, state = "moving", cfg = { arrive_distance = 0.5 },
    update = function() return "moving", FAR end }
end
local function starter()
  return { epoch = 1, state = "planning", cfg = { arrive_distance = 0.5 },
    update = function() return "planning", nil end }
end

local best = math.huge
for _ = 1, o.passes do
  local budget = navigator.budget { ms = 4, clock = "thread", plans = 0 }
  local navs, pos = {}, {}
  for j = 1, o.navs do
    navs[j] = j <= o.navs - o.starters and mover() or starter()
    pos[j] = { 0, 0, 0 }
  end
  local st, wp = {}, {}
  for _ = 1, 5 do budget:update(navs, pos, st, wp) end -- (every mover updated once: answered after)
  collectgarbage()
  local t0 = core.thread_clock()
  for _ = 1, o.frames do budget:update(navs, pos, st, wp) end
  local us = (core.thread_clock() - t0) / o.frames * 1e6
  if us < best then best = us end
end
print(("budget:update, %d navigators (%d waiting to start a plan): %.1f us a frame, %.3f us a navigator (fastest of %d)")
  :format(o.navs, o.starters, best, best / o.navs, o.passes))
