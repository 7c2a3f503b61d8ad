--- octonav.navlocks: the navigator's streamer bookkeeping (see "With a streamer" in navigator.lua).
--
-- navlocks.new(nav, streamer) gives the navigator one object to tell what it is about to read and
-- what it has passed; without a streamer it is a stand-in that locks nothing and finds everything
-- ready, so the navigator reads as search and path following either way.
--
-- Locks are counted streamer locks (s:lock / s:lock_hole), held in lock sets
-- { tiles = { [tile index] = true }, holes = { [hole index] = true } }, one lock per member:
--   * `decide`: before planning, the tiles of the start and the goal and the holes whose bounds hold
--     them (plan_state), released once planned (planned);
--   * one set per route step: the tiles of its start and exit points (or its hole) when its search is
--     made (step_start), the tile a search waits for (wait_tile), then the tiles its path crosses
--     (step_found); released when the agent has passed the step (release_passed);
--   * everything at arrival, failure, cancel, go and close (release_all).
-- The step paths not passed yet are registered with the streamer as the agent's path (s:set_path).
-- When the navigator adds its own agent (no `agent` option) it moves it to every update's position
-- and removes it on close; the agent id is nav.agent.
local tilegrid = require "octonav.tilegrid"
require("octonav.compat").frame_module() -- (LuaJIT: run interpreted; compat.lua)
local planner_tile_of = require("octonav.planner").tile_of

local M = {}

local MAX_RETRIES = 3
local MAX_RETRIES_STREAMING = 16 -- streamed tiles unloaded under a search restart it more often

-- ---- without a streamer ------------------------------------------------------------------------------

local none = { max_retries = MAX_RETRIES }
local function nop() end
local function ready() return "ready" end
none.move_agent, none.planned, none.step_start, none.step_found = nop, nop, nop, nop
none.release_passed, none.release_all, none.close = nop, nop, nop
none.plan_state, none.step_state = ready, ready
function none.wait_tile() return false end
function none.loaded_at() return true end
M.none = none

-- ---- with a streamer ---------------------------------------------------------------------------------

local Locks = {}
Locks.__index = Locks

--- navlocks.new(nav, streamer) -> the navigator's lock keeper (a stand-in when streamer is nil).
-- nav.agent: the streamer agent to register paths under (nil: one is added at the first update).
function M.new(nav, streamer, own_agent)
  if streamer == nil then return none end
  return setmetatable({
    nav = nav, s = streamer, world = nav.world, own_agent = own_agent, max_retries = MAX_RETRIES_STREAMING,
    radius = nav.search_radius or 0, -- (world units: Locks:near)
    decide = nil,    -- the planning set
    steps = {},      -- route step -> lock set
    released = 0,    -- steps 1..released are released
    registered = nil, -- the path registered with the streamer
  }, Locks)
end

local function new_set() return { tiles = {}, holes = {} } end

function Locks:tile(set, tile)
  if tile ~= nil and not set.tiles[tile] then
    self.s:lock(tile)
    set.tiles[tile] = true
  end
end

function Locks:hole(set, i)
  if not set.holes[i] then
    self.s:lock_hole(i)
    set.holes[i] = true
  end
end

function Locks:release(set)
  if not set then return end
  local s = self.s
  for t in pairs(set.tiles) do s:unlock(t) end
  for i in pairs(set.holes) do s:unlock_hole(i) end
  set.tiles, set.holes = {}, {}
end

