-- bench/plan_calls.lua PACK [--agents N] [--ms X] [--frames F] [--pairs K] [--seed S] [--lua DIR] [--gc 1]
-- The navigators' plan calls one by one (issue 31: no single plan call in a navigator update over ~0.3
-- ms): N navigators (1000) under one octonav.navigator.budget{ ms = X } (4), updated by budget:update
-- each frame for F frames (1500) on the pack as loaded, flying to random free points (K pairs, seed S:
-- bench_util's, as bench/frames.lua draws them) at 4 leaves a frame. Every C planner call the
-- navigators make (planner start_multi, step, flat: the methods wrapped) is timed on the thread CPU
-- clock; prints their count, p50 / p99 / p99.9 / worst (ms), the calls over 0.3 ms by name, the
-- longest plan start (start_multi), the frames' thread CPU p99.9 / worst and the arrivals.
-- --lua DIR: the library's Lua files from DIR/lua (a build of other Lua files beside this one: run
-- twice, once each, for a side-by-side table; the C module from build/ or OCTONAV_BUILD).
-- --gc 1: the budget drives Lua's collector (budget option gc: its steps at the start of each frame, so
-- none lands inside a timed call: a C call that pushes a string or a table may run one).
-- Run: lua5.4 bench/plan_calls.lua PACK (after `make`).
local lua_dir
for i = 2, #arg do
  if arg[i] == "--lua" then lua_dir = arg[i + 1] end
end
local base = lua_dir and (lua_dir .. "/") or ""
package.path = base .. "lua/?.lua;" .. base .. "lua/?/init.lua;lua/?.lua;lua/?/init.lua;bench/lua/?.lua;" .. package.path
package.cpath = (os.getenv("OCTONAV_BUILD") or "build") .. "/?.so;" .. package.cpath
local octonav = require "octonav"
local core = require "octonav.core"
local navigator = require "octonav.navigator"
local planner = require "octonav.planner"
local bench_util = require "octonav.bench_util"

local function usage(msg)
  io.stderr:write("bench/plan_calls.lua: " .. msg .. "\n")
  os.exit(2)
end

local pack = arg[1]
if not pack or pack:sub(1, 2) == "--" then usage("usage: lua5.4 bench/plan_calls.lua PACK [options]") end
local o = { agents = 1000, ms = 4, frames = 1500, pairs = 4000, seed = 1, gc = 0 }
local i = 2
while i <= #arg do
  local k = arg[i]:match("^%-%-(.+)$")
  if k == "lua" then
    if not arg[i + 1] then usage("--lua needs a directory") end
  else
    local v = tonumber(arg[i + 1])
    if not k or o[k] == nil then usage("unknown argument " .. arg[i]) end
    if not v then usage("--" .. k .. " needs a number") end
    o[k] = v
  end
  i = i + 2
end

local function pct(xs, p)
  local s = {}
  for j = 1, #xs do s[j] = xs[j] end
  table.sort(s)
  if #s == 0 then return 0 end
  return s[math.max(1, math.min(#s, math.ceil(#s * p)))]
end

local world = assert(octonav.world.load(pack))
local rnd = core.xorshift(o.seed)
local pairs_ = {}
for k = 1, o.pairs do pairs_[k] = { bench_util.free_point(world, rnd), bench_util.free_point(world, rnd) } end

-- the planner's methods wrapped (shared by every planner of the module)
local tc = core.thread_clock
local times, over, longest_start = {}, {}, 0
local p = planner.acquire(world)
local methods = getmetatable(p).__index
planner.release(world, p)
for _, name in ipairs({ "start_multi", "step", "flat" }) do
  local f = methods[name]
  methods[name] = function(...)
    local t0 = tc()
    local a, b, c = f(...)
    local dt = (tc() - t0) * 1e3
    times[#times + 1] = dt
    if dt > 0.3 then over[name] = (over[name] or 0) + 1 end
    if name == "start_multi" and dt > longest_start then longest_start = dt end
    return a, b, c
  end
end

local budget = navigator.budget { ms = o.ms, gc = o.gc ~= 0 or nil }
local navs, pos, st, wp = {}, {}, {}, {}
local nextp = 0
local function assign(s)
  nextp = nextp % #pairs_ + 1
  local pr = pairs_[nextp]
  if navs[s] then navs[s]:close() end
  navs[s] = navigator.new(world, { budget = budget })
  navs[s]:go(pr[2])
  pos[s] = { pr[1][1], pr[1][2], pr[1][3] }
end
for s = 1, o.agents do assign(s) end
local frames, arrived = {}, 0
local speed = 4 * world.scale
for f = 1, o.frames do
  local c0 = tc()
  budget:update(navs, pos, st, wp)
  frames[f] = (tc() - c0) * 1e3
  for s = 1, o.agents do
    if st[s] == "arrived" or st[s] == "failed" then
      if st[s] == "arrived" then arrived = arrived + 1 end
      assign(s)
    elseif st[s] == "moving" and wp[s] then
      local q, w = pos[s], wp[s]
      local d = math.sqrt((w[1] - q[1]) ^ 2 + (w[2] - q[2]) ^ 2 + (w[3] - q[3]) ^ 2)
      local t = d > 0 and math.min(1, speed / d) or 0
      q[1], q[2], q[3] = q[1] + (w[1] - q[1]) * t, q[2] + (w[2] - q[2]) * t, q[3] + (w[3] - q[3]) * t
    end
  end
end
local names = {}
for k, v in pairs(over) do names[#names + 1] = k .. " " .. v end
table.sort(names)
print(("| %s | %d | %.3f / %.3f / %.3f / %.3f | %d (%s) | %.3f | %.2f / %.2f | %d |"):format(lua_dir or "this tree",
  #times, pct(times, 0.5), pct(times, 0.99), pct(times, 0.999), pct(times, 1), #names > 0 and (function()
    local n = 0
    for _, v in pairs(over) do n = n + v end
    return n
  end)() or 0, table.concat(names, ", "), longest_start, pct(frames, 0.999), pct(frames, 1), arrived))
