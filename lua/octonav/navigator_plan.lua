--- octonav.navigator_plan: a navigator's route plan (internal to octonav.navigator).
--
-- The C route planner over the world graph, sliced over updates (plan_budget portals an update, the
-- shared frame budget's `plans` and `portals`); what the plan waits on while streaming; the legs
-- the route is walked in; and the checks that make a navigator plan again: a tile graph the route
-- crosses replaced (a rebake), a door ahead on the route closed. The navigator's life cycle is in
-- navigator.lua; the step searches in navigator_search.lua.
local planner = require "octonav.planner"
require("octonav.compat").frame_module() -- (LuaJIT: run interpreted; compat.lua)
local navlocks = require "octonav.navlocks"
local tilegrid = require "octonav.tilegrid"
local util = require "octonav.util"
local raise = util.raise -- (errors at the user's call: no line of the library's files)
local search = require "octonav.navigator_search"

local M = {}

local type, huge = type, math.huge
local copy = util.copy
local fail, passed, free_start, locate_status = search.fail, search.passed, search.free_start, search.locate_status

-- A plan's C planner goes back to the world's idle ones (planner.acquire / planner.release).
local function give_planner(self)
  if self.cplanner then
    planner.release(self.world, self.cplanner)
    self.cplanner = nil
  end
end

-- Has the graph of a tile the route crosses been replaced since it was planned (its graph_ids entry
-- changed to another graph: a rebake)? A graph removed (its tile unloaded) is not a change.
local function graph_changed(self)
  local world = self.world
  if world.graph_revision == nil or world.graph_revision == self.plan_revision then return false end
  self.plan_revision = world.graph_revision
  local ids, r = world.graph_ids, self.route_ids
  for i = 1, r and #r or 0, 2 do
    local id = r[i + 1]
    local now = ids[r[i]]
    if id and now ~= nil and now ~= id then return true end
  end
  return false
end

-- The doors the route passes: { hole, door, k } for each cell k that leaves through a door (NO_DOORS,
-- shared and never written, when none).
local NO_DOORS = {}
local function doors_of(cells)
  local out = NO_DOORS
  for k, c in ipairs(cells) do
    if c.via_kind == "door" then
      if out == NO_DOORS then out = {} end
      out[#out + 1] = { hole = c.via_hole, door = c.via, k = k }
    end
  end
  return out
end

-- Is a door the route passes, and the agent has not reached yet, closed? A door counts as reached once
-- the agent has passed the step leading to it (it is on the door's own leg, crossing): it goes on.
local function door_closed_ahead(self)
  for _, rd in ipairs(self.route_doors or {}) do
    local h = self.world.holes[rd.hole]
    local d = h and h.doors[rd.door]
    if d and d.open == false and not passed(self, rd.k) then return true end
  end
  return false
end

-- Checked when a door changed since the last look (world.door_revision), and once after planning.
local function door_changed(self)
  local rev = self.world.door_revision or 0
  if self.door_seen == rev then return false end
  self.door_seen = rev
  return door_closed_ahead(self)
end

-- The C planner the navigator plans with: taken from the world's idle ones while it plans (several
-- navigators plan at once, each sliced over its updates), given back when the plan ends.
local function take_planner(self)
  if not self.cplanner then self.cplanner = planner.acquire(self.world) end
  return self.cplanner
end

-- A plan's calls under a frame time are slices (issue 31): the joins of its start (the local searches
-- from its ends to their tiles' portals, C) and the portals of each step are cut so that no single C
-- call of a navigator's update takes more than about SLICE_MS, whatever the frame's time left (a whole
-- join took 0.4-1.3 ms on the seed's world, and the budget admitted it whenever its learnt cost fit):
-- each start and step joins at most JOIN_SLICE units (planner:join_limit: a box settled, a lazy block
-- built 8; ~0.1-0.25 ms on the seed's world at load) and until min(the frame's deadline, SLICE_MS from
-- now; with a clock of the caller's, the units alone), and goes on in the next update; a step expands
-- no more portals than SLICE_MS holds at their learnt cost. The joins and the route are those of a
-- whole start, exactly (resumable joins, reach.h).
-- Without a frame time (no `ms`) a start joins whole. Module fields: tuning and specs (spec/118).
M.JOIN_SLICE = 256
M.SLICE_MS = 0.25
-- Sliced plans last several updates, each holding a C planner (and, while its joins go on, a join
-- scratch of its own: up to ~15 MB in a 512^3 tile; route.h), and planners stay for reuse: under a
-- frame time at most MAX_PLANNING navigators of a world plan at once, the others wait their turn (1,000
-- navigators, ms 4, 1,000 frames on the seed's world: the C beyond the tree 11 MB -> 27 MB unbounded).
-- The planners' box sets are the world's (csrc/world/route_boxes.h), so a planner more costs its nodes
-- and join scratch only; 3 / 4 at once gave 1.14x / 1.31x the arrivals of 2 within today's memory, but
-- a frame's p99.9 over 4.5 ms in 4 of 5 / 5 of 5 runs (docs/benchmarks.md, session 25, h31share).
M.MAX_PLANNING = 2
local JOIN_MIN_MS = 1e-6 -- a deadline already passed: one unit of work (a box settled) and stop
local function join_limit(B, cp)
  if B.deadline and not B.timed then
    -- a clock of the caller's (a work clock, a replay): the C joins cannot read it, so they are cut
    -- by their units alone, never by the machine's time (which made spec/102 differ run to run)
    cp:join_limit(M.JOIN_SLICE)
  elseif B.deadline then
    local left = (B.deadline - B.now()) * 1e3
    if left > M.SLICE_MS then left = M.SLICE_MS end
    cp:join_limit(M.JOIN_SLICE, left > JOIN_MIN_MS and left or JOIN_MIN_MS)
  else
    cp:join_limit(0)
  end
end

-- May self start its plan now under a frame time (at most MAX_PLANNING navigators of a world plan at
-- once)? Plan starts are first come first served (the budget's plans' line, spec/125): a navigator the
-- line reserved a start for this frame takes a planner as soon as one is idle; any other only when a
-- planner is idle beyond those the reserved ones are owed. (Before, the planner count was checked
-- before the line: a navigator that found both planners busy never joined the line, and one freed
-- later in the frame went to whoever asked next: on the seed's world, 1,000 navigators ms 4, one
-- navigator asked 1,593 times in 3,000 frames and never started.)
-- (self nil: a navigator with no start reserved; navgroup.lua asks so before updating one)
local function planner_idle(B, self, world)
  local n = planner.busy(world)
  if n >= M.MAX_PLANNING then return false end
  local reserved = B.pools.plans.reserved
  if self and reserved[self] then return true end
  for who in pairs(reserved) do -- (at most the budget's plans a frame: those first in line)
    if who ~= self and who.world == world then n = n + 1 end
  end
  return n < M.MAX_PLANNING
end

-- The portals a step may expand within one slice (n: what the budget grants): at most SLICE_MS at the
-- learnt cost of a portal, half of that when the step first ends joins (one call does both), >= 1.
local function slice_portals(B, n, joining)
  local c = B.portal_cost
  if not (B.deadline and c and c > 0) then return n end
  local fit = math.floor(M.SLICE_MS * 1e-3 / c)
  if joining then fit = math.floor(fit / 2) end
  if fit < 1 then fit = 1 end
  return fit < n and fit or n
end

-- Plans the route (sliced: plan_budget portals this update). Returns nil once the route is known (the
-- legs set up), or the status to return now ("planning" or "failed").
local function plan_route(self, position)
  local locks, world = self.locks, self.world
  -- the planner reads the start's and the goal's tiles and the holes whose bounds hold them (from
  -- where the agent is now: it should hold while it waits, but may not)
  self.loading, self.loading_hole = nil, nil
  local st, missing = locks:plan_state(position, self.goal)
  if st == "failed" then
    fail(self, "load_failed")
    return "failed"
  end
  if st == "waiting" then
    if type(missing) == "table" then self.loading = missing else self.loading_hole = missing end
    self.state = "planning"
    return "planning"
  end
  local B = self.budget
  local portals, t0
  if not self.job then
    if B.deadline and not planner_idle(B, self, world) then -- (MAX_PLANNING: wait for a planner, in line)
      B:wait("plans", self, 1)
      self.state = "planning"
      return "planning"
    end
    -- a plan's start joins its ends in their tiles (C, not sliced): one of the budget's `plans`,
    -- taken with the portals of its first step (a plan started without them would wait, and on a
    -- streamed world its graph would change meanwhile: started again, its start paid twice)
    if B:take("plans", self, 1) == 0 then
      self.state = "planning"
      return "planning"
    end
    portals = B:take("portals", self, self.cfg.plan_budget)
    if portals == 0 then
      B:give("plans", self, 1, true) -- keeps its place in both lines
      B:give("portals", self, 0, true)
      self.state = "planning"
      return "planning"
    end
    B:give("plans", self, 0, false)
    -- a start on a blocked leaf's face, outside the holes: off it (free_start; the planner's local
    -- search takes a face point, but not one a hair inside the leaf)
    local from = position
    if locate_status(world.tree, position) == "blocked" and world:in_hole(position) == nil then
      from = free_start(world.tree, position)
    end
    self.from0 = copy(from)
    -- (a budget with a frame time learns what a start and its first step cost: they come in one update)
    t0 = B.step and B.now()
    local cp = take_planner(self)
    join_limit(B, cp)
    self.job = planner.start_named("navigator:update", world, self.from0, self.goal, cp, self.search_radius)
    self.plan_revision = world.graph_revision
    self.plan_spent = 0
    -- its joins stopped at the frame's deadline, or ended past it: they (or its first step, whose
    -- portals are not cut by the clock: 0.2-1.5 ms on the seed's world) go on next update
    if cp:joining() or (B.deadline and B.now() >= B.deadline) then
      if t0 then B:spent("plans", 1, B.now() - t0) end
      B:give("portals", self, portals, true)
      self.state = "planning"
      return "planning"
    end
  end
  portals = portals or B:take("portals", self, self.cfg.plan_budget)
  if portals == 0 then
    B:give("portals", self, 0, true)
    self.state = "planning"
    return "planning"
  end
  local joining = false
  if self.cplanner then
    join_limit(B, self.cplanner)
    joining = self.cplanner:joining()
  end
  -- with a frame time, no more portals than the time left holds at the cost learnt (budget:fit; a
  -- step of 1,024 portals took 0.2-1.5 ms on the seed's world, not cut by the clock), nor than a slice
  local n = B.step and slice_portals(B, B:fit("portals", portals), joining) or portals
  local t1 = B.step and B.now()
  local pst, reason, tile = self.job:step(n)
  -- (a step that joined first is no measure of its portals' cost)
  if t1 and pst == "running" and not joining then B:spent("portals", n, B.now() - t1) end
  if t0 then B:spent("plans", 1, B.now() - t0) end
  if pst == "running" then
    -- a step whose joins go on expanded no portal (the joins come first): all given back. (Counted as
    -- spent, each joining slice took its n of the frame's 1,024 portals: about 8 slices a frame, and plans
    -- waited for portals while the frame had time left: 0.69 plans a frame at 1,000 navigators ms 4)
    local used = n
    if joining and self.cplanner and self.cplanner:joining() then used = 0 end
    self.plan_spent = self.plan_spent + used
    B:give("portals", self, portals - used, true)
    self.state = "planning"
    return "planning"
  end
  if pst ~= "found" then
    -- a failed step's portals are not reported: all of them count, but graph_changed, which the C
    -- planner answers before expanding any
    B:give("portals", self, reason == "graph_changed" and portals or portals - n, false)
    self.job = nil
    give_planner(self)
    if reason == "graph_changed" then -- a tile graph came or went while planning: start again
      self.state = "planning"
      return "planning"
    end
    if reason == "loading" and tile and locks ~= navlocks.none then
      -- streaming: the route may pass a tile whose graph is not loaded yet: lock it, plan again
      if locks:plan_wait(tile) then
        fail(self, "load_failed")
        return "failed"
      end
      self.loading = tilegrid.ijk(world, tile)
      self.state = "planning"
      return "planning"
    end
    fail(self, reason)
    if tile then self.failed_tile = tilegrid.ijk(world, tile) end -- unloaded, loading: which tile
    return "failed"
  end
  -- the legs straight from the C result (the route's tables are made when nav:route() asks: a crowd's
  -- plans make little garbage); the job needs its C planner no more
  local job = self.job
  local cells, tiles = job:legs()
  if not cells then -- (the C result answers what its step did: only misuse gets here)
    raise("navigator:update: planner job: " .. tostring(tiles))
  end
  -- the portals the plan expanded in all (the C result's count) less those counted in earlier updates
  local used = math.max(0, math.min(n, (job.expansions or huge) - self.plan_spent))
  B:give("portals", self, portals - used, false)
  self.job = nil
  give_planner(self)
  self.route_job, self.route_steps = job, nil
  self.cells = cells
  self.route_doors = doors_of(self.cells)
  self.door_seen = nil -- a door closed while the plan ran: checked at the next update
  if #self.route_doors > 0 then
    locks:set_door_check(function() return self.cells ~= nil and door_closed_ahead(self) end)
  else
    locks:set_door_check(nil)
  end
  -- the graphs the route was planned on: tile, id pairs in one list (false: no id known)
  local ids, route_ids = world.graph_ids, nil
  if ids then
    route_ids = {}
    for i, t in ipairs(tiles) do
      route_ids[2 * i - 1], route_ids[2 * i] = t, ids[t] or false
    end
  end
  self.route_ids = route_ids
  locks:planned()
  return nil
end

M.planner_idle = planner_idle
M.give_planner, M.graph_changed, M.door_changed, M.plan_route = give_planner, graph_changed, door_changed, plan_route

return M
