--- octonav.navgroup: the navigators of a budget updated together, one call a frame
-- (`budget:update(navs, positions [, statuses, waypoints])`, lua/octonav/navbudget.lua), as Detour's
-- crowd updates its agents: the per-navigator Lua of `nav:update` is paid only by the navigators that
-- need it this frame, not by all of them.
--
--   local budget = octonav.navigator.budget { ms = 4 }
--   each frame: local statuses, waypoints = budget:update(navs, positions, statuses, waypoints)
--     -- statuses[i], waypoints[i]: what navs[i]:update(positions[i]) would answer (see below)
--
-- budget:update calls budget:frame() itself, then:
--   1. answers without an update every navigator that is "moving" toward a waypoint its last update
--      gave (its goal unchanged since: no go, cancel or replan) and that positions[i] has not reached
--      (farther than arrive_distance, and than 1e-6): statuses[i], waypoints[i] = "moving", that
--      waypoint (the agent keeps heading for it; with a streamer the navigator's agent is moved to
--      positions[i] all the same);
--   2. updates (nav:update(positions[i])) every other "moving" navigator (the agent reached its
--      waypoint and needs the next one) while the frame's time lasts, round robin: the ones the
--      deadline leaves out hold at their waypoint (statuses[i], waypoints[i] = "moving", that
--      waypoint) and go first next frame; and a frame whose time ran out among them is followed by
--      one that serves 3 first and them after, so that agents reaching waypoints cannot take every
--      frame's time from the rest (a line of sight refused by the budget does not stop an update:
--      octonav.smoother steps to the next point of the path for free from a point of it);
--   3. updates the others in turn, round robin from where the last frame's turn stopped, while the
--      frame's time lasts (the budget's deadline, `ms`): navigators planning or searching, and those
--      answered in 1 (their prefetch, smoothing, stale-path and replan checks happen on their turn).
--      The turn stops at the deadline and goes on from there next frame, so every navigator gets an
--      update within ceil(#navs / updates a frame) frames, and a navigator refused by the budget
--      costs nothing after the deadline. Without `ms` every navigator is updated (as a loop would).
-- With `ms`, no update is started whose kind's learnt cost (following a path, a plan's start, a
-- search's step, its result, a route's steps: timed by budget:update, see kind_of) does not fit in the
-- frame's time left: it waits, and the next frame serves 3 first, its first update whatever its cost.
-- A navigator's `frame` count and wait_timeout count its updates, which are fewer than frames here.
-- statuses and waypoints are refilled when given (no garbage a frame), else made; both are returned.
-- budget:stats().group: { updated = full updates in the last call (the C walk's included), answered =
-- answered in 1, moved = of the updated, those of 2, cursor = where the next turn starts, walked = of
-- the updated, those of the C walk (0), walk_checks = the lines of sight it spent, held = navigators
-- it holds walking, parked = navigators it holds waiting to start a plan (see park), visited = the
-- navigators the last call's first pass visited in Lua }.
local util = require "octonav.util"
require("octonav.compat").frame_module() -- (LuaJIT: run interpreted; compat.lua)
local raise = util.raise
local new_walker = require("octonav.core").walker

local M = {}
local navplan -- (octonav.navigator_plan, required at the first update: it requires navbudget, which
-- requires this file)

M.WALK_SHARE = 0.25 -- with `ms` (a real clock), the part of it the C walk's lines of sight may take
M.FIRST_WAIT = 30 -- frames a navigator waits to start its plan before the first-move rule serves it
M.PLAN_ROUNDS = 16 -- with time left in a frame, the more updates each plan under way may get (3c); 8 gave 68 % of
-- the unbudgeted arrivals on the seed's world (1,000 navigators, ms 4) but p99.9 4.78-5.79 ms, 2 gives 57 % at 4.02-4.19
-- (session 27: a step that ended its joins freed a join scratch, 0.8-1.3 ms, and the next start grew one
-- again; kept since session 28, route_start.c); 16 (session 28, quiet, seeds 19 and 23, budget plans 2): 87 % at
-- p99.9 4.01-4.35, worst 4.27-5.08; with plans 4, 93 % but p99.9 4.22-4.87 (docs/benchmarks.md)
M.PLAN_MARGIN = 0.25 -- 3c stops that share of `ms` (and two slices) before the deadline (spec/134). Session 24
-- tried 0.1 (3c seldom ran while the pass took ~2 ms); with waiting navigators parked, quiet, 5 runs each at 1,000
-- navigators ms 4: arrivals 1,847 vs 1,889 mean, p99.9 4.08-4.31 vs 4.29-5.75 ms: 0.25 kept (docs/benchmarks.md)
M.PUMP = true -- a plan start that finds every planner taken first runs the plans under way (see pump); and
-- the parked navigators are candidates whenever a start is left in the frame (false: as before session 27:
-- only when a planner was idle at the frame's first pass). With it, 1,000 navigators ms 4 on the seed's
-- world: plans 0.54-0.69 -> 1.49 a frame, arrivals 27 % -> 62-68 % of --nobudget's (load 7-9)
M.PARK = true -- navigators waiting to start a plan parked in the C walk (see park; false: visited in Lua)

M.RESERVE_SHARE = 0.125 -- the cap of the C steps' reserve (budget.reserve), a share of `ms` (0.5 ms at ms 4)

--- navgroup.after_c(budget, seconds): the Lua after a C step given budget:c_deadline took `seconds` until
-- its navigator's update ended (serve: the last step's return to the update's end); the reserve learnt
-- from it as a unit's cost is (navbudget.learn: half way to a higher sample, an eighth of the way to a
-- lower one, a sample at most 4 times the reserve), at most RESERVE_SHARE of `ms`. Internal (spec/167).
local learn -- (navbudget.learn, looked up at the first call: navbudget requires this file)
function M.after_c(B, v)
  learn = learn or require("octonav.navbudget").learn
  local cap = B.ms * 1e-3 * M.RESERVE_SHARE
  local r = learn(B.reserve > 0 and B.reserve or nil, v < 0 and 0 or v)
  B.reserve = r < cap and r or cap
end

local type, huge = type, math.huge
local EPS2 = 1e-12 -- (1e-6 squared: an agent stepping toward its waypoint lands on it exactly)

local function bad_nav(i)
  raise(("budget:update: navs[%d] must be an octonav.navigator"):format(i))
end

-- The C walk and the parked navigators: lua/octonav/navgroup_walk.lua.
local gwalk = require "octonav.navgroup_walk"
M.detach = gwalk.detach -- (navigator.lua's: a held or parked navigator handed back)
local detach, take_gone, park, attach = gwalk.detach, gwalk.take_gone, gwalk.park, gwalk.attach
local worlds_changed, OPEN = gwalk.worlds_changed, gwalk.OPEN

-- The update of navs[i] at p: its answer stored, and what the fast path needs next frame. (A navigator
-- the C walk holds walked this frame: only its search's step, nav:_walk_search; its answer stays the
-- walk's unless that ends it.)
local function full(g, nav, p, i, statuses, waypoints)
  if nav.walk_slot and nav.walk_sm then -- (parked: nav:update takes it back)
    local st, why = nav:_walk_search(p)
    if st then
      statuses[i], waypoints[i] = st, why
      nav.group_st, nav.group_ans, nav.group_epoch, nav.group_wp = st, why, nav.epoch, nil
    end
    return
  end
  local st, wp = nav:update(p)
  statuses[i], waypoints[i] = st, wp
  nav.group_i = i
  nav.group_st, nav.group_ans, nav.group_epoch = st, wp, nav.epoch
  nav.group_wp = st == "moving" and wp or nil
  if not nav.group_a2 then -- (arrive_distance is the navigator's option: fixed)
    local a = nav.cfg.arrive_distance
    nav.group_a2 = a * a > EPS2 and a * a or EPS2
  end
  if st == "moving" then attach(g, nav, i) end
end

-- Is a route plan or a step search of nav under way (it needs updates until it ends)?
local function busy(nav)
  local st = nav.state
  return (nav.job ~= nil or nav.search ~= nil) and (st == "planning" or st == "moving")
end

-- Lists nav on the frame's work list (work, inwork its set) when its plan or search is under way and
-- it is not listed yet; true when it was listed now.
local function enlist(work, inwork, nav)
  if busy(nav) and not inwork[nav] then
    inwork[nav] = true
    work[#work + 1] = nav
    return true
  end
  return false
end

-- The kind of update nav is due for, by its state: 1 following its path (smoothing, checks), 2 a
-- plan's start (the joins), 3 a search's step, 4 a search's result (finalizing), 5 a route's steps,
-- 6 anything else, 7 a lead move's try (a line of sight; its plan's start asked first).
-- budget:update learns what each kind costs (g.cost, seconds) from the updates it
-- times, and starts no update whose kind's cost does not fit in the frame's time left.
local function kind_of(nav)
  local s = nav.search
  if s then return s.status == "finalizing" and 4 or 3 end
  if nav.lead_ready and nav.job == nil then return 7 end
  local st = nav.state
  if st == "moving" then return 1 end
  if st == "planning" then
    if nav.job then return 5 end
    return nav.cells == nil and 2 or 6
  end
  return 6
end

-- May a navigator of `world` with no start reserved start its plan now (a C planner idle beyond those
-- owed to the plans' line: navigator_plan.planner_idle)? Asked once a frame a world (g.idle) for the
-- candidates: those that would start a plan are passed over while every planner is taken (each such
-- update cost Lua time and started nothing: at 1,000 navigators ms 4 on the seed's world, most of the
-- frame's 4 ms went to them while two plans ran).
local function can_start(g, B, world)
  if not (B.deadline and world) or world.plain then return true end
  local v = g.idle[world]
  if v == nil then
    v = navplan.planner_idle(B, nil, world)
    g.idle[world] = v
  end
  return v
end

-- The same, asked now (3b's turns: plans end meanwhile) for nav (navigator_plan.planner_idle).
local function can_start_now(B, nav)
  local world = nav.world
  if not world or world.plain then return true end
  return navplan.planner_idle(B, nav, world)
end

-- Does an update of `kind` fit before due (now: the clock's reading)? A kind not yet timed fits.
local function fits(g, kind, now, due)
  local c = g.cost[kind]
  return not c or now + c < due
end

-- nav's update (full), timed when the frame has a deadline: its kind's cost learnt as the budget
-- learns its units' (navbudget.learn: half way to a higher one, an eighth to a lower one, a sample
-- at most 4 times the cost). (A kind whose cost fits in no frame's time left is still served: the
-- first update of a frame's first part is served whatever its cost, and a frame that refused one
-- is followed by a frame whose first part is 3.)
-- t0: the clock's reading just before (the deadline's check; nil without a deadline: not timed),
-- kind: kind_of(nav) then. Returns the clock's reading after it (nil when not timed): the next
-- check's (the clock is read once between two updates; with "thread" a read is a system call).
local function serve(g, clock, t0, kind, nav, p, i, statuses, waypoints)
  if not t0 then return full(g, nav, p, i, statuses, waypoints) end
  full(g, nav, p, i, statuses, waypoints)
  local t1 = clock()
  local B = g.budget
  local cb = B.c_back -- (its last C step's return: the Lua after it, reserved before the C deadline)
  if cb then
    B.c_back = nil
    M.after_c(B, t1 - cb)
  end
  local v = t1 - t0
  if v < 0 then return t1 end -- (the thread's clock read afresh: budget.now, navbudget.thread_now)
  local cost = g.cost
  local old = cost[kind]
  if old then
    if v > 4 * old then v = 4 * old end
    v = old + (v - old) * (v > old and 0.5 or 0.125)
  end
  cost[kind] = v
  return t1
end

-- 2: the navigators at their waypoint (navs[reached[1..nreached]], in index order) updated while the
-- frame's time lasts, round robin: from the first whose index is g.rstart or more (wrapping), so that
-- the ones the deadline left out go first next frame. Those left hold at their waypoint ("moving" to
-- it) until served. g.rcut: the time ran out among them (the next frame serves the others first, so
-- that navigators at their waypoints cannot take every frame's time: no one waits for ever).
-- Returns the updates made and the navigators left out.
local function serve_reached(g, navs, positions, statuses, waypoints, reached, nreached, due, clock, frame, force)
  if nreached == 0 then
    g.rcut = false
    return 0, 0
  end
  local start, rs = 1, g.rstart
  for r = 1, nreached do
    if reached[r] >= rs then
      start = r
      break
    end
  end
  local done, left = 0, 0
  local work, inwork = g.work, g.inwork
  local tn -- (the clock's last reading, after the last update)
  for c = 0, nreached - 1 do
    local i = reached[(start - 1 + c) % nreached + 1]
    local nav = navs[i]
    if nav.group_mark ~= frame then
      local now = due and (tn or clock())
      local kind = now and kind_of(nav)
      if now and (now >= due or not (force or fits(g, kind, now, due))) then -- the rest wait: the first
        g.rstart, g.rcut = i, true -- of them goes first next frame
        for c2 = c, nreached - 1 do
          if navs[reached[(start - 1 + c2) % nreached + 1]].group_mark ~= frame then left = left + 1 end
        end
        return done, left
      end
      tn = serve(g, clock, now, kind, nav, positions[i], i, statuses, waypoints)
      nav.group_mark, force = frame, false
      done = done + 1
      enlist(work, inwork, nav)
    end
  end
  g.rcut = false
  return done, 0
end

-- One round of the plans under way (work: the frame's work list): each navigator planning with a
-- route job gets one more update (a slice: its joins or its route's steps, navigator_plan.lua), while
-- the frame's time lasts to `margin` before `due` and their kind's learnt cost fits. Returns whether
-- it served any (false: none under way, or the time ran short). 3b pumps before a plan start finds
-- every planner taken, so that a planner is freed within the frame rather than idle till the next
-- one; 3c pumps with the time left.
local function pump(g, work, navs, positions, statuses, waypoints, clock, due, margin)
  local served = false
  for w = 1, #work do
    local nav = work[w]
    local i = nav.group_i
    if nav.job and nav.cplanner and (nav.state == "planning" or nav.state == "moving") and navs[i] == nav then
      local now = clock()
      local kind = kind_of(nav)
      if now + margin >= due or not fits(g, kind, now, due) then return false end
      serve(g, clock, now, kind, nav, positions[i], i, statuses, waypoints)
      served = true
    end
  end
  return served
end

--- budget:update(navs, positions [, statuses, waypoints]) -> statuses, waypoints (see the top).
function M.update(B, navs, positions, statuses, waypoints)
  if type(navs) ~= "table" then raise("budget:update: navs must be an array of navigators") end
  if type(positions) ~= "table" then raise("budget:update: positions must be an array of points") end
  if statuses ~= nil and type(statuses) ~= "table" then raise("budget:update: statuses must be a table") end
  if waypoints ~= nil and type(waypoints) ~= "table" then raise("budget:update: waypoints must be a table") end
  statuses, waypoints = statuses or {}, waypoints or {}
  local n = #navs
  local ph = B.phases -- (bench/frames.lua --trace: each part's time, on ph.clock)
  if ph then ph[1] = ph.clock() end
  B:frame(true) -- (the masks after the navigators' work: a plan's start or a result, not sliced,
  -- fits in a frame's fresh time more often than in what the masks' fifth leaves)
  local frame = B.frames
  if ph then ph[2] = ph.clock() end
  navplan = navplan or require "octonav.navigator_plan"
  local g = B.group
  if not g then
    g = { cursor = 1, updated = 0, answered = 0, moved = 0, work = {}, inwork = {}, leads = {}, reached = {},
      rstart = 1, rcut = false, cost = {}, cand = {}, starters = {}, idle = {},
      budget = B, walker = new_walker(), ret = {}, worlds = {},
      walked = 0, walk_checks = 0, wids = {}, wlist = {}, open = {}, visited = 0 }
    B.group = g
  end
  for w in pairs(g.idle) do g.idle[w] = nil end
  local updated, answered, moved = 0, 0, 0 -- (answered: navigators left for 3 that would not start a plan too)
  local work, inwork = g.work, g.inwork
  local others = 0 -- navigators left for 3 that would not start a plan (see 3b)
  local leads, nleads = g.leads, 0 -- (navigators that may take a lead move: navigator.lua's lead_distance)
  local reached, nreached = g.reached, 0 -- (navigators at their waypoint: 2)
  -- (3b's candidates, in index order: every navigator but those that would start a plan when none is
  -- left and none is reserved for them; 3b's turns pass over no others, a scan of all navigators
  -- passing hundreds waiting for a plan cost up to 1 ms a frame at 1,000 under load)
  local cand, ncand = g.cand, 0
  -- (the navigator that has waited longest to start its plan, since the frame it was first seen so)
  local oldest, oldest_i, oldest_since = nil, nil, huge
  local pplans = B.pools.plans
  local plans_open, preserved = pplans.free > 0, pplans.reserved
  -- 0: the C walk: the held navigators' updates (see attach), its lines of sight from the budget's
  -- checks while the frame's time lasts (with `ms`, at most WALK_SHARE of it); ret lists the others
  local walker, ret = g.walker, g.ret
  local pchecks = B.pools.checks
  local wdue, wclock
  if B.deadline and B.clock_kind ~= "function" then
    wdue, wclock = B.now() + B.ms * 1e-3 * M.WALK_SHARE, B.clock_kind
    if wdue > B.deadline then wdue = B.deadline end
  end
  -- (the parked navigators' worlds where a plan may start now: those are listed as candidates)
  local open, wlist = g.open, g.wlist
  for w = 1, #wlist do
    local world = wlist[w]
    open[w] = plans_open and not world.closed and (M.PUMP or can_start(g, B, world))
  end
  local nret, wused, walked, pold, pold_since = walker:walk(navs, positions, statuses, waypoints, ret, pchecks.free,
    wdue, wclock, worlds_changed(g), open)
  if pold and pold <= n then oldest, oldest_i, oldest_since = navs[pold], pold, pold_since end
  if wused > 0 then
    pchecks.free, pchecks.used, pchecks.total = pchecks.free - wused, pchecks.used + wused, pchecks.total + wused
    if pchecks.used > pchecks.max then pchecks.max = pchecks.used end
  end
  g.walked, g.walk_checks = walked, wused
  -- 1 and 2: the others on their way; the rest get the answer of their last update for now (the
  -- status they have now and no waypoint when a go, cancel or replan came since), replaced when 3
  -- updates them
  local lvisits = 0 -- (navigators visited in Lua here: budget:stats().group.visited)
  for r = 1, nret do
    local i = ret[r]
    if i < 0 then -- (its slot's navigator is not navs[i] any more)
      i = -i
      take_gone(walker, i)
    end
    if i >= OPEN then -- (parked, a plan may start in its world: a candidate of 3b; answered in C)
      ncand = ncand + 1
      cand[ncand] = i - OPEN
    elseif i <= n then -- (past the end: nothing left to do for it)
      lvisits = lvisits + 1
      local nav, p = navs[i], positions[i]
      if type(nav) ~= "table" then bad_nav(i) end
      if nav.walk_slot then detach(nav) end
      local epoch = nav.epoch
      if epoch == nil then bad_nav(i) end
      local wp, st = nav.group_wp, nav.state
      if wp and st == "moving" and nav.group_epoch == epoch then
        if type(p) ~= "table" then raise(("budget:update: positions[%d] must be a point {x, y, z}"):format(i)) end
        local dx, dy, dz = wp[1] - p[1], wp[2] - p[2], wp[3] - p[3]
        statuses[i], waypoints[i] = "moving", wp
        ncand = ncand + 1
        cand[ncand] = i
        -- (group_a2: the arrive distance squared, at least EPS2; NaN: not greater, updated, and
        -- nav:update names it. group_mark is left as it is: only == frame means served this frame)
        if dx * dx + dy * dy + dz * dz > nav.group_a2 then
          if nav.streamer then nav.locks:move_agent(p) end
          answered = answered + 1
        else -- reached: served in 2 (until then it holds at its waypoint)
          nreached = nreached + 1
          reached[nreached] = i
        end
      else
        if nav.group_epoch == epoch then
          statuses[i], waypoints[i] = nav.group_st, nav.group_ans
        else
          statuses[i], waypoints[i] = st, nil
        end
        if not (st == "planning" and nav.cells == nil and nav.job == nil) or nav.lead_ready then
          others = others + 1
          ncand = ncand + 1
          cand[ncand] = i
        elseif (plans_open and can_start(g, B, nav.world)) or preserved[nav] then
          ncand = ncand + 1
          cand[ncand] = i
        end
        if nav.lead_ready then
          nleads = nleads + 1
          leads[nleads] = i
        elseif st == "planning" and nav.cells == nil and nav.job == nil then -- (waits to start a plan)
          local since = nav.group_since
          if not since then
            since = frame
            nav.group_since = frame
          end
          if since < oldest_since or (since == oldest_since and i < oldest_i) then
            oldest, oldest_i, oldest_since = nav, i, since
          end
          if M.PARK and not nav.lead_ready and not preserved[nav] and not pplans.inline[nav] and nav.world
            and not nav.world.plain and nav.budget == B and rawget(nav, "update") == nil then
            park(g, nav, i, statuses[i], waypoints[i])
          end
        end
      end
    end
  end
  others = others + answered
  local due, clock = B.deadline, B.now
  local refused = false -- (an update not started because its kind's cost did not fit)
  local force = g.rcut -- (3 goes first this frame: its first update is served whatever its cost)
  -- (3b's and 3c's pumps stop that long before the deadline: a slice stops at SLICE_MS)
  local margin = due and (2 * navplan.SLICE_MS + B.ms * M.PLAN_MARGIN) * 1e-3
  if ph then ph[3] = ph.clock() end
  -- 1b: plan starts first come first served: the navigators the plans' line reserved a start for this
  -- frame (budget:frame, in line order), then the navigator that has waited longest to start its plan
  -- once it has waited FIRST_WAIT frames (the first-move rule), are updated first each frame: each asks
  -- for a plan (granted, or it joins the plans' line, or keeps its place there: navigator_plan.lua's
  -- planner_idle). Navigators waiting to start, passed over by turns that found no plan left, waited
  -- for ever (one never moved in 3,000 frames at 1,000 navigators, session 22 and 23)
  local starters, nstart = g.starters, 0
  local pline = pplans.line
  for l = 1, #pline do
    local nav = pline[l]
    if not preserved[nav] then break end -- (reservations go to the line's head)
    nstart = nstart + 1
    starters[nstart] = nav
  end
  if oldest and frame - oldest_since >= M.FIRST_WAIT and not preserved[oldest] then
    nstart = nstart + 1
    starters[nstart] = oldest
    oldest.group_i = oldest_i
  end
  local nretry = 0 -- (starters[1..nretry]: those to update again after 3a)
  for s = 1, nstart do
    local nav = starters[s]
    starters[s] = nil
    local i = nav.group_i
    if i and navs[i] == nav and nav.group_mark ~= frame and nav.state == "planning" and nav.cells == nil
      and nav.job == nil then
      local now = due and clock()
      if not (now and now >= due) then
        serve(g, clock, now, now and kind_of(nav), nav, positions[i], i, statuses, waypoints)
        nav.group_mark = frame
        updated = updated + 1
        -- (one still waiting for a planner: again after 3a, which may free one)
        if not enlist(work, inwork, nav) and preserved[nav] then
          nretry = nretry + 1
          starters[nretry] = nav
        end
      end
    end
  end
  -- 2: the navigators at their waypoint, before the others unless the last frame's time ran out
  -- among them (then after: see serve_reached)
  local late_reached = g.rcut
  if not late_reached then
    -- (the first of them is served whatever its kind's cost: a frame starts with them)
    local u, left = serve_reached(g, navs, positions, statuses, waypoints, reached, nreached, due, clock, frame, true)
    updated, moved, others = updated + u, moved + u, others + left
  else
    others = others + nreached -- (3b's turns may reach them first)
  end
  -- 2b: the navigators that may take a lead move (a go since their last update, no path yet: their
  -- first move is a line of sight away), first, while the frame's time lasts; the others go on in 3
  -- (in index order; the turn stops at the first one refused: a refused lead cost a clock read, and a
  -- lead move's cost learnt once at 23 ms (a line of sight that built a tile's masks whole) refused all
  -- 1,000 for ever, each frame spending its time on the reads. The first lead of a frame is served
  -- whatever its kind's cost)
  local l0 = 1
  local lfirst, lstop = true, false
  for c = 0, nleads - 1 do
    local l = (l0 - 1 + c) % nleads + 1
    local i = leads[l]
    local nav = navs[i]
    if not lstop and nav.group_mark ~= frame then
      local now = due and clock()
      local kind = now and kind_of(nav)
      if now and (now >= due or not (lfirst or fits(g, kind, now, due))) then
        if now < due then refused = true end
        lstop = true
      else
        serve(g, clock, now, kind, nav, positions[i], i, statuses, waypoints)
        lfirst = false
        nav.group_mark = frame
        updated, others = updated + 1, others - 1
        enlist(work, inwork, nav)
      end
    end
  end
  for l = 1, nleads do leads[l] = nil end
  if ph then ph[4] = ph.clock() end
  -- 3a: the navigators whose plan or search is under way, first come first served (they keep their
  -- place until it ends: a search's steps are not spread over turns of the whole crowd); those that
  -- have not moved yet (no path known: nav.known == 0) before those walking meanwhile (a prefetch of
  -- their next step): walkers' searches at the head of the list, kept there while they ran, took
  -- every frame's time and a navigator behind them waited for its first move for ever (one never
  -- moved in 3,000 frames at 1,000 navigators)
  local kept = 0
  local stopped = false
  for w = 1, #work do -- (those that have not moved; the second pass serves the rest and keeps the list)
    if stopped then break end
    local nav = work[w]
    local i = nav.group_i
    if (nav.known or 0) == 0 and navs[i] == nav and nav.group_mark ~= frame then
      local now = due and clock()
      local kind = now and kind_of(nav)
      if now and now >= due then
        stopped = true
      elseif now and not (force or fits(g, kind, now, due)) then
        stopped, refused = true, true
      else
        serve(g, clock, now, kind, nav, positions[i], i, statuses, waypoints)
        force = false
        nav.group_mark = frame
        updated, others = updated + 1, others - 1
      end
    end
  end
  for w = 1, #work do
    local nav = work[w]
    work[w] = nil
    local i = nav.group_i -- (where its last update found it; gone from navs, or moved: it leaves
    if navs[i] ~= nav then i = nil end -- the list, and comes back on its next turn; one held by the C
    -- walk gets its search's step: full)
    if i and not stopped and nav.group_mark ~= frame then
      local now = due and clock()
      local kind = now and kind_of(nav)
      if now and now >= due then
        stopped = true
      elseif now and not (force or fits(g, kind, now, due)) then -- (first come first served: the rest
        stopped, refused = true, true -- wait too)
      else
        serve(g, clock, now, kind, nav, positions[i], i, statuses, waypoints)
        force = false
        nav.group_mark = frame
        updated, others = updated + 1, others - 1
      end
    end
    if i and busy(nav) then
      kept = kept + 1
      work[kept] = nav
    else
      inwork[nav] = nil
    end
  end
  -- 1c: the starters of 1b still waiting for a planner with a start reserved: again, now that 3a's
  -- plans may have ended (a planner idle until the next frame is a start lost)
  for s = 1, nretry do
    local nav = starters[s]
    starters[s] = nil
    local i = nav.group_i
    if not stopped and preserved[nav] and navs[i] == nav and nav.job == nil and nav.cells == nil then
      if due and M.PUMP then
        while not can_start_now(B, nav) and pump(g, work, navs, positions, statuses, waypoints, clock, due, margin) do end
      end
      local now = due and clock()
      if now and now >= due then
        stopped = true
      else
        serve(g, clock, now, now and kind_of(nav), nav, positions[i], i, statuses, waypoints)
        enlist(work, inwork, nav)
      end
    end
  end
  -- 3b: the others' turns, round robin from the cursor, while the frame's time lasts; a navigator
  -- the budget refused for time keeps the turn (it goes first next frame). One that would start a
  -- plan when none is left this frame is passed over (refused, its update would cost Lua time and
  -- nothing else); when only such are left, the turns end.
  if ph then ph[5] = ph.clock() end
  local plans = B.pools.plans
  local reserved = plans.reserved
  local k = g.cursor
  if k > n then k = 1 end
  local k0 = k
  -- (the first candidate at k or after, wrapping: a binary search of cand)
  local lo, hi = 1, ncand + 1
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if cand[mid] < k then lo = mid + 1 else hi = mid end
  end
  if lo > ncand then lo = 1 end
  local turns = 0
  local tn -- (the clock's reading after the last turn: the next turn's check, when no other came between)
  local visited = 0
  local shut = false -- (a starter found every planner taken: no other start this frame's turns)
  for c = 0, ncand - 1 do
    k = cand[(lo - 1 + c) % ncand + 1]
    if stopped or (others <= 0 and (plans.free == 0 or shut)) then break end
    local nav = navs[k]
    if nav.group_mark ~= frame then
      -- (one that may take a lead move is served as the others are: navigator.lua's lead_distance)
      local starts = nav.state == "planning" and nav.cells == nil and nav.job == nil and not nav.lead_ready
      local go = not starts or reserved[nav]
      if not go and plans.free > 0 and not shut then
        go = not due or can_start_now(B, nav)
        if not go and M.PUMP then -- (every planner taken: the plans under way go on until one ends)
          while not go and pump(g, work, navs, positions, statuses, waypoints, clock, due, margin) do
            go = can_start_now(B, nav)
          end
        end
        shut = not go -- (no planner idle: the other starters are passed over this frame)
      end
      if go then
        local now = due and (tn or clock())
        local kind = now and kind_of(nav)
        if now and now >= due then break end
        if now and not (force or fits(g, kind, now, due)) then -- (its turn again first next frame)
          refused = true
          break
        end
        local cut = B.cut
        tn = serve(g, clock, now, kind, nav, positions[k], k, statuses, waypoints)
        force = false
        nav.group_mark = frame
        turns = turns + 1
        if not starts then others = others - 1 end
        enlist(work, inwork, nav)
        if due and B.cut and not cut then break end -- (refused: its turn again next frame)
      end
    end
    visited = visited + 1
  end
  if ncand == 0 or visited == ncand then k = k0 end -- (every candidate's turn came: the same start)
  g.cursor = k
  -- 3c: with time left, the plans under way go on: each of them another update (one slice: a C call
  -- of at most SLICE_MS, navigator_plan.lua) in turn, while the frame's time lasts and their learnt
  -- cost fits, at most PLAN_ROUNDS rounds (pump: the joins, the route's steps, and the plans of
  -- navigators on a lead move; before session 27 the joins only). Sliced plans on the seed's world last
  -- tens of updates, one a frame, with at most MAX_PLANNING of them at once: plans ended about 0.1 a
  -- frame at 1,000 navigators ms 4 (the throughput's and the first move's limit) while the frame had
  -- time left
  if due and not stopped and not refused then
    for _ = 1, M.PLAN_ROUNDS do
      if not pump(g, work, navs, positions, statuses, waypoints, clock, due, margin) then break end
    end
  end
  if late_reached then
    local u = serve_reached(g, navs, positions, statuses, waypoints, reached, nreached, due, clock, frame, false)
    turns, moved = turns + u, moved + u
    g.rcut = false -- (next frame they go first again)
  elseif refused then
    g.rcut = true -- (an update too long for the time left: next frame 3 goes first, with its fresh time)
  end
  for r = 1, nreached do reached[r] = nil end
  if ph then ph[6] = ph.clock() end
  B:late_masks()
  -- the tail the budget learns (budget:frame) is how far past the deadline the frame's work ended:
  -- here the whole call's end (the masks' floor and the Lua after the last ask included), not the
  -- last ask's (the frames ended that much past `ms`)
  if due then B.last_ask = clock() end
  if ph then ph[7] = ph.clock() end
  g.updated, g.answered, g.moved, g.working = updated + turns + walked, answered, moved, kept
  g.visited = lvisits
  return statuses, waypoints
end

return M
