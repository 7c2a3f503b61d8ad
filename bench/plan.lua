-- bench/plan.lua PACK [--pairs N] [--seed S] [--passes P]
-- world:plan as a game calls it (issue 31, goal 2): the pack opened with octonav.world.load (nothing
-- prepared), N random pairs of free points outside the holes (200, seed S), each planned once (its
-- first call) on the game's thread; per pass and per world form, the plan's thread CPU time
-- (core.thread_clock: p50, p90, p99, worst, ms) and the mean route cost. The two forms run side by side
-- in each pass on the same pairs: the world as loaded (its tree's cell adjacency on, the default) and
-- loaded with { adjacency = false }; a plan joins its ends over boxes (route_start.c, reach.c), so the
-- adjacency should not move it (a check that it does not). Each figure: the fastest of the passes.
-- --forms 1: the default form only. --times FILE writes each pair's fastest time (ms, default form: "k ms").
-- --faults 1: each plan's minor page faults as well (Linux: /proc/self/stat, read outside the timed call; the
-- default form's first pass: the pages a plan touches first, which a later pass may find reused), their p99,
-- worst and sum, and the five slowest plans by time with their faults; --times then writes "k ms faults".
-- --costs FILE writes each pair's route cost (a line each, the default form's, "-" when none);
-- --ref FILE reads such a file (for example from a build with CFLAGS=-DROUTE_FULL_JOIN: every join a
-- whole search of its tile's component, route_start.c) and prints the mean and worst cost ratio.
-- Run: lua5.4 bench/plan.lua PACK (after `make`).
package.path = "lua/?.lua;lua/?/init.lua;bench/lua/?.lua;" .. package.path
package.cpath = (os.getenv("OCTONAV_BUILD") or "build") .. "/?.so;" .. package.cpath
local octonav = require "octonav"
local core = require "octonav.core"

local function usage(msg)
  io.stderr:write("bench/plan.lua: " .. msg .. "\n")
  os.exit(2)
end

local pack = arg[1]
if not pack or pack:sub(1, 2) == "--" then usage("usage: lua5.4 bench/plan.lua PACK [--pairs N] [--seed S] [--passes P]") end
local o = { pairs = 200, seed = 1, passes = 3, forms = 2, faults = 0 }
local files = { costs = false, ref = false, only = false, times = false }
local i = 2
while i <= #arg do
  local k = arg[i]:match("^%-%-(.+)$")
  if k and files[k] ~= nil then
    if not arg[i + 1] then usage("--" .. k .. " needs a file name") end
    files[k] = arg[i + 1]
  else
    local v = tonumber(arg[i + 1])
    if not k or o[k] == nil then usage("unknown argument " .. arg[i]) end
    if not v then usage("--" .. k .. " needs a number") end
    o[k] = v
  end
  i = i + 2
end

-- xorshift64* as bench.lua's (seeded), 0 <= x < 1: octonav.core.xorshift, the same sequence on every Lua
-- (issue 34: 5.3's bit operators before)
local rng = core.xorshift

local function pct(xs, p)
  local s = {}
  for j = 1, #xs do s[j] = xs[j] end
  table.sort(s)
  if #s == 0 then return 0 end
  local k = math.ceil(#s * p)
  return s[math.max(1, math.min(#s, k))]
end

-- --only LIST: plan only these pairs (numbers from 1, comma-separated; the others are drawn all the same),
-- for example the slowest ones under callgrind
local only
if files.only then
  only = {}
  for n in files.only:gmatch("%d+") do only[tonumber(n)] = true end
end

-- the process's minor page faults so far (field 10 of /proc/self/stat), nil where there is none
local function minflt()
  local f = io.open("/proc/self/stat", "r")
  if not f then return nil end
  local line = f:read("*l")
  f:close()
  local rest = line and line:match("%) (.*)$")
  if not rest then return nil end
  local k = 2 -- (field 3, the state, is rest's first)
  for w in rest:gmatch("%S+") do
    k = k + 1
    if k == 10 then return tonumber(w) end
  end
  return nil
end

local pairs_
local faults, faults_done -- per pair: the default form's first pass's minor faults (--faults 1)
local function run(adjacency)
  collectgarbage()
  local world = assert(octonav.world.load(pack, { adjacency = adjacency }))
  if not pairs_ then
    local rnd = rng(o.seed)
    local function free_point() return require("octonav.bench_util").free_point(world, rnd) end
    pairs_ = {}
    for k = 1, o.pairs do pairs_[k] = { free_point(), free_point() } end
  end
  local ms, cost, found, costs, per = {}, 0, 0, {}, {}
  for k, pr in ipairs(pairs_) do
    if not only or only[k] then
      local count = o.faults == 1 and adjacency and not faults_done
      local f0 = count and minflt()
      local t0 = core.thread_clock()
      local route, c = world:plan(pr[1], pr[2])
      per[k] = (core.thread_clock() - t0) * 1e3
      if f0 then
        faults = faults or {}
        faults[k] = minflt() - f0
      end
      ms[#ms + 1] = per[k]
      if route then
        found = found + 1
        cost = cost + c
      end
      costs[k] = route and c or false
    end
  end
  world:close()
  if adjacency and faults then faults_done = true end
  return { p50 = pct(ms, 0.5), p90 = pct(ms, 0.9), p99 = pct(ms, 0.99), max = pct(ms, 1), found = found,
    cost = found > 0 and cost / found or 0, costs = costs, per = per }
end

local best = {}
local forms = o.forms == 1 and { true } or { true, false }
for _ = 1, o.passes do
  for _, form in ipairs(forms) do
    local r = run(form)
    local b = best[form]
    if not b then best[form] = r
    else
      for _, k in ipairs({ "p50", "p90", "p99", "max" }) do b[k] = math.min(b[k], r[k]) end
      for k, v in pairs(r.per) do b.per[k] = math.min(b.per[k], v) end
    end
  end
end
print(("world:plan on %s, %d pairs (seed %d), first call each, fastest of %d passes (thread CPU ms)"):format(
  pack, o.pairs, o.seed, o.passes))
print("| adjacency | p50 | p90 | p99 | worst | found | mean cost |")
print("|---|---:|---:|---:|---:|---:|---:|")
for _, form in ipairs(forms) do
  local b = best[form]
  print(("| %s | %.2f | %.2f | %.2f | %.2f | %d | %.2f |"):format(form and "on (default)" or "off", b.p50, b.p90, b.p99,
    b.max, b.found, b.cost))
end
local costs = best[true].costs
if faults then
  local fs, sum, order = {}, 0, {}
  for k, v in pairs(faults) do
    fs[#fs + 1] = v
    sum = sum + v
    order[#order + 1] = k
  end
  local per = best[true].per
  table.sort(order, function(a, b) return per[a] > per[b] end)
  local slow = {}
  for j = 1, math.min(5, #order) do
    slow[j] = ("%d (%.2f ms, %d)"):format(order[j], per[order[j]], faults[order[j]])
  end
  print(("minor page faults a plan (first pass): p99 %d, worst %d, sum %d; slowest (pair, ms, faults): %s"):format(
    pct(fs, 0.99), pct(fs, 1), sum, table.concat(slow, ", ")))
end
if files.times then
  local f = assert(io.open(files.times, "w"))
  for k = 1, o.pairs do
    local v = best[true].per[k]
    if v then f:write(faults and ("%d %.4f %d\n"):format(k, v, faults[k] or 0) or ("%d %.4f\n"):format(k, v)) end
  end
  f:close()
end
if files.costs then
  local f = assert(io.open(files.costs, "w"))
  for k = 1, o.pairs do f:write(costs[k] and ("%.17g\n"):format(costs[k]) or "-\n") end
  f:close()
end
if files.ref then
  local f = assert(io.open(files.ref, "r"))
  local sum, n, worst, k = 0, 0, 0, 0
  for line in f:lines() do
    k = k + 1
    local r = tonumber(line)
    if r and costs[k] and r > 0 then
      local q = costs[k] / r
      sum, n, worst = sum + q, n + 1, math.max(worst, q)
    end
  end
  f:close()
  print(("cost / %s's: mean %.4f, worst %.4f over %d pairs"):format(files.ref, n > 0 and sum / n or 0, worst, n))
end
