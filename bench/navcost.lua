-- bench/navcost.lua PACK [--pairs K] [--seed S] [--speed V] [--passes P] [--frames F]
-- The work a navigator does per arrival (issue 31), configurations side by side in one run: K agents
-- (40) fly between random free points of the pack (seed S), each with its own navigator and no
-- shared budget (every update runs: the smoother checks every frame), V leaves a frame (4), until all
-- arrive (at most F frames, 4000). Per configuration (the navigator's smoother `recheck` 0, as before,
-- and 0.5, the default): the thread CPU of all the updates (fastest of P passes, 3), the lines of sight
-- the smoothers spent (per arrival), arrivals, and each walk's length over its seamless length (one
-- octonav.query over the world tree from the same start to the same goal: q:find): mean and worst.
-- Masks are prepared first (tree:los_prepare) so that no pass pays their build.
-- Run: lua5.4 bench/navcost.lua PACK (after `make`).
package.path = "lua/?.lua;lua/?/init.lua;bench/lua/?.lua;" .. package.path
package.cpath = (os.getenv("OCTONAV_BUILD") or "build") .. "/?.so;" .. package.cpath
local octonav = require "octonav"
local core = require "octonav.core"
local navigator = require "octonav.navigator"

local pack = arg[1]
if not pack or pack:sub(1, 2) == "--" then
  io.stderr:write("usage: lua5.4 bench/navcost.lua PACK [--pairs K] [--seed S] [--speed V] [--passes P]\n")
  os.exit(2)
end
local o = { pairs = 40, seed = 1, speed = 4, passes = 3, frames = 4000 }
for i = 2, #arg, 2 do
  local k = arg[i]:match("^%-%-(.+)$")
  local v = tonumber(arg[i + 1])
  if not k or o[k] == nil or not v then
    io.stderr:write("bench/navcost.lua: bad option " .. tostring(arg[i]) .. "\n")
    os.exit(2)
  end
  o[k] = v
end

local U = require "octonav.bench_util"
local dist = U.dist

local world = assert(octonav.world.load(pack))
assert(world.tree:los_prepare())
local rnd = U.lcg(o.seed)
local function free_point() return U.free_point(world, rnd) end
-- pairs with a seamless path (one query over the world tree)
local pairs_, seamless = {}, {}
local q = octonav.query.new(world.tree, { max_nodes = 4194304 })
while #pairs_ < o.pairs do
  local a, b = free_point(), free_point()
  local path, info = q:find(a, b)
  if path then
    pairs_[#pairs_ + 1] = { a = a, b = b }
    seamless[#pairs_] = info.length
  end
end
q:close()

local function run(opts)
  local navs, pos, walked = {}, {}, {}
  for k, pr in ipairs(pairs_) do
    navs[k] = navigator.new(world, opts)
    navs[k]:go(pr.b)
    pos[k], walked[k] = { pr.a[1], pr.a[2], pr.a[3] }, 0
  end
  local left, cpu, arrived = #pairs_, 0, 0
  local done = {}
  local speed = o.speed * world.scale
  for _ = 1, o.frames do
    if left == 0 then break end
    for k = 1, #pairs_ do
      if not done[k] then
        local t0 = core.thread_clock()
        local st, wp = navs[k]:update(pos[k])
        cpu = cpu + core.thread_clock() - t0
        if st == "arrived" then
          done[k], left, arrived = true, left - 1, arrived + 1
          walked[k] = walked[k] + dist(pos[k], wp)
        elseif st == "failed" then
          done[k], left = true, left - 1
        elseif st == "moving" then
          local p = pos[k]
          local d = dist(p, wp)
          local t = d > 0 and math.min(1, speed / d) or 0
          local nx = { p[1] + (wp[1] - p[1]) * t, p[2] + (wp[2] - p[2]) * t, p[3] + (wp[3] - p[3]) * t }
          walked[k] = walked[k] + dist(p, nx)
          pos[k] = nx
        end
      end
    end
  end
  local checks, sum, worst = 0, 0, 0
  for k = 1, #pairs_ do
    checks = checks + navs[k]:stats().checks
    local r = walked[k] / seamless[k]
    if done[k] then
      sum = sum + r
      if r > worst then worst = r end
    end
    navs[k]:close()
  end
  return { cpu = cpu, checks = checks, arrived = arrived, mean = sum / math.max(1, arrived), worst = worst }
end

local configs = { { "recheck 0 (every move, as before)", { recheck = 0 } }, { "recheck 0.5", { recheck = 0.5 } } }
print(("%s: %d pairs, seed %d, %g leaves a frame, fastest of %d passes (masks prepared)"):format(pack, o.pairs,
  o.seed, o.speed, o.passes))
print("| smoothers | updates' thread CPU s | ms per arrival | lines of sight per arrival | arrived |"
  .. " walk / seamless mean | worst |")
print("|---|---|---|---|---|---|---|")
local best = {}
for _ = 1, o.passes do
  for c, cf in ipairs(configs) do
    local r = run(cf[2])
    if not best[c] or r.cpu < best[c].cpu then best[c] = r end
  end
end
for c, cf in ipairs(configs) do
  local r = best[c]
  print(("| %s | %.3f | %.3f | %.1f | %d of %d | %.5f | %.5f |"):format(cf[1], r.cpu, r.cpu * 1e3 / math.max(1, r.arrived),
    r.checks / math.max(1, r.arrived), r.arrived, #pairs_, r.mean, r.worst))
end
world:close()