-- With a search radius r (option radius on a one-tree pack, issue 33) the searches' clearance test and
-- the smoother's line of sight read every tile within r of a point (csrc/core/clearance.c), and an
-- unloaded tile reads as blocked there (a start within r of one was start_blocked): so with r > 0
-- every point or box locked brings the tiles within r of it (tilegrid.in_box, the test's rule).
function Locks:near(set, lo, hi)
  local r = self.radius
  if r <= 0 then return end
  for _, t in ipairs(tilegrid.in_box(self.world, { lo[1] - r, lo[2] - r, lo[3] - r },
    { hi[1] + r, hi[2] + r, hi[3] + r })) do
    self:tile(set, t)
  end
end

-- The tiles within the radius of tile t (a linear index, or nil), with r > 0.
function Locks:near_tile(set, t)
  if t == nil or self.radius <= 0 then return end
  local lo, hi = tilegrid.bounds(self.world, t)
  self:near(set, lo, hi)
end

-- Is everything in the set loaded? -> "ready" | "waiting", missing {i,j,k} | hole name | "failed"
function Locks:state(set)
  local s = self.s
  local missing
  for t in pairs(set.tiles) do
    local st = s:state(t)
    if st == "failed" then return "failed" end
    if st ~= "loaded" then missing = missing or tilegrid.ijk(self.world, t) end
  end
  for i in pairs(set.holes) do
    local st = s:hole_state(i)
    if st == "failed" then return "failed" end
    if st ~= "loaded" then missing = missing or self.world.holes[i].name end
  end
  if missing then return "waiting", missing end
  return "ready"
end

function Locks:tile_of(p) return planner_tile_of(self.world, p) end

--- Is the tile of point p loaded? (true outside the world's tiles: nothing to wait for there)
function Locks:loaded_at(p)
  local t = self:tile_of(p)
  return t == nil or self.s:is_loaded(t)
end

-- The registered path: every step path not passed yet must be valid.
local Registered = {}
Registered.__index = Registered
function Registered:is_valid()
  local closed = self.locks.door_closed -- the navigator's: a door ahead on its route is closed
  if closed and closed() then return false end
  for _, p in pairs(self.paths) do
    if not p:is_valid() then return false end
  end
  return true
end

--- The navigator's own agent follows the agent's position.
function Locks:move_agent(position)
  if not self.own_agent then return end
  local nav = self.nav
  if nav.agent then self.s:move_agent(nav.agent, position) else nav.agent = self.s:add_agent(position) end
end

--- Before planning: lock the tiles of position and goal and the holes whose bounds hold them.
-- -> "ready" | "waiting", missing | "failed" (see Locks:state)
function Locks:plan_state(position, goal)
  local set = self.decide or new_set()
  self.decide = set
  for _, p in ipairs { position, goal } do
    local t = self:tile_of(p)
    self:tile(set, t)
    self:near_tile(set, t) -- (a join searches its end's tile to the portals on its faces)
    for i, h in ipairs(self.world.holes) do
      local mn, mx = h.min, h.max
      if p[1] >= mn[1] and p[1] <= mx[1] and p[2] >= mn[2] and p[2] <= mx[2] and p[3] >= mn[3]
        and p[3] <= mx[3] then
        self:hole(set, i)
      end
    end
  end
  return self:state(set)
end

--- The planner needs tile t (a linear index: its graph or its tree tile is not loaded): lock it with
-- the planning set. -> true when it failed to load.
function Locks:plan_wait(t)
  local set = self.decide or new_set()
  self.decide = set
  self:tile(set, t)
  self:near_tile(set, t)
  return self.s:state(t) == "failed"
end

--- Planned: the start's and goal's cells are released.
function Locks:planned()
  if self.decide then
    self:release(self.decide)
    self.decide = nil
  end
end

--- Step k's search is made: lock what it starts from and ends in.
function Locks:step_start(k, step, from, cands)
  local set = new_set()
  self.steps[k] = set
  if step.kind == "tile" then
    self:tile(set, self:tile_of(from))
    self:tile(set, step.tile)
    for _, c in ipairs(cands) do self:tile(set, self:tile_of(c.inside)) end
    if self.radius > 0 then -- (the search may reach every cell of its tile, and ends in a candidate)
      self:near(set, from, from)
      self:near_tile(set, step.tile)
      for _, c in ipairs(cands) do self:near(set, c.inside, c.inside) end
    end
  else
    self:hole(set, step.hole)
  end
end

--- Can step k's search start? -> "ready" | "waiting", missing | "failed"
function Locks:step_state(k)
  return self:state(self.steps[k])
end

--- Step k's search (on `tree`) waits for tile {i, j, k}: lock it. -> true when it failed to load.
function Locks:wait_tile(k, tree, tile)
  if tree ~= self.world.tree then return false end
  local ti = tilegrid.index(self.world, tile[1], tile[2], tile[3])
  self:tile(self.steps[k], ti)
  return self.s:state(ti) == "failed"
end

--- Step k's path is known: the step now holds the tiles its path crosses (a hole step keeps its
-- hole), and the path joins the registered one.
function Locks:step_found(k, step, path)
  local old = self.steps[k] or new_set()
  local set = new_set()
  if step.kind == "tile" then
    for _, tile in ipairs(path.tiles and path:tiles() or {}) do self:tile(set, tile) end
    if self.radius > 0 then -- each leg's box, and the tiles within the radius of it
      local a
      for _, b in ipairs(path) do
        a = a or b
        self:near(set, { math.min(a[1], b[1]), math.min(a[2], b[2]), math.min(a[3], b[3]) },
          { math.max(a[1], b[1]), math.max(a[2], b[2]), math.max(a[3], b[3]) })
        a = b
      end
    end
  else
    self:hole(set, step.hole)
  end
  self:release(old)
  self.steps[k] = set
  if not self.registered then
    -- (revision_bound: valid until a tile it crosses changes or a door closes: streamer_paths.lua)
    self.registered = setmetatable({ paths = {}, locks = self, revision_bound = true }, Registered)
    if self.nav.agent then self.s:set_path(self.nav.agent, self.registered) end
  end
  self.registered.paths[k] = path
end

--- door_closed() -> true when a door the route passes ahead of the agent is closed: the registered
-- path is invalid then (the streamer lists the agent in `stale`). nil: no route.
function Locks:set_door_check(fn) self.door_closed = fn end
none.set_door_check = nop

--- Releases the locks of the steps the agent has passed (passed(k) -> boolean), up to `known`.
function Locks:release_passed(known, passed)
  local k = self.released + 1
  while k <= known do
    if not passed(k) then break end
    self:release(self.steps[k])
    self.steps[k] = nil
    if self.registered then self.registered.paths[k] = nil end
    self.released = k
    k = k + 1
  end
end

--- Releases every lock and unregisters the path.
function Locks:release_all()
  self:release(self.decide)
  self.decide = nil
  for _, set in pairs(self.steps) do self:release(set) end
  self.steps, self.released = {}, 0
  local agent = self.nav.agent
  if self.registered and agent and self.s:path(agent) == self.registered then
    self.s:set_path(agent, nil)
  end
  self.registered = nil
end

--- Closing the navigator: remove the agent it added itself.
function Locks:close()
  local nav = self.nav
  if self.own_agent and nav.agent then
    self.s:remove_agent(nav.agent)
    nav.agent = nil
  end
end

return M
