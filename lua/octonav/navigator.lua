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
--   nav:cancel(), nav:status(), nav:route(), nav:tree(), nav:stats()
--
-- Options (unknown names raise):
--   checks_per_frame = 8       line-of-sight checks a frame may spend smoothing (octonav.smoother)
--   query_budget = 200         default expansions per update for the sliced C query (q:start / q:step)
--   arrive_distance = 0.5      world units: the agent has arrived when this close to the goal while
--                              heading for it as its last waypoint
--   max_nodes = 65536          search memory of each query (one query per tree, made when first used)
--   exit_candidates = 3        connect points of an exit block searched (see below); 1 = the planner's
--   prefetch_distance = nil    world units: the next step is searched once the agent is this close
--                              (straight line) to the end of the known path; nil: world.tile_size
--                              (16 when absent)
--   search = nil               options for q:start (e.g. octonav.presets.seed); nil: the defaults
--
-- How it works. The first update after go plans the Cell route (world:plan when the world has it,
-- else octonav.planner.plan): a small graph, not budgeted. Then each step of the route is searched
-- with octonav.query on the step's tree (world.tree, or the hole's tree), sliced: an update spends at
-- most `budget` expansions in total over q:step calls (q:start expands nothing), and several searches
-- may run in one frame while the budget lasts. Step 1 is searched from the agent's position; a tile
-- step after a tile step from the previous step's chosen exit point (the same tree: the query crosses
-- the tile face itself); a step after a door from the door point on its side. Each step is searched to
-- its exit point (the goal for the last step). The next step is searched as soon as the agent is
-- within prefetch_distance of the end of the known path, so while it walks; if it gets there first it
-- holds ("planning"). Streaming: when q:step answers "loading" (the search waits for a tile that is
-- not loaded) the frame's query work stops there and the search resumes in a later update once the
-- tile is in (nav:stats().loading names it; loading and locking tiles is the caller's streamer's
-- job); such a step counts as having spent the whole rest of the frame's budget.
--
-- Exit blocks with several connect points: when a step leaves through a connect block, up to
-- exit_candidates of its points are searched one after the other (the planner's choice first, then
-- the points nearest it), over as many frames as the budget needs, and the one with the least
-- path length + straight distance from its outside point to the next step's exit is kept. A candidate
-- that fails is skipped; when all fail the navigator fails with the first one's reason. A search that
-- fails with tree_changed is restarted (up to 3 times per candidate).
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

local M = {}

local Nav = {}
Nav.__index = Nav

local sqrt, type, floor, huge = math.sqrt, type, math.floor, math.huge
local EPS = 1e-6
local MAX_RETRIES = 3

local OPTION_NAMES = {
  checks_per_frame = true, query_budget = true, arrive_distance = true, max_nodes = true,
  exit_candidates = true, prefetch_distance = true, search = true,
}

local function dist(a, b)
  local dx, dy, dz = a[1] - b[1], a[2] - b[2], a[3] - b[3]
  return sqrt(dx * dx + dy * dy + dz * dz)
end

local function copy(p) return { p[1], p[2], p[3] } end

local function is_point(p)
  if type(p) ~= "table" then return false end
  for k = 1, 3 do
    local v = p[k]
    if type(v) ~= "number" or v ~= v or v == huge or v == -huge then return false end
  end
  return true
end

local function is_int(v, min)
  return type(v) == "number" and v == floor(v) and v >= min and v < 2 ^ 53
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
  local self = setmetatable({
    world = world,
    checks_per_frame = option(opts, "checks_per_frame", 8, function(v) return is_int(v, 1) end, "an integer >= 1"),
    query_budget = option(opts, "query_budget", 200, function(v) return is_int(v, 1) end, "an integer >= 1"),
    arrive_distance = option(opts, "arrive_distance", 0.5,
      function(v) return type(v) == "number" and v >= 0 and v < huge end, "a number >= 0"),
    max_nodes = option(opts, "max_nodes", 65536, function(v) return is_int(v, 2) end, "an integer >= 2"),
    exit_candidates = option(opts, "exit_candidates", 3, function(v) return is_int(v, 1) end, "an integer >= 1"),
    prefetch_distance = option(opts, "prefetch_distance", world.tile_size or 16,
      function(v) return type(v) == "number" and v >= 0 end, "a number >= 0"),
    search_opts = option(opts, "search", nil, function(v) return type(v) == "table" end, "a table"),
    queries = {},   -- tree -> octonav.query
    state = "idle",
    total_expansions = 0,
    total_searches = 0,
    old_checks = 0, -- checks of smoothers already dropped
  }, Nav)
  return self
