-- bench/arrivals.lua PACK [--agents N] [--ms X] [--frames F] [--passes P] [--seed S] [--pairs K] [--speed V]
--                         [--lead L] [--split 1] [--only 1|2] [--clock wall|thread]
-- Issue 31 goal 1's throughput, three ways, side by side in one process: N navigators (1000) fly
-- between K random free points (200, seed S: the pairs of bench/frames.lua), V leaves a frame (4), for
-- F frames (3000), twice a pass: without a budget (a loop of nav:update, each update spending its own
-- limits) and with one shared octonav.navigator.budget{ ms = X } (4) updated by budget:update (the
-- group), in alternating order from pass to pass. A frame's work is the navigators' calls (the loop, or
-- budget:update), timed on the game's thread by its CPU clock (core.thread_clock); the agents' own
-- motion is the game's, not counted. Arrivals are counted:
--   per frame            arrivals / F (x 1000);
--   per second of a 60 Hz game: a frame lasts max(1/60 s, its work), arrivals / the sum;
--   per CPU second       arrivals / the sum of the frames' work;
-- and the budgeted run's share of the unbudgeted run's for each (goal: >= 80 %), with the longest wait
-- of a navigator for its first move (frames; goal <= 60). --lead L: the navigators' lead_distance.
-- --clock: the budget's clock option (thread: its CPU clock, the default here as in the lead's frames runs;
-- wall: the budget's own default, which on a loaded machine counts the waits for a core as work).
-- --only 1: the budgeted run alone; --only 2: the unbudgeted run alone (no shares printed).
-- --split 1: where an arrival's CPU goes: the C calls of the tree, query, planner and walker objects
-- wrapped (their metatables' methods) and timed one by one on the thread CPU clock over the whole run,
-- printed per arrival (ms, calls) beside the frames' CPU left to Lua (the navigators', the group's and
-- the collector's); the wrapping adds its own cost (~0.3 us a call), counted in "Lua and the rest".
-- Run: lua5.4 bench/arrivals.lua /work/scratch/seed19 [--frames 1000] (after `make`).
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("OCTONAV_BUILD") or "build") .. "/?.so;" .. package.cpath
local octonav = require "octonav"
local core = require "octonav.core"
local navigator = require "octonav.navigator"

local function usage(msg)
  io.stderr:write("bench/arrivals.lua: " .. msg .. "\n")
  os.exit(2)
end

local pack = arg[1]
if not pack or pack:sub(1, 2) == "--" then usage("usage: lua5.4 bench/arrivals.lua PACK [options]") end
local o = { agents = 1000, ms = 4, frames = 3000, passes = 1, seed = 1, pairs = 200, speed = 4, lead = 0, split = 0, only = 0, clock = "thread" }
local i = 2
while i <= #arg do
  local k = arg[i]:match("^%-%-(.+)$")
  local v = tonumber(arg[i + 1])
  if not k or o[k] == nil then usage("unknown argument " .. arg[i]) end
  if k == "clock" then
    v = arg[i + 1]
    if v ~= "wall" and v ~= "thread" then usage("--clock needs wall or thread") end
  elseif not v then
    usage("--" .. k .. " needs a number")
  end
  o[k] = v
  i = i + 2
end

