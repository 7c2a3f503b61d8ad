--- octonav.navgroup_walk: the C walk of budget:update (lua/octonav/navgroup.lua, core.walker:
-- csrc/lua/lua_walk.c): the navigators it holds walking their smoothed paths, and those it holds
-- parked while they wait to start a plan. Internal to navgroup.lua (and navigator.lua's detach).
local M = {}
require("octonav.compat").frame_module() -- (LuaJIT: run interpreted; compat.lua)

local huge = math.huge

M.STREAM = true -- streamed navigators held too (false: visited in Lua, as before session 30; spec/170)

-- The C walk (core.walker, csrc/lua/lua_walk.c): a navigator walking a smoothed path on its world's
-- tree (with a streamer: its agent moved by the C walk, see attach; no radius, no lead move, no
-- replan pending, its last stale-path check passed at the tree's revision; its next step's search
-- may be under way: 3a serves that search alone) is held in a slot of the group's walker, its slot
-- its index in navs, from the update that left it so (attach) until its
-- update needs Lua again: the C call then hands it back (detach: the smoother's state, its checks and
-- updates copied into the navigator's tables). A held navigator's update is the C walk's, which is
-- the smoother's step at its position (csrc/crowd/walk.c: the Lua smoother's, number for number),
-- what nav:update answers there: it hands the navigator back, before changing anything, when the
-- tree's revision changed (the stale-path check), the agent is within prefetch_distance of the known
-- path's end with no search under way (the next step's search), it is at the leg's last point
-- (arrival, the next leg; with a search under way, as soon as that point is its target), the
-- position is not a point or the tree was closed; every navigator when a door or a tile
-- graph of a held navigator's world changed (world.door_revision, graph_revision) or it was closed.
-- nav:update, nav:go, nav:cancel, nav:close, nav:stats detach a held navigator first (navigator.lua).

-- The smoother's state after the C walk (walker:take's values) into nav's tables.
local function sync(nav, sm, i, fj, fx, fy, fz, fd, checks, updates)
  sm.i, sm.fail_d = i, fd
  if fj then
    sm.fail_j = fj
    local fp = sm.fail_pos
    if fp then fp[1], fp[2], fp[3] = fx, fy, fz else sm.fail_pos = { fx, fy, fz } end
  end
  sm.total = sm.total + checks
  if updates > 0 then
    sm.at_end = false
    nav.frame = nav.frame + updates
    local wp = sm.path[i]
    nav.group_st, nav.group_ans, nav.group_wp = "moving", wp, wp
  end
end

--- The navigator held by a group's walker handed back to Lua (see above). Internal (navigator.lua,
-- through navgroup.detach).
-- (walk_sm false: parked, see park: nothing to copy back)
function M.detach(nav)
  local w, k, sm = nav.walker, nav.walk_slot, nav.walk_sm
  nav.walker, nav.walk_slot, nav.walk_sm = nil, nil, nil
  local held, i, fj, fx, fy, fz, fd, checks, updates = w:take(k)
  if held == nav and sm then sync(nav, sm, i, fj, fx, fy, fz, fd, checks, updates) end
end

-- Slot k of the walker let go of the navigator it held (not navs[k] any more): synced, handed back.
function M.take_gone(w, k)
  local nav, i, fj, fx, fy, fz, fd, checks, updates = w:take(k)
  if nav and nav.walk_slot == k and nav.walker == w then
    local sm = nav.walk_sm
    nav.walker, nav.walk_slot, nav.walk_sm = nil, nil, nil
    if sm then sync(nav, sm, i, fj, fx, fy, fz, fd, checks, updates) end
  end
end

-- Parked navigators (walker:park, csrc/lua/lua_walk.c): one waiting to start its plan (no route, no
-- job, no lead move due) answers the same until its next update (or a go, cancel, close: reset
-- detaches it). At 1,000 navigators on the seed's world about 900 wait so each frame while two plan,
-- and the first pass's Lua over them took 1.8-2.6 ms of a 4 ms frame; parked, the C walk writes their
-- answers and lists them only when a plan may start in their world (open: then as candidates of 3b,
-- k + M.OPEN in ret), and reports the one waiting longest (the first-move rule, 1b). Lua visits a parked
-- navigator only when it is served.
M.OPEN = 2147483648 -- (2^31, an integer on Lua 5.3 and 5.4)

