--- octonav.navigator_search: a navigator's step searches (internal to octonav.navigator).
--
-- Each step of the planned route is searched by one octonav.query on the step's tree, sliced over the
-- navigator's updates (q:start, then q:step or q:step_until under the frame's budget); this file owns
-- the queries shared by the navigators of a process (idle per tree and max_nodes), the start nudged
-- off a blocked leaf's face (free_start), a step's exit candidates and their results, the paths
-- joined into the legs the agent walks, and `work`: the query work of one update. The navigator's
-- life cycle and options are in navigator.lua; the route plan in navigator_plan.lua.
local compat = require "octonav.compat"
compat.frame_module() -- (LuaJIT: run interpreted; compat.lua)
local query_new = require("octonav.core").query.new
local smoother = require "octonav.smoother"
local planner = require "octonav.planner"
local navlocks = require "octonav.navlocks"
local navbudget = require "octonav.navbudget"
local tilegrid = require "octonav.tilegrid"
local util = require "octonav.util"
local close_idle_queries = require("octonav.world").World.close_idle_queries

local M = {}

local type, floor, huge = type, math.floor, math.huge
local dist, copy, subtable = util.dist, util.copy, util.subtable

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
  local list = subtable(subtable(idle_queries(self.world), tree), self.cfg.max_nodes)
  list[#list + 1] = q
  close_idle_queries(self.world)
end

-- A search ended while its C query runs (nav:cancel, nav:go or nav:close called from the search's own
-- heuristic): the query is busy, so it goes back to the idle ones only when the C call returns (see
-- c_returned); the navigator forgets the search now.
local function end_search(self)
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

-- What the smoother's lines of sight ask: the tree, or with the navigator's radius (option radius,
-- issue 33) a stand-in whose visible is the tree's line of sight for a sphere of that radius.
local function sight_of(self, tree)
  local r = self.search_radius
  if not r or r <= 0 then return tree end
  local by = self.sights
  if not by then
    by = setmetatable({}, { __mode = "k" })
    self.sights = by
  end
  local s = by[tree]
  if not s then
    s = { visible = function(_, a, b) return tree:visible_radius(a, b, r) end }
    by[tree] = s
  end
  return s
end

-- The query a search starts on: an idle one of the tree's (see idle_queries), else a new one.
local function query_for(self, tree)
  self.budget:adopt(tree) -- (a budget builds the tree's line-of-sight masks in its frames: navbudget.lua)
  local by = idle_queries(self.world)[tree]
  local list = by and by[self.cfg.max_nodes]
  local n = list and #list or 0
  local q
  if n > 0 then
    q = list[n]
    list[n] = nil
  else
    q = query_new(tree, { max_nodes = self.cfg.max_nodes })
  end
  self.queries[tree] = q
  return q
end

-- Starts the current candidate's search. Returns true when its heuristic ended the search (c_returned),
-- or when the frame's time is spent (a budget with `ms` past its deadline): the start waits for the
-- navigator's next update ("waiting" until then; q:start is C work that is not sliced: its direct check
-- walks the whole segment, at most 0.76 ms of 2,394 starts in 1,500 frames of 1,000 streamed navigators
-- on the seed's world, session 35; and a step's search that ended at the deadline started the next
-- step's at once).
local function start_candidate(self, s)
  local B = self.budget
  local due = B.deadline
  if due and B.now() >= due then
    s.status, s.wait_until, s.wait_tile, s.until_loaded = "waiting", self.frame + 1, nil, nil
    self.starts_deferred = (self.starts_deferred or 0) + 1
    return true
  end
  s.used, s.until_loaded = 0, nil
  self.in_c = s
  local st = s.q:start(s.from, s.cands[s.ci].inside, self.cfg.search_opts)
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
  local o = self.cfg.smoother_opts -- (made from the options alone: shared with them)
  if not o then
    o = { checks_per_frame = self.cfg.checks_per_frame, recheck = self.cfg.recheck }
    self.cfg.smoother_opts = o
  end
  return o
end

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
    local walk = path
    local at = k == 1 and self.lead_to and self.lead_pos
    if at then
      -- a lead move took the agent off the search's start (both on the lead segment: navigator.lua,
      -- "Moving before the path"): its first path starts where it is
      self.lead_to = nil
      if dist(at, path[1]) > 1e-6 then
        walk = { copy(at) }
        for i = 1, #path do walk[i + 1] = path[i] end
      end
    end
    self.legs[#self.legs + 1] = {
      kind = step.kind, tree = tree_of(self, step),
      smoother = smoother.adopt(sight_of(self, tree_of(self, step)), walk, smoother_opts(self)),
    }
  end
  self.known = k
  self.step_paths[k] = path
  -- (stale_step's gate: the one tree every known step is on, false when they are on several)
  local t = tree_of(self, step)
  if self.gate_tree == nil then self.gate_tree = t elseif self.gate_tree ~= t then self.gate_tree = false end
  self.gate_rev = nil -- (a new path: checked at the next update)
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
-- unloaded since it was searched), or nil. A path's validity changes only with its tree's revision
-- (every change of a tile bumps both its salt, which path:is_valid compares, and the revision): while
-- every known step is on the world's tree and its revision is the one of the last check that found
-- them all valid, the answer is nil without asking each path (a walking navigator's update read each
-- path's record in the results registry, cold for 1,000 navigators: 0.2-1 us an update).
local function stale_step(self)
  local gt, rev = self.gate_tree, nil
  if gt and gt == self.world.tree then
    rev = gt:revision()
    if rev == self.gate_rev then return nil end
  end
  for k = 1, self.known do
    local p = self.step_paths[k]
    if p and not passed(self, k) and not p:is_valid() then return k end
  end
  self.gate_rev = rev
  return nil
end

-- The tile {i, j, k} an "unloaded" answer names (info.tile: {i, j, k} or an index), else the tile of
-- whichever end point is in a tile that is not loaded (the goal's first).
local function unloaded_tile(self, info, goal, from)
  local t = info.tile
  if type(t) == "table" then return { t[1], t[2], t[3] } end
  if compat.isinteger(t) then return tilegrid.ijk(self.world, t) end
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
  return dist(position, self.exits[self.known].inside) <= self.cfg.prefetch_distance
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
      local deadline = B.timed and B:c_deadline()
      if deadline then
        -- the budget reads core.clock (or the thread's: c_deadline): the C step stops at the frame's
        -- deadline itself (q:step_until reads the clock after each expansion), whatever an expansion
        -- of this search costs
        t0 = B.now()
        self.in_c = s
        st, n, tile = s.q:step_until(left, deadline)
      else
        if B.step then
          n = B:step_size(left, s.exp_cost) -- (an expansion's cost varies with the search: its own)
          t0 = B.now()
        end
        self.in_c = s
        st, tile = s.q:step(n)
      end
      if c_returned(self, s) then -- the search's heuristic ended it (its expansions are not counted)
        B:give("results", self, 1, false)
        break
      end
      local t1 = t0 and B.now()
      local dt = t1 and t1 - t0
      if deadline then B.c_back = t1 end -- (the Lua after it until the update's end: navgroup.after_c)
      if dt and dt >= 0 and st == "running" then
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
        s.status, s.fin_n, s.fin_dt = "finalizing", n, dt
      end
    elseif s.status == "found" then
      -- found within start (the same cell): its result is built in slices as a step's is (a whole
      -- q:result here took 4.7 ms of a 2 ms frame on the seed's world: budget:update's schedule, h31frame)
      s.status, s.fin_n, s.fin_dt = "finalizing", 0, nil
    elseif s.status ~= "finalizing" then -- a failure before any expansion
      candidate_done(self, s)
    end
    if s.status == "finalizing" and self.search == s then
      -- the result: with a frame deadline built in slices (q:result_step: none of its line-of-sight
      -- checks after the deadline; "pending" until done, the next frames go on), else whole; in the
      -- budget's line as a step is (a frame that grants it nothing leaves it for the next)
      if not budget then budget = B:take("expansions", self, want) end
      if budget - spent <= 0 then break end
      local t1 = B.step and B.now() -- (a budget with a frame time learns what a result costs)
      local deadline = B.timed and B:c_deadline()
      local path, info
      if deadline then
        path, info = s.q:result_step(0, deadline)
      else
        path, info = s.q:result()
      end
      if t1 then
        local t2 = B.now()
        B:spent("results", 1, t2 - t1)
        if deadline then B.c_back = t2 end
      end
      if path == "pending" then break end
      local n, dt = s.fin_n, s.fin_dt
      if s.unsure then
        spent = spent + n
      else
        local did = math.max(0, (info.expansions or s.used) - s.used)
        spent = spent + did
        if dt then B:spent("expansions", did, dt) end -- (the step's time: not the result's)
      end
      s.fin_n, s.fin_dt = nil, nil
      candidate_done(self, s, nil, path, info)
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

M.end_search, M.fail, M.passed, M.stale_step, M.work = end_search, fail, passed, stale_step, work
M.free_start, M.locate_status, M.want_next = free_start, locate_status, want_next
M.FACE_EPS, M.NUDGE = FACE_EPS, NUDGE

return M