end

-- Forget the current goal's work (keeps the queries and the counters).
local function reset(self)
  for _, leg in ipairs(self.legs or {}) do
    if leg.smoother then self.old_checks = self.old_checks + leg.smoother:checks() end
  end
  self.goal, self.reason, self.cells = nil, nil, nil
  self.known, self.exits, self.legs, self.leg_i = 0, {}, {}, 1
  self.search, self.from0 = nil, nil
end

--- nav:go(goal): a new goal (world point). Planning starts with the next update.
function Nav:go(goal)
  if not is_point(goal) then error("navigator:go: goal must be a point {x, y, z} of finite numbers", 2) end
  reset(self)
  self.goal = copy(goal)
  self.state = "planning"
end

--- nav:cancel(): stop; the status is "idle" until the next go.
function Nav:cancel()
  reset(self)
  self.state = "idle"
end

--- nav:status() -> the status of the last update (or "idle"/"planning" after cancel/go), and the
-- reason when it is "failed".
function Nav:status()
  return self.state, self.reason
end

--- nav:route() -> the Cell route being followed (docs/world.md), or nil.
function Nav:route() return self.cells end

--- nav:tree() -> the tree the agent is moving on now (nil on a door leg or without a path).
function Nav:tree()
  local leg = self.legs and self.legs[self.leg_i]
  return leg and leg.tree or nil
end

--- nav:stats() -> { expansions, searches, checks, loading } since new(): expansions counted against
-- the budgets (exact, except while streaming, see update), searches started (q:start calls), smoother
-- checks; loading: the tile {i, j, k} the running search waited for in the last update, or nil.
function Nav:stats()
  local checks = self.old_checks
  for _, leg in ipairs(self.legs or {}) do
    if leg.smoother then checks = checks + leg.smoother:checks() end
  end
  return { expansions = self.total_expansions, searches = self.total_searches, checks = checks,
    loading = self.loading }
end

local function fail(self, reason)
  self.state = "failed"
  self.reason = reason
  self.search = nil
end

local function tree_of(self, step)
  if step.kind == "tile" then return self.world.tree end
  return self.world.holes[step.hole].tree
end

local function query_for(self, tree)
  local q = self.queries[tree]
  if not q then
    q = query_new(tree, { max_nodes = self.max_nodes })
    self.queries[tree] = q
  end
  return q
end

local function start_candidate(self, s)
  s.used = 0
  s.status = s.q:start(s.from, s.cands[s.ci].inside, self.search_opts)
  self.total_searches = self.total_searches + 1
end

