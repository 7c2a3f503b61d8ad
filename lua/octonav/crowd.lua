--- octonav.crowd: agents that fly together, avoiding each other and the tree's blocked space (issue 33).
--
--   local crowd = octonav.crowd.new(tree_or_world, { max_agents = 256 })
--   local id = crowd:add { pos = { 4, 4, 4 }, radius = 0.5, max_speed = 4 }  -- or nil, reason
--   crowd:set_goal(id, x, y, z)          -- a search on the tree (budgeted), or a navigator on a world
--   each frame: crowd:update(dt)         -- every agent moves (one C call)
--   crowd:position(id) -> x, y, z; crowd:velocity(id) -> vx, vy, vz; crowd:agent(id [, t]) -> t
--   crowd:states([t]) -> t, n (x, y, z, vx, vy, vz per agent, flat); crowd:ids([t]); crowd:neighbours(id [, t])
--   crowd:path(id [, t]) -> t, n, seg (the path it follows; its leg from t[seg] to t[seg + 1])
--   crowd:remove(id); crowd:set_path(id, points); crowd:stats(); #crowd; crowd:close()
--
-- The crowd is C (csrc/crowd/, docs/crowd.md): neighbours from a hash grid, the blocked space near
-- each agent read from the tree (so an agent of any radius keeps clear of walls with one tree), ORCA in
-- 3D for the velocity, path following that rounds corners within the turn and acceleration limits.
--
-- Options of octonav.crowd.new (unknown names raise):
--   max_agents = 1024          agents at most (1 .. 1048575)
--   max_neighbours = 16        agents each agent avoids, the nearest (1 .. 32)
--   time_horizon = 1.5         seconds ORCA looks ahead for other agents
--   time_horizon_obst = 0.5    seconds ORCA looks ahead for walls
--   plan_budget = 4000         search expansions a frame for the agents' paths (on a tree)
--   max_nodes = 65536          the planning query's search memory
--   drift = 0                  an agent waiting for its path moves straight toward its goal at this
--                              fraction of its top speed (0: it holds)
--   threads = 1                threads a frame runs on, the caller's counted (1 .. 64): the frames
--                              are the same bit for bit whatever the count
--   navigator = nil            on a world: options for each agent's octonav.navigator (see there); on
--                              a plain tree: agents are sent by navigators on the tree (with these
--                              options) instead of the crowd's own searches
-- Options of crowd:add (unknown names raise): pos (required: {x, y, z}), radius = 0.5,
-- max_speed = 4, max_accel = 8, max_turn_rate = math.pi (radians a second), arrive_dist = radius.
--
-- On a world (octonav.world.load) the crowd moves through the world's tree (world.tree) and each agent
-- sent with set_goal gets a navigator (octonav.navigator.new(world, opts.navigator), with option
-- radius = the agent's radius unless those options give radius, agent or search.radius): every update
-- feeds the navigator the agent's position and the agent the navigator's waypoint, so routes across
-- tiles and doors are the navigator's, and the crowd keeps the agents apart. agent(id).nav_status says
-- what the navigator answered last ("planning", "moving", "arrived", "failed"). On a plain tree the
-- option `navigator` (a table, {} for the defaults) does the same with navigators on the tree
-- (octonav.navigator.new(tree, opts.navigator): one search a route, budgeted and smoothed).
local core = require "octonav.core"
require("octonav.compat").frame_module() -- (LuaJIT: run interpreted; compat.lua)
local navigator_mod = require "octonav.navigator"

local M = {}

local Crowd = {}
Crowd.__index = Crowd

local NEW_OPTIONS = { max_agents = true, max_neighbours = true, time_horizon = true, time_horizon_obst = true,
  plan_budget = true, max_nodes = true, drift = true, threads = true, navigator = true }
local ADD_OPTIONS = { pos = true, radius = true, max_speed = true, max_accel = true, max_turn_rate = true,
  arrive_dist = true }

local function is_world(v)
  return type(v) == "table" and v.tree ~= nil and type(v.holes) == "table"
end

--- A crowd over a tree (octonav.tree) or a world (octonav.world.load).
function M.new(tree_or_world, opts)
  if opts ~= nil and type(opts) ~= "table" then error("octonav.crowd.new: opts must be a table", 2) end
  opts = opts or {}
  local copts = {}
  for k, v in pairs(opts) do
    if not NEW_OPTIONS[k] then error("octonav.crowd.new: unknown option '" .. tostring(k) .. "'", 2) end
    if k ~= "navigator" then copts[k] = v end
  end
  local world, tree = nil, tree_or_world
  if is_world(tree_or_world) then
    world, tree = tree_or_world, tree_or_world.tree
  elseif opts.navigator ~= nil then
    world = tree_or_world -- a plain tree with navigators (octonav.navigator.new(tree)): checked below
  end
  if opts.navigator ~= nil and type(opts.navigator) ~= "table" then
    error("octonav.crowd.new: option 'navigator' must be a table", 2)
  end
  if type(tree) ~= "userdata" then
    error("octonav.crowd.new: tree_or_world must be an octonav.tree or a world (octonav.world.load)", 2)
  end
  local ok, c = pcall(core.crowd.new, tree, copts)
  if not ok then error(c, 2) end
  return setmetatable({ c = c, world = world, nav_opts = opts.navigator, navs = {}, nav_status = {},
    waypoint = {}, radius = {}, plain = world ~= nil and not is_world(world) }, Crowd)
end

--- crowd:add { pos = {x, y, z}, radius = 0.5, ... } -> id | nil, "outside" | "blocked" | "unloaded" | "full"
function Crowd:add(spec)
  if type(spec) ~= "table" then error("add: expected a table {pos = {x, y, z}, radius = ..., ...}", 2) end
  local o = {}
  for k, v in pairs(spec) do
    if not ADD_OPTIONS[k] then error("add: unknown option '" .. tostring(k) .. "'", 2) end
    if k ~= "pos" then o[k] = v end
  end
  if spec.pos == nil then error("add: option 'pos' is required", 2) end
  local ok, id, why = pcall(self.c.add, self.c, spec.pos, o)
  if not ok then error(id, 2) end
  if id then self.radius[id] = spec.radius or 0.5 end
  return id, why
end

local function drop_nav(self, id)
  local nav = self.navs[id]
  if nav then nav:close() end
  self.navs[id], self.nav_status[id], self.waypoint[id] = nil, nil, nil
end

-- Where a navigator is told its agent stands: within the agent's radius (a tenth more) of the waypoint
-- it heads for, on it. A path's corner lies on blocked space's edge, which an agent of radius r keeps r from: it
-- would wait there for ever for the navigator to see it on the corner (a navigator passes a waypoint
-- when the agent steps onto it).
local function nav_position(self, id)
  local x, y, z = self.c:position(id)
  local wp = self.waypoint[id]
  if wp then
    local r = 1.1 * (self.radius[id] or 0) -- (its braking keeps it a hair further than r)
    if (x - wp[1]) ^ 2 + (y - wp[2]) ^ 2 + (z - wp[3]) ^ 2 <= r * r then return { wp[1], wp[2], wp[3] } end
  end
  return { x, y, z }
end

function Crowd:remove(id)
  local ok, err = pcall(self.c.remove, self.c, id)
  if not ok then error(err, 2) end
  drop_nav(self, id)
  self.radius[id] = nil
end

--- crowd:set_goal(id, x, y, z); crowd:set_goal(id) stops it.
function Crowd:set_goal(id, x, y, z)
  local ok, err
  if not self.world or x == nil then
    ok, err = pcall(self.c.set_goal, self.c, id, x, y, z)
    if not ok then error(err, 2) end
    drop_nav(self, id)
    return
  end
  for i, v in ipairs { x, y, z } do
    if type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge then
      error(("set_goal: %s must be a finite number"):format(({ "x", "y", "z" })[i]), 2)
    end
  end
  ok, err = pcall(self.c.agent, self.c, id) -- the id checked before a navigator is made
  if not ok then error(err, 2) end
  drop_nav(self, id)
  local nopts = self.nav_opts
  if self.plain then
    -- navigators on a plain tree search for the agent's size (q:start's radius: the path keeps that
    -- clearance), unless the options say otherwise
    nopts = {}
    for k, v in pairs(self.nav_opts) do nopts[k] = v end
    local so = {}
    for k, v in pairs(nopts.search or {}) do so[k] = v end
    if so.radius == nil then so.radius = self.radius[id] end
    nopts.search = so
  elseif not (nopts and (nopts.radius ~= nil or nopts.agent ~= nil or (nopts.search or {}).radius ~= nil)) then
    -- on a world, the navigator's option radius (the agent that serves it, its searches at that size)
    nopts = {}
    for k, v in pairs(self.nav_opts or {}) do nopts[k] = v end
    nopts.radius = self.radius[id]
  end
  local nav = navigator_mod.new(self.world, nopts)
  nav:go { x, y, z }
  self.navs[id] = nav
  self.c:set_goal(id) -- holds until the navigator's first waypoint