-- nav (navs[i], waiting to start its plan, its answer st, ans written) parked in the group's walker.
function M.park(g, nav, i, st, ans)
  local world = nav.world
  local wid = g.wids[world]
  if not wid then
    wid = #g.wlist + 1
    if wid > 1024 then return end -- (the walker's world numbers: the rest are not parked)
    g.wids[world], g.wlist[wid] = wid, world
  end
  g.walker:park(i, nav, st, ans, nav.group_since, wid)
  nav.walker, nav.walk_slot, nav.walk_sm = g.walker, i, false
end

-- After nav's update at index i: held by the walker when its next updates are plain steps (above).
function M.attach(g, nav, i)
  if nav.state ~= "moving" then return end
  local legs = nav.legs -- (stand-ins of specs and benchmarks have none)
  local leg = legs and legs[nav.leg_i]
  local sm = leg and leg.smoother
  if not sm or nav.pending_replan or nav.wait or nav.loading or nav.loading_hole
    or nav.lead_to or nav.budget ~= g.budget or nav.search_radius > 0 or nav.walk_slot
    or rawget(nav, "update") ~= nil then return end -- (its own update: a wrapper's, Lua calls it)
  local path, si = sm.path, sm.i

  local world = nav.world
  local tree = world.tree
  if sm.tree ~= tree or world.closed or nav.door_seen ~= (world.door_revision or 0) then return end
  local rev
  if nav.cfg.replan then
    if nav.gate_tree ~= tree or nav.gate_rev == nil then return end
    rev = nav.gate_rev
    local gr = world.graph_revision
    if gr ~= nil and gr ~= nav.plan_revision then return end
  end
  -- (the next step's search is due once the agent is within prefetch_distance of the known path's
  -- end, unless one runs; at the leg's last point the walk goes on while the agent is farther than
  -- arrive_distance from it on the route's last leg, than 1e-6 on any other: navigator.lua's move_legs)
  local pf, pfd
  local known, ncells = nav.known, #nav.cells
  local search = nav.search
  if known < ncells and not search then pf, pfd = nav.exits[known].inside, nav.cfg.prefetch_distance end
  -- (with a search under way, not at all: the path it finds extends the leg, and nav:update would
  -- step on into it in the same update)
  local end_d = 1e-6
  if search then
    end_d = huge
  elseif legs[nav.leg_i + 1] == nil and known == ncells and nav.cfg.arrive_distance > end_d then
    end_d = nav.cfg.arrive_distance
  end
  -- with a streamer (its one core on this tree): each C update moves the navigator's own agent
  -- (navlocks.lua's move_agent: added at its first update, so held only once it exists) and hands it
  -- back before the smoother passes the last point of the next step whose locks are held (its
  -- release_passed: the step's end on this leg; one on an earlier leg is released already)
  local strm, agent, rel
  local s = nav.streamer
  if s then
    if not M.STREAM then return end
    local locks = nav.locks
    strm = s.core
    if s.closed or s.cores[2] or not strm or s.world ~= world then return end
    if locks.own_agent then
      agent = nav.agent
      if not agent then return end
    end
    local k = locks.released + 1
    local e = k <= known and nav.step_end[k]
    if e then
      if e.leg < nav.leg_i then return end
      if e.leg == nav.leg_i then rel = e.idx end
    end
  end
  local seen = g.worlds[world]
  if not seen then g.worlds[world] = { world.door_revision or 0, world.graph_revision } end
  local w = g.walker
  w:attach(i, nav, tree, path, si, sm.fail_j, sm.fail_pos, sm.fail_d, sm.budget, sm.recheck, rev, pf, pfd, end_d)
  if strm then w:stream(i, strm, agent, rel) end
  nav.walker, nav.walk_slot, nav.walk_sm = w, i, sm
end

-- Has a door or a tile graph of a held navigator's world changed since the last frame (or was it
-- closed)? Then the walker hands every navigator back this frame.
function M.worlds_changed(g)
  local changed = false
  for world, seen in pairs(g.worlds) do
    local d, gr = world.door_revision or 0, world.graph_revision
    if world.closed then
      g.worlds[world] = nil
      changed = true
    elseif seen[1] ~= d or seen[2] ~= gr then
      seen[1], seen[2] = d, gr
      changed = true
    end
  end
  return changed
end

return M
