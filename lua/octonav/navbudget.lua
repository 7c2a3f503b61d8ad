--- octonav.navbudget: a frame budget shared by navigators (`octonav.navigator.budget(opts)`), as a
-- game engine's crowd shares its search iterations between agents (Detour's crowd and path queue).
--
--   local budget = octonav.navigator.budget { expansions = 500 }    -- the defaults below otherwise
--   local navs = { octonav.navigator.new(world, { budget = budget }), ... }
--   each frame: budget:frame(); for each navigator: nav:update(position)
--
-- Per frame, over all the navigators given this budget (defaults):
--   expansions = 1000  C query expansions (each navigator's update takes at most its query_budget)
--   portals    = 1024  C route planner portals (each takes at most its plan_budget an update)
--   plans      = 2     route plans started (a start joins its start and goal to the portals their
--                      local searches reach in their own tiles: sliced, navigator_plan.lua; 4 tried in
--                      session 28: ~6 % more arrivals at 1,000 navigators / ms 4, p99.9 over ms + 0.5)
--   results    = 3     search results read (q:result finalizes a found search: corridor, refine,
--                      smoothing and relaxation with line-of-sight checks: C work that is not sliced)
--   checks     = 200   smoothing line-of-sight checks (each takes at most its checks_per_frame)
--   los        = 10000 node-table reads spent at each budget:frame() building line-of-sight masks
--                      (tree:los_step) for the trees its navigators search: a budget with los > 0
--                      defers those trees' masks (tree:los_defer(true)), so that no line of sight
--                      builds a tile's masks whole inside a navigator's update (about 10 ms a 512^3
--                      tile); until its masks are built a tile's lines of sight read its node table
--                      (the same answers, about twice the instructions). The tiles lines of sight
--                      read are built first, a tile in several frames when it needs more reads than
--                      a frame's los. With `ms` (and the real clock) the build runs for a fifth of
--                      `ms` each frame instead, whatever its count. 0: masks
--                      are left as the trees have them (built whole on a tile's first line of sight).
-- Unknown option names raise; each value is an integer >= 0 (0: none of that work is done, so
-- navigators needing it wait). The worst case of a frame is these counts times their unit costs plus
-- the Lua of each navigator's update (README, "World benchmark", measures them).
--   ms         = nil   off; a number > 0: the frame's time as well. Once `ms` milliseconds have passed
--                      since budget:frame(), every ask of any kind gets nothing until the next frame
--                      (the askers wait in line as when the amount is spent), and navigators step
--                      their searches `step` (64) expansions at a time so that one step overshoots
--                      little. For worlds whose unit costs vary (a 512^3 tile's search expansion or
--                      route join costs several times a small tile's): the counts bound the work, the
--                      time bounds the frame. Not deterministic (it reads the clock).
--                      The budget also learns what an expansion, a plan's start and a search's
--                      result cost (from the navigators' reports: higher costs fast, lower ones
--                      slowly): a search step near the end of the frame is cut to the expansions the
--                      time left holds (at least 1), and a plan is not started, nor a search step
--                      taken, when the start or the result (q:result: not sliced) would not fit (a
--                      512^3 leg search's 64 expansions take ~2 ms, a join up to ~1.5 ms: frames ran
--                      1.5-2 ms past `ms`). With the wall or thread clock (not a function) a search step
--                      runs in C until the frame's deadline whatever its expansions cost
--                      (q:step_until: the clock read after each expansion; an expansion of a 512^3
--                      search costs 1-250 us, 50 times more in one search than in another).
--                      The tail: the navigators updated after the deadline (refused: their Lua
--                      alone, ~3 us each) and the work under way at it make the frame end past the
--                      deadline; the budget learns how far past it the last ask of each frame came
--                      (the median of the last 9 frames' samples, at most ms / 4: a thread switched
--                      out says nothing of the navigators) and sets each deadline that much before
--                      `ms`, so frames end near `ms`.
--   clock      = "wall"  the clock `ms` reads: "wall" (core.clock, monotonic), "thread" (core.thread_clock:
--                      the calling thread's CPU time, clock_gettime(CLOCK_THREAD_CPUTIME_ID), so that on a
--                      machine shared with other processes the frame's time is not spent while the
--                      game's thread waits for a core), or a function returning seconds (a work-unit
--                      clock for tests: steps then cut by learnt costs, not by the C calls' deadline).
--                      With "thread" the C calls that stop at a deadline (q:step_until, q:result_step)
--                      are given the wall clock's reading plus the thread's time left (budget:c_deadline),
--                      and the budget reads the thread's time at most every THREAD_RESYNC (0.5 ms) of the
--                      wall clock, estimating it between (budget.now, M.thread_now: a read is a system
--                      call). With `ms` and a real clock, those C calls stop budget.reserve before the
--                      deadline: the Lua after such a step, learnt by budget:update (navgroup.after_c).
--   gc         = nil    true: the budget runs Lua's collector itself, at the start of each frame
--                      (budget:frame() calls budget:collect(): the automatic collector is stopped, and
--                      each frame's collector work is done before the navigators' work, inside the
--                      frame's `ms`); budget:release_gc() hands it back. Lua's collector is global:
--                      this is the game's choice (a game that steps its collector itself passes gc =
--                      false), and a budget whose frame() is not called collects nothing: call
--                      budget:release_gc() (or let `<close>` do it) before dropping it or pausing.
--                      nil (the default): with `ms` on Lua 5.4, the budget's first frame puts the
--                      collector in incremental mode (the lua5.4 interpreter starts it generational,
--                      whose major collections are whole, unsliced: 4-13 ms on the seed's world with
--                      1,000 navigators) with a basic step of 2^GC_AUTO_STEPSIZE bytes (1 KB: ~6,500
--                      units of work a step, at Lua's pace and pause) instead of Lua's 8 KB (~51,700
--                      units: up to ~51,700 objects swept in one step wherever an allocation lands,
--                      and glibc's fast bins they went to consolidated whole by the next malloc of
--                      1 KB or more: 2.6-5 ms inside a C call); release_gc puts back the mode it found
--                      with Lua's 8 KB step. false: the collector left as it is. With nil (and ms)
--                      on Lua 5.4 the collector is also paced to run a little in every frame
--                      instead of a whole cycle in a few: pause GC_AUTO_PAUSE (100) and step
--                      multiplier GC_AUTO_STEPMUL (4), put back by release_gc (see GC_AUTO_PAUSE);
--                      with true its pause is GC_PAUSE (120) while the budget drives it (the
--                      garbage a cycle lets grow stays resident in the C allocator: see GC_PAUSE).
--
-- Fairness: a navigator that asks for more than is left (or is refused), or spends all it got and
-- still wants more (a search still running), joins a line. At each budget:frame() the line's
-- navigators get their share reserved first, in line order (first come, first served, as Detour's
-- path queue), from the head until the frame's amount runs out; the rest is handed out as navigators
-- ask. A navigator keeps its place while it spends all it gets and wants more (a long search runs to
-- its end near the head of the line rather than every search crawling), and leaves the line once a
-- frame leaves it something over; one that did not ask in the last frame (not updated, closed) loses
-- its place. So no navigator waits longer than the work of those ahead of it in line divided by the
-- per-frame amount.
--
-- budget:frame() starts a frame (call it once per frame, before the navigators' updates; without it
-- the first frame's amounts are all there is). budget:stats() -> { frames, per_frame = {kind = n},
-- used = {kind = this frame}, max = {kind = most in one frame}, total = {kind = since new}, waiting =
-- {kind = navigators in line}, ms = the option, cut = frames whose time ran out, tail = the tail held
-- back (seconds; nil before one was seen), los = the option, los_work = node reads spent on masks
-- since new, los_built = tiles whose masks it built, gc_max = the longest collector step of option
-- gc (seconds), gc_owed = its work left for the next frames (KB), reserve = the time held back before
-- the deadline of a search's C steps for the Lua after them (seconds: budget:c_deadline) }.
-- budget:forget(nav) drops a navigator's place and reservations
-- (nav:close() does it).
local util = require "octonav.util"
local raise = util.raise -- (errors at the user's call: no line of the library's files)
local core = require "octonav.core"
local compat = require "octonav.compat" -- (collectgarbage("isrunning"): 5.2+; issue 34)
compat.frame_module() -- (LuaJIT: run interpreted; compat.lua)
local M = {}

local Budget = util.class()

local KINDS = { "expansions", "portals", "plans", "results", "checks" }
local DEFAULTS = { expansions = 1000, portals = 1024, plans = 2, results = 3, checks = 200, los = 10000 }
M.LOS_SHARE = 0.2 -- with `ms`, the part of it budget:frame() may spend building masks
M.DEFAULTS = DEFAULTS
M.TIME_STEP = 64 -- expansions a search step takes at most under a budget with `ms`

local min = math.min
local LUA54 = _VERSION == "Lua 5.4"
local TAIL_N = 9

-- A clock function of the caller's read checked: a reading that is not a finite number raises naming
-- the option (nil or a string raised from this file's arithmetic before; inf or nan held every
-- navigator planning for ever or gave nan deadlines: spec/175).
local HUGE = math.huge
local function checked_clock(f)
  return function()
    local v = f()
    if type(v) ~= "number" or v ~= v or v == HUGE or v == -HUGE then
      local what = type(v) ~= "number" and (v == nil and "nil" or "a " .. type(v))
        or v ~= v and "nan" or v > 0 and "inf" or "-inf"
      raise("octonav.navigator.budget: option 'clock': the function returned " .. what .. " (a finite number expected)")
    end
    return v
  end
end

--- octonav.navigator.budget(opts) -> budget (see the top of this file).
function M.new(opts)
  if opts ~= nil and type(opts) ~= "table" then raise("octonav.navigator.budget: opts must be a table") end
  opts = opts or {}
  for k in pairs(opts) do
    if DEFAULTS[k] == nil and k ~= "ms" and k ~= "clock" and k ~= "gc" then
      raise("octonav.navigator.budget: unknown option '" .. tostring(k) .. "'")
    end
  end
  local ms, clock = opts.ms, opts.clock
  if opts.los ~= nil and not util.is_count(opts.los, 0) then
    raise("octonav.navigator.budget: option 'los' must be an integer >= 0")
  end
  if ms ~= nil and not (type(ms) == "number" and ms > 0 and ms < math.huge) then
    raise("octonav.navigator.budget: option 'ms' must be a finite number > 0")
  end
  local ckind = clock == nil and "wall" or clock
  if ckind == "wall" then clock = core.clock
  elseif ckind == "thread" then clock = core.thread_clock
  elseif type(clock) == "function" then ckind = "function"
  else raise("octonav.navigator.budget: option 'clock' must be \"wall\", \"thread\" or a function") end
  if opts.gc ~= nil and type(opts.gc) ~= "boolean" then
    raise("octonav.navigator.budget: option 'gc' must be a boolean")
  end
  local self = setmetatable({ frames = 0, pools = {}, ms = ms, clock = clock, clock_kind = ckind, late = 0,
    deferred = {}, tails = { n = 0, i = 0, sorted = {} }, trees = {}, tree_set = {}, los_built = 0,
    los_work = 0, gc_max = 0, gc_owed = nil, gc_stepsize = nil, begun = nil, reserve = 0, c_back = nil }, Budget)
  -- (the clock the budget and its navigators read: budget.now; the thread's is M.thread_now's estimate)
  self.now = ckind == "thread" and M.thread_now(self) or ckind == "function" and checked_clock(clock) or clock
  local los = opts.los
  if los == nil then los = DEFAULTS.los end
  if not util.is_count(los, 0) then raise("octonav.navigator.budget: option 'los' must be an integer >= 0") end
  self.los = math.floor(los)
  -- (one options table for every frame's tree:los_step: no garbage a frame; ms only with the real clock)
  -- (with the real clock and `ms`, the frame's time bounds the build, not the count)
  local timed_build = ms ~= nil and ckind ~= "function"
  self.los_opts = { work = timed_build and 0 or self.los, ms = timed_build and ms * M.LOS_SHARE or nil }
  if ms then self.step = M.TIME_STEP end
  self.gc = opts.gc == true
  -- (option gc nil: the automatic collector's basic step made small at the first frame: M.gc_auto)
  self.gc_auto = opts.gc == nil and ms ~= nil and LUA54
  -- with the wall or thread clock, a navigator's search step runs in C until the frame's deadline
  -- (q:step_until, given budget:c_deadline()); with a clock of the caller's, steps are cut by the
  -- learnt costs (step_size)
  self.timed = ms ~= nil and ckind ~= "function"
  self.thread = ckind == "thread"
  for _, kind in ipairs(KINDS) do
    local v = opts[kind]
    if v == nil then v = DEFAULTS[kind] end
    if not util.is_count(v, 0) then
      raise(("octonav.navigator.budget: option '%s' must be an integer >= 0"):format(kind))
    end
    -- (plain tables, no weak keys: they hold the navigators in line only, each dropped when it leaves
    -- the line or misses a frame; and weak tables cost the garbage collector's atomic phase)
    self.pools[kind] = {
      per_frame = math.floor(v), free = math.floor(v), used = 0, max = 0, total = 0,
      line = {},     -- navigators waiting, first come first
      inline = {},   -- navigator -> true while in line
      reserved = {}, -- navigator in line -> the amount reserved for it this frame
      asks = {},     -- navigator in line -> the last amount it asked for
      seen = {},     -- navigator in line -> the frame it last asked in
    }
  end
  return self
end

local function leave_line(p, who)
  if not p.inline[who] then return end
  p.inline[who], p.asks[who], p.seen[who] = nil, nil, nil
  local r = p.reserved[who]
  if r then
    p.reserved[who] = nil
    p.free = p.free + r
  end
  local line = p.line
  for i = 1, #line do
    if line[i] == who then
      table.remove(line, i)
      return
    end
  end
end

--- budget:begin(): the game's frame starts now (its clock's reading kept): the next budget:frame()
-- (or budget:update) counts `ms` from here, so the game's work before it (streamer:update()
-- installing a tile) is inside the frame's time, not on top of it. Without it `ms` runs from frame().
function Budget:begin()
  if self.ms then self.begun = self.now() end
end

--- budget:frame(): a new frame: every amount full again, reserved first for the line.
-- (masks_later: budget:update's, which builds the masks after the navigators' work: M.frame_masks)
function Budget:frame(masks_later)
  local n = self.frames
  self.frames = n + 1
  local start = self.ms and (self.begun or self.now())
  self.begun, self.c_back = nil, nil
  if self.gc then self:collect() elseif self.gc_auto then M.gc_auto(self) end
  if self.ms then
    -- the tail: how long after the deadline the last frame's last ask came (the navigators updated
    -- after the work stopped, and the work that was under way: a search's last expansion, a result;
    -- the median of the last frames': M.learn_tail); the deadline is that much before `ms`, so that
    -- the frame ends near `ms` rather than `ms` plus the tail
    local ms = self.ms * 1e-3
    local last, due = self.last_ask, self.deadline
    if last and due and last > due then self.tail = M.learn_tail(self.tails, last - due, ms) end
    local hold = self.tail or 0
    self.deadline = start + ms - hold -- (from before the collector's step: it is the frame's work too)
    self.last_ask = nil
    self.cut = false
  end
  for _, kind in ipairs(KINDS) do
    local p = self.pools[kind]
    p.used = 0
    local free = p.per_frame
    local line, reserved, asks, seen, inline = p.line, p.reserved, p.asks, p.seen, p.inline
    local kept = 0
    for i = 1, #line do
      local who = line[i]
      line[i] = nil
      reserved[who] = nil
      if seen[who] == n then -- asked in the frame that just ended: keeps its place
        kept = kept + 1
        line[kept] = who
        local r = min(asks[who], free)
        if r > 0 then
          reserved[who] = r
          free = free - r
        end
      else
        inline[who], asks[who], seen[who] = nil, nil, nil
      end
    end
    p.free = free
  end
  if self.los > 0 and not masks_later then self:build_masks() end
end

--- budget:late_masks(): the masks of a frame built after its navigators' work (budget:update): with
-- the real clock and `ms`, for the frame's time left up to a fifth of `ms`, but at least a twentieth
-- (the masks must come: lines of sight through a tile without them cost twice); otherwise as
-- budget:frame() builds them. Internal (navgroup.lua).
function Budget:late_masks()
  if self.los == 0 then return end
  local o = self.los_opts
  local share = o.ms
  if share and self.deadline then
    local left = (self.deadline - self.now()) * 1e3
    local floor_ = share / 4
    o.ms = left < floor_ and floor_ or left < share and left or share
    self:build_masks()
    o.ms = share
  else
    self:build_masks()
  end
end

--- budget:adopt(tree): the budget builds tree's line-of-sight masks in its frames (option los), and
-- the tree's lines of sight build none themselves (tree:los_defer(true)). Navigators call it for the
-- trees they search; a tree closed later is dropped. Internal (navigator.lua).
function Budget:adopt(tree)
  if type(tree) ~= "userdata" then raise("budget:adopt: tree: an octonav.tree expected, got " .. type(tree)) end
  if self.los == 0 or self.tree_set[tree] then return end
  if not pcall(tree.los_defer, tree, true) then return end -- (closed, or a search runs on it: next time)
  self.tree_set[tree] = true
  self.trees[#self.trees + 1] = tree
end

-- The masks of the adopted trees, within the frame's los reads (and a fifth of ms): the tiles their
-- lines of sight wanted first (tree:los_step). A closed tree leaves the list.
function Budget:build_masks()
  local trees, o = self.trees, self.los_opts
  local i = 1
  while i <= #trees do
    local t = trees[i]
    local ok, work, built = pcall(t.los_step, t, o)
    if ok and work then
      self.los_work = self.los_work + work
      self.los_built = self.los_built + built
      i = i + 1
    elseif ok then -- nil, "masks are off": the tree's choice
      i = i + 1
    else -- closed
      self.tree_set[t] = nil
      table.remove(trees, i)
    end
  end
end

--- budget:collect(): the collector's work for what Lua allocated since the last call (option gc;
-- budget:frame() calls it). The automatic collector is stopped first (and stays stopped: Lua 5.4
-- forgets the debt of a stopped collector, so the allocation is read from collectgarbage("count"),
-- which nothing lowers while it is stopped), then collectgarbage("step", KB) does the work that much
-- allocation would have triggered: the same amount of work over a cycle as the automatic collector,
-- the same pause between cycles, but at the start of a frame, inside its time, instead of in the
-- middle of a navigator's update on top of it.
-- With `ms` the work is asked for GC_CHUNK KB at a time, and it stops once GC_SHARE of the frame's
-- time is spent (the rest is owed, done first in the next frames: stats().gc_owed, in KB). On Lua 5.4
-- the collector's basic step is made GC_STEPSIZE (log2 bytes: 2 bytes, no work done ahead) and its
-- step multiplier GC_STEPMUL (12; Lua keeps it in fours and adds 1: 13) while the budget drives it
-- (the defaults, 8 KB and 100, restored by release_gc), and each KB owed is paid in GC_SUB (8) calls of
-- collectgarbage("step", 1): 8 x 64 x 13 = 6,656 units of work a KB, Lua's own pace (100 a 16 bytes
-- allocated: 6,400), in pieces of 832 units instead of the 12,800 of a 1 KB step at the default
-- multiplier with a 1 KB basic step (a sweep frees up to one object a unit). One step for a frame's
-- whole allocation ran a cycle's sweep at once (2.4-16 ms on the seed's world with 1,000 navigators,
-- a frame of 4 ms); 1 KB steps at the default multiplier still took up to 8 ms of thread CPU at a
-- cycle's end (1,000 navigators, load 9: 0.8 MB freed in one call), 1.0 ms in pieces of 320 units;
-- no single piece of the collector (one object traversed, 100 swept, the atomic phase) took over
-- 0.3 ms. (Lua 5.4 forgets a stopped collector's debt: the time bound, not the count, ends the loop.)
M.GC_AUTO_STEPSIZE = 10
M.GC_CHUNK = 1
M.GC_SHARE = 0.25
M.GC_STEPSIZE = 1
M.GC_STEPMUL = 12
M.GC_SUB = 8
-- The collector's pause (Lua's 200: a cycle starts when the heap is twice what the last one left) is
-- GC_PAUSE while option gc drives it on 5.4, put back by release_gc: what a cycle frees stays resident in
-- the C allocator; 1,000 navigators on the seed's world held 8.5-9.9 MB of it at 200, 3.6-4.7 at 120
-- (docs/benchmarks.md, session 28). 0: Lua's pause left as it is.
M.GC_PAUSE = 120
-- The default's pace (option gc nil, with ms, on 5.4): pause GC_AUTO_PAUSE (100: a cycle starts as one
-- ends), multiplier GC_AUTO_STEPMUL (8, kept in fours, used + 1: 9 units of work a 16 bytes allocated,
-- Lua's is 100). A unit is a slot marked but an object swept (~100 ns): at 120 and 100 the collector
-- idled ~100 frames, then ran a cycle in ~5, a sweep of 2.5-4.5 ms in one frame (11-13 of the 13 streamed
-- 1,000-navigator frames over 4.5 ms). At 100 and 9 the same work over ~10 times the frames (at 5 the
-- garbage lingered: 0.98-1.04x the tree beyond it, 0.91-0.95 at 9; docs/benchmarks.md, session 32).
M.GC_AUTO_PAUSE, M.GC_AUTO_STEPMUL = 100, 8
local function set_pause(self, pause)
  if pause > 0 and not self.gc_pause_was then self.gc_pause_was = collectgarbage("setpause", pause) end
end
--- Option gc nil, with ms, 5.4 (once): incremental, 2^GC_AUTO_STEPSIZE, GC_AUTO_PAUSE, GC_AUTO_STEPMUL.
function M.gc_auto(self)
  self.gc_auto = false
  set_pause(self, M.GC_AUTO_PAUSE)
  if M.GC_AUTO_STEPMUL > 0 then self.gc_stepmul_was = collectgarbage("setstepmul", M.GC_AUTO_STEPMUL) end
  self.gc_automode = collectgarbage("incremental", 0, 0, M.GC_AUTO_STEPSIZE)
end

function Budget:collect()
  if compat.gc_isrunning() ~= false then -- (nil: Lua 5.1 cannot tell; taken as running)
    collectgarbage("stop")
    if self.gc_was_running == nil then self.gc_was_running = true end
  elseif self.gc_was_running == nil then
    self.gc_was_running = false -- (the game had stopped it: release_gc leaves it stopped)
  end
  if LUA54 and not self.gc_stepsize then
    set_pause(self, M.GC_PAUSE)
    self.gc_stepmul_was = self.gc_stepmul_was or collectgarbage("setstepmul", M.GC_STEPMUL)
    collectgarbage("incremental", 0, M.GC_STEPMUL, M.GC_STEPSIZE)
    self.gc_stepsize = true
  end
  local sub = self.gc_stepsize and M.GC_SUB or 1
  local now = collectgarbage("count")
  local base = self.gc_heap or now
  if now < base then base = now end -- (a full collection, the game's or another budget's, since)
  local owed = (self.gc_owed or 0) + (now - base)
  if owed < 1 then
    self.gc_owed, self.gc_heap = owed, now
    return
  end
  local clock = self.clock_kind == "function" and self.now or self.clock -- (a caller's: read checked)
  local stop = self.ms and clock() + self.ms * 1e-3 * M.GC_SHARE
  local chunk = self.ms and M.GC_CHUNK or math.floor(owed) -- (without ms: one step, nothing to cut)
  while owed >= 1 do
    local kb = owed < chunk and math.floor(owed) or chunk
    local t1, done = nil, 0
    for _ = 1, sub do -- (5.4: a KB's work in GC_SUB calls, each a GC_SUB-th of it)
      local t0 = clock()
      collectgarbage("step", kb)
      collectgarbage("stop") -- (on 5.1 and LuaJIT a step restarts a stopped collector)
      t1, done = clock(), done + 1
      if t1 - t0 > self.gc_max then self.gc_max = t1 - t0 end
      if stop and t1 >= stop then break end
    end
    owed = owed - kb * done / sub
    if stop and t1 >= stop then break end
  end
  self.gc_owed = owed -- (the fraction of a KB is kept)
  self.gc_heap = collectgarbage("count")
end

--- budget:release_gc(): the budget drives the collector no more, and Lua's automatic collector is
-- left as the budget found it (restarted unless it was stopped before the budget's first frame; on
-- Lua 5.1, which cannot tell, always restarted).
-- Call it before dropping a budget with gc, or before frames stop (a pause menu): the collector is
-- the whole Lua state's, and while stopped nothing is collected. `local b <close> = budget{...}` calls
-- it at the end of the block.
function Budget:release_gc()
  if self.gc_pause_was then -- (the pause the budget found, on 5.4)
    collectgarbage("setpause", self.gc_pause_was)
    self.gc_pause_was = nil
  end
  if self.gc_automode then
    local mode = self.gc_automode
    self.gc_automode = nil
    collectgarbage("incremental", 0, self.gc_stepmul_was or 0, 13) -- (Lua 5.4's default basic step, 8 KB)
    self.gc_stepmul_was = nil
    if mode == "generational" then collectgarbage("generational") end
  end
  if self.gc then
    local was = self.gc_was_running
    self.gc, self.gc_heap, self.gc_was_running, self.gc_owed = false, nil, nil, nil
    if self.gc_stepsize then
      collectgarbage("incremental", 0, self.gc_stepmul_was or 100, 13) -- (the multiplier found; Lua's 8 KB step)
      self.gc_stepmul_was = nil
      self.gc_stepsize = nil
    end
    if was ~= false then collectgarbage("restart") end
  end
end
Budget.__close = Budget.release_gc

-- The learnt cost of a unit of work (seconds; nil: none seen yet): half way to a higher one, an eighth
-- of the way to a lower one (the frame's bound errs on the long side), a sample counted at most 4
-- times the cost (the clock is the wall's: a thread switched out mid-step is no cost of the work).
function M.learn(old, v)
  if not old then return v end
  if v > 4 * old then v = 4 * old end
  return old + (v - old) * (v > old and 0.5 or 0.125)
end

M.TAIL_SAMPLES = TAIL_N -- the tail is the median of the last frames' samples

-- The tail (seconds; see budget:frame) after sample v: the lower median of the last TAIL_SAMPLES
-- samples (kept in the ring `r`, r.n samples, r.i the last written), at most a quarter of the frame's
-- time `ms`. A median, not a mean: a thread switched out after the deadline, on a machine shared
-- with other jobs, makes a sample of several milliseconds that says nothing about the navigators (a
-- mean learnt from such samples held back up to `ms / 4` under a load of 5 on 2 cores, and the
-- navigators arrived 25% less on house.obj); fewer than half the samples being such leave it as it is.
function M.learn_tail(r, v, ms)
  local k = TAIL_N
  r.i = r.i % k + 1
  r[r.i] = v
  if r.n < k then r.n = r.n + 1 end
  local sorted = r.sorted
  for j = 1, r.n do sorted[j] = r[j] end
  for j = r.n + 1, k do sorted[j] = nil end
  table.sort(sorted)
  local t = sorted[math.floor((r.n + 1) / 2)]
  local cap = 0.25 * ms
  return t < cap and t or cap
end

-- The thread's CPU time as the budget reads it (budget.now, with clock "thread"): a read of
-- clock_gettime(CLOCK_THREAD_CPUTIME_ID) is a system call (1.5 us on this machine, against 0.04 us for the
-- monotonic clock's, which the vDSO answers), and budget:update's turns read the clock several times an
-- update (1,000 navigators at ms 4: hundreds of reads a frame, 0.5-1 ms of it). So the thread's time is
-- read at most every THREAD_RESYNC seconds of the wall clock, and in between estimated as its last reading
-- plus the wall time since: never less than the thread's time (a thread runs no faster than the wall
-- clock), more by the time it waited for a core within that window. An estimate at or past the frame's
-- deadline is read again (the frame ends by the thread's own time, as before). Two readings across a
-- fresh read may go back by the time waited since the last: the costs learnt from them skip a negative
-- difference (budget:spent, budget:update's serve).
M.THREAD_RESYNC = 5e-4
local wall_clock, thread_clock = core.clock, core.thread_clock
-- (wall, thread: the clocks read, core.clock and core.thread_clock unless given: spec/167's work clocks)
function M.thread_now(self, wall, thread)
  wall, thread = wall or wall_clock, thread or thread_clock
  local ts, ws -- (the last read of the thread's time and the wall clock's then)
  return function()
    local w = wall()
    if ws then
      local d = w - ws
      if d >= 0 and d < M.THREAD_RESYNC then
        local est = ts + d
        local due = self.deadline
        if not due or est < due then return est end
      end
    end
    ts, ws = thread(), w
    return ts
  end
end

--- budget:c_deadline() -> the frame's deadline on core.clock's scale (the C calls that stop at a
-- deadline read the monotonic clock): the deadline itself with the wall clock; with "thread", the wall
-- clock now plus the thread's CPU time left (a thread switched out meanwhile stops the call early, never
-- late). nil without `ms` or before the first frame. Internal (navigator_search.lua).
-- The deadline given to those C calls is the frame's less the reserve (budget.reserve, seconds): what the
-- Lua after a C step took until its navigator's update ended (its result's reading, the path's legs and
-- locks, the next step's start), learnt as a unit's cost is (M.learn) by budget:update (navgroup.after_c)
-- and capped at navgroup.RESERVE_SHARE of `ms`: a step given the whole time left ended the frame that Lua's
-- time past `ms`
-- (session 29's trace at 1,000 navigators: updates of 2.6-4.8 ms ending a search).
function Budget:c_deadline()
  local due = self.deadline
  if not due then return nil end
  due = due - self.reserve
  if not self.thread then return due end
  return wall_clock() + (due - self.now())
end


--- budget:step_size(left [, cost]) -> the expansions a search step may take now (1..left): at most
-- `step`, and no more than the frame's time left holds at `cost` (seconds an expansion: the search's
-- own, its navigator's estimate), else the cost learnt from all. Internal (navigator.lua).
function Budget:step_size(left, cost)
  local n = self.step < left and self.step or left
  local c = cost or self.exp_cost
  if c and c > 0 and self.deadline then
    local fit = math.floor((self.deadline - self.now()) / c)
    if fit < n then n = fit < 1 and 1 or fit end
  end
  return n
end

--- budget:fit("portals", n) -> the portals a route step may expand now (1..n): at most PORTAL_STEP
-- until a portal's cost is learnt (budget:spent), then no more than the frame's time left holds at it.
-- Internal (navigator_plan.lua; a budget with `ms`).
M.PORTAL_STEP = 128
function Budget:fit(kind, n)
  if kind ~= "portals" then raise("budget:fit: kind must be \"portals\"") end
  local c = self.portal_cost
  if not c then return n < M.PORTAL_STEP and n or M.PORTAL_STEP end
  if c > 0 and self.deadline then
    local fit = math.floor((self.deadline - self.now()) / c)
    if fit < n then n = fit < 1 and 1 or fit end
  end
  return n
end

--- budget:spent(what, n, seconds): `n` units of work of `what` ("expansions": a search step that
-- expanded n; "results": a result; "portals": a route step that expanded n; "plans": a plan's start and
-- first step) took `seconds`. Internal (navigator.lua).
function Budget:spent(what, n, seconds)
  if n <= 0 or seconds < 0 then return end
  if what == "expansions" then self.exp_cost = M.learn(self.exp_cost, seconds / n)
  elseif what == "results" then self.result_cost = M.learn(self.result_cost, seconds / n)
  elseif what == "portals" then self.portal_cost = M.learn(self.portal_cost, seconds / n)
  else self.plan_cost = M.learn(self.plan_cost, seconds / n) end
end

--- budget:take(kind, who, want) -> the amount `who` may spend now (0..want). Internal (navigator.lua).
function Budget:take(kind, who, want)
  local p = self.pools[kind]
  p.last_ask = want
  local g
  local r = p.reserved[who]
  local late = false
  if self.deadline and want > 0 then
    local now = self.now()
    self.last_ask = now
    late = now >= self.deadline
    -- a plan whose start would not fit waits for the next frame, and so does a search step whose
    -- result would not (q:result, C work that is not sliced, follows the step that finds the path);
    -- but not two frames in a row (a start that never fits in a frame's time left would wait for ever)
    local cost = not late and (kind == "plans" and self.plan_cost or kind == "results" and self.result_cost)
    if cost and now + cost >= self.deadline and self.deferred[kind] ~= self.frames - 1 then
      late = true
      self.deferred[kind] = self.frames
    end
  end
  if late then
    g = 0 -- the frame's time is spent: nothing more of any kind this frame
    if not self.cut then
      self.cut = true
      self.late = self.late + 1
    end
  elseif r then
    p.reserved[who] = nil
    g = min(want, r)
    p.free = p.free + (r - g)
  else
    g = min(want, p.free)
    p.free = p.free - g
  end
  if g < want and not p.inline[who] then
    p.inline[who] = true
    p.line[#p.line + 1] = who
  end
  if p.inline[who] then p.seen[who], p.asks[who] = self.frames, want end
  p.used = p.used + g
  p.total = p.total + g
  if p.used > p.max then p.max = p.used end
  return g
end

--- budget:give(kind, who, unused, more): `who` spent all but `unused` of what it took; more: it would
-- have spent more (it keeps its place in line, or joins it at the end); otherwise it leaves the line.
-- Internal.
function Budget:give(kind, who, unused, more)
  local p = self.pools[kind]
  if unused > 0 then
    p.free = p.free + unused
    p.used = p.used - unused
    p.total = p.total - unused
  end
  if not more then
    leave_line(p, who)
  elseif not p.inline[who] then -- it spent all it got and wants more: it waits in line from now
    p.inline[who] = true
    p.line[#p.line + 1] = who
    p.seen[who], p.asks[who] = self.frames, p.last_ask
  end
end

--- budget:wait(kind, who, want): `who` asks for `want` and cannot use it now (a plan's start with no
-- C planner idle: navigator_plan.lua): it joins the line or keeps its place in it, taking nothing, and
-- what this frame reserved for it stays its own (no one behind it in line takes it meanwhile).
-- Internal.
function Budget:wait(kind, who, want)
  local p = self.pools[kind]
  if not p.inline[who] then
    p.inline[who] = true
    p.line[#p.line + 1] = who
  end
  p.seen[who], p.asks[who] = self.frames, want
end

--- budget:forget(who): `who` leaves every line and gives back what was reserved for it.
function Budget:forget(who)
  for _, kind in ipairs(KINDS) do leave_line(self.pools[kind], who) end
end

--- budget:stats() -> { frames, per_frame, used, max, total, waiting, ms, cut } (see the top of this file;
-- ms: the option or nil; cut: frames whose time ran out before an ask; plan_cost, result_cost,
-- exp_cost: what a plan's start, a result and an expansion cost as learnt (seconds; nil: none seen);
-- group: budget:update's, lua/octonav/navgroup.lua).
function Budget:stats()
  local r = { frames = self.frames, per_frame = {}, used = {}, max = {}, total = {}, waiting = {}, ms = self.ms,
    cut = self.late, tail = self.tail, los = self.los, los_work = self.los_work, los_built = self.los_built,
    plan_cost = self.plan_cost, result_cost = self.result_cost, exp_cost = self.exp_cost,
    portal_cost = self.portal_cost, reserve = self.reserve,
    gc_max = self.gc_max, gc_owed = self.gc_owed }
  local g = self.group
  if g then
    local held, parked = g.walker:size()
    r.group = { updated = g.updated, answered = g.answered, moved = g.moved, cursor = g.cursor, walked = g.walked,
      walk_checks = g.walk_checks, held = held, parked = parked, visited = g.visited }
  end
  for _, kind in ipairs(KINDS) do
    local p = self.pools[kind]
    r.per_frame[kind], r.used[kind], r.max[kind], r.total[kind], r.waiting[kind] = p.per_frame, p.used, p.max,
      p.total, #p.line
  end
  return r
end

function Budget:__tostring()
  local p = self.pools.expansions
  return ("octonav.navigator.budget: frame %d, %d of %d expansions used, %d waiting"):format(self.frames, p.used,
    p.per_frame, #p.line)
end

--- The budget of a navigator given none: everything it asks for (its own per-update limits).
M.unlimited = {
  take = function(_, _, _, want) return want end,
  give = function() end,
  forget = function() end,
  adopt = function() end,
}

--- budget:update(navs, positions [, statuses, waypoints]) -> statuses, waypoints: budget:frame() and
-- the navigators' updates in one call (lua/octonav/navgroup.lua).
Budget.update = require("octonav.navgroup").update

--- Is v a budget made by M.new?
function M.is_budget(v) return getmetatable(v) == Budget end

return M