local function rng(seed) -- (bench/frames.lua's: the same pairs)
  local st = seed * 2654435761 % 4294967296
  return function()
    st = (st * 1664525 + 1013904223) % 4294967296
    return st / 4294967296
  end
end

local function dist(a, b)
  local dx, dy, dz = a[1] - b[1], a[2] - b[2], a[3] - b[3]
  return math.sqrt(dx * dx + dy * dy + dz * dz)
end

-- --split: the C methods of the world's tree, its queries, planners and the group's walker wrapped and
-- timed (thread CPU) while `inside` is true (the frames' work only). Returns the sums and a restore.
local function make_split(world)
  local tc = core.thread_clock
  local S = { sums = {}, counts = {}, names = {}, restore = {}, inside = false }
  local sums, counts, names = S.sums, S.counts, S.names
  local function finish(t0, label, ...)
    if S.inside then
      if sums[label] == nil then names[#names + 1] = label end
      sums[label] = (sums[label] or 0) + (tc() - t0)
      counts[label] = (counts[label] or 0) + 1
    end
    return ...
  end
  local function wrap(methods, prefix, list)
    for _, name in ipairs(list) do
      local f = methods[name]
      if type(f) == "function" then
        local label = prefix .. name
        methods[name] = function(...) return finish(tc(), label, f(...)) end
        S.restore[#S.restore + 1] = function() methods[name] = f end
      end
    end
  end
  wrap(getmetatable(world.tree).__index, "tree.", { "visible", "visible_xyz", "visible_many", "los_step",
    "locate", "locate_status", "raycast", "nearest_free", "revision" })
  local q = core.query.new(world.tree, { max_nodes = 16 })
  wrap(getmetatable(q).__index, "query.", { "start", "step", "step_until", "result", "result_step" })
  q:close()
  local planner = require "octonav.planner"
  local p = planner.acquire(world)
  wrap(getmetatable(p).__index, "planner.", { "start", "start_multi", "step", "flat", "plan", "result" })
  planner.release(world, p)
  local w = core.walker()
  wrap(getmetatable(w).__index, "walker.", { "walk", "take" })
  -- each navigator update, by the kind it was due for (navgroup.lua's kind_of), C calls within included
  local KIND = { "follow", "plan start", "search step", "result", "route step", "other", "lead move" }
  local function kind_of(nav)
    local sr = nav.search
    if sr then return sr.status == "finalizing" and 4 or 3 end
    if nav.lead_ready and nav.job == nil then return 7 end
    local st = nav.state
    if st == "moving" then return 1 end
    if st == "planning" then
      if nav.job then return 5 end
      return nav.cells == nil and 2 or 6
    end
    return 6
  end
  S.usums, S.ucounts = {}, {}
  local function udone(t0, k, ...)
    if S.inside then
      S.usums[k] = (S.usums[k] or 0) + (tc() - t0)
      S.ucounts[k] = (S.ucounts[k] or 0) + 1
    end
    return ...
  end
  local nav = navigator.new(world, {})
  local Nav = getmetatable(nav)
  nav:close()
  for _, name in ipairs { "update", "_walk_search" } do
    local f = Nav[name]
    Nav[name] = function(self, ...) return udone(tc(), KIND[kind_of(self)], f(self, ...)) end
    S.restore[#S.restore + 1] = function() Nav[name] = f end
  end
  function S.close()
    for _, r in ipairs(S.restore) do r() end
  end
  return S
end

-- One run: budgeted (group) or not. Returns { arrived, failed, frames_s (CPU s), game_s, first_wait }.
local function run(budgeted)
  collectgarbage()
  collectgarbage()
  local world = assert(octonav.world.load(pack))
  local rnd = rng(o.seed)
  local org, n, T = world.origin, world.tiles, world.tile_size
  local function free_point()
    for _ = 1, 100000 do
      local p = { org[1] + rnd() * n[1] * T, org[2] + rnd() * n[2] * T, org[3] + rnd() * n[3] * T }
      if world.tree:locate(p) == "free" and world:in_hole(p) == nil then return p end
    end
    error("no free point")
  end
  local prs = {}
  for k = 1, o.pairs do prs[k] = { a = free_point(), b = free_point() } end
  local split = o.split > 0 and make_split(world) or nil
  local budget = budgeted and navigator.budget { ms = o.ms, clock = o.clock } or nil
  local lead = o.lead > 0 and o.lead * world.scale or nil
  local navs, pos, since, moved, sts, wps = {}, {}, {}, {}, {}, {}
  local nextp = 0
  local function assign(s, frame)
    nextp = nextp % #prs + 1
    local pr = prs[nextp]
    local nav = navigator.new(world, { budget = budget, lead_distance = lead })
    nav:go(pr.b)
    navs[s], pos[s], since[s], moved[s] = nav, { pr.a[1], pr.a[2], pr.a[3] }, frame, false
  end
  for s = 1, o.agents do assign(s, 1) end
  local speed = o.speed * world.scale
  local tc = core.thread_clock
  local cpu, game, arrived, failed, first_wait = 0, 0, 0, 0, 0
  for f = 1, o.frames do
    if split then split.inside = true end
    local c0 = tc()
    if budget then
      budget:update(navs, pos, sts, wps)
    else
      for s = 1, o.agents do sts[s], wps[s] = navs[s]:update(pos[s]) end
    end
    local c = tc() - c0
    if split then split.inside = false end
    cpu, game = cpu + c, game + math.max(1 / 60, c)
    for s = 1, o.agents do
      local st, wp = sts[s], wps[s]
      if st == "arrived" or st == "failed" then
        if st == "arrived" then arrived = arrived + 1 else failed = failed + 1 end
        if not moved[s] and f - since[s] > first_wait then first_wait = f - since[s] end
        navs[s]:close()
        assign(s, f + 1)
      elseif st == "moving" and wp then
        if not moved[s] then
          moved[s] = true
          if f - since[s] > first_wait then first_wait = f - since[s] end
        end
        local p = pos[s]
        local d = dist(p, wp)
        local t = d > 0 and math.min(1, speed / d) or 0
        p[1], p[2], p[3] = p[1] + (wp[1] - p[1]) * t, p[2] + (wp[2] - p[2]) * t, p[3] + (wp[3] - p[3]) * t
      end
    end
  end
  -- a navigator still waiting at the end has waited this long for its first move
  for s = 1, o.agents do
    if not moved[s] and o.frames - since[s] > first_wait then first_wait = o.frames - since[s] end
    navs[s]:close()
  end
  if budget then budget:release_gc() end
  if split then split.close() end
  world:close()
  return { arrived = arrived, failed = failed, cpu = cpu, game = game, first_wait = first_wait, split = split }
end

print(("%s: %d agents, %d frames, seed %d, speed %g leaves a frame; budget ms %g (group) against no budget (loop)%s")
  :format(pack, o.agents, o.frames, o.seed, o.speed, o.ms, o.lead > 0 and (", lead_distance %g"):format(o.lead) or ""))
print("| pass | run | arrived (failed) | per 1000 frames | per 60 Hz game s | per CPU s | CPU s | game s |"
  .. " first move wait |")
for p = 1, o.passes do
  local r = {}
  local order = p % 2 == 1 and { false, true } or { true, false }
  if o.only == 1 then order = { true } elseif o.only == 2 then order = { false } end
  for _, b in ipairs(order) do r[b] = run(b) end
  local function rates(x)
    return x.arrived / o.frames * 1000, x.arrived / x.game, x.arrived / x.cpu
  end
  for _, b in ipairs(order) do
    local x = r[b]
    local pf, pg, pc = rates(x)
    print(("| %d | %s | %d (%d) | %.0f | %.1f | %.1f | %.1f | %.1f | %d |"):format(p, b and "budget ms " .. o.ms or "no budget",
      x.arrived, x.failed, pf, pg, pc, x.cpu, x.game, x.first_wait))
  end
  for _, b in ipairs(order) do
    local x, S = r[b], r[b].split
    if S then
      local n = math.max(1, x.arrived)
      local parts, c = {}, 0
      for _, k in ipairs(S.names) do
        c = c + S.sums[k]
        parts[#parts + 1] = { k, S.sums[k], S.counts[k] }
      end
      table.sort(parts, function(a, b2) return a[2] > b2[2] end)
      local txt = { ("Lua and the rest %.3f"):format((x.cpu - c) / n * 1e3) }
      for _, e in ipairs(parts) do
        txt[#txt + 1] = ("%s %.3f (%.1f)"):format(e[1], e[2] / n * 1e3, e[3] / n)
      end
      print(("  %s: CPU per arrival %.3f ms: %s"):format(b and "budget" or "no budget", x.cpu / n * 1e3,
        table.concat(txt, ", ")))
      local u, ut = 0, {}
      for k, v in pairs(S.usums) do
        u = u + v
        ut[#ut + 1] = { k, v, S.ucounts[k] }
      end
      table.sort(ut, function(a, b2) return a[2] > b2[2] end)
      txt = { ("outside the updates %.3f"):format((x.cpu - u) / n * 1e3) }
      for _, e in ipairs(ut) do txt[#txt + 1] = ("%s %.3f (%.1f)"):format(e[1], e[2] / n * 1e3, e[3] / n) end
      print("    navigator updates by kind, per arrival (ms, updates; C calls within): " .. table.concat(txt, ", "))
    end
  end
  if #order == 2 then
    local uf, ug, uc = rates(r[false])
    local bf, bg, bc = rates(r[true])
    local function share(b, u) return u > 0 and 100 * b / u or 0 end
    local function met(s) return s >= 80 and "met" or "not met" end
    local sf, sg, sc = share(bf, uf), share(bg, ug), share(bc, uc)
    print(("  budgeted / unbudgeted: per frame %.0f %% (%s), per 60 Hz game second %.0f %% (%s), per CPU second %.0f %%"
      .. " (%s); first move within 60 frames with the budget: %s (%d frames)"):format(sf, met(sf), sg, met(sg), sc, met(sc),
      r[true].first_wait <= 60 and "met" or "not met", r[true].first_wait))
  end
end