end

function Crowd:set_path(id, points)
  local ok, err = pcall(self.c.set_path, self.c, id, points)
  if not ok then error(err, 2) end
  drop_nav(self, id)
end

--- One frame of dt seconds (0 < dt <= 1) -> true | nil, "out of memory".
function Crowd:update(dt)
  if type(dt) ~= "number" or not (dt > 0 and dt <= 1) then error("update: dt must be a number in (0, 1]", 2) end
  local c = self.c
  for id, nav in pairs(self.navs) do
    local status, wp = nav:update(nav_position(self, id))
    self.nav_status[id] = status
    if status == "moving" or status == "arrived" then
      local last = self.waypoint[id]
      if not last or last[1] ~= wp[1] or last[2] ~= wp[2] or last[3] ~= wp[3] then
        self.waypoint[id] = { wp[1], wp[2], wp[3] }
        c:set_path(id, { wp })
      end
    elseif status == "failed" then
      c:set_goal(id)
    end
  end
  return c:update(dt)
end

function Crowd:agent(id, t)
  local ok, r = pcall(self.c.agent, self.c, id, t)
  if not ok then error(r, 2) end
  r.nav_status = self.nav_status[id]
  return r
end

local function forward(name)
  Crowd[name] = function(self, ...)
    local r = table.pack(pcall(self.c[name], self.c, ...))
    if not r[1] then error(r[2], 2) end
    return table.unpack(r, 2, r.n)
  end
end
for _, name in ipairs { "position", "velocity", "states", "ids", "neighbours", "path", "stats" } do forward(name) end

function Crowd:__len() return #self.c end
--- crowd:count() -> the agent count, as #crowd, on every Lua (5.1 and LuaJIT call no __len of a table)
function Crowd:count() return #self.c end
function Crowd:__tostring() return tostring(self.c) end

function Crowd:close()
  for id in pairs(self.navs) do drop_nav(self, id) end
  self.c:close()
end

return M
