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
--   max_nodes = 65536          search memory of each query (the navigators of a process share their
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
--                              fails with "wait_timeout" (stats().waiting keeps what it waited for)
--   agent = nil                a string: the world's agent (clearance radius) of that name: the
--                              navigator plans and walks on world:agent(name)'s tree and graph; an
--                              integer, with a streamer: the streamer agent this navigator moves for (its
--                              paths are registered under it); nil: the navigator adds its own agent
--                              at the first update, moves it to the position of every update and
--                              removes it in nav:close()
--   budget = nil               an octonav.navigator.budget shared with other navigators (see "A shared
--                              frame budget" below); nil: each update spends its own query_budget,
--                              plan_budget and checks_per_frame
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
-- free side first (free_start below). A replan that falls due while the agent crosses a door (on a
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
local query_new = require("octonav.core").query.new
local smoother = require "octonav.smoother"
local planner = require "octonav.planner"
local navlocks = require "octonav.navlocks"
local navbudget = require "octonav.navbudget"
local tilegrid = require "octonav.tilegrid"
local util = require "octonav.util"
local close_idle_queries = require("octonav.world").World.close_idle_queries

local M = {}

local Nav = util.class()

local type, floor, huge = type, math.floor, math.huge
local dist, copy, is_point, is_int, subtable = util.dist, util.copy, util.is_point, util.is_count, util.subtable
local EPS = 1e-6
local end_search -- (below: a search's query goes back to the idle ones)

local OPTION_NAMES = {
  checks_per_frame = true, query_budget = true, arrive_distance = true, max_nodes = true,
  exit_candidates = true, prefetch_distance = true, search = true, streamer = true, agent = true, plan_budget = true,
  replan = true, wait_timeout = true, budget = true,
}

local function copy_table(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end

local function option(opts, name, default, ok, what)
  local v = opts[name]
  if v == nil then return default end
  if not ok(v) then error(("octonav.navigator.new: option '%s' must be %s"):format(name, what), 3) end
  return v
end

--- octonav.navigator.new(world, opts) -> navigator (see the top of this file).
function M.new(world, opts)
  if type(world) ~= "table" or world.tree == nil or type(world.holes) ~= "table" then
    error("octonav.navigator.new: world must be a world table (octonav.world.load)", 2)
  end
  if opts ~= nil and type(opts) ~= "table" then error("octonav.navigator.new: opts must be a table", 2) end
  opts = opts or {}
  for k in pairs(opts) do
    if not OPTION_NAMES[k] then error("octonav.navigator.new: unknown option '" .. tostring(k) .. "'", 2) end
  end
  local agent_name = opts.agent -- a string: the world's agent of that name (world:agent), not a streamer agent
  if type(agent_name) == "string" then
    if type(world.agent) ~= "function" then error("octonav.navigator.new: option 'agent': the world has no agents", 2) end
    world = world:agent(agent_name)
    opts = copy_table(opts)
    opts.agent = nil
  end
  local self = setmetatable({
    world = world,
    checks_per_frame = option(opts, "checks_per_frame", 8, function(v) return is_int(v, 1) end, "an integer >= 1"),
    query_budget = option(opts, "query_budget", 200, function(v) return is_int(v, 1) end, "an integer >= 1"),
    arrive_distance = option(opts, "arrive_distance", 0.5,
      function(v) return type(v) == "number" and v >= 0 and v < huge end, "a number >= 0"),
    max_nodes = option(opts, "max_nodes", 65536, function(v) return is_int(v, 2) end, "an integer >= 2"),
    exit_candidates = option(opts, "exit_candidates", 3, function(v) return is_int(v, 1) end, "an integer >= 1"),
    plan_budget = option(opts, "plan_budget", 1024, function(v) return is_int(v, 1) end, "an integer >= 1"),
    prefetch_distance = option(opts, "prefetch_distance", world.tile_size or 16,
      function(v) return type(v) == "number" and v >= 0 end, "a number >= 0"),
    search_opts = option(opts, "search", nil, function(v) return type(v) == "table" end, "a table"),
    replan = option(opts, "replan", true, function(v) return type(v) == "boolean" end, "a boolean"),
    wait_timeout = option(opts, "wait_timeout", 600, function(v) return is_int(v, 1) end, "an integer >= 1"),
    budget = option(opts, "budget", navbudget.unlimited, navbudget.is_budget,
      "an octonav.navigator.budget"),
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
    smoother_opts = nil,
  }, Nav)
  local s = opts.streamer
  if s ~= nil then
    if type(s) ~= "table" or type(s.lock) ~= "function" or type(s.lock_hole) ~= "function" then
      error("octonav.navigator.new: option 'streamer' must be an octonav.streamer", 2)
    end
    if s.world ~= world and not (world.group ~= nil and s.world.group == world.group) then
      error("octonav.navigator.new: option 'streamer' streams another world", 2)
    end
    self.streamer = s
    self.agent = option(opts, "agent", nil, function(v) return math.type(v) == "integer" end, "an integer")
  elseif opts.agent ~= nil then
    error("octonav.navigator.new: option 'agent' needs option 'streamer'", 2)
  end
  self.locks = navlocks.new(self, s, opts.agent == nil)
  return self
end

-- A plan's C planner goes back to the world's idle ones (planner.acquire / planner.release).
local function give_planner(self)
  if self.cplanner then
    planner.release(self.world, self.cplanner)
    self.cplanner = nil
  end
end

-- Idle queries per tree and max_nodes, shared by the navigators of this process: a navigator holds a
-- query only while a search of its runs (from q:start to the result read), then gives it back. A
-- query's node pool and tables grow with its searches and stay grown: a fresh query's first search
-- of the seed world pays its growth (+30% instructions in realloc and calloc, new pages touched, a
-- copy of the node pool within one expansion), so a crowd whose navigators each made their own paid
-- it in its first frames and again for every new navigator. Now the few queries the searches running
-- at once need are made once and stay warm. The idle queries live on the world (world.idle_queries:
-- tree -> max_nodes -> list; world:close() closes them); a query whose tree is no longer the world's
-- (a hole's tree the streamer replaced) is closed instead of kept, and so are the idle ones of such a
-- tree when a search ends (world:close_idle_queries). Weak keys as well: a tree dropped unclosed goes
-- with its queries.
local function idle_queries(world)
  local p = world.idle_queries
  if not p then
    p = setmetatable({}, { __mode = "k" })
    world.idle_queries = p
  end
  return p
end

-- The running search's query back to the idle ones; the navigator has no search afterwards. The
-- idle queries of trees no longer the world's go (world:close_idle_queries), this one too when its
-- tree was replaced while it searched. At every search's end: a sweep of the world's tree and 3 holes'
-- is 9.1 k instructions, 0.9% of a 20-navigator crowd's on the hand-built world (callgrind, session 13);
-- once per frame would need a frame the world does not have, and only when the trees change would
-- need every change of them (the streamer's, a reload's, a hand-built world's) to say so.
local function give_query(self, s)
  local q = s.q
  s.q = nil
  local tree = s.qtree
  if self.queries[tree] == q then self.queries[tree] = nil end
  local list = subtable(subtable(idle_queries(self.world), tree), self.max_nodes)
  list[#list + 1] = q
  close_idle_queries(self.world)
end

-- A search ended while its C query runs (nav:cancel, nav:go or nav:close called from the search's own
-- heuristic): the query is busy, so it goes back to the idle ones only when the C call returns (see
-- c_returned); the navigator forgets the search now.
end_search = function(self)
  local s = self.search
  self.search = nil
  if not (s and s.q) then return end
  if self.in_c == s then
    s.dropped = true
    self.queries[s.qtree] = nil
    return
  end
  give_query(self, s)
end

-- After a C call of search s (q:start, q:step, q:step_until) returned: true when the call's heuristic
-- ended the search meanwhile (end_search), its query given back now; the caller stops there.
local function c_returned(self, s)
  self.in_c = nil
  if not s.dropped then return false end
  if s.q then give_query(self, s) end
  return true
end

-- Forget the current goal's work (keeps the counters).
local function reset(self)
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
  end_search(self)
  self.from0, self.pending_replan = nil, nil
  self.epoch = self.epoch + 1
end

--- nav:go(goal): a new goal (world point). Planning starts with the next update.
function Nav:go(goal)
  if not is_point(goal) then error("navigator:go: goal must be a point {x, y, z} of finite numbers", 2) end
  reset(self)
  self.goal = copy(goal)
  self.state = "planning"
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
  local checks = self.old_checks
  for _, leg in ipairs(self.legs or {}) do
    if leg.smoother then checks = checks + leg.smoother:checks() end
  end
  return { expansions = self.total_expansions, searches = self.total_searches, checks = checks,
    loading = self.loading, loading_hole = self.loading_hole, replans = self.replans,
    door_replans = self.door_replans, failed_tile = self.failed_tile, waiting = self.wait and copy_wait(self.wait) or nil }
end

local function fail(self, reason)
  self.state = "failed"
  self.reason = reason
  end_search(self)
  self.locks:release_all()
end

local function tree_of(self, step)
  if step.kind == "tile" then return self.world.tree end
  return self.world.holes[step.hole].tree
end

-- The query a search starts on: an idle one of the tree's (see idle_queries), else a new one.
local function query_for(self, tree)
  self.budget:adopt(tree) -- (a budget builds the tree's line-of-sight masks in its frames: navbudget.lua)
  local by = idle_queries(self.world)[tree]
  local list = by and by[self.max_nodes]
  local n = list and #list or 0
  local q
  if n > 0 then
    q = list[n]
    list[n] = nil
  else
    q = query_new(tree, { max_nodes = self.max_nodes })
  end
  self.queries[tree] = q
  return q
end

-- Starts the current candidate's search. Returns true when its heuristic ended the search (c_returned).
local function start_candidate(self, s)
  s.used, s.until_loaded = 0, nil
  self.in_c = s
  local st = s.q:start(s.from, s.cands[s.ci].inside, self.search_opts)
  self.total_searches = self.total_searches + 1
  if c_returned(self, s) then return true end
  s.status = st
  return false
end

-- A start on the face of a blocked leaf (an agent that stopped on a waypoint of a path pulled taut
-- against an obstacle, or beside a door closed since): the tree's locate reads a point on a leaf face
-- as the leaf on its + side, so such a start reads blocked although the agent stands on free space's
-- boundary. Within FACE_EPS leaves of a leaf face (on each axis), the start is nudged NUDGE leaves off
-- that face to the side that is free (one axis first, then two, then three; the nearest free one), so
-- the search starts from where the agent stands, to within NUDGE leaves. A point that is not on a
-- face, or whose every side is blocked, is returned as it is (the search then says start_blocked).
local FACE_EPS, NUDGE = 1e-6, 1e-5

-- tree:locate's first answer: by locate_status (an octonav.tree's, nothing allocated) when the tree
-- has it, else by locate (whose free answer makes a cell table the navigator never reads).
local function locate_status(tree, p)
  local f = tree.locate_status
  if f then return f(tree, p) end
  return (tree:locate(p))
end

-- The options of the navigator's smoothers: one table, made when its first leg is.
local function smoother_opts(self)
  local o = self.smoother_opts
  if not o then
    o = { checks_per_frame = self.checks_per_frame }
    self.smoother_opts = o
  end
  return o
end
M.FACE_EPS, M.NUDGE = FACE_EPS, NUDGE

local function free_start(tree, p)
  if locate_status(tree, p) ~= "blocked" then return p end
  local pr = tree:params()
  local scale, o = pr.scale, pr.origin
  local sides = {} -- per axis: the nudged coordinates to try (none when not on a face)
  local on_face = false
  for k = 1, 3 do
    local n = (p[k] - o[k]) / scale
    local r = floor(n + 0.5)
    if math.abs(n - r) <= FACE_EPS then
      sides[k] = { o[k] + (r - NUDGE) * scale, o[k] + (r + NUDGE) * scale }
      on_face = true
    else
      sides[k] = {}
    end
  end
  if not on_face then return p end
  local best, best_d
  -- every combination of nudged axes (each axis: as it is, or one of its two sides)
  for a = 0, #sides[1] do
    for b = 0, #sides[2] do
      for c = 0, #sides[3] do
        if a + b + c > 0 then
          local q = { a > 0 and sides[1][a] or p[1], b > 0 and sides[2][b] or p[2], c > 0 and sides[3][c] or p[3] }
          local d = dist(p, q)
          if (not best_d or d < best_d) and locate_status(tree, q) == "free" then best, best_d = q, d end
        end
      end
    end
  end
  return best or p
end

-- The search of step k: its start point, its exit candidates, the point after it.
local function new_search(self, k)
  local route = self.cells
  local step = route[k]
  local tree = tree_of(self, step)
  local from
  if k == 1 then
    from = free_start(tree, self.from0) -- where the agent stands (see free_start)
  elseif step.kind == "tile" and route[k - 1].kind == "tile" then
    from = self.exits[k - 1].inside
  else
    from = step.enter
  end
  local nxt = route[k + 1]
  local cands = nxt and { { inside = step.exit, outside = nxt.enter } } or { { inside = self.goal } }
  local s = {
    step = k, tree = tree, from = from, cands = cands, ci = 1,
    onward = nxt and nxt.exit, retries = 0, best = nil, best_score = huge, first_reason = nil, q = nil, qtree = nil,
  }
  self.search = s
  -- the search starts once what it starts from and ends in is loaded (see work)
  self.locks:step_start(k, step, from, cands)
  s.pending = true
  return s
end

-- The best candidate of step k is known: add its path to the legs.
local function append(self, k, best)
  local route = self.cells
  local step = route[k]
  local path = best.path
  self.exits[k] = best.cand
  local last = self.legs[#self.legs]
  if k > 1 and step.kind == "tile" and route[k - 1].kind == "tile" and last and last.smoother then
    last.smoother:extend_adopt(path) -- (q:result's fresh points, never changed: not copied)
  else
    if k > 1 then
      self.legs[#self.legs + 1] = { kind = "door", to = copy(path[1]) }
    end
    self.legs[#self.legs + 1] = {
      kind = step.kind, tree = tree_of(self, step),
      smoother = smoother.adopt(tree_of(self, step), path, smoother_opts(self)),
    }
  end
  self.known = k
  self.step_paths[k] = path
  self.step_end[k] = { leg = #self.legs, idx = #self.legs[#self.legs].smoother.path }
  self.locks:step_found(k, step, path)
end

-- Has the agent passed step k (it heads for a waypoint past the step's last point, or has left its
-- leg)?
local function passed(self, k)
  local e = self.step_end[k]
  if not e then return false end
  local leg = self.legs[e.leg]
  return self.leg_i > e.leg or (self.leg_i == e.leg and leg.smoother ~= nil and leg.smoother.i > e.idx)
end

-- The first step not passed yet whose path went stale (a tile it depends on was changed, cleared or
-- unloaded since it was searched), or nil.
local function stale_step(self)
  for k = 1, self.known do
    local p = self.step_paths[k]
    if p and not passed(self, k) and not p:is_valid() then return k end
  end
  return nil
end

-- The tile {i, j, k} an "unloaded" answer names (info.tile: {i, j, k} or an index), else the tile of
-- whichever end point is in a tile that is not loaded (the goal's first).
local function unloaded_tile(self, info, goal, from)
  local t = info.tile
  if type(t) == "table" then return { t[1], t[2], t[3] } end
  if math.type(t) == "integer" then return tilegrid.ijk(self.world, t) end
  local world = self.world
  for _, p in ipairs { goal, from } do
    local ti = planner.tile_of(world, p)
    if ti then
      local loaded = world.streamer and world.streamer:is_loaded(ti) or (not world.streamer and world.with_tiles ~= false)
      if not loaded then return tilegrid.ijk(world, ti) end
    end
  end
  local ti = planner.tile_of(world, goal)
  return ti and tilegrid.ijk(world, ti) or nil
end

-- path, info: the search's result when the caller read it already (q:result makes a path each call).
local function candidate_done(self, s, forced_reason, path, info)
  if forced_reason then
    info = { status = "failed", reason = forced_reason }
  elseif not info then
    path, info = s.q:result()
  end
  local c = s.cands[s.ci]
  if path and info.status == "found" then
    local score = info.length + ((s.onward and c.outside) and dist(c.outside, s.onward) or 0)
    if score < s.best_score then
      s.best, s.best_score = { path = path, cand = c }, score
    end
  elseif info.reason == "tree_changed" and s.retries < self.locks.max_retries then
    s.retries = s.retries + 1
    start_candidate(self, s)
    return
  elseif info.reason == "unloaded" and s.tree == self.world.tree then
    -- an end point lies in a tile that is not loaded (the binding's answer for the core's ON_UNLOADED):
    -- without a streamer nothing will load it; with one, lock it and start again once it is in
    local t = unloaded_tile(self, info, c.inside, s.from)
    if self.locks == navlocks.none and s.retries > 0 and s.retries < self.locks.max_retries then
      -- restarted after its tree changed: the caller's own streamer (one the navigator was not given)
      -- unloaded the tile under it; report it as loading and start again at the next update (a retry)
      s.retries = s.retries + 1
      s.status, s.wait_until, s.wait_tile = "waiting", self.frame + 1, t
      return
    elseif self.locks == navlocks.none then
      self.failed_tile = t
      fail(self, "unloaded")
      return
    end
    s.status, s.wait_until, s.wait_tile, s.until_loaded = "waiting", self.frame + 1, t, true
    return
  elseif (info.reason == "goal_blocked" or info.reason == "start_blocked") and s.retries > 0
    and s.retries < self.locks.max_retries and s.tree == self.world.tree then
    -- restarted after its tree changed, and now an end point reads blocked: its tile may have been
    -- unloaded (an unloaded tile reads blocked). Wait: report that tile as loading and start again
    -- at the next update (counted as a retry, so a point really blocked now fails after the last).
    s.retries = s.retries + 1
    local t = planner.tile_of(self.world, info.reason == "goal_blocked" and c.inside or s.from)
    s.status, s.wait_until = "waiting", self.frame + 1
    s.wait_tile = t and tilegrid.ijk(self.world, t)
    return
  else
    s.first_reason = s.first_reason or info.reason
  end
  s.retries = 0
  s.ci = s.ci + 1
  if s.ci <= #s.cands then
    start_candidate(self, s)
    return
  end
  end_search(self)
  if s.best then
    append(self, s.step, s.best)
  else
    fail(self, s.first_reason or "unreachable")
  end
end

-- Is it time to search the next step?
local function want_next(self, position)
  if self.known >= #self.cells then return false end
  if self.known == 0 then return true end
  return dist(position, self.exits[self.known].inside) <= self.prefetch_distance
end

-- Query work for this frame: at most `want` expansions, of which the shared budget (when given)
-- grants its share (taken when a step is first needed). Returns the expansions spent.
local function work(self, position, want)
  local spent, budget = 0, nil
  local B = self.budget
  local epoch = self.epoch
  self.loading, self.loading_hole = nil, nil
  while self.state ~= "failed" and self.epoch == epoch do
    local s = self.search
    if not s then
      if not want_next(self, position) then break end
      s = new_search(self, self.known + 1)
    end
    if s.pending then -- the step's tiles (or hole) must be in before its search starts
      local st, missing = self.locks:step_state(s.step)
      if st == "failed" then
        fail(self, "load_failed")
        break
      end
      if st == "waiting" then
        if type(missing) == "table" then self.loading = missing else self.loading_hole = missing end
        break
      end
      s.pending = nil
      s.tree = tree_of(self, self.cells[s.step])
      s.q, s.qtree = query_for(self, s.tree), s.tree
      if start_candidate(self, s) then break end
    end
    if s.status == "waiting" then -- see candidate_done: an end point read blocked after a change
      local ready = self.frame >= s.wait_until
      if s.until_loaded and s.wait_tile then -- "unloaded": until the tile is in
        local w = s.wait_tile
        ready = self.streamer:is_loaded(tilegrid.index(self.world, w[1], w[2], w[3]))
      end
      if not ready then
        self.loading = s.wait_tile
        if s.wait_tile and self.locks:wait_tile(s.step, s.tree, s.wait_tile) then
          candidate_done(self, s, "load_failed")
        end
        break
      end
      if start_candidate(self, s) then break end
    end
    local lt = s.status == "loading" and s.loading_tile
    if lt and self.streamer and not self.streamer:is_loaded(tilegrid.index(self.world, lt[1], lt[2], lt[3])) then
      -- still waiting for the tile: a step would expand nothing yet count as all it was given
      self.loading = lt
      break
    end
    if s.status == "running" or s.status == "loading" then
      if not budget then budget = B:take("expansions", self, want) end
      local left = budget - spent
      if left <= 0 then break end
      -- a step that finds the path is followed by its result (q:result: the C finalize, not sliced):
      -- one of the shared budget's `results` is taken before each step, and given back unless found
      if B:take("results", self, 1) == 0 then break end
      -- (a budget with a frame time steps at most B.step at a time, fewer when the frame's time left
      -- holds fewer at the cost it learnt: its next ask reads the clock)
      local n, t0 = left, nil
      local st, tile
      local deadline = B.timed and B.deadline
      if deadline then
        -- the budget reads core.clock: the C step stops at the frame's deadline itself (q:step_until
        -- reads the clock after each expansion), whatever an expansion of this search costs
        t0 = B.clock()
        self.in_c = s
        st, n, tile = s.q:step_until(left, deadline)
      else
        if B.step then
          n = B:step_size(left, s.exp_cost) -- (an expansion's cost varies with the search: its own)
          t0 = B.clock()
        end
        self.in_c = s
        st, tile = s.q:step(n)
      end
      if c_returned(self, s) then -- the search's heuristic ended it (its expansions are not counted)
        B:give("results", self, 1, false)
        break
      end
      local dt = t0 and B.clock() - t0
      if dt and st == "running" then
        B:spent("expansions", n, dt)
        s.exp_cost = navbudget.learn(s.exp_cost, dt / n)
      end
      B:give("results", self, st == "found" and 0 or 1, false)
      if st == "running" then
        spent = spent + n
        s.used = s.used + n
      elseif st == "loading" then
        -- streaming: the search waits for a tile (expanding nothing until it is in); how much this
        -- call expanded is unknown, so it counts as all of it, now and for the rest of the search
        spent = spent + n
        s.unsure = true
        s.status, s.loading_tile = "loading", tile
        if self.locks == navlocks.none then
          -- no streamer: nothing will load the tile (a world loaded with { tiles = false })
          self.failed_tile = tile
          fail(self, "unloaded")
          break
        elseif self.locks:wait_tile(s.step, s.tree, tile) then
          candidate_done(self, s, "load_failed") -- the tile never comes: this candidate fails
        else
          self.loading = tile
          break
        end
      else
        local t1 = B.step and B.clock() -- (a budget with a frame time learns what a result costs)
        local path, info = s.q:result()
        if t1 then B:spent("results", 1, B.clock() - t1) end
        if s.unsure then
          spent = spent + n
        else
          local did = math.max(0, (info.expansions or s.used) - s.used)
          spent = spent + did
          if dt then B:spent("expansions", did, dt) end -- (the step's time: not the result's)
        end
        candidate_done(self, s, nil, path, info)
      end
    else -- finished within start (same cell, or a failure before any expansion)
      candidate_done(self, s)
    end
  end
  if budget then
    -- it keeps its place in the budget's line while it spent all it got and a search still runs
    local s = self.search
    B:give("expansions", self, budget - spent, spent >= budget and s ~= nil)
  end
  self.total_expansions = self.total_expansions + spent
  return spent
end

-- The legs walked this frame (see move).
local function move_legs(self, position)
  while true do
    local leg = self.legs[self.leg_i]
    if not leg then return "planning", nil end
    local has_next = self.legs[self.leg_i + 1] ~= nil
    if leg.kind == "door" then
      if dist(position, leg.to) > EPS then return "moving", leg.to end
      if not has_next then return "planning", leg.to end
      self.leg_i = self.leg_i + 1
    else
      if not self.checks_left then -- the frame's checks, taken when a smoother first needs them
        local got = self.budget:take("checks", self, self.checks_per_frame)
        self.checks_got, self.checks_left = got, got
      end
      local wp, used = leg.smoother:update(position, self.checks_left)
      self.checks_left = self.checks_left - used
      if leg.smoother:remaining() > 1 then return "moving", wp end
      if not has_next and self.known == #self.cells and self.search == nil then
        if dist(position, wp) <= self.arrive_distance then return "arrived", wp end
        return "moving", wp
      end
      if dist(position, wp) > EPS then return "moving", wp end
      if not has_next then return "planning", wp end
      self.leg_i = self.leg_i + 1
    end
  end
end

-- Movement: the waypoint for this frame (checks_per_frame line-of-sight checks at most, of which a
-- shared budget grants its share; what is left goes back to it).
local function move(self, position)
  self.checks_left, self.checks_got = nil, nil
  local status, wp = move_legs(self, position)
  local left = self.checks_left
  if left then
    self.budget:give("checks", self, left, left == 0 and self.checks_got < self.checks_per_frame)
  end
  return status, wp
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
    -- a plan's start joins its ends in their tiles (C, not sliced): one of the budget's `plans`,
    -- taken with the portals of its first step (a plan started without them would wait, and on a
    -- streamed world its graph would change meanwhile: started again, its start paid twice)
    if B:take("plans", self, 1) == 0 then
      self.state = "planning"
      return "planning"
    end
    portals = B:take("portals", self, self.plan_budget)
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
    t0 = B.step and B.clock()
    self.job = planner.start_named("navigator:update", world, self.from0, self.goal, take_planner(self))
    self.plan_revision = world.graph_revision
    self.plan_spent = 0
  end
  portals = portals or B:take("portals", self, self.plan_budget)
  if portals == 0 then
    B:give("portals", self, 0, true)
    self.state = "planning"
    return "planning"
  end
  local pst, reason, tile = self.job:step(portals)
  if t0 then B:spent("plans", 1, B.clock() - t0) end
  if pst == "running" then
    self.plan_spent = self.plan_spent + portals
    B:give("portals", self, 0, true)
    self.state = "planning"
    return "planning"
  end
  if pst ~= "found" then
    -- a failed step's portals are not reported: all of them count, but graph_changed, which the C
    -- planner answers before expanding any
    B:give("portals", self, reason == "graph_changed" and portals or 0, false)
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
    error("navigator:update: planner job: " .. tostring(tiles), 2)
  end
  -- the portals the plan expanded in all (the C result's count) less those counted in earlier updates
  local used = math.max(0, math.min(portals, (job.expansions or huge) - self.plan_spent))
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
  end
  if w.frames > self.wait_timeout then
    fail(self, "wait_timeout")
    self.wait = w -- fail keeps no search; what it waited for stays readable
    return true
  end
  return false
end

--- nav:update(position [, budget]) -> status, waypoint | reason (see the top of this file).
-- budget: expansions of the C query this frame (an integer >= 0; default query_budget).
function Nav:update(position, budget)
  if not is_point(position) then
    error("navigator:update: position must be a point {x, y, z} of finite numbers", 2)
  end
  if budget == nil then
    budget = self.query_budget
  elseif not is_int(budget, 0) then
    error("navigator:update: budget must be an integer >= 0", 2)
  end
  self.frame = self.frame + 1
  local locks = self.locks
  locks:move_agent(position)
  local state = self.state
  if state == "idle" then return "idle", nil end
  if state == "failed" then return "failed", self.reason end
  if state == "arrived" then return "arrived", self.goal end
  local by_door = self.cells and door_changed(self)
  local pending = self.pending_replan
  if pending or by_door or (self.replan and self.cells and (stale_step(self) or graph_changed(self))) then
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
    local st = plan_route(self, position)
    if st == "planning" and track_wait(self) then return "failed", self.reason end
    if st then return st, st == "failed" and self.reason or nil end
  end
  local epoch = self.epoch
  work(self, position, floor(budget))
  if self.epoch ~= epoch then
    -- the search's heuristic called nav:cancel(), nav:go() or nav:close(): answer as that left it
    -- ("idle", or "planning" toward the new goal)
    return self.state, nil
  end
  if self.state ~= "failed" then track_wait(self) end
  if self.state == "failed" then return "failed", self.reason end
  local status, wp = move(self, position)
  if status == "arrived" then wp = self.goal end
  self.state = status
  if status == "arrived" then
    locks:release_all()
  else
    local fn = self.passed_fn -- made once: an update allocates no closure
    if not fn then
      fn = function(k) return passed(self, k) end
      self.passed_fn = fn
    end
    locks:release_passed(self.known, fn)
  end
  return status, wp
end

--- octonav.navigator.budget(opts) -> a frame budget shared by navigators (octonav.navbudget).
M.budget = navbudget.new

return M
