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
-- A navigator's `frame` count and wait_timeout count its updates, which are fewer than frames here.
-- statuses and waypoints are refilled when given (no garbage a frame), else made; both are returned.
-- budget:stats().group: { updated = full updates in the last call, answered = answered in 1,
-- moved = of the updated, those of 2, cursor = where the next turn starts }.
local util = require "octonav.util"
local raise = util.raise

local M = {}

local type = type
local EPS2 = 1e-12 -- (1e-6 squared: an agent stepping toward its waypoint lands on it exactly)

local function bad_nav(i)
  raise(("budget:update: navs[%d] must be an octonav.navigator"):format(i))
end

-- The update of navs[i] at p: its answer stored, and what the fast path needs next frame.
local function full(nav, p, i, statuses, waypoints)
  local st, wp = nav:update(p)
  statuses[i], waypoints[i] = st, wp
  nav.group_i = i
  nav.group_st, nav.group_ans, nav.group_epoch = st, wp, nav.epoch
  nav.group_wp = st == "moving" and wp or nil
end

-- Is a route plan or a step search of nav under way (it needs updates until it ends)?
local function busy(nav)
  local st = nav.state
  return (nav.job ~= nil or nav.search ~= nil) and (st == "planning" or st == "moving")
end

-- 2: the navigators at their waypoint (navs[reached[1..nreached]], in index order) updated while the
-- frame's time lasts, round robin: from the first whose index is g.rstart or more (wrapping), so that
-- the ones the deadline left out go first next frame. Those left hold at their waypoint ("moving" to
-- it) until served. g.rcut: the time ran out among them (the next frame serves the others first, so
-- that navigators at their waypoints cannot take every frame's time: no one waits for ever).
-- Returns the updates made and the navigators left out.
local function serve_reached(g, navs, positions, statuses, waypoints, reached, nreached, due, clock, frame)
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
  for c = 0, nreached - 1 do
    local i = reached[(start - 1 + c) % nreached + 1]
    local nav = navs[i]
    if nav.group_mark ~= frame then
      if due and clock() >= due then -- the rest wait: the first of them goes first next frame
        g.rstart, g.rcut = i, true
        for c2 = c, nreached - 1 do
          if navs[reached[(start - 1 + c2) % nreached + 1]].group_mark ~= frame then left = left + 1 end
        end
        return done, left
      end
      full(nav, positions[i], i, statuses, waypoints)
      nav.group_mark = frame
      done = done + 1
      if busy(nav) and not inwork[nav] then
        inwork[nav] = true
        work[#work + 1] = nav
      end
    end
  end
  g.rcut = false
  return done, 0
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
  local g = B.group
  if not g then
    g = { cursor = 1, updated = 0, answered = 0, moved = 0, work = {}, inwork = {}, leads = {}, reached = {},
      rstart = 1, rcut = false }
    B.group = g
  end
  local updated, answered, moved = 0, 0, 0
  local work, inwork = g.work, g.inwork
  local others = 0 -- navigators left for 3 that would not start a plan (see 3b)
  local leads, nleads = g.leads, 0 -- (navigators that may take a lead move: navigator.lua's lead_distance)
  local reached, nreached = g.reached, 0 -- (navigators at their waypoint: 2)
  -- 1 and 2: the navigators on their way; the others get the answer of their last update for now
  -- (the status they have now and no waypoint when a go, cancel or replan came since), replaced
  -- when 3 updates them
  for i = 1, n do
    local nav, p = navs[i], positions[i]
    if type(nav) ~= "table" then bad_nav(i) end
    local epoch = nav.epoch
    if epoch == nil then bad_nav(i) end
    local wp, st = nav.group_wp, nav.state
    if wp and st == "moving" and nav.group_epoch == epoch then
      if type(p) ~= "table" then raise(("budget:update: positions[%d] must be a point {x, y, z}"):format(i)) end
      local dx, dy, dz = wp[1] - p[1], wp[2] - p[2], wp[3] - p[3]
      local d2, a = dx * dx + dy * dy + dz * dz, nav.arrive_distance
      if d2 > EPS2 and d2 > a * a then -- (NaN: not greater, updated, and nav:update names it)
        statuses[i], waypoints[i] = "moving", wp
        nav.group_mark = frame - 1
        if nav.streamer then nav.locks:move_agent(p) end
        answered, others = answered + 1, others + 1
      else -- reached: served in 2 (until then it holds at its waypoint)
        statuses[i], waypoints[i] = "moving", wp
        nav.group_mark = frame - 1
        nreached = nreached + 1
        reached[nreached] = i
      end
    else
      nav.group_mark = nil
      if nav.group_epoch == epoch then
        statuses[i], waypoints[i] = nav.group_st, nav.group_ans
      else
        statuses[i], waypoints[i] = st, nil
      end
      if not (st == "planning" and nav.cells == nil and nav.job == nil) or nav.lead_ready then others = others + 1 end
      if nav.lead_ready then
        nleads = nleads + 1
        leads[nleads] = i
      end
    end
  end
  local due, clock = B.deadline, B.clock
  if ph then ph[3] = ph.clock() end
  -- 2: the navigators at their waypoint, before the others unless the last frame's time ran out
  -- among them (then after: see serve_reached)
  local late_reached = g.rcut
  if not late_reached then
    local u, left = serve_reached(g, navs, positions, statuses, waypoints, reached, nreached, due, clock, frame)
    updated, moved, others = updated + u, moved + u, others + left
  else
    others = others + nreached -- (3b's turns may reach them first)
  end
  -- 2b: the navigators that may take a lead move (a go since their last update, no path yet: their
  -- first move is a line of sight away), first, while the frame's time lasts; the others go on in 3
  for l = 1, nleads do
    local i = leads[l]
    leads[l] = nil
    local nav = navs[i]
    if nav.group_mark ~= frame and not (due and clock() >= due) then
      full(nav, positions[i], i, statuses, waypoints)
      nav.group_mark = frame
      updated, others = updated + 1, others - 1
      if busy(nav) and not inwork[nav] then
        inwork[nav] = true
        work[#work + 1] = nav
      end
    end
  end
  if ph then ph[4] = ph.clock() end
  -- 3a: the navigators whose plan or search is under way, first come first served (they keep their
  -- place until it ends: a search's steps are not spread over turns of the whole crowd)
  local kept = 0
  local stopped = false
  for w = 1, #work do
    local nav = work[w]
    work[w] = nil
    local i = nav.group_i -- (where its last update found it; gone from navs, or moved: it leaves
    if navs[i] ~= nav then i = nil end -- the list, and comes back on its next turn)
    if i and not stopped and nav.group_mark ~= frame then
      if due and clock() >= due then
        stopped = true
      else
        full(nav, positions[i], i, statuses, waypoints)
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
  -- 3b: the others' turns, round robin from the cursor, while the frame's time lasts; a navigator
  -- the budget refused for time keeps the turn (it goes first next frame). One that would start a
  -- plan when none is left this frame is passed over (refused, its update would cost Lua time and
  -- nothing else); when only such are left, the turns end.
  if ph then ph[5] = ph.clock() end
  local plans = B.pools.plans
  local reserved = plans.reserved
  local k = g.cursor
  if k > n then k = 1 end
  local turns = 0
  for _ = 1, n do
    if stopped or (others <= 0 and plans.free == 0) then break end
    local nav = navs[k]
    if nav.group_mark ~= frame then
      -- (one that may take a lead move is served as the others are: navigator.lua's lead_distance)
      local starts = nav.state == "planning" and nav.cells == nil and nav.job == nil and not nav.lead_ready
      if not starts or plans.free > 0 or reserved[nav] then
        if due and clock() >= due then break end
        local cut = B.cut
        full(nav, positions[k], k, statuses, waypoints)
        nav.group_mark = frame
        turns = turns + 1
        if not starts then others = others - 1 end
        if busy(nav) and not inwork[nav] then
          inwork[nav] = true
          work[#work + 1] = nav
        end
        if due and B.cut and not cut then break end -- (refused: its turn again next frame)
      end
    end
    k = k < n and k + 1 or 1
  end
  g.cursor = k
  if late_reached then
    local u = serve_reached(g, navs, positions, statuses, waypoints, reached, nreached, due, clock, frame)
    turns, moved = turns + u, moved + u
    g.rcut = false -- (next frame they go first again)
  end
  for r = 1, nreached do reached[r] = nil end
  if ph then ph[6] = ph.clock() end
  B:late_masks()
  -- the tail the budget learns (budget:frame) is how far past the deadline the frame's work ended:
  -- here the whole call's end (the masks' floor and the Lua after the last ask included), not the
  -- last ask's (the frames ended that much past `ms`)
  if due then B.last_ask = clock() end
  if ph then ph[7] = ph.clock() end
  g.updated, g.answered, g.moved, g.working = updated + turns, answered, moved, kept
  return statuses, waypoints
end

return M