-- The search of step k: its start point, its exit candidates, the point after it.
local function new_search(self, k)
  local route, world = self.cells, self.world
  local step = route[k]
  local tree = tree_of(self, step)
  local from
  if k == 1 then
    from = self.from0
  elseif step.kind == "tile" and route[k - 1].kind == "tile" then
    from = self.exits[k - 1].inside
  else
    from = step.enter
  end
  local cands
  local nxt = route[k + 1]
  if not nxt then
    cands = { { inside = self.goal } }
  else
    local blk = step.via_kind == "block" and world.blocks[step.via]
    if blk and blk.points and #blk.points > 0 then
      local pts = {}
      for _, p in ipairs(blk.points) do pts[#pts + 1] = p end
      local ex = step.exit
      table.sort(pts, function(p1, p2) return dist(p1.inside, ex) < dist(p2.inside, ex) end)
      cands = {}
      for i = 1, math.min(#pts, self.exit_candidates) do cands[i] = pts[i] end
    else
      cands = { { inside = step.exit, outside = nxt.enter } }
    end
  end
  local s = {
    step = k, tree = tree, q = query_for(self, tree), from = from, cands = cands, ci = 1,
    onward = nxt and nxt.exit, retries = 0, best = nil, best_score = huge, first_reason = nil,
  }
  self.search = s
  start_candidate(self, s)
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
    last.smoother:extend(path)
  else
    if k > 1 then
      self.legs[#self.legs + 1] = { kind = "door", to = copy(path[1]) }
    end
    self.legs[#self.legs + 1] = {
      kind = step.kind, tree = tree_of(self, step),
      smoother = smoother.new(tree_of(self, step), path, { checks_per_frame = self.checks_per_frame }),
    }
  end
  self.known = k
end

local function candidate_done(self, s)
  local path, info = s.q:result()
  local c = s.cands[s.ci]
  if path and info.status == "found" then
    local score = info.length + ((s.onward and c.outside) and dist(c.outside, s.onward) or 0)
    if score < s.best_score then
      s.best, s.best_score = { path = path, cand = c }, score
    end
  elseif info.reason == "tree_changed" and s.retries < MAX_RETRIES then
    s.retries = s.retries + 1
    start_candidate(self, s)
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
  self.search = nil
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

-- Query work for this frame: at most `budget` expansions. Returns the expansions spent.
local function work(self, position, budget)
  local spent = 0
  self.loading = nil
  while self.state ~= "failed" do
    local s = self.search
    if not s then
      if not want_next(self, position) then break end
      s = new_search(self, self.known + 1)
    end
    if s.status == "running" or s.status == "loading" then
      local left = budget - spent
      if left <= 0 then break end
      local st, tile = s.q:step(left)
      if st == "running" then
        spent = spent + left
        s.used = s.used + left
      elseif st == "loading" then
        -- streaming: the search waits for a tile (expanding nothing until it is in); how much this
        -- call expanded is unknown, so it counts as all of it, now and for the rest of the search
        spent = spent + left
        s.unsure = true
        self.loading = tile
        break
      else
        local _, info = s.q:result()
        if s.unsure then
          spent = spent + left
        else
          spent = spent + math.max(0, (info.expansions or s.used) - s.used)
        end
        candidate_done(self, s)
      end
    else -- finished within start (same cell, or a failure before any expansion)
      candidate_done(self, s)
    end
  end
  self.total_expansions = self.total_expansions + spent
  return spent
end

-- Movement: the waypoint for this frame.
local function move(self, position)
  local checks_left = self.checks_per_frame
  while true do
    local leg = self.legs[self.leg_i]
    if not leg then return "planning", nil end
    local has_next = self.legs[self.leg_i + 1] ~= nil
    if leg.kind == "door" then
      if dist(position, leg.to) > EPS then return "moving", leg.to end
      if not has_next then return "planning", leg.to end
      self.leg_i = self.leg_i + 1
    else
      local wp, used = leg.smoother:update(position, checks_left)
      checks_left = checks_left - used
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
  local state = self.state
  if state == "idle" then return "idle", nil end
  if state == "failed" then return "failed", self.reason end
  if state == "arrived" then return "arrived", self.goal end
  if not self.cells then
    local route, reason
    if type(self.world.plan) == "function" then
      route, reason = self.world:plan(position, self.goal)
    else
      route, reason = planner.plan(self.world, position, self.goal)
    end
    if not route then
      fail(self, reason)
      return "failed", reason
    end
    self.cells = route
    self.from0 = copy(position)
  end
  work(self, position, floor(budget))
  if self.state == "failed" then return "failed", self.reason end
  local status, wp = move(self, position)
  if status == "arrived" then wp = self.goal end
  self.state = status
  return status, wp
end

return M
