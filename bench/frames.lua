-- bench/frames.lua PACK [--agents N] [--ms X] [--frames F] [--seed S] [--los N] [--speed V] [--passes P]
--                       [--prepare] [--lazy] [--pairs K] [--stream] [--nobudget] [--group] [--plans P]
--                       [--los-budget S|none|tree]
--                       [--results R] [--png FILE] [--lead L] [--workers W] [--publish_ms X] [--preload]
--                       [--nobegin] [--fps F] [--timeline] [--states] [--planning N] [--plan-rounds N] [--throughput]
-- Frame times of a crowd of navigators on a pack opened as a game opens it (octonav.world.load, nothing
-- prepared), sharing one octonav.navigator.budget{ ms = X, los = N }: N agents (100) fly to random free
-- points (K pairs, seed S), moving V leaves a frame (4), for F frames (3000). A frame is budget:frame()
-- and every navigator's update, timed on the game's thread by its CPU clock (core.thread_clock: the
-- streamer's workers and the waits for a core left out) and by the wall clock. Prints, per pass, the
-- frame's p50, p99, p99.9 and worst (thread CPU and wall, ms), the frames over X + 0.5 ms, arrivals (and
-- per 1000 frames), the longest wait for a first move (frames), and the memory beyond the tree: the
-- tree, its line-of-sight masks, the world graph, the Lua heap (navigators, their queries' Lua side), the
-- queries' and route planners' C bytes (q:bytes(), planner:bytes()), and the rest of the process's growth.
-- --lazy: the masks as before (budget los = 0: built whole on a tile's first line of sight).
-- --prepare: tree:los_prepare() after the open (the game's prepare step; for comparison).
-- --los-budget S: the line-of-sight masks' byte budget, tree:los_budget: S times the tree's bytes, none
--   (no limit: every tile read keeps its masks) or tree (a quarter of its bytes: a world's default).
-- --nobudget: no shared budget (each navigator spends its own per-update limits): the throughput a budget
-- is compared with (arrivals), its frames unbounded.
-- --group: the navigators updated in one call a frame (budget:update, lua/octonav/navgroup.lua) instead
-- of a loop of nav:update. --plans P, --results R: the budget's plans and results a frame (2 and 3).
-- Failed navigators are counted by reason. --lead L: the navigators' lead_distance (L leaves; 0 off).
-- --png FILE: the world seen from above (octonav.image.top, 512 pixels a side) with every agent's flight
-- drawn over it (its position every 10 frames), written after the last pass.
-- --stream: the pack streamed (octonav.streamer, paddings 64 / 128 leaves, 1 worker building each tile's
-- masks beside its decode), the navigators bound to it; a frame is streamer:update() too. --workers N
-- (1) and --publish_ms X (0: none): the streamer's options. --preload (with --stream): the tiles
-- within load_padding of the agents' starts loaded before the first frame (s:update(true): a game's
-- loading of the agents' surroundings; their goals' tiles still stream in during the frames). With
-- --stream the frame starts with budget:begin() before streamer:update(), so the budget's ms counts
-- the streamer's installs too; --nobegin: not (the budget's ms from budget:update, as before).
-- --fps F: frames paced as a game's at F a second (wall clock): after each frame the benchmark sleeps
--   until 1/F s after its start (LuaSocket's socket.sleep: needed; outside the frame's times), so the streamer's
--   worker has the frames' spare time as in a game; without it frames run back to back (a frame every
--   2-10 ms on this machine) and "60 frames" is a fraction of the 1 s of frames issue 31 means.
-- --trace: every frame over X + 0.5 ms explained: the C calls of the navigators' work are timed one by
-- one (the methods of the tree, query and planner objects wrapped, thread CPU clock), and the frame's
-- longest single call, its calls summed by name, the Lua left over (the navigators' and the group's own
-- Lua, and the collector's steps when not --gc) and the updates it made are printed, then a summary of
-- the over frames by their longest call. (The wrapping adds its own cost: a few us a frame.) The walker's
-- methods are wrapped too (core.walker: budget:update's C walk), and each call over 0.5 ms is described in its
-- frame's lines and among the run's 12 slowest: its wall time, its page faults (with --faults: getrusage,
-- route.thread_faults), the Lua heap's change across it (a drop: the collector stepped inside it), and what it
-- did (a search step: expansions, the query's bytes, ms past its deadline; the walk: walked, parked, handed
-- back; a planner call: planner:last_call()'s join units, blocks, sets, searches, set-up, loops, portals).
-- At the end, the planner calls over their join ms and those that ran two endpoint searches, and the frames
-- over that held a C walk at 5x the run's median time a navigator walked or more ("slowed": the same work
-- at a fifth of its pace, the host's stall; make bench-jitter measures how often this machine stalls).
-- --others: the CPU the process's other threads (the streamer's workers) ran during each frame (/proc's
-- schedstat, read outside the frame's times): the frames with one, and how many of the frames over had one.
-- --faults: the minor page faults of the game's thread in each frame (/proc/thread-self/stat, read outside the
-- frame's times), their sum, p50 / p99 / max a frame and their sum in the frames over ms + 0.5; the process's
-- faults over the frames (every thread: the streamer's worker too); the 12 slowest frames with their faults.
-- --luaprof: the Lua of the frames over ms + 0.5 sampled (a count hook every 1,000 VM instructions: the
-- running line and its two callers), printed by site with the whole run's for comparison (the hook slows Lua).
-- --gccycles: the frames in which Lua's collector's atomic phase (the weak-table test) or a cycle's end (a
-- finalizer) ran, and how many of the frames over ms + 0.5 held one.
-- --gcafter (with the budget's ms, option gc not given): budget:collect() called after each frame, outside its
-- times (in the --fps idle time a game has): Lua's collector stopped and its work for the frame's allocation
-- done there, at most a quarter of ms a call (navbudget's GC_SHARE; the rest owed); its time a frame printed.
-- --gc: the budget drives Lua's collector (budget option gc = true: its steps at the start of each frame,
-- inside the budget's ms, timed as budget.collect by --trace; stats' gc_max and gc_owed printed).
-- --clock wall|thread: the budget's clock option (wall: the default).
-- --gcstep N: the collector's basic step (log2 bytes) the budget sets by default (navbudget's
-- GC_AUTO_STEPSIZE, 10). --gcpause N: the collector's pause the budget sets (navbudget's GC_AUTO_PAUSE, 100,
-- and GC_PAUSE, 120, for --gc; 0: Lua's left as it is, 200 by default). --gcmul N: its step multiplier by default
-- (navbudget's GC_AUTO_STEPMUL, 4; 0: Lua's, 100; session 31's pace: --gcpause 120 --gcmul 0). --gcprobe: the collector stopped and stepped by hand after each frame (outside
-- its time), each of its steps over 0.3 ms printed with the heap before and after, and each cycle's end.
-- With --group a frame is timed up to budget:update's return; --copytimed: also the copy of its answers
-- into this benchmark's own tables (as before session 21). --phases (with --group): budget:update's parts
-- timed every frame (thread CPU; its `phases` hook): frame(), the first pass over every navigator, plan
-- starts and leads, plans and searches under way, the turns, the masks; mean / p50 / p99 ms printed.
-- --states: what the navigators do, counted after each frame (mean navigators a frame: waiting to start a
-- plan, joining, route steps, a lead move, a first path's search, moving, ...; the C planners taken), and
-- the plans and results started in all: where the throughput goes. --planning N: navigator_plan's
-- MAX_PLANNING (plans at once in a world) set to N for the run (2: the library's); --plan-rounds N:
-- navgroup's PLAN_ROUNDS (2: the rounds of the plans under way a frame's 3c may pump).
-- --throughput: the pass with the budget, then the same with --nobudget (one process, in that order): the
-- arrivals a second of each and their ratio printed on one line (issue 31 goal 1: at least 0.8).
-- Run: lua5.4 bench/frames.lua PACK (after `make`); the pack of the seed's world: make bench-frames.
package.path = "lua/?.lua;lua/?/init.lua;bench/lua/?.lua;" .. package.path
package.cpath = (os.getenv("OCTONAV_BUILD") or "build") .. "/?.so;" .. package.cpath
local octonav = require "octonav"
local core = require "octonav.core"
local navigator = require "octonav.navigator"

local function usage(msg)
  io.stderr:write("bench/frames.lua: " .. msg .. "\n")
  os.exit(2)
end

local pack = arg[1]
if not pack or pack:sub(1, 2) == "--" then usage("usage: lua5.4 bench/frames.lua PACK [options]") end
local o = { agents = 100, ms = 2, frames = 3000, seed = 1, los = nil, speed = 4, passes = 1, pairs = 200,
  plans = 2, results = 3, lead = 0, workers = 1, publish_ms = 0, gcstep = 0, gcpause = -1, gcmul = -1, fps = 0, planning = 0,
  ["plan-rounds"] = 0 }
local flags = {}
local i = 2
while i <= #arg do
  local k = arg[i]:match("^%-%-(.+)$")
  if not k then usage("unexpected argument " .. arg[i]) end
  if k == "prepare" or k == "lazy" or k == "stream" or k == "nobudget" or k == "group" or k == "trace"
    or k == "gc" or k == "copytimed" or k == "gcprobe" or k == "preload" or k == "nobegin" or k == "phases" or k == "phases-kb"
    or k == "timeline" or k == "states" or k == "throughput" or k == "faults" or k == "luaprof" or k == "gccycles"
    or k == "gcafter" or k == "others" then
    flags[k] = true
    i = i + 1
  elseif k == "clock" then
    if arg[i + 1] ~= "wall" and arg[i + 1] ~= "thread" then usage("--clock needs wall or thread") end
    flags.clock = arg[i + 1]
    i = i + 2
  elseif k == "los-budget" then
    local v = tonumber(arg[i + 1])
    if arg[i + 1] == "none" then v = false elseif arg[i + 1] == "tree" then v = "tree" end
    if v == nil then usage("--los-budget needs a share of the tree's bytes, none or tree") end
    flags.los_budget = v
    i = i + 2
  elseif k == "png" then
    if not arg[i + 1] then usage("--png needs a file name") end
    flags.png = arg[i + 1]
    i = i + 2
  elseif o[k] ~= nil or k == "los" then
    local v = tonumber(arg[i + 1])
    if not v then usage("--" .. k .. " needs a number") end
    o[k] = v
    i = i + 2
  else
    usage("unknown option --" .. k)
  end
end

-- (--fps) the caller sleeps: LuaSocket's socket.sleep (lua-socket), else an error at the first frame
local sleep = function() error("bench/frames.lua --fps needs LuaSocket (apt-get install lua-socket)") end
if o.fps > 0 then
  local ok, socket = pcall(require, "socket")
  if ok and socket.sleep then sleep = socket.sleep else sleep() end
end

local function pct(xs, p)
  local s = {}
  for j = 1, #xs do s[j] = xs[j] end
  table.sort(s)
  if #s == 0 then return 0 end
  local k = math.ceil(p * #s)
  if k < 1 then k = 1 end
  return s[k]
end

-- Frames (thread CPU ms) counted in buckets around the budget: "<ms/2 | <ms | <ms+0.5 | <2ms | <5ms | >=5ms"
-- as a text of counts.
local function histogram(xs, ms)
  local edges, counts = { ms / 2, ms, ms + 0.5, 2 * ms, 5 * ms }, { 0, 0, 0, 0, 0, 0 }
  for _, x in ipairs(xs) do
    local k = #edges + 1
    for e = 1, #edges do
      if x < edges[e] then
        k = e
        break
      end
    end
    counts[k] = counts[k] + 1
  end
  return table.concat(counts, " / ")
end

local U = require "octonav.bench_util"
local rng, dist = U.lcg, U.dist

-- The process's resident bytes (/proc/self/statm; nil where there is none).
local function rss()
  local f = io.open("/proc/self/statm", "r")
  if not f then return nil end
  local line = f:read("*l")
  f:close()
  local pages = line and tonumber(line:match("^%d+%s+(%d+)"))
  return pages and pages * 4096
end

-- --others: the CPU time the process's other threads (the streamer's workers) ran during each frame, read
-- from /proc (each thread's schedstat, ns on a CPU) outside the frame's times; the threads listed again every
-- 20 frames. others.read() -> ns of every thread but the game's (nil where /proc has none).
local function others_reader()
  local f = io.open("/proc/self/stat", "r")
  local pid = f and f:read("*n")
  if f then f:close() end
  f = io.open("/proc/thread-self/stat", "r")
  local mine = f and f:read("*n")
  if f then f:close() end
  if not (pid and mine) then return nil end
  local R = { tids = {}, n = 0, frame = {} } -- (frame[f]: the others' CPU in frame f, ms)
  function R.read()
    R.n = R.n + 1
    if R.n % 20 == 1 then
      local p = io.popen("ls /proc/" .. pid .. "/task")
      local tids = {}
      for t in p:lines() do
        if tonumber(t) ~= mine then tids[#tids + 1] = "/proc/" .. pid .. "/task/" .. t .. "/schedstat" end
      end
      p:close()
      R.tids = tids
    end
    local ns = 0
    for _, path in ipairs(R.tids) do
      local h = io.open(path, "r")
      if h then
        ns = ns + (h:read("*n") or 0)
        h:close()
      end
    end
    return ns
  end
  return R
end

-- --faults: the minor page faults of a thread (/proc/thread-self/stat's minflt: the game's thread when called
-- on it) or of the process (/proc/self/stat: every thread); nil where there is none.
local function minflt(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local line = f:read("*l")
  f:close()
  local rest = line and line:match("%)%s+(.*)$")
  if not rest then return nil end
  local k = 0
  for v in rest:gmatch("%S+") do
    k = k + 1
    if k == 8 then return tonumber(v) end
  end
  return nil
end

-- --trace: the C calls of the tree, query and planner objects wrapped (their metatables' methods, shared
-- by every object of the kind) and timed one by one on the thread CPU clock; each navigator update and
-- the budget's collector steps too. T.frame_begin() / T.frame_end(f, ms) around each frame.
-- The work units of the calls whose work is counted alike from call to call (their returns): the C walk's
-- navigators walked. (A search step's expansions are not: one expansion may grow the node pool or wait on
-- a line of sight's slices.) A walk over 0.5 ms whose time a navigator is HOST_X times the run's median
-- did the same work as the others at a fifth of their pace or worse: a frame over ms + 0.5 holding one is
-- counted apart ("slowed"), the host's doing (this machine is a VM of 2 vCPUs: bench/jitter.c measures its
-- stalls of a fixed piece of work) or a cache's.
local PER_UNIT = {
  ["walker.walk"] = function(_, _, walked) return walked end,
}
local HOST_X = 5

local function make_tracer(world, budget, strm)
  local tc, wc = core.thread_clock, core.clock
  local T = { sums = {}, counts = {}, names = {}, over = {}, by_top = {}, top = 0, top_name = nil, upd = 0,
    upd_max = 0, upd_what = nil, upd_sum = 0, restore = {}, cmax = {}, cslow = {}, ccalls = {}, slow = {},
    worst = {}, frame = 0, per_unit = {}, frame_units = {}, over_units = {} }
  local sums, counts, names = T.sums, T.counts, T.names
  local cmax, cslow, ccalls = T.cmax, T.cslow, T.ccalls
  -- (--faults: each call's page faults of the game's thread, getrusage: route.thread_faults)
  local faults = flags.faults and core.route.thread_faults or function() return 0 end
  local heap = function() return collectgarbage("count") end
  -- A call over 0.5 ms described (what it did: desc(a, b, c, r1, r2, r3) of its first three arguments and
  -- returns), kept in the frame's list and among the run's 12 slowest.
  local SLOW = 0.5e-3
  local function note(label, dt, wdt, df, dh, txt)
    local line = ("%s %.2f ms (wall %.2f, faults %d, Lua heap %+.0f KB)%s"):format(label, dt * 1e3, wdt * 1e3, df,
      dh, txt and (": " .. txt) or "")
    T.slow[#T.slow + 1] = line
    local w = T.worst
    if #w < 12 or dt > w[#w][1] then
      w[#w + 1] = { dt, ("frame %d: %s"):format(T.frame, line) }
      table.sort(w, function(x, y) return x[1] > y[1] end)
      if #w > 12 then w[#w] = nil end
    end
  end
  local function account(dt, label)
    if sums[label] == nil then names[#names + 1] = label end
    sums[label] = (sums[label] or 0) + dt
    counts[label] = (counts[label] or 0) + 1
    if dt > T.top then T.top, T.top_name = dt, label end
    -- every call of the run: its worst and the calls over 0.5 ms (printed at the end)
    ccalls[label] = (ccalls[label] or 0) + 1
    if dt > (cmax[label] or 0) then cmax[label] = dt end
    if dt > 0.5e-3 then cslow[label] = (cslow[label] or 0) + 1 end
  end
  -- (a described call: its time by both clocks, its faults and the Lua heap's change, and desc's text when
  -- over 0.5 ms; pre(a) read before it, given to desc as its 7th argument)
  local limw, limm -- (a planner's join work and ms, planner:join_limit's: below)
  T.past = { n = 0, calls = 0, worst = 0, sum = 0, two = 0, two_spent = 0, setup = 0 } -- planner calls with a join
  -- ms limit: those 0.25 ms past it; those that ran two endpoint searches or more, and of them those whose units
  -- reached the limit (one search begun after the limit was spent: route_start.c's jpause), set-ups over 0.25 ms
  local function finish_d(t0, w0, f0, h0, p0, label, desc, a, b, c, ...)
    local dt = tc() - t0
    local wdt = wc() - w0
    local lim = limm and limm[a]
    if lim and lim > 0 and label:sub(1, 8) == "planner." and label ~= "planner.flat" then
      local P, ex = T.past, dt - lim * 1e-3 -- (thread CPU past the limit: the limit reads the monotonic clock)
      P.calls = P.calls + 1
      if ex > 0.25e-3 then P.n, P.sum = P.n + 1, P.sum + ex end
      if ex > P.worst then P.worst = ex end
      if a.last_call then
        local units, _, _, joins, _, _, _, _, _, _, _, sms = a:last_call()
        if joins >= 2 then
          P.two = P.two + 1
          if limw[a] and limw[a] > 0 and units >= limw[a] then P.two_spent = P.two_spent + 1 end
        end
        if sms and sms > 0.25 then P.setup = P.setup + 1 end
      end
    end
    local units = PER_UNIT[label]
    units = units and units(...)
    if units and units > 0 then -- (the call's time a unit of its work, every call: their median at the end)
      local pu, u = T.per_unit, dt / units
      pu[label] = pu[label] or {}
      pu[label][#pu[label] + 1] = u
      if dt > SLOW then T.frame_units[#T.frame_units + 1] = { label, u, dt } end
    end
    if dt > SLOW then
      local r1, r2, r3 = ...
      note(label, dt, wdt, faults() - f0, heap() - h0, desc and desc(a, b, c, r1, r2, r3, p0, w0 + wdt))
    end
    account(dt, label)
    return ...
  end
  local function wrap(methods, prefix, list, descs, pre)
    for _, name in ipairs(list) do
      local f = methods[name]
      if type(f) == "function" then
        local label = prefix .. name
        local desc = descs and descs[name]
        methods[name] = function(a, b, c, ...)
          local f0, h0, p0 = faults(), heap(), pre and pre(a)
          local w0 = wc()
          return finish_d(tc(), w0, f0, h0, p0, label, desc, a, b, c, f(a, b, c, ...))
        end
        T.restore[#T.restore + 1] = function() methods[name] = f end
      end
    end
  end
  local function past(deadline, w1) -- ms past a deadline on core.clock's scale
    return deadline and ("%.2f ms past its deadline"):format((w1 - deadline) * 1e3) or "no deadline"
  end
  local qbytes = function(q) return q:bytes() end
  local qdesc = {
    step_until = function(q, max, deadline, st, n, _, b0, w1)
      return ("%s, %s of %s expansions, %s (one expansion at least that long); the query's bytes %d -> %d KB")
        :format(tostring(st), tostring(n), tostring(max), past(deadline, w1), math.floor(b0 / 1024), math.floor(q:bytes() / 1024))
    end,
    step = function(q, n, _, st, _, _, b0, _) return ("%s, %s expansions asked; the query's bytes %d -> %d KB")
      :format(tostring(st), tostring(n), math.floor(b0 / 1024), math.floor(q:bytes() / 1024)) end,
    result_step = function(q, max, deadline, r1, r2, _, b0, w1)
      return ("%s %s (checks of %s), %s; the query's bytes %d -> %d KB"):format(tostring(r1), r1 == "pending" and
        tostring(r2) or "", tostring(max), past(deadline, w1), math.floor(b0 / 1024), math.floor(q:bytes() / 1024))
    end,
  }
  qdesc.start = function(q, _, _, r1, r2, _, b0, _) return ("%s %s; the query's bytes %d -> %d KB"):format(
    tostring(r1), tostring(r2), math.floor(b0 / 1024), math.floor(q:bytes() / 1024)) end
  -- a planner's join limit (planner:join_limit's work and ms, kept by planner)
  limw = setmetatable({}, { __mode = "k" })
  limm = setmetatable({}, { __mode = "k" })
  local function pdesc_of(p, what, b0)
    if not p.last_call then return what end -- (a build before planner:last_call)
    local units, blocks, sets, joins, restarts, expanded, nodes, jms, ems, lms, umax, sms, remakes = p:last_call()
    return ("%s; joins: %d units of %s / %s ms, %d blocks built, %d tile sets made, %d searches (%d begun again) in"
      .. " %.2f ms (set-up %.2f, %s arrays remade; loops %.2f, longest unit %.2f); %d portals expanded in %.2f ms;"
      .. " %d nodes; the planner's bytes %d -> %d KB"):format(what, units, tostring(limw[p]), tostring(limm[p]), blocks,
      sets, joins, restarts, jms, sms or 0, tostring(remakes), lms, umax, expanded, ems, nodes, math.floor(b0 / 1024),
      math.floor(p:bytes() / 1024))
  end
  local pdesc = {
    step = function(p, n, _, r1, r2, _, b0) return pdesc_of(p, ("%s %s, %s portals asked"):format(tostring(r1),
      tostring(r2 or ""), tostring(n)), b0) end,
    start_multi = function(p, _, st, r1, r2, _, b0) return pdesc_of(p, ("%s %s, %d starts"):format(
      tostring(r1), tostring(r2 or ""), #st), b0) end,
    start = function(p, _, _, r1, r2, _, b0) return pdesc_of(p, ("%s %s"):format(tostring(r1), tostring(r2 or "")),
      b0) end,
    flat = function(_, _, _, r1) return ("%s crossings"):format(type(r1) == "table" and tostring(r1.n) or "-") end,
  }
  local q = core.query.new(world.tree, { max_nodes = 16 })
  wrap(getmetatable(world.tree).__index, "tree.", { "visible", "visible_xyz", "visible_many", "los_step",
    "locate", "locate_status", "adjacency_prepare", "los_prepare", "raycast", "nearest_free" })
  wrap(getmetatable(q).__index, "query.", { "start", "step", "step_until", "result", "result_step", "find",
    "corridor" }, qdesc, qbytes)
  q:close()
  local planner = require "octonav.planner"
  local p = planner.acquire(world)
  local pm = getmetatable(p).__index
  wrap(pm, "planner.", { "start", "start_multi", "step", "flat", "plan" }, pdesc, qbytes)
  local jl = pm.join_limit
  pm.join_limit = function(pp, work, ms)
    limw[pp], limm[pp] = work, ms
    return jl(pp, work, ms)
  end
  T.restore[#T.restore + 1] = function() pm.join_limit = jl end
  planner.release(world, p)
  -- the C walk (core.walker, lua_walk.c: budget:update's first pass): navigators walked, handed back
  local wm = getmetatable(core.walker()).__index
  wrap(wm, "walker.", { "attach", "park", "take", "stream" })
  local walk = wm.walk
  local wk = {} -- (the walk's held and parked slots, lines of sight given, its clock: before the call)
  local function wdesc(_, _, _, nret, used, walked)
    return ("%s walked of %d held (%d parked), %s handed back to Lua, %s of %d lines of sight; clock %s"):format(
      tostring(walked), wk.held, wk.parked, tostring(nret), tostring(used), wk.checks, tostring(wk.clock))
  end
  wm.walk = function(w, navs, pos, sts, wps, ret, checks, deadline, clock, ...)
    local f0, h0 = faults(), heap()
    wk.held, wk.parked = w:size()
    wk.checks, wk.clock = checks, deadline and clock
    local w0 = wc()
    return finish_d(tc(), w0, f0, h0, nil, "walker.walk", wdesc, nil, nil, nil,
      walk(w, navs, pos, sts, wps, ret, checks, deadline, clock, ...))
  end
  T.restore[#T.restore + 1] = function() wm.walk = walk end
  wrap(budget, "budget.", { "collect" })
  -- (--stream: the C streamer's update, the installs' part of streamer:update on the game's thread)
  if strm then wrap(getmetatable(strm.core).__index, "streamer.", { "update" }) end
  -- (and its stale-path check, Lua: every registered path asked after a tile or hole change)
  if strm then wrap(require "octonav.streamer_paths", "streamer_paths.", { "stale" }) end
  -- each navigator update: the longest of the frame, and the state it started in and ended in
  local Nav = getmetatable(navigator.new(world, {}))
  local upd = Nav.update
  local function done(t0, before, st, wp)
    local dt = tc() - t0
    T.upd = T.upd + 1
    T.upd_sum = T.upd_sum + dt
    if dt > T.upd_max then T.upd_max, T.upd_what = dt, before .. "->" .. tostring(st) end
    return st, wp
  end
  Nav.update = function(self, ...) return done(tc(), self.state, upd(self, ...)) end
  T.restore[#T.restore + 1] = function() Nav.update = upd end
  function T.frame_begin(f)
    T.frame = f or T.frame + 1
    if #T.slow > 0 then T.slow = {} end
    if #T.frame_units > 0 then T.frame_units = {} end
    for _, k in ipairs(names) do sums[k], counts[k] = 0, 0 end
    T.top, T.top_name, T.upd, T.upd_max, T.upd_what, T.upd_sum = 0, nil, 0, 0, nil, 0
  end
  function T.frame_end(f, ms, limit, ph, sms)
    if ms <= limit then return end
    T.over_units[#T.over_units + 1] = T.frame_units -- (its calls over 0.5 ms with work units: "slowed" at the end)
    -- budget:update's parts (thread CPU ms): frame() with the collector, the first pass, lead
    -- moves, plans and searches under way, the turns, the masks, the end
    local parts_ = ""
    if ph and ph[7] then
      local d = {}
      for j = 2, 7 do d[j - 1] = ("%.2f"):format((ph[j] - ph[j - 1]) * 1e3) end
      parts_ = "; budget:update frame/pass/leads/work/turns/masks " .. table.concat(d, "/")
    end
    local c = 0
    local parts = {}
    for _, k in ipairs(names) do
      if counts[k] > 0 then
        c = c + sums[k]
        parts[#parts + 1] = { k, sums[k], counts[k] }
      end
    end
    table.sort(parts, function(a, b) return a[2] > b[2] end)
    local txt = {}
    for j = 1, math.min(5, #parts) do
      txt[j] = ("%s %.2f (%d)"):format(parts[j][1], parts[j][2] * 1e3, parts[j][3])
    end
    local lua = ms - c * 1e3
    local top = T.top_name or "none"
    local key = (lua > T.top * 1e3) and "Lua" or top
    T.by_top[key] = (T.by_top[key] or 0) + 1
    T.over[#T.over + 1] = ("  frame %d: %.2f ms; longest call %s %.2f ms; C %.2f ms: %s; Lua %.2f ms; %d updates,"
      .. " longest %.2f ms (%s), all %.2f ms; outside the updates %.2f ms%s%s"):format(f, ms, top, T.top * 1e3, c * 1e3,
      table.concat(txt, ", "), lua, T.upd, T.upd_max * 1e3, tostring(T.upd_what), T.upd_sum * 1e3,
      ms - T.upd_sum * 1e3, parts_, sms and ("; streamer:update %.2f"):format(sms) or "")
      .. (T.ch and ("; streamer's changes: %d loaded, %d unloaded, %d failed, %d stale"):format(#T.ch.loaded,
        #T.ch.unloaded, #T.ch.failed, #T.ch.stale) or "")
    for _, l in ipairs(T.slow) do T.over[#T.over + 1] = "    call " .. l end
  end
  function T.close()
    for _, r in ipairs(T.restore) do r() end
  end
  return T
end

-- --gccycles: a table held only by a weak-valued one is cleared in the atomic phase of the collector's
-- cycle (the one step of a cycle that cannot be cut): checked before and after each frame, so the frames
-- that held an atomic phase are known (and those of a cycle's end: a finalizer run after its sweep).
local function make_gccycles()
  local G = { frame = 0, atomic = {}, ended = {}, n = 0, na = 0, w = setmetatable({}, { __mode = "v" }) }
  G.w[1] = {}
  local function arm()
    setmetatable({}, { __gc = function()
      G.ended[G.frame] = (G.ended[G.frame] or 0) + 1
      G.n = G.n + 1
      if not G.off then arm() end
    end })
  end
  arm()
  function G.check(f) -- (f: the frame just run; -f: between frames)
    if G.w[1] == nil then
      G.atomic[f], G.na = true, G.na + 1
      G.w[1] = {}
    end
  end
  return G
end

-- --luaprof: Lua's own work sampled: a count hook every 1,000 VM instructions records the running
-- function and its two callers (file:line of each); a frame's samples are kept only when the frame ran
-- over ms + 0.5, and the slowest frames' sites printed with their share (C time is not counted: the
-- hook sees Lua instructions only, so a site's samples are its Lua instructions / 1,000).
local function make_luaprof()
  local P = { frame = {}, over = {}, all = {}, nframe = 0, nover = 0, nall = 0, slow = {} }
  local getinfo = debug.getinfo
  local function site(l)
    local info = getinfo(l, "Sl")
    if not info then return "-" end
    return info.short_src:match("[^/]*$") .. ":" .. (info.currentline or 0)
  end
  local function hook()
    local k = site(3) .. " < " .. site(4) .. " < " .. site(5) -- (1: site, 2: this hook)
    local fr = P.frame
    fr[k] = (fr[k] or 0) + 1
    P.nframe = P.nframe + 1
  end
  function P.frame_begin()
    P.frame, P.nframe = {}, 0
    debug.sethook(hook, "", 1000)
  end
  function P.frame_end(f, ms, limit)
    debug.sethook()
    local fr = P.frame
    P.nall = P.nall + P.nframe
    for k, n in pairs(fr) do P.all[k] = (P.all[k] or 0) + n end
    if ms <= limit then return end
    P.nover = P.nover + P.nframe
    for k, n in pairs(fr) do P.over[k] = (P.over[k] or 0) + n end
    local top = {}
    for k, n in pairs(fr) do top[#top + 1] = { k, n } end
    table.sort(top, function(a, b) return a[2] > b[2] end)
    local t = {}
    for j = 1, math.min(6, #top) do t[j] = ("%d %s"):format(top[j][2], top[j][1]) end
    P.slow[#P.slow + 1] = ("  luaprof frame %d %.2f ms, %d samples: %s"):format(f, ms, P.nframe, table.concat(t, " | "))
  end
  function P.report()
    local function show(name, tab, n)
      local top = {}
      for k, v in pairs(tab) do top[#top + 1] = { k, v } end
      table.sort(top, function(a, b) return a[2] > b[2] end)
      print(("  luaprof %s: %d samples"):format(name, n))
      for j = 1, math.min(25, #top) do print(("    %6d %5.1f%%  %s"):format(top[j][2], 100 * top[j][2] / n, top[j][1])) end
    end
    show("frames over", P.over, P.nover)
    show("all frames", P.all, P.nall)
    for _, l in ipairs(P.slow) do print(l) end
  end
  return P
end

-- The C parts the library counts itself: the queries (the world's idle ones and those the navigators'
-- searches hold: q:bytes()) and the route planners (idle ones, read off planner.lua's list, and those
-- the navigators' plans hold: planner:bytes(); with the graph's shared join scratch).
local function c_parts(world, navs, sizes)
  local qb, pb = 0, world.graph and world.graph:joins_bytes() or 0
  local seen = {}
  local function q_add(q)
    if not seen[q] then
      local b = q.bytes and q:bytes() or 0 -- (none before q:bytes)
      seen[q], qb = true, qb + b
      if sizes then sizes[#sizes + 1] = b end -- (--faults: each query's bytes)
    end
  end
  local function p_add(p)
    if not seen[p] then seen[p], pb = true, pb + p:bytes() end
  end
  for _, bym in pairs(world.idle_queries or {}) do
    for _, list in pairs(bym) do
      for _, q in ipairs(list) do q_add(q) end
    end
  end
  local rp = require "octonav.planner"
  for k = 1, 30 do
    local name, v = debug.getupvalue(rp.release, k)
    if not name then break end
    if name == "idle" then
      for _, list in pairs(v) do
        for _, p in ipairs(list) do p_add(p) end
      end
    end
  end
  for _, w in ipairs(navs) do
    for _, q in pairs(w.nav.queries) do q_add(q) end
    if w.nav.cplanner then p_add(w.nav.cplanner) end
  end
  return qb, pb
end

-- --states: what a navigator is doing (its state and the work it waits on), for counting navigator-frames.
local function nav_state(nav, moved)
  local st = nav.state
  if st == "planning" then
    if nav.job then
      local cp = nav.cplanner
      return cp and cp:joining() and "plan: joining" or "plan: route steps"
    end
    if nav.cells == nil then return nav.lead_ready and "plan: lead move" or "plan: waiting to start" end
  end
  local sr = nav.search
  if sr then
    local what = sr.status == "finalizing" and "result" or "step search"
    return (moved and "moving, " or "first path: ") .. what
  end
  if st == "planning" then return "planning, other" end
  return tostring(st)
end

local function run_pass()
  collectgarbage()
  collectgarbage()
  local heap0 = collectgarbage("count") * 1024
  local rss0 = rss()
  local t0 = core.clock()
  local world = assert(octonav.world.load(pack))
  local open_s = core.clock() - t0
  local strm
  if flags.stream then
    -- the points are drawn on the whole world first (the same pairs as without --stream), then the
    -- streamer takes the world over and unloads its tiles
    strm = true
  end
  if flags.los_budget ~= nil then -- (a share of the tree's bytes, false: none, "tree")
    local v = flags.los_budget
    if type(v) == "number" then v = math.floor(v * world.tree:stats().bytes) end
    world.tree:los_budget(v)
  end
  if flags.prepare then assert(world.tree:los_prepare()) end
  local rnd = rng(o.seed)
  local function free_point() return U.free_point(world, rnd) end
  local pairs_ = {}
  for k = 1, o.pairs do pairs_[k] = { a = free_point(), b = free_point() } end
  if strm then
    local sc = world.scale * 2 ^ world.depth / 512
    strm = assert(octonav.streamer.new(world, { load_padding = 64 * sc, unload_padding = 128 * sc, workers = o.workers,
      publish_ms = o.publish_ms > 0 and o.publish_ms or nil }))
  end
  if o.gcstep > 0 then require("octonav.navbudget").GC_AUTO_STEPSIZE = o.gcstep end
  if o.gcpause >= 0 then
    require("octonav.navbudget").GC_PAUSE = o.gcpause
    require("octonav.navbudget").GC_AUTO_PAUSE = o.gcpause
  end
  if o.gcmul >= 0 then require("octonav.navbudget").GC_AUTO_STEPMUL = o.gcmul end

  if o.planning > 0 then require("octonav.navigator_plan").MAX_PLANNING = o.planning end
  if o["plan-rounds"] > 0 then require("octonav.navgroup").PLAN_ROUNDS = o["plan-rounds"] end
  local budget = navigator.budget { ms = o.ms, los = flags.lazy and 0 or o.los, plans = o.plans,
    results = o.results, gc = flags.gc or nil, clock = flags.clock }
  local T = flags.trace and make_tracer(world, budget, strm)
  local LP = flags.luaprof and make_luaprof()
  local GY = flags.gccycles and make_gccycles()
  local GA = flags.gcafter and not flags.nobudget and {}
  local GYover = GY and {}
  -- --timeline (with --stream): when each tile was installed (frame, wall ms since the first frame) and
  -- what it was to the navigators then (a start tile of one waiting for its first move, a goal's tile),
  -- and each goal's first move: the frame its start tile came in, the frame it moved, lead or path
  local TL = flags.timeline and strm and { at = {}, order = {}, goals = {}, ch = nil }
  if T or flags.phases then budget.phases = { clock = core.thread_clock } end
  -- (--phases-kb: the parts measured in KB allocated by Lua instead of ms: collectgarbage("count"); the
  -- collector's frees between two readings make a part's figure low, so run it with --gcprobe)
  if flags["phases-kb"] then budget.phases.clock = function() return collectgarbage("count") * 1e-3 end end
  local SC = flags.states and {} -- (--states: navigator-frames by what they were doing)
  local PH = flags.phases and { {}, {}, {}, {}, {}, {} } -- (--phases: budget:update's parts, ms a frame)
  local group = flags.group and not flags.nobudget
  local gnavs, gpos, gst, gwp = {}, {}, {}, {}
  local reasons = {}
  local navs, moves, tracks = {}, {}, {}
  local nextp, arrived, failed = 0, 0, 0
  local first_wait = 0
  local waits, wait_how = {}, nil -- (every goal's wait for its first move, frames; how the longest ended)
  local function assign(slot, frame)
    nextp = nextp % #pairs_ + 1
    local pr = pairs_[nextp]
    local nav = navigator.new(world, { budget = not flags.nobudget and budget or nil, streamer = strm or nil,
      lead_distance = o.lead > 0 and o.lead * world.scale or nil })
    nav:go(pr.b)
    navs[slot] = { nav = nav, pos = { pr.a[1], pr.a[2], pr.a[3] }, since = frame, moved = false }
    if TL then
      navs[slot].tl = { since = frame, st = world:tile_of(pr.a), gt = world:tile_of(pr.b) }
      TL.goals[#TL.goals + 1] = navs[slot].tl
    end
    gnavs[slot], gpos[slot] = nav, navs[slot].pos
    if flags.png then
      local tr = { { pr.a[1], pr.a[2], pr.a[3] } }
      navs[slot].track = tr
      tracks[#tracks + 1] = tr
    end
    moves[slot] = moves[slot] or {}
  end
  for s = 1, o.agents do assign(s, 1) end
  local pre -- (--preload: streamer agents at the starts, removed after the first frame)
  if strm and flags.preload then
    pre = {}
    for s = 1, o.agents do pre[s] = strm:add_agent(navs[s].pos) end
    strm:update(true)
  end
  local cpu, wall, over = {}, {}, 0
  local smax, sover = 0, 0 -- streamer:update()'s worst thread CPU ms, and its frames over ms / 2
  local speed = o.speed * world.scale
  local limit = o.ms + 0.5
  local copy_c, copy_w
  local sms -- (--trace: this frame's streamer:update, Lua and C, thread CPU ms)
  local GP = flags.gcprobe and { max = 0, steps = {}, cyc = 0, base = collectgarbage("count") }
  if GP then collectgarbage("stop") end
  local FL = flags.faults and { frame = {}, pf0 = minflt("/proc/self/stat") } -- (--faults: each frame's faults)
  local fl0
  local OT = flags.others and others_reader() -- (--others: the other threads' CPU a frame, ms)
  local ot0
  local run0 = core.clock()
  for f = 1, o.frames do
    if T then T.frame_begin(f) end
    if LP then LP.frame_begin() end
    if GY then
      GY.check(-f)
      GY.frame = f
    end
    if FL then fl0 = minflt("/proc/thread-self/stat") end
    if OT then ot0 = OT.read() end
    local c0, w0 = core.thread_clock(), core.clock()
    if strm then
      if not flags.nobegin and not flags.nobudget then budget:begin() end
      local ch = strm:update()
      if TL then TL.ch = ch end
      if T then T.ch = ch end
      local sc = (core.thread_clock() - c0) * 1e3
      sms = sc
      if sc > smax then smax = sc end
      if sc > o.ms / 2 then sover = sover + 1 end
    end
    if group then
      budget:update(gnavs, gpos, gst, gwp)
      -- (the frame ends here: copying the answers into moves[] is this benchmark's own plumbing,
      -- 0.1-0.2 ms at 1,000 under load, not the budget's; it was timed before session 21)
      if not flags.copytimed then copy_c, copy_w = core.thread_clock(), core.clock() end
      for s = 1, o.agents do
        local m = moves[s]
        m[1], m[2] = gst[s], gwp[s]
      end
    else
      if not flags.nobudget then budget:frame() end
      for s = 1, o.agents do
        local w, m = navs[s], moves[s]
        m[1], m[2] = w.nav:update(w.pos)
      end
    end
    local c = ((copy_c or core.thread_clock()) - c0) * 1e3
    cpu[f], wall[f] = c, ((copy_w or core.clock()) - w0) * 1e3
    copy_c, copy_w = nil, nil
    if OT then OT.frame[f] = (OT.read() - ot0) * 1e-6 end
    if FL then
      FL.frame[f] = (minflt("/proc/thread-self/stat") or 0) - (fl0 or 0)
      if f % 50 == 0 then -- (the queries' sizes every 50 frames, outside the frames' times: the most at once)
        local sz = {}
        c_parts(world, navs, sz)
        local n256, n1m, sum = 0, 0, 0
        for _, b in ipairs(sz) do
          sum = sum + b
          if b >= 256 * 1024 then n256 = n256 + 1 end
          if b >= 1024 * 1024 then n1m = n1m + 1 end
        end
        FL.q256, FL.q1m = math.max(FL.q256 or 0, n256), math.max(FL.q1m or 0, n1m)
        FL.qmax, FL.nq = math.max(FL.qmax or 0, sum), math.max(FL.nq or 0, #sz)
      end
    end
    if c > limit then over = over + 1 end
    if T then T.frame_end(f, c, limit, group and budget.phases, sms) end
    if LP then LP.frame_end(f, c, limit) end
    if GY then
      GY.check(f)
      GY.frame = -f -- (a finalizer run between frames: counted apart)
      if c > limit then GYover[#GYover + 1] = { f, c } end
    end
    if TL and TL.ch then -- (outside the frame's times)
      for _, t in ipairs(TL.ch.loaded) do
        local ti = t[1] + world.tiles[1] * (t[2] + world.tiles[2] * t[3])
        if not TL.at[ti] then
          local kind = "N"
          for s = 1, o.agents do
            local g = navs[s].tl
            if g.st == ti and not navs[s].moved then kind = "S" break end
            if g.gt == ti then kind = "G" end
          end
          TL.at[ti] = f
          TL.order[#TL.order + 1] = ("%d@%d%s"):format(ti, f, kind)
          TL.ms = TL.ms or {}
          TL.ms[ti] = (core.clock() - run0) * 1e3
        end
      end
      TL.ch = nil
    end
    if GA then -- (--gcafter: the collector's work after the frame, outside its times)
      local g0 = core.thread_clock()
      budget:collect()
      GA[#GA + 1] = (core.thread_clock() - g0) * 1e3
    end
    if o.fps > 0 then -- (--fps: the rest of the frame's 1/F s slept)
      local left = w0 + 1 / o.fps - core.clock()
      if left > 0 then sleep(left) end
    end
    if pre then -- (the navigators' own agents stand there now)
      for s = 1, #pre do strm:remove_agent(pre[s]) end
      pre = nil
    end
    if PH and group then
      local ph = budget.phases
      for j = 2, 7 do PH[j - 1][f] = (ph[j] - ph[j - 1]) * 1e3 end
    end
    if GP then
      -- the collector stepped by hand, outside the frame, at Lua's pace (a basic step per 8 KB)
      local owed = collectgarbage("count") - GP.base
      while owed > 8 do
        local k0 = collectgarbage("count")
        local t0 = core.thread_clock()
        local done = collectgarbage("step", 0)
        local dt = (core.thread_clock() - t0) * 1e3
        local k1 = collectgarbage("count")
        GP.steps[#GP.steps + 1] = ("%.2f:%.0f"):format(dt, k1 - k0)
        if dt > 0.3 then
          print(("  gcprobe frame %d cycle %d step %d: %.2f ms, heap %.0f -> %.0f KB"):format(f, GP.cyc, #GP.steps, dt, k0, k1))
        end
        owed = owed - 8
        if done then
          print(("  gcprobe frame %d: cycle %d ended after %d steps, heap %.0f KB"):format(f, GP.cyc, #GP.steps, k1))
          GP.cyc = GP.cyc + 1
          GP.steps = {}
        end
      end
      GP.base = collectgarbage("count")
    end
    if SC then
      local b = "busy planners " .. require("octonav.planner").busy(navs[1].nav.world)
      SC[b] = (SC[b] or 0) + 1
    end
    if SC then -- (--states: what each navigator is doing after this frame, outside its times)
      for s = 1, o.agents do
        local nav = navs[s].nav
        local k = nav_state(nav, navs[s].moved)
        if nav.job then k = k .. " (job)" end
        SC[k] = (SC[k] or 0) + 1
      end
    end
    for s = 1, o.agents do
      local w, status, wp = navs[s], moves[s][1], moves[s][2]
      if status == "arrived" or status == "failed" then
        if status == "arrived" then
          arrived = arrived + 1
        else
          failed = failed + 1
          local why = tostring(wp)
          local wt = w.nav:stats().waiting -- (wait_timeout: what it waited for, and the streamer's word)
          if wt then why = ("%s (%s %s%s)"):format(why, wt.what, tostring(wt.state), wt.reason and ", " .. wt.reason or "") end
          reasons[why] = (reasons[why] or 0) + 1
        end
        if not w.moved then
          waits[#waits + 1] = f - w.since
          if f - w.since > first_wait then
            first_wait = f - w.since
            wait_how = ("navigator %d %s at frame %d without a move (%d updates)"):format(s, status, f, w.nav.frame)
          end
        end
        w.nav:close()
        assign(s, f + 1)
      elseif status == "moving" and wp then
        if not w.moved then
          w.moved = true
          if w.tl then w.tl.moved, w.tl.lead = f, w.nav.lead_to ~= nil end
          waits[#waits + 1] = f - w.since
          if f - w.since > first_wait then
            first_wait = f - w.since
            wait_how = ("navigator %d moved at frame %d (%d updates)"):format(s, f, w.nav.frame)
          end
        end
        local d = dist(w.pos, wp)
        local tt = d > 0 and math.min(1, speed / d) or 0
        local p = w.pos
        p[1], p[2], p[3] = p[1] + (wp[1] - p[1]) * tt, p[2] + (wp[2] - p[2]) * tt, p[3] + (wp[3] - p[3]) * tt
        if w.track and f % 10 == 0 then w.track[#w.track + 1] = { p[1], p[2], p[3] } end
      end
    end
  end
  local run_s = core.clock() - run0
  -- a navigator still waiting at the end has waited this long for its first move (as
  -- bench/arrivals.lua counts it); the longest waiter's state is printed
  local waiter
  for s = 1, o.agents do
    local w = navs[s]
    if not w.moved then waits[#waits + 1] = o.frames - w.since end
    if not w.moved and o.frames - w.since > first_wait then
      first_wait = o.frames - w.since
      local nav = w.nav
      local sr = nav.search
      waiter = ("navigator %d: %s, %s, %s, %d updates"):format(s, tostring(nav.state),
        nav.cells and ("route of %d steps"):format(#nav.cells) or (nav.job and "route steps under way" or "no route"),
        sr and ("search %s, %d expansions"):format(tostring(sr.status), sr.used or 0) or "no search", nav.frame)
    end
  end
  local st = world.tree:stats()
  collectgarbage()
  collectgarbage()
  local heap = collectgarbage("count") * 1024 - heap0
  local rss1 = rss()
  local graph = world.graph_bytes and world:graph_bytes() or 0
  local cq, cp = c_parts(world, navs)
  local bs = budget:stats()
  local r = { open_s = open_s, cpu50 = pct(cpu, 0.5), cpu99 = pct(cpu, 0.99), cpu999 = pct(cpu, 0.999),
    cpumax = pct(cpu, 1), wall50 = pct(wall, 0.5), wall99 = pct(wall, 0.99), wall999 = pct(wall, 0.999),
    wallmax = pct(wall, 1), over = over, arrived = arrived, failed = failed, first_wait = first_wait, waiter = waiter,
    waits = waits, wait_how = wait_how,
    hist = histogram(cpu, o.ms),
    tree = st.bytes, los = st.los_bytes, los_tiles = st.los_tiles, adj = st.adjacency_bytes + st.landmark_bytes,
    adjacency = st.adjacency_bytes, adjacency_tiles = st.adjacency_tiles, landmarks = st.landmark_bytes,
    boxes = st.box_bytes, los_dropped = st.los_dropped, los_budget = world.tree.los_budget and world.tree:los_budget(),
    graph = graph, heap = heap, los_built = bs.los_built, los_work = bs.los_work, reasons = reasons, smax = strm and smax, sover = sover,
    sst = strm and strm:stats(), run_s = run_s, tl = TL,
    queries = cq, planners = cp, rss = rss0 and rss1 and rss1 - rss0, costs = { plan = bs.plan_cost, result = bs.result_cost,
      expansion = bs.exp_cost }, tail = bs.tail, reserve = bs.reserve, cut = bs.cut, group = bs.group,
    gc_max = bs.gc_max, gc_owed = bs.gc_owed }
  if OT then
    -- the frames in which another thread ran (0.05 ms or more of its CPU), and the frames over among them:
    -- a frame over beside a busy worker is the host's vCPUs shared (make bench-jitter: "beside")
    local busy, over_busy, most = 0, 0, 0
    for f = 1, #OT.frame do
      local b = OT.frame[f] >= 0.05
      if b then busy = busy + 1 end
      if OT.frame[f] > most then most = OT.frame[f] end
      if b and cpu[f] > limit then over_busy = over_busy + 1 end
    end
    local over_n = over
    print(("  others: another thread of the process ran in %d of %d frames (the most %.2f ms in one); %d of the %d"
      .. " frames over %.1f ms had one (%.1f %% against %.1f %% of all frames)"):format(busy, #OT.frame, most,
      over_busy, over_n, limit, over_n > 0 and 100 * over_busy / over_n or 0, 100 * busy / math.max(1, #OT.frame)))
  end
  if FL then
    -- the game's thread's faults inside the frames, the process's (every thread) over the frames, and the
    -- slowest frames with theirs
    local tot, inover, top = 0, 0, {}
    for f = 1, #FL.frame do
      tot = tot + FL.frame[f]
      if cpu[f] > limit then inover = inover + FL.frame[f] end
      top[f] = f
    end
    table.sort(top, function(a, b) return cpu[a] > cpu[b] end)
    local t = {}
    for j = 1, math.min(12, #top) do t[j] = ("%d: %.2f ms %d"):format(top[j], cpu[top[j]], FL.frame[top[j]]) end
    local pf1 = minflt("/proc/self/stat")
    print(("  (--faults: the frames ran from %.6f to %.6f s on core.clock)"):format(run0, run0 + run_s))
    print(("  queries every 50 frames, the most: %d queries, %.1f MB, %d of 256 KB or more, %d of 1 MB or more"):format(
      FL.nq or 0, (FL.qmax or 0) / 2^20, FL.q256 or 0, FL.q1m or 0))
    r.faults = ("page faults: the game's thread in its frames %d (p50 / p99 / max a frame %d / %d / %d), in the"
      .. " frames over %g ms %d; the process over the frames %s; slowest frames (frame: thread CPU ms faults) %s"):format(
      tot, pct(FL.frame, 0.5), pct(FL.frame, 0.99), pct(FL.frame, 1), limit, inover,
      pf1 and FL.pf0 and tostring(pf1 - FL.pf0) or "?", table.concat(t, ", "))
  end
  r.states = SC
  if SC and bs.total then r.plans_total, r.results_total = bs.total.plans, bs.total.results end
  if PH then
    r.phases = {}
    for j = 1, 6 do
      local sum = 0
      for _, v in ipairs(PH[j]) do sum = sum + v end
      r.phases[j] = ("%.3f / %.3f / %.3f"):format(sum / #PH[j], pct(PH[j], 0.5), pct(PH[j], 0.99))
    end
  end
  for s = 1, o.agents do navs[s].nav:close() end
  budget:release_gc()
  if T then
    T.close()
    r.trace = T
  end
  r.luaprof = LP
  if GA then
    local t, sum = {}, 0
    for j, v in ipairs(GA) do t[j], sum = v, sum + v end
    table.sort(t)
    r.gcafter = ("budget:collect() after each frame (outside its times): mean %.3f, p50 / p99 / max %.2f / %.2f / %.2f ms,"
      .. " %.0f KB owed at the end"):format(sum / #t, t[math.ceil(#t * 0.5)], t[math.ceil(#t * 0.99)], t[#t],
      budget.gc_owed or 0)
    collectgarbage("restart") -- (the budget stopped it: option gc not given, release_gc leaves it)
  end
  if GY then
    GY.off = true
    local inside, ends, lst, fa = 0, 0, {}, 0
    for k in pairs(GY.atomic) do if k > 0 then fa = fa + 1 end end
    for _, x in ipairs(GYover) do
      local a, e = GY.atomic[x[1]], GY.ended[x[1]]
      if a then inside = inside + 1 end
      if e then ends = ends + 1 end
      lst[#lst + 1] = ("%d %.2f%s%s"):format(x[1], x[2], a and " A" or "", e and " E" or "")
    end
    r.gccycles = ("collector: %d atomic phases (%d of them in frames), %d cycles ended; frames over ms + 0.5: %d,"
      .. " an atomic phase in %d of them (A), a cycle's end in %d (E): %s"):format(GY.na, fa, GY.n, #GYover, inside,
      ends, table.concat(lst, ", "))
  end
  if flags.png then
    local image = require "octonav.image"
    local img = image.top(world.tree, { max_side = 512 })
    for _, tr in ipairs(tracks) do
      if #tr > 1 then img:path(tr) end
    end
    assert(img:write_png(flags.png))
    r.png = flags.png
  end
  if strm then strm:close() else world:close() end
  return r
end

local mode = (flags.stream and "streamed, " or "") ..
  (flags.group and not flags.nobudget and "group update (budget:update), " or "") ..
  (flags.clock and ("budget clock " .. flags.clock .. ", ") or "") ..
  (flags.stream and flags.preload and "agents' tiles preloaded, " or "") ..
  (o.fps > 0 and ("frames paced at %g a second, "):format(o.fps) or "") ..
  (flags.stream and not flags.nobegin and not flags.nobudget and "budget:begin() before streamer:update(), " or "") ..
  (flags.nobudget and "no budget (masks built whole on first read)" or flags.lazy and "lazy masks (los 0)" or
    flags.prepare and "masks prepared" or ("deferred masks, los " .. (o.los and tostring(o.los) or "default")))
print(("%s: %d agents, budget ms %g, %d frames, seed %d, speed %g leaves a frame; %s"):format(pack, o.agents, o.ms,
  o.frames, o.seed, o.speed, mode))
print("| pass | thread CPU p50 / p99 / p99.9 / max ms | wall p50 / p99 / p99.9 / max ms | frames > ms+0.5 |"
  .. " arrived (failed) | arrivals/s at 60 fps | first move wait | tree MB | masks MB (tiles) | graph MB | Lua heap MB |"
  .. " beyond tree x |")
local function report(p, r)
  -- everything beyond the tree, as the memory line's "all beyond": the parts below, "other C" included
  -- (the resident growth they do not account for), so that the two give one figure
  local known = r.tree + r.los + r.adj + r.boxes + r.graph + r.heap + r.queries + r.planners
  local other = r.rss and math.max(0, r.rss - known)
  local beyond = known - r.tree + (other or 0)
  print(("| %d | %.2f / %.2f / %.2f / %.2f | %.2f / %.2f / %.2f / %.2f | %d | %d (%d) | %.1f | %d | %.1f | %.1f (%d) |"
    .. " %.2f | %.1f | %.2f |"):format(p, r.cpu50, r.cpu99, r.cpu999, r.cpumax, r.wall50, r.wall99, r.wall999,
    r.wallmax, r.over, r.arrived, r.failed, r.arrived / (o.frames / 60), r.first_wait, r.tree / 2^20, r.los / 2^20,
    r.los_tiles, r.graph / 2^20, r.heap / 2^20, beyond / r.tree))
  print(("  frames by thread CPU time, < %g / < %g / < %g / < %g / < %g / >= %g ms: %s"):format(o.ms / 2, o.ms,
    o.ms + 0.5, 2 * o.ms, 5 * o.ms, 5 * o.ms, r.hist))
  -- the memory split: the tree, then each part beyond it (MB, and x the tree's bytes); "other C": the
  -- process's resident growth since before the open minus all the parts above it (the walker, the
  -- allocator's slack; the tree's pages not yet read are not resident). The parts are the bytes each
  -- holds (allocated: a calloc'd array's untouched pages count, though not resident), so "all beyond"
  -- is the larger of their sum and the resident growth, less the tree; the resident growth alone after.
  local mb, tx = function(b) return b / 2^20 end, function(b) return b / r.tree end
  print(("  memory: tree %.1f MB; beyond it: masks %.1f MB (%.2fx), cell adjacency %.1f MB (%d tiles, %.2fx),"
    .. " landmarks %.1f MB, boxes %.1f MB (%.2fx), world graph %.2f MB (%.3fx), Lua heap (navigators, their"
    .. " queries' Lua side) %.1f MB (%.2fx), queries (C) %.1f MB (%.2fx), route planners and their join scratch"
    .. " %.1f MB (%.2fx)%s"):format(mb(r.tree), mb(r.los), tx(r.los), mb(r.adjacency),
    r.adjacency_tiles, tx(r.adjacency), mb(r.landmarks), mb(r.boxes), tx(r.boxes), mb(r.graph), tx(r.graph), mb(r.heap),
    tx(r.heap), mb(r.queries), tx(r.queries), mb(r.planners), tx(r.planners),
    other and (", other C (the walker, the allocator's slack, the rest) %.1f MB (%.2fx); all beyond %.2fx"
    .. " (resident growth less the tree: %.2fx)"):format(mb(other), tx(other), tx(known - r.tree + other),
    tx(r.rss - r.tree)) or ""))
  print(("  masks: budget %s, %d tiles' built by the budget's frames, %d dropped to keep it"):format(
    r.los_budget and ("%.1f MB"):format(mb(r.los_budget)) or "none", r.los_built or 0, r.los_dropped or 0))
  local c = r.costs
  print(("  learnt costs: plan start %.2f ms, result %.2f ms, expansion %.1f us; tail held back %.2f ms;"
    .. " C steps' reserve %.2f ms; frames cut %d%s"):format((c.plan or 0) * 1e3, (c.result or 0) * 1e3,
    (c.expansion or 0) * 1e6, (r.tail or 0) * 1e3, (r.reserve or 0) * 1e3, r.cut or 0,
    r.group and (", last frame: %d updated, %d answered"):format(r.group.updated, r.group.answered) or ""))
  if flags.gc then
    print(("  collector (budget gc): longest step %.2f ms, owed at the end %.0f KB"):format(r.gc_max * 1e3,
      r.gc_owed or 0))
  end
  local rs = {}
  for k, v in pairs(r.reasons) do rs[#rs + 1] = k .. " " .. v end
  table.sort(rs)
  if #rs > 0 then print("  failed by reason: " .. table.concat(rs, ", ")) end
  print(("  frames: %d in %.1f s wall, %.1f a second"):format(o.frames, r.run_s, o.frames / r.run_s))
  if r.smax then
    print(("  streamer:update() on the game's thread: worst %.2f ms, %d frames over ms / 2"):format(r.smax, r.sover))
    local ss = r.sst
    print(("  streamer's worker: %d tiles decoded in %.2f s, %d masks built, %d trims of the allocator (%.1f ms)"):format(
      ss.decoded, ss.decode_seconds, ss.masks_built, ss.trims or 0, (ss.trim_seconds or 0) * 1e3))
  end
  if r.waiter then print("  longest first-move wait (never moved): " .. r.waiter) end
  if r.tl then
    -- the worker's deliveries as installed: tile@frame and what the tile was then (S: the start tile of a
    -- navigator waiting for its first move, G: a goal's tile, N: neither); the first goals' start tiles
    local TLr = r.tl
    print(("  timeline: tiles installed (first time), tile@frame kind: %s"):format(table.concat(TLr.order, " ", 1,
      math.min(#TLr.order, 80))))
    local starts, last, lastms = {}, 0, 0
    for _, g in ipairs(TLr.goals) do
      if g.since == 1 and g.st and not starts[g.st] then
        starts[g.st] = true
        local at = TLr.at[g.st] or math.huge
        if at > last then last, lastms = at, TLr.ms[g.st] or 0 end
      end
    end
    local ns = 0
    for _ in pairs(starts) do ns = ns + 1 end
    print(("  timeline: the first %d navigators' %d start tiles all in at frame %s (%.0f ms wall)"):format(o.agents, ns,
      tostring(last), lastms))
    local slow = {}
    for _, g in ipairs(TLr.goals) do
      local m = g.moved or o.frames
      if m - g.since > 60 then
        slow[#slow + 1] = ("since %d: start tile %s in at %s, goal tile %s in at %s, moved %s (%s)"):format(g.since,
          tostring(g.st), tostring(TLr.at[g.st]), tostring(g.gt), tostring(TLr.at[g.gt]), tostring(g.moved),
          g.moved and (g.lead and "lead" or "path") or "never")
      end
    end
    print(("  timeline: %d goals waited over 60 frames%s"):format(#slow, #slow > 0 and ":" or ""))
    for j = 1, math.min(#slow, 30) do print("    " .. slow[j]) end
  end
  local over60 = 0
  for _, v in ipairs(r.waits) do if v > 60 then over60 = over60 + 1 end end
  print(("  first-move waits (frames) p50 / p99 / max %d / %d / %d; %d of %d goals waited over 60%s"):format(
    pct(r.waits, 0.5) or 0, pct(r.waits, 0.99) or 0, pct(r.waits, 1) or 0, over60, #r.waits,
    r.wait_how and "; the longest: " .. r.wait_how or ""))
  if r.group and r.group.walked then
    print(("  C walk, last frame: %d walked, %d held, %d lines of sight"):format(r.group.walked, r.group.held,
      r.group.walk_checks))
  end
  if r.phases then
    print("  budget:update's parts, thread CPU ms a frame mean / p50 / p99: frame() " .. r.phases[1] .. "; first pass "
      .. r.phases[2] .. "; starts and leads " .. r.phases[3] .. "; plans and searches under way " .. r.phases[4]
      .. "; turns and 3c " .. r.phases[5] .. "; masks and the end " .. r.phases[6])
  end
  if r.states then
    local ks, tot = {}, 0
    for k, v in pairs(r.states) do ks[#ks + 1], tot = k, tot + v end
    table.sort(ks)
    local t = {}
    for _, k in ipairs(ks) do t[#t + 1] = ("%s %.1f"):format(k, r.states[k] / o.frames) end
    print("  navigators a frame by what they do (mean): " .. table.concat(t, ", "))
    if r.plans_total then
      print(("  plans started %d (%.2f a frame), results %d"):format(r.plans_total, r.plans_total / o.frames,
        r.results_total))
    end
  end
  if r.faults then print("  " .. r.faults) end
  if r.png then print("picture of the flights: " .. r.png) end
  if r.luaprof then r.luaprof.report() end
  if r.gccycles then print("  " .. r.gccycles) end
  if r.gcafter then print("  " .. r.gcafter) end
  if r.trace then
    local bt = {}
    for k, v in pairs(r.trace.by_top) do bt[#bt + 1] = k .. " " .. v end
    table.sort(bt)
    print(("  frames over %g ms by their longest part: %s"):format(o.ms + 0.5, table.concat(bt, ", ")))
    local cl = {}
    for k, n in pairs(r.trace.ccalls) do
      cl[#cl + 1] = ("%s %d / %d, worst %.2f"):format(k, r.trace.cslow[k] or 0, n, r.trace.cmax[k] * 1e3)
    end
    table.sort(cl)
    print("  traced calls over 0.5 ms / calls, worst ms (thread CPU): " .. table.concat(cl, "; "))
    for _, line in ipairs(r.trace.over) do print(line) end
    local P = r.trace.past
    print(("  planner calls with a join ms limit: %d, %d of them over it by more than 0.25 ms thread CPU (%.2f ms in"
      .. " all past it), the worst %.2f ms past; %d ran two endpoint searches or more, %d of them at or past their"
      .. " units; %d with a search set-up over 0.25 ms"):format(P.calls, P.n, P.sum * 1e3, P.worst * 1e3, P.two,
      P.two_spent, P.setup))
    print("  the run's slowest traced calls (thread CPU):")
    for _, w in ipairs(r.trace.worst) do print("    " .. w[2]) end
    -- the frames over that held a call of counted work at HOST_X times its kind's median time a unit or more
    local med, parts = {}, {}
    for label, list in pairs(r.trace.per_unit) do
      table.sort(list)
      med[label] = list[math.floor((#list + 1) / 2)]
      parts[#parts + 1] = ("%s %.2f us (%d calls)"):format(label, med[label] * 1e6, #list)
    end
    table.sort(parts)
    local slowed, worst_x, lost = 0, 0, 0
    for _, calls in ipairs(r.trace.over_units) do
      local hit = false
      for _, call in ipairs(calls) do
        local x = call[2] / med[call[1]]
        if x > worst_x then worst_x = x end
        if x >= HOST_X then
          hit = true
          lost = lost + call[3] * (1 - 1 / x) -- (its time beyond the median pace)
        end
      end
      if hit then slowed = slowed + 1 end
    end
    print(("  slowed: %d of the %d frames over held a C walk at %g x the run's median time a navigator walked or"
      .. " more (the most %.1f x; %.2f ms beyond the median pace in all); the median: %s"):format(slowed,
      #r.trace.over_units, HOST_X, worst_x, lost * 1e3, table.concat(parts, ", ")))
  end
end

-- --throughput: the budgeted pass (its figures as any pass's), then the same with --nobudget, in this one
-- process: arrivals a second (at 60 fps) of each and their ratio (issue 31 goal 1: >= 0.8). The second
-- pass's memory figures follow the first's in the same process (the allocator's pages): read the first.
local nobudget0 = flags.nobudget
for p = 1, o.passes do
  if flags.throughput then
    flags.nobudget = false
    local r = run_pass()
    report(p, r)
    flags.nobudget = true
    print("  the same with --nobudget:")
    local r0 = run_pass()
    report(p, r0)
    flags.nobudget = nobudget0
    local a, a0 = r.arrived / (o.frames / 60), r0.arrived / (o.frames / 60)
    print(("throughput: %.1f arrivals a second with the budget (ms %g, p99.9 %.2f ms, %d frames over ms + 0.5),"
      .. " %.1f without (p99.9 %.2f ms): ratio %.2f (goal >= 0.80)"):format(a, o.ms, r.cpu999, r.over, a0, r0.cpu999,
      a0 > 0 and a / a0 or 0))
  else
    report(p, run_pass())
  end
end
