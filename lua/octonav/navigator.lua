--- octonav.navigator: multi-segment paths over a world, updated frame by frame (the seed's 多段寻路).
--
--   local nav = octonav.navigator.new(world, { checks_per_frame = 8, query_budget = 200 })
--   nav:go(goal)
--   each frame: local status, wp = nav:update(agent_position [, budget])
--     "planning", wp|nil  -- searching; hold position (wp: the point to hold, nil before the first path)
--     "moving", wp        -- head straight for wp
--     "arrived", goal     -- within arrive_distance of the goal at the end of the route
--     "failed", reason    -- planner or query reason (start_outside, unreachable, door_closed, ...)
--     "idle"              -- no goal (before go, after cancel)
--   nav:cancel(), nav:status(), nav:route(), nav:tree(), nav:stats(), nav:close()
--
-- Options (unknown names raise):
--   checks_per_frame = 8       line-of-sight checks a frame may spend smoothing (octonav.smoother)
--   query_budget = 200         default expansions per update for the sliced C query (q:start / q:step)
--   arrive_distance = 0.5      world units: the agent has arrived when this close to the goal while
--                              heading for it as its last waypoint
--   max_nodes = 65536          search memory of each query (262144 with a search radius: option radius;
--                              the navigators of a process share their
--                              queries: a navigator takes an idle one of the tree and max_nodes when a
--                              search starts and gives it back when the search ends)
--   exit_candidates = 3        accepted and ignored (routes of pack version 1 left tiles through connect
--                              blocks of several points; a C route crosses at one point)
--   plan_budget = 1024         portals the C route planner may expand per update (octonav.planner's
--                              sliced job); the navigator holds ("planning") while it runs
--   prefetch_distance = nil    world units: the next step is searched once the agent is this close
--                              (straight line) to the end of the known path; nil: world.tile_size
--                              (16 when absent)
--   search = nil               options for q:start (e.g. octonav.presets.seed); nil: the defaults
--   replan = true              when a step path the agent has not passed yet goes stale (a tile it
--                              depends on was changed, cleared or unloaded: path:is_valid()), plan
--                              the route again from the agent's position at the next update (counted
--                              in stats().replans); false: keep walking the stale path
--   streamer = nil             an octonav.streamer over this world (see "With a streamer" below)
--   wait_timeout = 600         updates in a row the navigator may wait on data (a tile or hole that is
--                              not loaded: stats().waiting says which, since when and why) before it
--                              fails with "wait_timeout" (stats().waiting keeps what it waited for);
--                              while the tile or hole is queued, only the updates since the streamer
--                              last delivered one (s:delivered()) count: a busy streamer is not stuck
--   agent = nil                a string: the world's agent (clearance radius) of that name: the
--                              navigator plans and walks on world:agent(name)'s tree and graph; an
--                              integer, with a streamer: the streamer agent this navigator moves for (its
--                              paths are registered under it); nil: the navigator adds its own agent
--                              at the first update, moves it to the position of every update and
--                              removes it in nav:close()
--   budget = nil               an octonav.navigator.budget shared with other navigators (see "A shared
--                              frame budget" below); nil: each update spends its own query_budget,
--                              plan_budget and checks_per_frame
--   recheck = 0.5              the smoothers' recheck (octonav.smoother: a failed line of sight is tried
--                              again once the agent has halved its distance to its waypoint; 0: after
--                              every move, as before)
--   lead_distance = 0          world units: a lead move (see "Moving before the path" below); 0: none.
--                              Under a budget with `ms`, on tiles: M.LEAD_LEAVES (16) * world.scale
--
-- How it works. The first updates after go plan the Cell route with the C route planner over the
-- world graph (octonav.planner.start with the navigator's own C planner, plan_budget portals an
-- update). A plan answering "loading" (streaming: a tile whose graph is not loaded may lie on the
-- route) locks that tile with the streamer and plans again once it is in (without a streamer, on a
-- world loaded with { tiles = false }, the planner and a search reaching a tile not loaded make the
-- navigator fail with "unloaded", the tile in stats().failed_tile; a search answering "unloaded" (an
-- end point in a tile not loaded, with info.tile) does the same, and with a streamer locks that tile
-- and starts the search again once it is in); "graph_changed" (a tile graph
-- came or went meanwhile) plans again.
-- A start on a face of a blocked leaf (it reads blocked) is moved NUDGE leaves off the face to the
-- free side first (free_start, navigator_search.lua). A replan that falls due while the agent crosses a door (on a
-- door leg) waits until it is through, then plans from the door point on the other side.
-- Once walking, when the graph of a tile the route crosses is replaced (world.graph_ids changes: a
-- rebake; a graph unloaded, or reloaded from the same file, is no change) the navigator plans again
-- from where it is (counted in stats().replans, like a stale path). So does a navigator whose route
-- passes a door that world:set_door closes before the agent reaches it (stats().door_replans; the
-- door's box is blocked in the trees, and the planner leaves closed doors out). The route's consecutive tile steps are then
-- joined into one step on the world tree that ends where the last of them ends (at a door's outside
-- point or at the goal): the route's corridor is searched by ONE query toward that point, not one
-- query per connect block, so the walk is as long as a seamless query's whatever blocks the planner
-- chose (nav:route() still returns the planner's route; the joined steps are what the searches,
-- locks and `exits` below count). Each step is searched with octonav.query on the step's tree
-- (world.tree, or the hole's tree), sliced: an update spends at most `budget` expansions in total over
-- q:step calls (q:start expands nothing), and several searches may run in one frame while the budget
-- lasts. Step 1 is searched from the agent's position, a step after a door from the door point on its
-- side, each to its exit point (the goal for the last step). The next step is searched as soon as the agent is
-- within prefetch_distance of the end of the known path, so while it walks; if it gets there first it
-- holds ("planning"). Streaming: when q:step answers "loading" (the search waits for a tile that is
-- not loaded) the frame's query work stops there and the search resumes in a later update once the
-- tile is in (nav:stats().loading names it; loading and locking tiles is the caller's streamer's
-- job); such a step counts as having spent the whole rest of the frame's budget.
--
-- A shared frame budget (opts.budget = octonav.navigator.budget(...), lua/octonav/navbudget.lua): the
-- game calls budget:frame() once per frame, then updates its navigators; each update takes from the
-- budget what it is about to spend, never more than its own limits (query_budget or the update's
-- budget argument, plan_budget, checks_per_frame), and gives back what it did not spend: expansions
-- before its q:step calls; one of `plans` before a route plan starts (the C start joins the ends in
-- their tiles, not sliced) and portals before each plan step; one of `results` before each q:step
-- (a step that finds the path is followed by q:result, the C finalize, not sliced; given back when
-- the step did not find it); checks before smoothing. Refused, the navigator holds ("planning", or
-- "moving" on the path it knows, smoothing nothing that frame) and waits its turn in the budget's
-- line. So a frame of all the navigators does at most the budget's amounts of each kind of work.
-- A budget with a frame time (`ms`) refuses every ask once that time has passed, and its navigators
-- step their searches until the frame's deadline (q:step_until, on the real clock) or, with a clock
-- of the caller's, at most budget.step (64) expansions at a time, fewer when the frame's time left
-- holds fewer at the cost the budget learnt from their reports (each step asks for its `results`
-- first, held back when the result would not fit; a plan's start is held back a frame when it would
-- not fit), so the frame ends near `ms`.
--
-- Moving before the path (lead_distance > 0): a navigator whose first path is not known yet (its plan not
-- started, refused by a shared budget, or running; or its first step's search running) does not only hold:
-- once after each go, it heads straight for a lead point at most lead_distance away, toward the goal before
-- its route is known (else a quarter as far, else a quarter straight up, +y), toward the route's first portal
-- after (else a quarter as far), the first whose segment one line of sight shows free (one try an update,
-- each one of the budget's checks; outside the holes): "moving", that point; there it holds ("planning", the
-- point) until its path comes. A route planned while it moves starts where the agent is at that update, on
-- the lead segment; the first path it walks is the agent's position, then the search's path (its first point
-- on the same segment, so the joint is visible and the smoother cuts it). So under a budget that starts few
-- plans a frame every agent starts moving at its first update; the walk is then up to about 2 * lead_distance
-- longer than the path from where it stood. nav.lead_ready: true while a lead move may still be taken at the
-- next update (a group update gives such a navigator its turn even when no plan start is left:
-- lua/octonav/navgroup.lua). With a streamer a try waits for the agent's tile to load (none spent).
--
-- With a streamer (opts.streamer, octonav.streamer on the same world), the navigator takes care of
-- the tiles and holes it reads (the seed's 流式加载方案). Its locks are counted streamer locks
-- (s:lock / s:lock_hole), so they never undo someone else's:
--   * before planning, the tiles holding the start and the goal and the holes whose bounds hold
--     them are locked (the planner reads world.tree:locate and world:in_hole there); the navigator
--     holds ("planning", nil) until they are in, plans, and unlocks them;
--   * a step's search locks, when it starts, the tiles of its start point and of its exit points
--     (or its hole), and holds ("planning" or "moving" on the known path) until they are in; a tile the
--     search waits for ("loading") is locked too, so the streamer loads it; once the step's path is
--     known its lock set becomes the tiles that path crosses (path:tiles(); the hole for a hole step);
--   * a step's locks are released when the agent has passed the step (it heads for a waypoint past
--     the step's last point, or has left its leg), and all locks at arrival, failure, nav:cancel(), a
--     new nav:go() and nav:close();
--   * the paths of the steps not yet passed are registered with the streamer as the agent's path
--     (s:set_path), so s:update() lists the agent in `stale` when one of them turns invalid;
--   * a tile or hole that fails to load where the navigator needs it fails the navigator (or the
--     exit candidate whose search waits for it) with "load_failed".
--
-- Each step has one exit candidate (its exit point; the goal for the last): a search that fails with
-- tree_changed is restarted (up to 3 times per candidate, 16 with a streamer); when the restarted
-- search finds one of its end points blocked (an unloaded tile reads blocked), it reports that tile
-- in stats().loading, locks it with a streamer, and starts again at the next update (a retry).
--
-- Smoothing while moving: the paths of consecutive steps on the same tree are joined into one
-- octonav.smoother (it extends as steps arrive), so the agent cuts corners across tile faces too;
-- every frame shares checks_per_frame between smoothers. A door is a leg of its own: the straight
-- segment from the door point on one side to the one on the other (the baked connection; it is on
-- no single tree). The agent moves on to the next leg when it reaches the end of the current one
-- (within 1e-6 world units: an agent moving toward the waypoint should step onto it exactly).
local compat = require "octonav.compat"
compat.frame_module() -- (LuaJIT: run interpreted; compat.lua)
local navlocks = require "octonav.navlocks"
local navbudget = require "octonav.navbudget"
local navopts = require "octonav.navigator_opts"
local util = require "octonav.util"
local raise = util.raise -- (errors at the user's call: no line of the library's files)
local advance = require("octonav.smoother")._advance
local search = require "octonav.navigator_search"
local plan = require "octonav.navigator_plan"
local navtree = require "octonav.navigator_tree"
local agents_of_world = require "octonav.world_agents"
local walk_detach = require("octonav.navgroup").detach

local M = {}
M.LEAD_LEAVES = 16 -- (the default lead distance under a budget with `ms`, in leaves: see lead_distance)

local Nav = util.class()

local type, floor, huge = type, math.floor, math.huge
local dist, copy, is_point, is_int = util.dist, util.copy, util.is_point, util.is_count
local EPS = 1e-6
local unlimited = navbudget.unlimited -- (a navigator given no budget: its takes and gives skipped)
-- the step searches (navigator_search.lua) and the route plan (navigator_plan.lua)
local end_search, fail, passed, stale_step, work = search.end_search, search.fail, search.passed, search.stale_step,
  search.work
local want_next = search.want_next
local give_planner, graph_changed, door_changed, plan_route = plan.give_planner, plan.graph_changed,
  plan.door_changed, plan.plan_route
M.FACE_EPS, M.NUDGE = search.FACE_EPS, search.NUDGE

local function copy_table(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end

--- octonav.navigator.new(world, opts) -> navigator (see the top of this file); world: a world, or a
-- plain octonav.tree (one level without tiles: the route is one search on it, navigator_tree.lua).
function M.new(world, opts)
  if navtree.is_tree(world) then
    world = navtree.world(world) -- a plain tree: one step on it (navigator_tree.lua)
  elseif type(world) ~= "table" or world.tree == nil or type(world.holes) ~= "table" then
    raise("octonav.navigator.new: world must be a world table (octonav.world.load) or an octonav.tree")
  end
  if world.closed then raise("octonav.navigator.new: world is closed (world:close())") end
  if opts ~= nil and type(opts) ~= "table" then raise("octonav.navigator.new: opts must be a table") end
  opts = opts or {}
  for k in pairs(opts) do
    if not navopts.NAMES[k] then raise("octonav.navigator.new: unknown option '" .. tostring(k) .. "'") end
  end
  local agent_name = opts.agent -- a string: the world's agent of that name (world:agent), not a streamer agent
  if type(agent_name) == "string" then
    if type(world.agent) ~= "function" then raise("octonav.navigator.new: option 'agent': the world has no agents") end
    if opts.radius ~= nil then raise("octonav.navigator.new: give option 'agent' (a name) or 'radius', not both") end
    world = world:agent(agent_name)
    opts = copy_table(opts)
    opts.agent = nil
  end
  -- radius (issue 33): the agent of the world that serves it, and what its searches must still keep
  local search_radius = 0
  if opts.radius ~= nil then
    if type(opts.radius) ~= "number" or not (opts.radius >= 0) or opts.radius == huge then
      raise("octonav.navigator.new: option 'radius' must be a finite number >= 0")
    end
    if world.group or world.tree_radius then
      world, search_radius = agents_of_world.for_radius(world, opts.radius, "octonav.navigator.new")
    else
      search_radius = opts.radius - world.tree:params().radius -- (a plain tree, a hand-built world)
      if search_radius < 0 then search_radius = 0 end
    end
  elseif world.tree_radius and (world.radius or 0) > world.tree_radius then
    -- an agent of a one-tree pack (octonav.onetree) without option radius: its own radius
    search_radius = world.radius - world.tree_radius
  end
  if search_radius > 0 then
    local so = copy_table(opts.search or {})
    if so.radius ~= nil then raise("octonav.navigator.new: give option 'radius' or search.radius, not both") end
    so.radius = search_radius
    opts = copy_table(opts)
    opts.search = so
  end
  local budget, cfg = navopts.config(opts, world, search_radius, M.LEAD_LEAVES)
  local self = setmetatable({
    world = world,
    cfg = cfg,
    budget = budget,
    sights = nil, -- tree -> its smoother stand-in at search_radius (navigator_search.lua: sight_of)
    search_radius = search_radius, -- world units its searches and smoothing keep from blocked space (option radius)
    lead_ready = false, -- a lead move may be taken at the next update (see "Moving before the path")
    replans = 0,
    door_replans = 0, -- of which: a door ahead on the route was closed (world:set_door)
    frame = 0,      -- updates so far
    queries = {},   -- tree -> the query the running search holds (see idle_queries)
    state = "idle",
    total_expansions = 0,
    total_searches = 0,
    old_checks = 0, -- checks of smoothers already dropped
    epoch = 0,      -- bumped by every reset (go, cancel, close, a replan): an update sees a call made
                    -- from inside its own search (opts.search.heuristic) by it
    in_c = nil,     -- the search whose C query runs now (q:start, q:step, q:step_until), or nil
    -- the fields updates set later, listed so that the table is made with room for them (a nil in a
    -- constructor is not stored, but counted in its size): a navigator's table never grows, and its
    -- old parts are no garbage for the collector
    goal = nil, reason = nil, cells = nil, route_steps = nil, route_job = nil, job = nil, route_ids = nil,
    route_doors = nil, door_seen = nil, wait = nil, failed_tile = nil, known = nil, exits = nil, legs = nil,
    leg_i = nil, step_paths = nil, step_end = nil, search = nil, from0 = nil, pending_replan = nil,
    cplanner = nil, plan_revision = nil, plan_spent = nil, loading = nil, loading_hole = nil,
    checks_left = nil, checks_got = nil, passed_fn = nil, locks = nil, streamer = nil, agent = nil,
    lead_to = nil, lead_pos = nil, lead_try = nil, lead_after = nil,
    gate_tree = nil, gate_rev = nil, -- (navigator_search.lua's stale_step: the steps' tree, its revision)
    -- budget:update's (lua/octonav/navgroup.lua): the last update's answer, the goal's epoch it
    -- came in, the waypoint the agent heads for while "moving", the frame it was last served in
    group_st = nil, group_ans = nil, group_epoch = nil, group_wp = nil, group_mark = nil, group_i = nil,
    walker = nil, walk_slot = nil, walk_sm = nil, -- (held by its group's C walk: its walker, slot, smoother)
    group_since = nil,
  }, Nav)
  local s = opts.streamer
  if s ~= nil then
    if type(s) ~= "table" or type(s.lock) ~= "function" or type(s.lock_hole) ~= "function" then
      raise("octonav.navigator.new: option 'streamer' must be an octonav.streamer")
    end
    if s.world ~= world and not (world.group ~= nil and s.world.group == world.group) then
      raise("octonav.navigator.new: option 'streamer' streams another world")
    end
    self.streamer = s
    self.agent = navopts.option(opts, "agent", nil, function(v) return compat.isinteger(v) end, "an integer")
  elseif opts.agent ~= nil then
    raise("octonav.navigator.new: option 'agent' needs option 'streamer'")
  end
  self.locks = navlocks.new(self, s, opts.agent == nil)
  return self
end


-- Forget the current goal's work (keeps the counters).
local function reset(self)
  if self.walk_slot then walk_detach(self) end -- (held by a group's C walk: navgroup.lua)
  self.group_since = nil -- (navgroup.lua's first-move rule: waiting to start a plan since)
  self.locks:release_all()
  for _, leg in ipairs(self.legs or {}) do
    if leg.smoother then self.old_checks = self.old_checks + leg.smoother:checks() end
  end
  self.goal, self.reason, self.cells, self.route_steps, self.job, self.route_ids = nil, nil, nil, nil, nil, nil
  self.route_job = nil
  self.route_doors, self.door_seen, self.wait, self.failed_tile = nil, nil, nil, nil
  give_planner(self) -- a plan dropped half way
  self.known, self.exits, self.legs, self.leg_i = 0, {}, {}, 1
  self.step_paths, self.step_end = {}, {}
  self.gate_tree, self.gate_rev = nil, nil
  end_search(self)
  self.from0, self.pending_replan = nil, nil
  self.lead_ready, self.lead_to = false, nil
  self.epoch = self.epoch + 1
end

--- nav:go(goal): a new goal (world point). Planning starts with the next update.
function Nav:go(goal)
  if not is_point(goal) then raise("navigator:go: goal must be a point {x, y, z} of finite numbers") end
  if self.world.closed then raise("navigator:go: its world is closed (world:close())") end
  reset(self)
  self.goal = copy(goal)
  self.state = "planning"
  self.lead_ready = self.cfg.lead_distance > 0
  self.lead_try, self.lead_after = 1, false
end

--- nav:cancel(): stop; the status is "idle" until the next go. Releases every streamer lock.
function Nav:cancel()
  reset(self)
  self.budget:forget(self)
  self.state = "idle"
end

--- nav:close(): cancel, and with a streamer remove the agent the navigator added itself. The
-- navigator is idle afterwards (a later update adds a new agent).
function Nav:close()
  self:cancel()
  self.locks:close()
  for tree, q in pairs(self.queries) do
    q:close()
    self.queries[tree] = nil
  end
end

-- `local nav <close> = octonav.navigator.new(...)` closes it at the end of the block
Nav.__close = function(self) self:close() end

--- tostring(nav): "octonav.navigator: moving, step 2 of 3, goal (x, y, z)" (or idle, failed: reason, ...).
function Nav:__tostring()
  local parts = { "octonav.navigator: " .. tostring(self.state) }
  if self.state == "failed" then parts[1] = parts[1] .. ": " .. tostring(self.reason) end
  if self.state == "failed" and self.failed_tile then
    local t = self.failed_tile
    parts[1] = parts[1] .. (" (tile %d,%d,%d)"):format(t[1], t[2], t[3])
  end
  if self.wait then
    parts[#parts + 1] = ("waiting %d updates for %s"):format(self.wait.frames, self.wait.what)
  end
  if self.cells then parts[#parts + 1] = ("step %d of %d searched"):format(self.known or 0, #self.cells) end
  if self.goal then parts[#parts + 1] = ("goal (%.6g, %.6g, %.6g)"):format(self.goal[1], self.goal[2], self.goal[3]) end
  return table.concat(parts, ", ")
end

--- nav:status() -> the status of the last update (or "idle"/"planning" after cancel/go), and the
-- reason when it is "failed".
function Nav:status()
  return self.state, self.reason
end

--- nav:route() -> the Cell route being followed (docs/world.md), or nil. (Made from the plan's result
-- when first asked: an update makes none.)
function Nav:route()
  if not self.route_steps and self.route_job then self.route_steps = self.route_job:result() end
  return self.route_steps
end

--- nav:tree() -> the tree the agent is moving on now (nil on a door leg or without a path).
function Nav:tree()
  local leg = self.legs and self.legs[self.leg_i]
  return leg and leg.tree or nil
end

local function copy_wait(w)
  return { tile = w.tile and copy(w.tile), hole = w.hole, what = w.what, since = w.since, frames = w.frames,
    state = w.state, reason = w.reason }
end

--- nav:stats() -> { expansions, searches, checks, loading, loading_hole, replans, door_replans,
-- waiting } since new(); waiting (nil when the last update did not wait on data): { tile = {i,j,k} |
-- hole = name, what = "tile I,J,K" | "hole NAME", since = the update it began waiting (in a row),
-- frames = updates waited so far, state = the streamer's state of it ("unloaded", "queued",
-- "failed"; nil without a streamer), reason = "max_loaded" when the streamer's limit keeps it out,
-- else nil }; failed_tile: the tile {i, j, k} a failure "unloaded" (or "loading") names;
-- expansions counted against the budgets (exact, except while streaming, see update), searches
-- started (q:start calls), smoother checks; loading: the tile {i, j, k} the running search waited
-- for in the last update, or nil (loading_hole: the hole); replans: routes planned again because a
-- path went stale (option replan) or a door went shut; door_replans: those of them because a door the
-- route passes ahead of the agent was closed (world:set_door; done whatever the replan option says).
function Nav:stats()
  if self.walk_slot then walk_detach(self) end -- (its C walk's checks and updates counted)
  local checks = self.old_checks
  for _, leg in ipairs(self.legs or {}) do
    if leg.smoother then checks = checks + leg.smoother:checks() end
  end
  return { expansions = self.total_expansions, searches = self.total_searches, checks = checks,
    loading = self.loading, loading_hole = self.loading_hole, replans = self.replans,
    door_replans = self.door_replans, failed_tile = self.failed_tile, waiting = self.wait and copy_wait(self.wait) or nil }
end

-- The legs walked this frame (see move).
local function move_legs(self, position)
  local legs = self.legs
  while true do
    local li = self.leg_i
    local leg = legs[li]
    if not leg then return "planning", nil end
    local has_next = legs[li + 1] ~= nil
    if leg.kind == "door" then
      if dist(position, leg.to) > EPS then return "moving", leg.to end
      if not has_next then return "planning", leg.to end
      self.leg_i = li + 1
    else
      local left = self.checks_left
      if not left then -- the frame's checks, taken when a smoother first needs them
        local B = self.budget
        left = B == unlimited and self.cfg.checks_per_frame or B:take("checks", self, self.cfg.checks_per_frame)
        self.checks_got = left
      end
      local sm = leg.smoother
      local wp, used = advance(sm, position, left) -- (the position was checked by update)
      self.checks_left = left - used
      if sm:remaining() > 1 then return "moving", wp end
      if not has_next and self.known == #self.cells and self.search == nil then
        if dist(position, wp) <= self.cfg.arrive_distance then return "arrived", wp end
        return "moving", wp
      end
      if dist(position, wp) > EPS then return "moving", wp end
      if not has_next then return "planning", wp end
      self.leg_i = li + 1
    end
  end
end

-- Movement: the waypoint for this frame (checks_per_frame line-of-sight checks at most, of which a
-- shared budget grants its share; what is left goes back to it).
local function move(self, position)
  self.checks_left, self.checks_got = nil, nil
  local status, wp = move_legs(self, position)
  local left, B = self.checks_left, self.budget
  if left and B ~= unlimited then
    B:give("checks", self, left, left == 0 and self.checks_got < self.cfg.checks_per_frame)
  end
  return status, wp
end

-- What this update waited on (self.loading / self.loading_hole, set by plan_route and work): kept
-- in self.wait while it goes on in a row; past wait_timeout updates the navigator fails with
-- "wait_timeout". Returns true when it failed.
local function track_wait(self)
  local tile, hole = self.loading, self.loading_hole
  if not tile and not hole then
    self.wait = nil
    return false
  end
  local w = self.wait
  if not w then
    w = { since = self.frame }
    self.wait = w
  end
  w.tile, w.hole, w.frames = tile, hole, self.frame - w.since + 1
  w.what = tile and ("tile %d,%d,%d"):format(tile[1], tile[2], tile[3]) or ("hole " .. tostring(hole))
  w.state, w.reason = nil, nil
  local s = self.streamer
  w.stalled = (w.stalled or 0) + 1
  if s and not s.closed then
    if tile then
      w.state = s:state(tile)
      for _, e in ipairs(s:waiting()) do
        local t = e.tile
        if t[1] == tile[1] and t[2] == tile[2] and t[3] == tile[3] then w.reason = e.reason end
      end
    else
      w.state = s:hole_state(hole)
    end
    -- a queued tile or hole comes (loaded or failed) once the streamer's workers reach it: while they
    -- deliver, the navigator is in line, not stuck; only updates in a row without a delivery count
    if w.state == "queued" then
      local done = s:delivered()
      if done ~= w.delivered then w.delivered, w.stalled = done, 1 end
    end
  end
  if w.stalled > self.cfg.wait_timeout then
    fail(self, "wait_timeout")
    self.wait = w -- fail keeps no search; what it waited for stays readable
    return true
  end
  return false
end

-- The lead move (see "Moving before the path"): "moving", the lead point while the agent heads for it;
-- "planning", the point once there; nil when there is none (the update answers as it would). One line
-- of sight an update: before the route toward the goal (lead_distance, then a quarter of it), then
-- straight up (+y, a quarter); after it toward the first portal (lead_distance, then a quarter).
local LEAD_TRIES = { before = { 1, 0.25, "up" }, after = { 1, 0.25 } }

local function lead(self, position)
  local to = self.lead_to
  if to then
    if dist(position, to) > EPS then return "moving", to end
    return "planning", to
  end
  if not self.lead_ready then return nil end
  local world = self.world
  local tx, ty, tz
  local cells = self.cells
  local tries = cells and LEAD_TRIES.after or LEAD_TRIES.before
  if cells and not self.lead_after then -- the route came: its tries start over
    self.lead_after, self.lead_try = true, 1
  end
  local try = tries[self.lead_try]
  if not try then
    self.lead_ready = false
    return nil
  end
  if cells then -- toward the route's first portal (the C result's first crossing), else its first leg's end
    local c = cells[1]
    if c.kind ~= "tile" then
      self.lead_ready = false
      return nil
    end
    local f = self.route_job and self.route_job.flat
    if f and f.n and f.n > 0 then
      tx, ty, tz = f[5], f[6], f[7]
    else
      tx, ty, tz = c.exit[1], c.exit[2], c.exit[3]
    end
  elseif try == "up" then
    tx, ty, tz = position[1], position[2] + 1, position[3]
  else
    local g = self.goal
    tx, ty, tz = g[1], g[2], g[3]
  end
  local dx, dy, dz = tx - position[1], ty - position[2], tz - position[3]
  local d = math.sqrt(dx * dx + dy * dy + dz * dz)
  if d <= EPS then
    self.lead_ready = false
    return nil
  end
  local f -- (up: d is 1)
  if try == "up" then f = self.cfg.lead_distance * 0.25 else f = math.min(self.cfg.lead_distance * try, d) / d end
  to = { position[1] + dx * f, position[2] + dy * f, position[3] + dz * f }
  if world:in_hole(position) ~= nil or world:in_hole(to) ~= nil then
    self.lead_try = self.lead_try + 1
    return nil
  end
  if not self.locks:loaded_at(position) then return nil end -- (streamed: an unloaded tile reads blocked)
  local B = self.budget
  if B:take("checks", self, 1) == 0 then return nil end -- refused: tried again at the next update
  B:adopt(world.tree) -- (its masks built in the budget's frames: else whole, 23 ms a 512^3 tile)
  local ok
  if self.search_radius > 0 then ok = world.tree:visible_radius(position, to, self.search_radius)
  else ok = world.tree:visible(position, to) end
  B:give("checks", self, 0, false)
  if not ok then
    self.lead_try = self.lead_try + 1
    return nil
  end
  self.lead_ready, self.lead_to = false, to
  return "moving", to
end

--- nav:update(position [, budget]) -> status, waypoint | reason (see the top of this file).
-- budget: expansions of the C query this frame (an integer >= 0; default query_budget).
function Nav:update(position, budget)
  if not is_point(position) then
    raise("navigator:update: position must be a point {x, y, z} of finite numbers")
  end
  if budget == nil then
    budget = self.cfg.query_budget
  elseif not is_int(budget, 0) then
    raise("navigator:update: budget must be an integer >= 0")
  end
  if self.world.closed then raise("navigator:update: its world is closed (world:close())") end
  if self.walk_slot then walk_detach(self) end -- (held by a group's C walk: navgroup.lua)
  self.frame = self.frame + 1
  local locks = self.locks
  locks:move_agent(position)
  local state = self.state
  if state == "idle" then return "idle", nil end
  if state == "failed" then return "failed", self.reason end
  if state == "arrived" then return "arrived", self.goal end
  local by_door = self.cells and door_changed(self)
  local pending = self.pending_replan
  if pending or by_door or (self.cfg.replan and self.cells and (stale_step(self) or graph_changed(self))) then
    -- a door ahead on the route was closed (whatever the replan option says), a tile under the path
    -- changed (re-baked, cleared, unloaded, an obstacle), or the graph of a tile the route crosses was
    -- replaced (a rebake): plan again from here, now; unless the agent is crossing a door (on a door
    -- leg, inside the doorway, where no tree holds it): it crosses first, and plans again from the
    -- door point on the other side
    local leg = self.legs[self.leg_i]
    if leg and leg.kind == "door" and dist(position, leg.to) > EPS then
      self.pending_replan = { door = by_door or (pending and pending.door) }
    else
      local goal = self.goal
      by_door = by_door or (pending and pending.door)
      reset(self)
      self.goal = goal
      self.replans = self.replans + 1
      if by_door then self.door_replans = self.door_replans + 1 end
    end
  end
  if not self.cells then
    local st
    if self.world.plain then st = navtree.route(self, position, search.free_start) else st = plan_route(self, position) end
    if st == "planning" and track_wait(self) then return "failed", self.reason end
    if st == "planning" and (self.lead_to or self.lead_ready) then
      local ls, lw = lead(self, position)
      if ls then
        self.state = ls
        return ls, lw
      end
    end
    if st then return st, st == "failed" and self.reason or nil end
  end
  local epoch = self.epoch
  if self.search or want_next(self, position) then
    self.lead_pos = self.lead_to and position -- (the first path starts where the agent is: append)
    work(self, position, floor(budget))
    self.lead_pos = nil
  else -- (no query work this update: work would find none)
    self.loading, self.loading_hole = nil, nil
  end
  if self.epoch ~= epoch then
    -- the search's heuristic called nav:cancel(), nav:go() or nav:close(): answer as that left it
    -- ("idle", or "planning" toward the new goal)
    return self.state, nil
  end
  if self.state ~= "failed" and (self.loading or self.loading_hole or self.wait) then track_wait(self) end
  if self.state == "failed" then return "failed", self.reason end
  local status, wp = move(self, position)
  if status == "planning" and self.known == 0 and (self.lead_to or self.lead_ready) then
    local ls, lw = lead(self, position)
    if ls then status, wp = ls, lw end
  end
  if status == "arrived" then wp = self.goal end
  self.state = status
  if status == "arrived" then
    locks:release_all()
  elseif locks ~= navlocks.none then
    local fn = self.passed_fn -- made once: an update allocates no closure
    if not fn then
      fn = function(k) return passed(self, k) end
      self.passed_fn = fn
    end
    locks:release_passed(self.known, fn)
  end
  return status, wp
end

-- A navigator held by its group's C walk (navgroup.lua) whose next step's search is under way: the
-- query part of nav:update (the walk was the C call's this frame, the stale and door checks too:
-- it hands a navigator back when they would act). Returns nil while it walks on (held unless the
-- search found its path: then handed back, its next update a full one), else the update's answer
-- (a failure; a go, cancel or close from the search's heuristic), handed back. Internal.
function Nav:_walk_search(position)
  local epoch, known = self.epoch, self.known
  self.lead_pos = nil
  work(self, position, floor(self.cfg.query_budget))
  if self.epoch ~= epoch then return self.state, nil end -- (reset handed it back)
  if self.state == "failed" or self.known ~= known or self.loading or self.loading_hole or self.wait then
    if self.walk_slot then walk_detach(self) end
    if self.state ~= "failed" and (self.loading or self.loading_hole or self.wait) then track_wait(self) end
    if self.state == "failed" then return "failed", self.reason end
  end
  return nil
end

--- octonav.navigator.budget(opts) -> a frame budget shared by navigators (octonav.navbudget).
M.budget = navbudget.new

return M
