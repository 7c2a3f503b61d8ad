--- octonav.bench_world: the world benchmark of issue 11 (`bin/octonav bench-world`, `make bench`).
--
--   local bw = require "octonav.bench_world"
--   local rows = bw.run { worlds = { "dungeon", "house", "t16", "t32" }, pairs = 60 }
--   print(bw.table(rows))
--
-- Per world, with fixed seeds, everything in one process and one run:
--   * bake (one process, timed) into a temporary directory, never into the repository;
--   * open the pack (octonav.world.load): wall time, growth of the Lua heap and of the resident set,
--     the tree's bytes (tree:stats().bytes) and the hierarchy's bytes (Lua heap growth of the open
--     beyond what the tree holds in C, plus the world graph's bytes in C: world:graph_bytes()), graph
--     file sizes;
--   * random start/goal pairs (free in the world tree, in no hole; a pair counts when one seamless
--     q:find over the fully loaded tree finds a path): world:plan time (p50, p99); a navigator walks the
--     route (the agent moves `speed` toward the waypoint each frame) and its walked length is compared
--     with the seamless query's length (mean and max of the per-pair ratio); failures = pairs the
--     seamless query solves and the navigator does not (failed, or no arrival within the frame limit);
--   * the pack opened a second time and its tree prepared (tree:prepare and tree:los_prepare, unless
--     prepare = false: boxes and line-of-sight masks, what streamer.new(dir, { prepare = true })
--     builds on its workers);
--   * 100 navigators at once over the same pairs (each frame updates all 100), side by side, fastest
--     of `passes` runs each: before (each navigator its own budgets, the tree as loaded) and after (one
--     octonav.navigator.budget shared by all, `budget` = its options, { ms = 3 } unless given, on the
--     prepared tree): frame p50
--     and p99 by the wall clock and by the CPU clock, arrivals, the most work in one frame (M.crowd),
--     and the worst frame of the first after run (wall and CPU: what a fresh start costs);
--     plan times and walks are measured on the prepared tree, the walks with a budget of their own;
--   * optionally (jobs = "tile" | "job"), bake over `--tile I,J,K` jobs (one per tile) or two
--     `--job N/2` jobs: serial (`xargs -P1`) against `xargs -P2` (plus the link step each time; wall
--     and CPU seconds, the CPU of every process under bash's `time`), the packs compared byte for byte
--     with the one-process bake; and a 4-tile rebake (world:rebake).
-- Worlds: "dungeon" (../shared/data/worlds/dungeon.lua), "house" (house.obj at 0.125 m leaves, depth
-- 6, path weights), "t16" / "t32" (../shared/data/worlds/terrain.lua at 16x2x16 / 32x2x32),
-- "tN" for any N and "tNxS" (N x 1 x N tiles of S^3 1 m leaves: t8x512 is the seed's 4096 m world).
-- Worlds whose data are absent are skipped (row.skipped says why).
-- bench_world.soak(opts): the streaming soak of issue 12 (100 navigators, doors toggling, max_loaded),
-- in bench_soak.lua; `lua5.4 -e 'print(require"octonav.bench_world".soak_report())'` prints its counts.
local compat = require "octonav.compat"

local M = {}

-- Option names each function takes (a misspelt one is an error, not a default silently used).
local MEASURE_OPTS = { pairs = true, seed = true, data = true, walkers = true, frames = true, passes = true,
  prepare = true, budget = true, jobs = true, job_passes = true, rebake = true, as_loaded = true,
  as_loaded_passes = true, as_loaded_walks = true, bin = true, log = true, env = true, pack = true, speed = true }
local AS_LOADED_OPTS = { passes = true, walks = true, speed = true, budget = true }

local U = require "octonav.bench_util"
local check_opts, clock, rng, pct, dist, exists = U.check_opts, U.clock, U.rng, U.pct, U.dist, U.exists
local rss_bytes, tmpdir, sh_quote, rm_rf, dir_bytes = U.rss_bytes, U.tmpdir, U.sh_quote, U.rm_rf, U.dir_bytes
local load_config, walk = U.load_config, U.walk

--- The worlds: name -> { config = function(out) -> config table, file = config path, env = vars }
-- (file/env: how `bin/octonav bake FILE --tile` jobs see the same config).
function M.world_spec(name, data)
  data = data or "../shared/data"
  if name == "dungeon" then
    local file = data .. "/worlds/dungeon.lua"
    if not exists(file) or not exists(data .. "/meshes/dungeon.obj") then
      return nil, "dungeon.lua or dungeon.obj absent"
    end
    return { name = name, file = file, env = {} }
  elseif name == "house" then
    local obj = data .. "/meshes/house.obj"
    if not exists(obj) then return nil, "house.obj absent" end
    -- the house as spec/08 and spec/11 bake it, with path weights (the issue's figures)
    local text = ([[
-- house.obj (bench_world): 0.125 m leaves, depth 6, path weights. Environment: OUT (pack dir).
return {
  range = { min = { -11, -0.1, -9 }, max = { 8.8, 13.9, 8.6 } },
  scale = 0.125, depth = 6,
  geometry = { { obj = %q } },
  connect = { merge_distance = 4, weights = os.getenv("WEIGHTS") or "path" },
  output = os.getenv("OUT") or "house_pack",
}
]]):format(obj:sub(1, 1) == "/" and obj or (os.getenv("PWD") or ".") .. "/" .. obj)
    local file = os.tmpname()
    local f = assert(io.open(file, "w"))
    f:write(text)
    f:close()
    return { name = name, file = file, env = {}, temp_file = true }
  else
    local n = name:match("^t(%d+)$")
    local big, side = name:match("^t(%d+)x(%d+)$") -- tNxS: N x 1 x N tiles of S^3 leaves of 1 m
    local depth = side and compat.log2(tonumber(side))
    if not n and not (depth and depth == math.floor(depth) and depth >= 1) then
      error("octonav.bench_world: unknown world '" .. tostring(name) .. "'", 2)
    end
    local file = data .. "/worlds/terrain.lua"
    if not exists(file) then return nil, "terrain.lua absent" end
    if big then
      return { name = name, file = file, env = { NX = big, NZ = big, NY = 1, DEPTH = math.floor(depth), SCALE = 1 } }
    end
    return { name = name, file = file, env = { NX = n, NZ = n, NY = 2 } }
  end
end

local function env_prefix(env)
  local parts = {}
  for k, v in pairs(env) do parts[#parts + 1] = k .. "=" .. sh_quote(v) end
  table.sort(parts)
  return table.concat(parts, " ")
end

-- Runs a shell command under bash's `time`: ok, CPU seconds (user + system of it and its children).
local function timed(cmd)
  local tf = os.tmpname()
  local ok = compat.execute(("bash -c %s 2> %s"):format(sh_quote("TIMEFORMAT='%3U %3S'; time ( " .. cmd .. " )"),
    sh_quote(tf)))
  local f = io.open(tf, "r")
  local text = f and f:read("*a") or ""
  if f then f:close() end
  os.remove(tf)
  local u, sy = text:match("([%d%.]+) ([%d%.]+)%s*$")
  return ok, (tonumber(u) or 0) + (tonumber(sy) or 0)
end

-- Bakes a world's config over jobs with xargs -P<par>, then the link step; wall seconds. kind "tile":
-- one `--tile I,J,K` job per tile; "job": `--job N/M` jobs, M = `batches`, each job's wall and CPU
-- seconds (user + system, bash's `time`) in job_s / job_cpu (indexed by N + 1).
local function bake_jobs(spec, out, par, octonav_bin, kind, batches)
  local cfg = load_config(spec.file, setmetatable({ OUT = out }, { __index = spec.env }))
  local grid = require("octonav.bake").grid(cfg)
  local list = os.tmpname()
  local f = assert(io.open(list, "w"))
  if kind == "job" then
    for n = 0, batches - 1 do f:write(("%d/%d\n"):format(n, batches)) end
  else
    for k = 0, grid.tiles[3] - 1 do
      for j = 0, grid.tiles[2] - 1 do
        for i = 0, grid.tiles[1] - 1 do f:write(("%d,%d,%d\n"):format(i, j, k)) end
      end
    end
  end
  f:close()
  local env = {}
  for k, v in pairs(spec.env) do env[k] = v end
  env.OUT = out
  local pre = env_prefix(env)
  local times = os.tmpname()
  local job_cmd = ("%s %s bake %s --%s {} > /dev/null"):format(compat.lua_command, sh_quote(octonav_bin), sh_quote(spec.file),
    kind == "job" and "job" or "tile")
  if kind == "job" then -- each job under bash's time: "N/M wall user system" lines appended to `times`
    job_cmd = ("bash -c %s"):format(sh_quote("TIMEFORMAT='{} %3R %3U %3S'; time ( " .. job_cmd .. " ) 2>> " ..
      sh_quote(times)))
  end
  local t0 = clock()
  local ok1, cpu1 = timed(("%s xargs -P%d -I{} %s < %s"):format(pre, par, job_cmd, sh_quote(list)))
  local t1 = clock()
  local job_s, job_cpu = {}, {}
  local tf = io.open(times, "r")
  for line in (tf and tf:lines() or function() end) do
    local jn, r, u, sy = line:match("^(%d+)/%d+ ([%d%.]+) ([%d%.]+) ([%d%.]+)%s*$")
    if jn then job_s[tonumber(jn) + 1], job_cpu[tonumber(jn) + 1] = tonumber(r), tonumber(u) + tonumber(sy) end
  end
  if tf then tf:close() end
  os.remove(times)
  local ok2, cpu2 = timed(("%s %s %s bake %s --link > /dev/null"):format(pre, compat.lua_command, sh_quote(octonav_bin),
    sh_quote(spec.file)))
  local t2 = clock()
  os.remove(list)
  return { ok = ok1 and ok2 and true or false, tiles_s = t1 - t0, link_s = t2 - t1, total_s = t2 - t0,
    cpu_s = cpu1 + cpu2, job_s = job_s, job_cpu = job_cpu }
end

local function pack_bytes(out)
  local h = io.popen("cat " .. sh_quote(out) .. "/manifest.txt " .. sh_quote(out) .. "/tiles/* " ..
    sh_quote(out) .. "/holes/* 2>/dev/null | md5sum")
  local s = h:read("*l")
  h:close()
  return s
end

local WORK_KINDS = { "expansions", "portals", "plans", "results", "checks" }

--- The most work of each kind in one frame, as text ("expansions 1000, portals 2048, ...").
function M.work_text(max)
  if not max then return "-" end
  local parts = {}
  for _, k in ipairs(WORK_KINDS) do parts[#parts + 1] = ("%s %d"):format(k, max[k] or 0) end
  return table.concat(parts, ", ")
end

--- bench_world.crowd(world, pairs, opts) -> { p50_ms, p99_ms, cpu_p50_ms, cpu_p99_ms, max_ms, cpu_max_ms,
-- arrived, failed, max, budget }: `walkers` (100) navigators at once over `pairs` ({ a, b } each, taken in turn: a
-- navigator that arrives or fails gets the next pair) for `frames` (300) frames, the agents moving
-- `speed` a frame toward their waypoints; frame = the updates of every navigator (with a budget, its
-- budget:frame() too), timed by the wall clock and by the process's CPU clock (os.clock: on a machine
-- shared with other jobs, the wall clock also counts the time this process waited for a core). opts.budget:
-- the options of one octonav.navigator.budget shared by all of them (nil: none, each navigator spends
-- its own query_budget, plan_budget and checks_per_frame every update); max = the budget's most work in
-- one frame (budget:stats().max).
function M.crowd(world, pairs_, opts)
  local nav_mod = require "octonav.navigator"
  local walkers, speed = opts.walkers or 100, opts.speed or 4 * world.scale
  local budget = opts.budget and nav_mod.budget(opts.budget) or nil
  local nav_opts = budget and { budget = budget } or nil
  local navs, frame_ms, cpu_ms = {}, {}, {}
  local nextp, arrived, failed = 0, 0, 0
  local function assign(slot)
    nextp = nextp % #pairs_ + 1
    local pr = pairs_[nextp]
    local nav = nav_mod.new(world, nav_opts)
    nav:go(pr.b)
    navs[slot] = { nav = nav, pos = { pr.a[1], pr.a[2], pr.a[3] } }
  end
  if #pairs_ > 0 then
    collectgarbage()
    for s = 1, walkers do assign(s) end
    local moves = {}
    for s = 1, walkers do moves[s] = {} end
    for _ = 1, opts.frames or 300 do
      local t, c = clock(), os.clock()
      if budget then budget:frame() end
      for s = 1, walkers do
        local w, m = navs[s], moves[s]
        m[1], m[2] = w.nav:update(w.pos)
      end
      frame_ms[#frame_ms + 1] = (clock() - t) * 1e3
      cpu_ms[#cpu_ms + 1] = (os.clock() - c) * 1e3
      for s = 1, walkers do
        local w, status, wp = navs[s], moves[s][1], moves[s][2]
        if status == "arrived" or status == "failed" then
          if status == "arrived" then arrived = arrived + 1 else failed = failed + 1 end
          w.nav:close()
          assign(s)
        elseif status == "moving" and wp then
          local d = dist(w.pos, wp)
          local tt = d > 0 and math.min(1, speed / d) or 0
          local p = w.pos
          w.pos = { p[1] + (wp[1] - p[1]) * tt, p[2] + (wp[2] - p[2]) * tt, p[3] + (wp[3] - p[3]) * tt }
        end
      end
    end
    for s = 1, walkers do navs[s].nav:close() end
  end
  return { p50_ms = pct(frame_ms, 0.5), p99_ms = pct(frame_ms, 0.99), cpu_p50_ms = pct(cpu_ms, 0.5),
    cpu_p99_ms = pct(cpu_ms, 0.99), max_ms = pct(frame_ms, 1), cpu_max_ms = pct(cpu_ms, 1), arrived = arrived,
    failed = failed,
    max = budget and budget:stats().max or nil, budget = budget and budget:stats().per_frame or nil,
    ms = budget and budget:stats().ms or nil, cut = budget and budget:stats().cut or nil }
end

--- bench_world.as_loaded(dir, pairs, opts) -> { passes, p50_us, p90_us, p99_us, cpu_p50_us, cpu_p90_us,
-- cpu_p99_us, planner_bytes, costs, failed[, ratio_mean, ratio_max, walk_failures] }: route plans on the
-- pack in `dir` as loaded (no tree:prepare, no streamer join sets: the planner builds what its joins
-- need). Each of `passes` (3) passes opens the pack afresh and plans every pair once, in order, with
-- one planner of its own (planner.start, as world:plan: a pair's plan is its first, the planner's box
-- cache holding only the earlier pairs' tiles); a pair's time is its fastest over the passes (wall and
-- CPU clocks). planner_bytes: that planner's bytes and the world graph's join scratch after the
-- first pass's plans; costs[i]: pair i's route cost (nil: no route). opts.walks: a navigator walks
-- every pair on the first open as loaded as well (walked / seamless as measure's; opts.speed, budget).
function M.as_loaded(dir, pairs_, opts)
  opts = opts or {}
  check_opts("as_loaded", opts, AS_LOADED_OPTS)
  local octonav = require "octonav"
  local planner = require "octonav.planner"
  local passes = opts.passes or 3
  local wall, cpu, costs, failed, bytes = {}, {}, {}, 0, 0
  local ratios, walk_failures = {}, 0
  for pass = 1, passes do
    local world = assert(octonav.world.load(dir))
    local p = world.graph:planner()
    collectgarbage()
    for i, pr in ipairs(pairs_) do
      local c0, t0 = os.clock(), clock()
      local job = planner.start(world, pr.a, pr.b, p)
      local st = job:step(1073741824)
      while st == "running" do st = job:step(1073741824) end
      local route, cost = job:result()
      local t, c = (clock() - t0) * 1e6, (os.clock() - c0) * 1e6
      wall[i], cpu[i] = math.min(wall[i] or math.huge, t), math.min(cpu[i] or math.huge, c)
      if pass == 1 then
        costs[i] = route and cost or nil
        if not route then failed = failed + 1 end
      end
    end
    if pass == 1 then
      bytes = p:bytes() + world.graph:joins_bytes()
      if opts.walks then
        local nav_mod = require "octonav.navigator"
        local speed = opts.speed or 4 * world.scale
        for _, pr in ipairs(pairs_) do
          local limit = math.floor(4 * pr.seamless / speed) + 3000
          local budget = nav_mod.budget(opts.budget)
          local status, walked = walk(nav_mod, world, pr.a, pr.b, speed, limit, { budget = budget }, budget)
          if status == "arrived" then ratios[#ratios + 1] = walked / pr.seamless
          else walk_failures = walk_failures + 1 end
        end
      end
    end
    world:close()
    collectgarbage()
  end
  local r = { passes = passes, p50_us = pct(wall, 0.5), p90_us = pct(wall, 0.9), p99_us = pct(wall, 0.99),
    cpu_p50_us = pct(cpu, 0.5), cpu_p90_us = pct(cpu, 0.9), cpu_p99_us = pct(cpu, 0.99), planner_bytes = bytes,
    costs = costs, failed = failed }
  if opts.walks then
    local sum = 0
    for _, q in ipairs(ratios) do sum = sum + q end
    r.ratio_mean, r.ratio_max, r.walk_failures = #ratios > 0 and sum / #ratios or 0, pct(ratios, 1.0), walk_failures
  end
  return r
end

--- Markdown table of the as-loaded plans of rows from run() with opts.as_loaded (M.as_loaded), beside
-- the prepared tree's plan times (an empty string when no row has them).
function M.loaded_table(rows)
  local lines = {
    "| world | plan p50 / p99 ms prepared | as loaded: p50 / p90 / p99 ms | CPU p50 / p90 / p99 ms | planner + join" ..
      " scratch MB | boxes MB (prepared) | route cost / prepared mean / max | failed | walked/seamless mean / max |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
  }
  local any = false
  for _, r in ipairs(rows) do
    local l = r.loaded
    if not r.skipped and l then
      any = true
      lines[#lines + 1] = ("| %s | %.2f / %.2f | %.2f / %.2f / %.2f | %.2f / %.2f / %.2f | %.2f | %s | %.4f / %.4f | %d | %s |")
        :format(r.name, r.plan_p50_us / 1e3, r.plan_p99_us / 1e3, l.p50_us / 1e3, l.p90_us / 1e3, l.p99_us / 1e3,
          l.cpu_p50_us / 1e3, l.cpu_p90_us / 1e3, l.cpu_p99_us / 1e3, l.planner_bytes / 2^20,
          r.box_bytes and ("%.2f"):format(r.box_bytes / 2^20) or "-", l.cost_mean or 0, l.cost_max or 0, l.failed,
          l.ratio_mean and ("%.3f / %.3f (%d failed)"):format(l.ratio_mean, l.ratio_max, l.walk_failures) or "-")
    end
  end
  return any and table.concat(lines, "\n") or ""
end

--- Opens a pack in this process and measures it: { open_s, open_heap, open_rss, tree_bytes, hier_bytes }.
-- hier_bytes: the Lua heap the open added (graph tables) plus world:graph_bytes() when the world has
-- it (a graph held in C).
function M.open_probe(dir)
  local world_mod = require "octonav.world"
  collectgarbage()
  collectgarbage()
  local heap0, rss0 = collectgarbage("count") * 1024, rss_bytes()
  local t0 = clock()
  local world = assert(world_mod.load(dir))
  local r = { open_s = clock() - t0 }
  r.open_rss = rss_bytes() - rss0
  collectgarbage()
  collectgarbage()
  r.open_heap = collectgarbage("count") * 1024 - heap0
  r.tree_bytes = world.tree:stats().bytes
  r.hier_bytes = r.open_heap + (world.graph_bytes and world:graph_bytes() or 0)
  world:close()
  return r
end

--- Measures one world (see the top of this file). opts: pairs (60), seed (1), data ("../shared/data"),
-- walkers (100), frames (300: frames of the 100-navigator run), passes (2: runs of each crowd variant),
-- prepare (true: the after runs, plans and walks on a prepared tree), budget (the after runs' budget
-- options; nil: the defaults and ms = 3: a frame stops taking work after 3 ms), jobs (nil | "tile" |
-- "job": serial and -P2 bakes over jobs, fastest of job_passes (3) passes),
-- rebake (false: a 4-tile rebake), as_loaded (false: plans on the world as loaded as well, see
-- M.as_loaded; as_loaded_passes (3) fresh opens, as_loaded_walks (false) the walks too), bin (path of
-- bin/octonav), log (function(msg) or nil), env (nil: the
-- config's environment variables set beside the world's own, e.g. { SEED = 3, NX = 12, NZ = 20 }), pack (nil: a
-- directory that already holds this world's pack, baked with the same config: no bake, bake_s is nil, the
-- directory is kept; t8x512's bake takes ~200 CPU seconds).
function M.measure(name, opts)
  opts = opts or {}
  check_opts("measure", opts, MEASURE_OPTS)
  local octonav = require "octonav"
  local log = opts.log or function() end
  local spec, why = M.world_spec(name, opts.data)
  if not spec then return { name = name, skipped = why } end
  if opts.env then -- the config's environment varied (terrain.lua's SEED, NX, NY, NZ; dungeon.lua's SEED ...)
    local env = {}
    for k, v in pairs(spec.env) do env[k] = v end
    for k, v in pairs(opts.env) do env[k] = v end
    spec.env = env
  end
  local row = { name = name }
  local out = opts.pack or tmpdir()
  local t0
  if opts.pack then
    local m = io.open(out .. "/manifest.txt", "rb")
    if not m then error("octonav.bench_world: option 'pack': no manifest.txt in " .. tostring(out), 2) end
    m:close()
  else
    local cfg = load_config(spec.file, setmetatable({ OUT = out }, { __index = spec.env }))
    -- bake (one process)
    collectgarbage()
    t0 = clock()
    local summary = assert(octonav.bake(cfg))
    row.bake_s = clock() - t0
    row.tiles = summary.tiles
    row.portals = summary.portals
    log(("%s: baked %d tiles in %.2f s"):format(name, row.tiles, row.bake_s))
  end
  row.graph_file_bytes = dir_bytes(out, "*.graph")
  -- open, in a fresh process (the resident set of this one holds the bake's garbage)
  local probe = io.popen(("%s -e %s"):format(compat.lua_command, sh_quote(([[package.path=%q package.cpath=%q
    local bw = require "octonav.bench_world" local r = bw.open_probe(%q)
    print(r.open_s, r.open_heap, r.open_rss, r.tree_bytes, r.hier_bytes)]]):format(package.path, package.cpath, out))))
  local line = probe:read("*a")
  probe:close()
  local v = {}
  for x in line:gmatch("%S+") do v[#v + 1] = tonumber(x) end
  row.open_s, row.open_heap, row.open_rss, row.tree_bytes, row.hier_bytes = v[1], v[2], v[3], v[4], v[5]
  assert(row.open_s, "open probe failed: " .. line)
  local world = assert(octonav.world.load(out))
  if not row.tiles then row.tiles = world.tiles[1] * world.tiles[2] * world.tiles[3] end
  log(("%s: opened in %.2f s, heap +%.1f MB, rss +%.1f MB, tree %.2f MB, hierarchy %.2f MB"):format(name, row.open_s,
    row.open_heap / 2^20, row.open_rss / 2^20, row.tree_bytes / 2^20, row.hier_bytes / 2^20))
  -- pairs
  local rnd = rng(opts.seed or 1)
  local o, n, T = world.origin, world.tiles, world.tile_size
  local function free_point() return U.free_point(world, rnd, name) end
  local q = octonav.query.new(world.tree, { max_nodes = 4194304 })
  local pairs_, attempts = {}, 0
  local want = opts.pairs or 60
  while #pairs_ < want and attempts < want * 20 do
    attempts = attempts + 1
    local a, b = free_point(), free_point()
    local p, info = q:find(a, b)
    if p then pairs_[#pairs_ + 1] = { a = a, b = b, seamless = info.length } end
  end
  q:close()
  row.pairs, row.unsolvable = #pairs_, attempts - #pairs_
  -- the same pack opened again, its tree prepared for searches over boxes (tree:prepare: a game
  -- prepares its nav data once); the first copy stays as it was before the frame budget existed
  local nav_mod = require "octonav.navigator"
  local speed = opts.speed or 4 * world.scale
  local walkers = opts.walkers or 100
  local pworld = world
  if opts.prepare ~= false then
    pworld = assert(octonav.world.load(out))
    collectgarbage()
    t0 = clock()
    pworld.tree:prepare()
    -- and its line-of-sight masks (what the streamer's workers build beside each tile's decode): the
    -- first line of sight through a tile does not pay for them (~14 ms a 512^3 tile)
    row.los_bytes = assert(pworld.tree:los_prepare())
    row.prepare_s = clock() - t0
    row.box_bytes = pworld.tree:stats().box_bytes
    log(("%s: prepared in %.2f s, boxes %.2f MB, line-of-sight masks %.2f MB"):format(name, row.prepare_s,
      row.box_bytes / 2^20, row.los_bytes / 2^20))
  end
  -- 100 navigators at once, side by side in this process, fastest of `passes` (2) runs each: before =
  -- each navigator spending its own query_budget a frame on the tree as loaded (no shared budget);
  -- after = one octonav.navigator.budget shared by all of them (opts.budget: its options), on the
  -- prepared tree
  local before, after
  local function fastest(acc, r)
    if not acc then return r end
    for _, k in ipairs { "p50_ms", "p99_ms", "cpu_p50_ms", "cpu_p99_ms" } do acc[k] = math.min(acc[k], r[k]) end
    return acc
  end
  -- the first pass's worst frame (wall, CPU) is kept apart: what a game's first frames with these
  -- navigators cost (planners, their scratch memory and the query's made on first use), which the
  -- fastest-of figures hide
  local first
  for pass = 1, opts.passes or 2 do
    before = fastest(before, M.crowd(world, pairs_, { walkers = walkers, frames = opts.frames, speed = speed }))
    local a = M.crowd(pworld, pairs_, { walkers = walkers, frames = opts.frames, speed = speed,
      budget = opts.budget or { ms = 3 } })
    if pass == 1 then first = { max_ms = a.max_ms, cpu_max_ms = a.cpu_max_ms } end
    after = fastest(after, a)
  end
  after.first_max_ms, after.first_cpu_max_ms = first.max_ms, first.cpu_max_ms
  row.before, row.after = before, after
  row.frame_p50_ms, row.frame_p99_ms = after.p50_ms, after.p99_ms
  log(("%s: %d navigators, before (no shared budget, tree as loaded): frame p50 %.2f ms p99 %.2f ms (CPU p50 %.2f" ..
    " p99 %.2f), %d arrived"):format(name, walkers, before.p50_ms, before.p99_ms, before.cpu_p50_ms, before.cpu_p99_ms,
    before.arrived))
  log(("%s: %d navigators, after (one shared budget, tree prepared): frame p50 %.2f ms p99 %.2f ms (CPU p50 %.2f p99" ..
    " %.2f), %d arrived, most work in a frame: %s; first pass's worst frame %.2f ms (CPU %.2f)"):format(name, walkers,
    after.p50_ms, after.p99_ms, after.cpu_p50_ms, after.cpu_p99_ms, after.arrived, M.work_text(after.max),
    after.first_max_ms, after.first_cpu_max_ms))
  -- plan time
  local plan_us = {}
  for _, pr in ipairs(pairs_) do
    local best = math.huge
    for _ = 1, 3 do
      local t = clock()
      pworld:plan(pr.a, pr.b)
      best = math.min(best, clock() - t)
    end
    plan_us[#plan_us + 1] = best * 1e6
  end
  row.plan_p50_us, row.plan_p99_us = pct(plan_us, 0.5), pct(plan_us, 0.99)
  log(("%s: %d pairs, plan p50 %.0f us p99 %.0f us"):format(name, #pairs_, row.plan_p50_us, row.plan_p99_us))
  if opts.as_loaded then
    local l = M.as_loaded(out, pairs_, { passes = opts.as_loaded_passes, walks = opts.as_loaded_walks, speed = speed,
      budget = opts.budget })
    row.loaded = l
    local prepared = {}
    for i, pr in ipairs(pairs_) do
      local _, c = pworld:plan(pr.a, pr.b)
      prepared[i] = c
    end
    local csum, cmax, cn = 0, 0, 0
    for i = 1, #pairs_ do
      if prepared[i] and l.costs[i] then
        local cq = l.costs[i] / prepared[i]
        csum, cmax, cn = csum + cq, math.max(cmax, cq), cn + 1
      end
    end
    l.cost_mean, l.cost_max = cn > 0 and csum / cn or 0, cmax
    log(("%s: as loaded, each pair's first plan (fastest of %d opens): p50 %.0f p90 %.0f p99 %.0f us (CPU p50 %.0f" ..
      " p90 %.0f p99 %.0f), planner and join scratch %.2f MB; route cost / prepared mean %.4f max %.4f, %d failed")
      :format(name, l.passes, l.p50_us, l.p90_us, l.p99_us, l.cpu_p50_us, l.cpu_p90_us, l.cpu_p99_us,
        l.planner_bytes / 2^20, l.cost_mean, l.cost_max, l.failed))
    if l.ratio_mean then
      log(("%s: as loaded, walked/seamless mean %.3f max %.3f, %d failures"):format(name, l.ratio_mean, l.ratio_max,
        l.walk_failures))
    end
  end
  -- walks (one navigator at a time, with a budget of the same amounts as the crowd's)
  local ratios, sum_w, sum_s, fails, reasons = {}, 0, 0, 0, {}
  for _, pr in ipairs(pairs_) do
    local limit = math.floor(4 * pr.seamless / speed) + 3000
    local budget = nav_mod.budget(opts.budget)
    local status, walked, _, reason = walk(nav_mod, pworld, pr.a, pr.b, speed, limit, { budget = budget }, budget)
    if status == "arrived" then
      ratios[#ratios + 1] = walked / pr.seamless
      sum_w, sum_s = sum_w + walked, sum_s + pr.seamless
    else
      fails = fails + 1
      local r = tostring(reason or status)
      reasons[r] = (reasons[r] or 0) + 1
    end
  end
  row.failures = fails
  local rs = {}
  for k, cnt in pairs(reasons) do rs[#rs + 1] = k .. " x" .. cnt end
  table.sort(rs)
  row.fail_reasons = table.concat(rs, ", ")
  local mean = 0
  for _, r in ipairs(ratios) do mean = mean + r end
  row.ratio_mean = #ratios > 0 and mean / #ratios or 0
  row.ratio_max = pct(ratios, 1.0)
  log(("%s: walked/seamless mean %.3f max %.3f, %d failures (%s)"):format(name, row.ratio_mean, row.ratio_max, fails,
    row.fail_reasons))
  -- 4-tile rebake: a box over 2 x 1 x 2 tiles in the middle of the ground layer
  if opts.rebake then
    local ci, ck = math.floor(n[1] / 2), math.floor(n[3] / 2)
    local lo = { o[1] + (ci - 1) * T + T * 0.25, o[2] + T * 0.25, o[3] + (ck - 1) * T + T * 0.25 }
    local hi = { o[1] + (ci + 1) * T - T * 0.25, o[2] + T * 0.75, o[3] + (ck + 1) * T - T * 0.25 }
    local rcfg = load_config(spec.file, setmetatable({ OUT = out }, { __index = spec.env }))
    collectgarbage()
    t0 = clock()
    local ok, err = world:rebake({ min = lo, max = hi }, rcfg)
    row.rebake_s = clock() - t0
    row.rebake_ok = ok and true or tostring(err)
    log(("%s: 4-tile rebake %.2f s (%s)"):format(name, row.rebake_s, tostring(row.rebake_ok)))
  end
  if pworld ~= world then pworld:close() end
  world:close()
  -- tile jobs: serial against xargs -P2, then byte-identical packs
  if opts.jobs then
    local bin = opts.bin or "bin/octonav"
    -- `job_passes` (3) passes, serial then -P2 each time, into fresh directories: the fastest of each
    -- (the other jobs on a shared machine's cores and disk vary from pass to pass); the packs of every
    -- pass compared with the one-process bake; each job's CPU seconds (the fastest pass's) show the
    -- balance of the two `--job N/2` halves
    local kind = opts.jobs == "tile" and "tile" or "job"
    local s1, s2
    row.jobs_identical, row.jobs_ok = true, true
    local ref = opts.pack == nil and pack_bytes(out) or nil
    local dirs = {} -- removed at the end: on ext4, creating files right after deleting many scans past
    -- the recently deleted inodes (ext4_create: 0.1-0.5 ms a file here), which would slow later passes
    for _ = 1, opts.job_passes or 3 do
      local d1, d2 = tmpdir(), tmpdir()
      dirs[#dirs + 1], dirs[#dirs + 2] = d1, d2
      local a = bake_jobs(spec, d1, 1, bin, kind, 2)
      local b = bake_jobs(spec, d2, 2, bin, kind, 2)
      local h1 = pack_bytes(d1)
      ref = ref or h1
      row.jobs_identical = row.jobs_identical and h1 == pack_bytes(d2) and h1 == ref
      row.jobs_ok = row.jobs_ok and a.ok and b.ok
      if not s1 or a.total_s < s1.total_s then s1 = a end
      if not s2 or b.total_s < s2.total_s then s2 = b end
      log(("%s: tile jobs serial %.2f s (CPU %.2f s), -P2 %.2f s (CPU %.2f s, link %.2f s)"):format(name, a.total_s,
        a.cpu_s, b.total_s, b.cpu_s, b.link_s))
    end
    for _, d in ipairs(dirs) do rm_rf(d) end
    row.jobs_kind = kind
    row.jobs_serial_s, row.jobs_p2_s = s1.total_s, s2.total_s
    row.jobs_serial_cpu, row.jobs_p2_cpu = s1.cpu_s, s2.cpu_s
    row.jobs_link_s = s2.link_s
    row.jobs_job_cpu = s2.job_cpu
    log(("%s: tile jobs, fastest: serial %.2f s, -P2 %.2f s (%.2fx; link %.2f s), jobs' CPU s %s, identical %s"):format(
      name, s1.total_s, s2.total_s, s1.total_s / s2.total_s, s2.link_s, table.concat(s2.job_cpu, " / "),
      tostring(row.jobs_identical)))
  end
  if not opts.pack then rm_rf(out) end
  if spec.temp_file then os.remove(spec.file) end
  return row
end

--- Runs several worlds: opts as measure, plus worlds = { names } (default dungeon, house, t16, t32).
-- Per-world options in opts.per = { [name] = { ... } } override opts.
function M.run(opts)
  opts = opts or {}
  check_opts("run", opts, MEASURE_OPTS, { worlds = true, per = true })
  local rows = {}
  for _, name in ipairs(opts.worlds or { "dungeon", "house", "t16", "t32" }) do
    local o = {}
    for k, v in pairs(opts) do
      if k ~= "worlds" and k ~= "per" then o[k] = v end
    end
    for k, v in pairs((opts.per or {})[name] or {}) do o[k] = v end
    rows[#rows + 1] = M.measure(name, o)
  end
  return rows
end

local function f(v, fmt) return v and fmt:format(v) or "-" end

--- Markdown table of rows from run().
function M.table(rows)
  local lines = {
    "| world | tiles | pairs | walked/seamless mean | max | failures | hierarchy MB | tree MB | hier/tree | open s" ..
      " | open RSS MB | plan p50 ms | plan p99 ms | 100-nav frame p99 ms | bake s | tile jobs serial s | -P2 s" ..
      " | speedup | jobs CPU s serial / -P2 | -P2: each job's CPU s | identical | 4-tile rebake s |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
  }
  for _, r in ipairs(rows) do
    if r.skipped then
      lines[#lines + 1] = ("| %s | skipped: %s |"):format(r.name, r.skipped)
    else
      lines[#lines + 1] = ("| %s | %d | %d | %.3f | %.2f | %d | %.2f | %.2f | %.1f%% | %.2f | %.0f | %.2f | %.2f" ..
        " | %.2f | %s | %s | %s | %s | %s | %s | %s | %s |"):format(r.name, r.tiles, r.pairs, r.ratio_mean, r.ratio_max,
          r.failures, r.hier_bytes / 2^20, r.tree_bytes / 2^20,
          100 * r.hier_bytes / math.max(1, r.tree_bytes), r.open_s, r.open_rss / 2^20, r.plan_p50_us / 1e3,
          r.plan_p99_us / 1e3, r.frame_p99_ms, f(r.bake_s, "%.1f"), f(r.jobs_serial_s, "%.1f"), f(r.jobs_p2_s, "%.1f"),
          r.jobs_p2_s and ("%.2fx (%s)"):format(r.jobs_serial_s / r.jobs_p2_s, r.jobs_kind) or "-",
          r.jobs_serial_cpu and ("%.1f / %.1f"):format(r.jobs_serial_cpu, r.jobs_p2_cpu) or "-",
          r.jobs_job_cpu and #r.jobs_job_cpu > 0 and table.concat(r.jobs_job_cpu, " / ") or "-",
          r.jobs_identical == nil and "-" or (r.jobs_identical and "yes" or "NO"), f(r.rebake_s, "%.2f"))
    end
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = M.crowd_table(rows)
  local lt = M.loaded_table(rows)
  if lt ~= "" then
    lines[#lines + 1] = ""
    lines[#lines + 1] = lt
  end
  return table.concat(lines, "\n")
end

--- Markdown table of the 100-navigator runs of rows from run(): before (no shared budget, the tree as
-- loaded) and after (one octonav.navigator.budget, the tree prepared), side by side.
function M.crowd_table(rows)
  local lines = {
    "| world | frame p50 / p99 ms before | after | CPU p50 / p99 ms before | after | after, first pass: worst frame ms" ..
      " (CPU) | arrived in the run before / after | budget a frame | most work in one frame | boxes MB | masks MB |",
    "|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|",
  }
  for _, r in ipairs(rows) do
    if not r.skipped and r.before then
      local b, a = r.before, r.after
      local per = a.budget
      lines[#lines + 1] = ("| %s | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %s | %d / %d | %s | %s | %s | %s |")
        :format(r.name, b.p50_ms, b.p99_ms, a.p50_ms, a.p99_ms, b.cpu_p50_ms, b.cpu_p99_ms, a.cpu_p50_ms, a.cpu_p99_ms,
          a.first_max_ms and ("%.2f (%.2f)"):format(a.first_max_ms, a.first_cpu_max_ms) or "-",
          b.arrived, a.arrived,
          per and (M.work_text(per) .. (a.ms and (", %g ms (%d frames cut, first run)"):format(a.ms, a.cut) or ""))
            or "-", M.work_text(a.max),
          r.box_bytes and ("%.2f"):format(r.box_bytes / 2^20) or "-",
          r.los_bytes and ("%.2f"):format(r.los_bytes / 2^20) or "-")
    end
  end
  return table.concat(lines, "\n")
end


-- the streaming soak lives in bench_soak.lua
function M.soak(opts) return require("octonav.bench_soak").soak(opts) end
function M.soak_report(opts) return require("octonav.bench_soak").soak_report(opts) end

return M
