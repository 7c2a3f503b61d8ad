-- bench/navupdate.lua [PACK] [FRAMES]: the Lua cost of nav:update on a moving navigator (issue 31: a
-- crowd pays it on every update). 60 navigators without a budget fly between random free points of
-- the pack (masks prepared), 60 frames untimed, then FRAMES (200) frames each update timed by the
-- thread CPU clock; prints the mean per call, fastest of 5 passes. Compare two trees side by side by
-- running it from each (it reads lua/ and build/ of the current directory).
-- Run: lua5.4 bench/navupdate.lua /work/scratch/seed19
package.path = "lua/?.lua;lua/?/init.lua;bench/lua/?.lua;" .. package.path
package.cpath = (os.getenv("OCTONAV_BUILD") or "build") .. "/?.so;" .. package.cpath
local octonav = require "octonav"
local core = require "octonav.core"
local navigator = require "octonav.navigator"
local world = assert(octonav.world.load(arg[1] or "/work/scratch/seed19"))
local FRAMES = tonumber(arg[2]) or 200
assert(world.tree:los_prepare())
local U = require "octonav.bench_util"
local rnd = U.lcg(1)
local function free_point() return U.free_point(world, rnd) end
local N = 60
local A, G = {}, {}
for i = 1, N do A[i], G[i] = free_point(), free_point() end
local dist = U.dist
local best, bestn = math.huge, 0
for _ = 1, 5 do
  local navs, pos = {}, {}
  for i = 1, N do navs[i] = navigator.new(world, {}); navs[i]:go(G[i]); pos[i] = { A[i][1], A[i][2], A[i][3] } end
  local function frame(timed)
    local t = 0
    local c = 0
    for i = 1, N do
      local t0 = timed and core.thread_clock()
      local s, wp = navs[i]:update(pos[i])
      if timed then t = t + core.thread_clock() - t0 end
      if s == "moving" then
        c = c + 1
        local p = pos[i]
        local d = dist(p, wp)
        local f = d > 0 and math.min(1, 4 / d) or 0
        p[1], p[2], p[3] = p[1] + (wp[1] - p[1]) * f, p[2] + (wp[2] - p[2]) * f, p[3] + (wp[3] - p[3]) * f
      end
    end
    return t, c
  end
  for _ = 1, 60 do frame(false) end
  local tt, cc = 0, 0
  for _ = 1, FRAMES do local t, c = frame(true); tt, cc = tt + t, cc + c end
  local per = tt / (FRAMES * N) * 1e6
  if per < best then best, bestn = per, cc end
  for i = 1, N do navs[i]:close() end
end
print(("nav:update while moving: %.3f us a call (fastest of 5; %d moving answers)"):format(best, bestn))
