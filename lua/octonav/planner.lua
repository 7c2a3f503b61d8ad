--- octonav.planner: the Cell-level route (the seed's 层级A* / Cell层级寻路), a thin layer over the C
-- route planner of the world graph (octonav.core.route: A* over the tiles' portals, start and goal
-- joined by local searches in their own tiles; docs/world.md, "World graph"). This file converts
-- points and doors into the planner's endpoint sets and its crossings into route steps; it decides
-- nothing about the graph.
--
--   local route, reason, tile = require("octonav.planner").plan(world, a, b)
--   local job = planner.start(world, a, b [, p]) -- sliced: job:step(budget) -> "running" | "found" |
--                                               -- nil, reason[, tile]; job:result() -> route, cost
--                                               -- p: a C planner of its own (world.graph:planner()),
--                                               -- needed when several jobs run at once
--
-- `world` is the world object of docs/world.md (octonav.world.load, or a table with the same fields:
-- tree, holes, graph = an octonav.core.route world graph over tree's grid, and an in_hole method).
-- The result is the route of docs/world.md, or nil and one of "start_outside", "goal_outside",
-- "start_blocked", "goal_blocked", "unreachable", "door_closed" (no route with the doors as they
-- are, but one with every door open), "loading" (with the tile index whose graph or tree tile the
-- route needs, or that holds the start or the goal: streaming, world.streamer set), "unloaded" (the
-- same on a world loaded with { tiles = false } and no streamer: nothing will load it),
-- "out_of_nodes", "graph_changed" (a tile graph was added or removed while
-- a sliced job ran: start it again).
--
-- Cells. A point is in hole H when world:in_hole(p) names H; else in the tile holding it (none:
-- *_outside). Start and goal in one hole: a route of one step. Otherwise the C planner gets endpoint
-- sets (the seed's four cases):
--   a point in a tile     itself, cost 0;
--   a point in hole H     the outside points of H's open doors (closed doors are left out, and so are
--                         doors whose outside point is blocked in a loaded tile), each with the cost
--                         |p - inside| + |inside - outside| (the way through the hole, straight);
-- so outside->outside, outside->hole, hole->outside and hole->outside->hole are one search each. A
-- start and a goal in one tile join directly when the local search in that tile reaches one from the
-- other (else through portals: a room whose exit is on the far side of the tile goes round).
--
-- Route. Steps split where the route crosses a tile face (at the crossing point C gives: on the shared
-- face, inside the overlap of the two portals, free on both sides) or a door. A tile step has `via` =
-- the portal it leaves through and `via_kind` = "portal" (with `to_tile`, `to_portal`); a door step
-- `via` = the door index, `via_kind` = "door", `via_hole`. The last step has no via. A tile step's
-- exit is the next step's enter (the crossing point); through a door: door.outside / door.inside.
local raise = require("octonav.util").raise -- (errors at the user's call)
local MAX_WEIGHT = 4 -- (the C planner's ROUTE_WEIGHT_MAX, route.h)

local M = {}

local compat = require "octonav.compat"
compat.frame_module() -- (LuaJIT: run interpreted; compat.lua)
local util = require "octonav.util"
local tilegrid = require "octonav.tilegrid"

local type = type
local dist, copy = util.dist, util.copy

local PLAN_BUDGET = 1048576 -- portals a whole plan may expand per step call (plan runs to the end)
local direct_goal

-- fname: the name errors give (octonav.planner.plan, or world:plan when the world calls it)
local function check_point(fname, p, what)
  if not util.is_point(p) then
    raise(("%s: %s must be a point {x, y, z} of finite numbers"):format(fname, what))
  end
end

local WORLD_FIELDS = { "tree", "holes", "graph" } -- (one list: a plan's start makes no table for it)

local function check_world(fname, world)
  if type(world) ~= "table" then raise(fname .. ": world must be a world table") end
  for _, k in ipairs(WORLD_FIELDS) do
    if world[k] == nil then raise(fname .. ": world." .. k .. " is missing") end
  end
  if type(world.in_hole) ~= "function" then raise(fname .. ": world:in_hole is missing") end
end

-- A route prints as its steps: "octonav.route: 3 steps: tile 0 -> hole 1 -> tile 1" (holes by index).
local Route = {}
function Route.__tostring(route)
  local parts = {}
  for i, st in ipairs(route) do
    if i > 8 then
      parts[#parts + 1] = ("... (%d more)"):format(#route - 8)
      break
    end
    parts[i] = st.kind == "hole" and ("hole " .. tostring(st.hole)) or ("tile " .. tostring(st.tile))
  end
  return ("octonav.route: %d step%s: %s"):format(#route, #route == 1 and "" or "s", table.concat(parts, " -> "))
end
M.Route = Route

-- Tile index of a world point (the linear index i + nx*(j + ny*k)) or nil outside the grid.
local function tile_of(world, p)
  if type(world.tile_of) == "function" then return world:tile_of(p) end
  return tilegrid.tile_of(world, p)
end

local function hole_of(world, name)
  if compat.isinteger(name) then return name end
  local hi = world.hole_index
  if hi and hi[name] then return hi[name] end
  for i, h in ipairs(world.holes) do
    if h.name == name then return i end
  end
  raise("octonav.planner.plan: world:in_hole returned an unknown hole " .. tostring(name))
end

local function cell_of(world, p, what)
  local name = world:in_hole(p)
  if name ~= nil then return { kind = "hole", hole = hole_of(world, name) } end
  local t = tile_of(world, p)
  if t == nil then return nil, what .. "_outside" end
  return { kind = "tile", tile = t }
end

-- Is tile t's data in world.tree (so that a blocked answer there is the truth)?
local function tile_loaded(world, t)
  if world.streamer then return world.streamer:is_loaded(t) end
  return world.with_tiles ~= false
end

-- Will a tile that is not loaded come (a streamer), or is it out for good ("unloaded")?
local function world_streams(world) return world.streamer ~= nil end

-- A point in a tile's cost and what it is (read only, shared: a plan makes no table for them).
local ZERO, NOT_DOOR = { 0 }, { false }

-- Does p keep r (world units, beyond what world.tree keeps) from blocked space: a sphere of radius r
-- at p (tree:visible_radius, the radius searches' test)? A join from a point that does not would start
-- (or end) closer than r to a wall (issue 33: a one-tree pack's agent plans on the tree of the smallest
-- radius). Not known (so true: the searches decide) when a tile within r of p is not loaded.
local function keeps(world, p, r)
  if r <= 0 or world.tree:visible_radius(p, p, r) then return true end
  for c = 0, 7 do
    local q = { p[1] + (c % 2 == 0 and -r or r), p[2] + (c % 4 < 2 and -r or r), p[3] + (c < 4 and -r or r) }
    local t = tile_of(world, q)
    if t and not tile_loaded(world, t) then return true end
  end
  return false
end

-- The endpoint set of a cell: points, costs, and what each point is ({ hole, door } or false). Doors
-- whose outside point is blocked in a loaded tile, or closer than r to blocked space, are left out.
local function endpoints(world, cell, p, all_open, r)
  if cell.kind == "tile" then return { p }, ZERO, NOT_DOOR end
  local h = world.holes[cell.hole]
  local pts, costs, what = {}, {}, {}
  for j, d in ipairs(h.doors) do
    if all_open or d.open ~= false then
      local t = tile_of(world, d.outside)
      if t and not (tile_loaded(world, t) and (world.tree:locate(d.outside) ~= "free" or not keeps(world, d.outside, r)))
      then
        pts[#pts + 1] = d.outside
        costs[#costs + 1] = dist(p, d.inside) + dist(d.inside, d.outside)
        what[#what + 1] = { hole = cell.hole, door = j }
      end
    end
  end
  return pts, costs, what
end

-- The world's C planner (one per world graph, made when first used).
local planners = setmetatable({}, { __mode = "k" })
local function planner_of(world)
  local g = world.graph
  local p = planners[g]
  if not p then
    p = g:planner()
    planners[g] = p
  end
  return p
end

-- Idle C planners per world graph, for sliced jobs (a navigator takes one while it plans and gives
-- it back: 100 navigators planning now and then share a few planners instead of holding 100).
local idle = setmetatable({}, { __mode = "k" })
local busy = setmetatable({}, { __mode = "k" }) -- planners acquired and not released, per world graph

--- planner.acquire(world) -> a C planner of world.graph that no other job uses until released.
function M.acquire(world)
  check_world("octonav.planner.acquire", world)
  busy[world.graph] = (busy[world.graph] or 0) + 1
  local list = idle[world.graph]
  local p = list and list[#list]
  if p then
    list[#list] = nil
    return p
  end
  return world.graph:planner()
end

--- planner.busy(world) -> the planners of world.graph acquired and not released (navigators mid-plan).
function M.busy(world)
  check_world("octonav.planner.busy", world)
  return busy[world.graph] or 0
end

--- planner.release(world, p): p (from acquire) is idle again.
function M.release(world, p)
  check_world("octonav.planner.release", world)
  if type(p) ~= "userdata" then raise("octonav.planner.release: p: a planner from planner.acquire expected") end
  p:join_limit(0) -- (its next user joins whole unless it sets a limit)
  local n = busy[world.graph]
  busy[world.graph] = n and n > 1 and n - 1 or nil
  local list = util.subtable(idle, world.graph)
  list[#list + 1] = p
end

---------------------------------------------------------------------------------------------------
-- Route steps from the C result.

-- The C result is read in its flat form (planner:flat(), lua_route.c): FLAT numbers a crossing
-- from f[1]: tile, portal, to_tile, to_portal, x, y, z; f.n crossings.
local FLAT = 7

local function build_route(world, a, b, sc, gc, f, swhat, gwhat)
  local steps = {}
  local enter = a
  if sc.kind == "hole" then
    local w = swhat[f.start]
    local door = world.holes[w.hole].doors[w.door]
    steps[1] = { kind = "hole", hole = w.hole, enter = copy(a), exit = copy(door.inside), via = w.door,
      via_kind = "door", via_hole = w.hole }
    enter = door.outside
  end
  local n = f.n
  local cur = { kind = "tile", tile = n > 0 and f[1] or tile_of(world, enter), enter = copy(enter) }
  for i = 0, n - 1 do
    local o = FLAT * i
    local point = { f[o + 5], f[o + 6], f[o + 7] }
    cur.tile = f[o + 1]
    cur.exit, cur.via, cur.via_kind, cur.to_tile, cur.to_portal = point, f[o + 2], "portal", f[o + 3], f[o + 4]
    steps[#steps + 1] = cur
    cur = { kind = "tile", tile = f[o + 3], enter = copy(point) }
  end
  if gc.kind == "hole" then
    local w = gwhat[f.goal]
    local door = world.holes[w.hole].doors[w.door]
    cur.exit, cur.via, cur.via_kind, cur.via_hole = copy(door.outside), w.door, "door", w.hole
    steps[#steps + 1] = cur
    steps[#steps + 1] = { kind = "hole", hole = w.hole, enter = copy(door.inside), exit = copy(b) }
  else
    cur.exit = copy(b)
    steps[#steps + 1] = cur
  end
  return setmetatable(steps, Route)
end

---------------------------------------------------------------------------------------------------
-- A sliced planning job.

local Job = {}
Job.__index = Job

-- Starts the C search with the doors as they are (all_open: every door open). Returns the status.
local function begin(job, all_open)
  local world = job.world
  local s, scost, swhat = endpoints(world, job.sc, job.a, all_open, job.radius)
  local g, gcost, gwhat = endpoints(world, job.gc, job.b, all_open, job.radius)
  job.swhat, job.gwhat, job.all_open = swhat, gwhat, all_open
  job.starts, job.scost, job.goals, job.gcost = s, scost, g, gcost
  if #s == 0 or #g == 0 then return nil, "unreachable" end
  -- (the radius: a start and a goal in one tile join directly only by a way that keeps it)
  local r, w = job.radius > 0 and job.radius or nil, job.weight
  if scost == ZERO and gcost == ZERO then
    return job.p:start_multi(world.tree, s, g, (r or w) and { radius = r, weight = w } or nil) -- (costs 0)
  end
  return job.p:start_multi(world.tree, s, g, { start_costs = scost, goal_costs = gcost, radius = r, weight = w })
end

-- A failure of the search with the doors as they are: "door_closed" when opening every door helps.
-- That second search (the probe, every door open) is sliced like the first: it runs over the next
-- steps' budgets, and its outcome only names the failure (found: "door_closed", else the first
-- search's reason).
local function settle(job, st, reason, tile)
  if job.probe then
    if st == "running" then return st end
    reason, tile = st == "found" and "door_closed" or job.probe, nil
    job.probe = nil
  elseif st then
    return st
  elseif reason == "unreachable" and not job.all_open and (job.sc.kind == "hole" or job.gc.kind == "hole") then
    job.probe = reason
    return settle(job, begin(job, true))
  end
  if reason == "loading" and not world_streams(job.world) then reason = "unloaded" end
  job.done = { nil, reason, tile }
  return nil, reason, tile
end

-- The radius (world units) a plan's ends keep beyond what world.tree keeps: r when given, else a
-- one-tree pack's agent's own (its radius less its tree's: octonav.onetree), else 0.
local function radius_of(fname, world, r)
  if r == nil then
    local tr = world.tree_radius
    return tr and (world.radius or 0) > tr and world.radius - tr or 0
  end
  if type(r) ~= "number" or not (r >= 0) or r == math.huge then
    raise(("%s: radius must be a finite number >= 0, got %s"):format(fname, tostring(r)))
  end
  return r
end

--- planner.start(world, a, b) -> job (see the top of this file); misuse raises.
local function start(fname, world, a, b, p, r, w)
  check_world(fname, world)
  check_point(fname, a, "start")
  check_point(fname, b, "goal")
  if w ~= nil and not (type(w) == "number" and w >= 1 and w <= MAX_WEIGHT) then
    raise(("%s: option 'weight' must be a number from 1 to %g, got %s"):format(fname, MAX_WEIGHT, tostring(w)))
  end
  -- (the fields set later listed nil: the table is made with room for them, see navigator.new)
  local job = setmetatable({ world = world, a = copy(a), b = copy(b), done = nil, sc = nil, gc = nil, p = nil,
    status = nil, reason = nil, tile = nil, swhat = nil, gwhat = nil, all_open = nil, starts = nil, scost = nil,
    goals = nil, gcost = nil, probe = nil, route = nil, cost = nil, flat = nil, expansions = nil,
    radius = radius_of(fname, world, r), weight = w }, Job)
  local sc, why = cell_of(world, a, "start")
  if not sc then
    job.done = { nil, why }
    return job
  end
  local gc, why2 = cell_of(world, b, "goal")
  if not gc then
    job.done = { nil, why2 }
    return job
  end
  job.sc, job.gc = sc, gc
  -- a start or goal in a tile whose data is not in the tree: an unloaded tile reads blocked, which is
  -- not the truth there (with a streamer it is coming: "loading"; without one: "unloaded")
  for k = 1, 2 do
    local c = k == 1 and sc or gc
    if c.kind == "tile" and not tile_loaded(world, c.tile) then
      job.done = { nil, world.streamer and "loading" or "unloaded", c.tile }
      return job
    end
  end
  -- a start or goal in a tile closer than the radius to blocked space: blocked for this agent (the tree
  -- of the smallest radius holds it free; a tree baked for the radius would not)
  for k = 1, 2 do
    local c = k == 1 and sc or gc
    if c.kind == "tile" and not keeps(world, k == 1 and a or b, job.radius) then
      job.done = { nil, k == 1 and "start_blocked" or "goal_blocked" }
      return job
    end
  end
  if sc.kind == "hole" and gc.kind == "hole" and sc.hole == gc.hole then
    job.route = setmetatable({ { kind = "hole", hole = sc.hole, enter = copy(a), exit = copy(b) } }, Route)
    job.cost = dist(a, b)
    job.done = { "found" }
    return job
  end
  job.p = p or planner_of(world)
  job.status, job.reason, job.tile = settle(job, begin(job, false))
  return job
end

--- job:step(budget) -> "running" | "found" | nil, reason[, tile]: expands up to budget portals.
function Job:step(budget)
  if self.done then return compat.unpack(self.done, 1, 3) end
  if self.status == "found" then
    self.done = { "found" }
    return "found"
  end
  local st, reason, tile = self.p:step(budget)
  if st == "running" then return st end
  st, reason, tile = settle(self, st, reason, tile)
  if st == "found" then self.done = { "found" } end
  return st, reason, tile
end

-- A route joined directly inside one tile (no crossing) to one of several goals: the C result's goal
-- index can name a goal that did not win there (its direct join overwrites it: reported to the C
-- side), so each goal is tried alone and the cheapest kept.
direct_goal = function(job, r)
  local best
  for j = 1, #job.goals do
    local st = job.p:start_multi(job.world.tree, job.starts, { job.goals[j] },
      { start_costs = job.scost, goal_costs = { job.gcost[j] }, radius = job.radius > 0 and job.radius or nil,
        weight = job.weight })
    while st == "running" do st = job.p:step(PLAN_BUDGET) end
    local rj = st == "found" and job.p:flat()
    if rj and (not best or rj.cost < best.cost) then
      rj.goal = j
      best = rj
    end
  end
  return best or r
end

-- The found job's C result, flat (see FLAT), read once while the job holds its C planner: after it
-- the job needs the planner no more (its route is built from this).
local function fetch(job)
  if job.flat then return job.flat end
  local f, reason, tile = job.p:flat()
  if not f then return nil, reason, tile end
  if f.n == 0 and #job.goals > 1 then f = direct_goal(job, f) end
  job.flat, job.cost = f, f.cost
  job.expansions = f.expansions -- portals the C planner expanded (job.expansions, for budgets)
  return f
end

local function check_found(job)
  if not job.done then raise("planner job: still running (call step until it is found or fails)") end
  if job.done[1] ~= "found" then return nil, job.done[2], job.done[3] end
  return true
end

--- job:result() -> route, cost (after step answered "found"), or nil, reason[, tile].
function Job:result()
  if self.route then return self.route, self.cost end
  local ok, reason, tile = check_found(self)
  if not ok then return nil, reason, tile end
  local f
  f, reason, tile = fetch(self)
  if not f then return nil, reason, tile end
  self.route = build_route(self.world, self.a, self.b, self.sc, self.gc, f, self.swhat, self.gwhat)
  return self.route, self.cost
end

-- The legs of a route (its steps as a table list, route = job.route): consecutive tile steps joined
-- into one (see Job:legs).
local function legs_of_route(route)
  if type(route) ~= "table" then raise("octonav.planner.legs_of_route: route: a route (an array of steps) expected") end
  local out, tiles = {}, {}
  for _, step in ipairs(route) do
    local last = out[#out]
    if step.kind == "tile" then tiles[#tiles + 1] = step.tile end
    if step.kind == "tile" and last and last.kind == "tile" then
      last.exit, last.via, last.via_kind, last.via_hole = step.exit, step.via, step.via_kind, step.via_hole
    else
      local c = {}
      for key, v in pairs(step) do c[key] = v end
      c.to_tile, c.to_portal = nil, nil
      out[#out + 1] = c
    end
  end
  return out, tiles
end

--- planner.legs_of_route(route) -> legs, tiles: a route's (world:plan's) legs as job:legs() gives them.
M.legs_of_route = legs_of_route

--- job:legs() -> legs, tiles, cost (after step answered "found"; else nil, reason[, tile]): the route's
-- consecutive tile steps joined into one leg that ends where the last of them ends (at the goal or a
-- door's outside point), the hole steps as they are: { kind, tile | hole, enter, exit, via, via_kind,
-- via_hole } each (what the navigator walks: one query a leg); tiles = the tile steps' tiles in order.
-- Built from the C result without the route's tables (a crowd's plans make little garbage); the job
-- needs its C planner no more afterwards, and job:result() still gives the route.
function Job:legs()
  local ok, reason, tile = check_found(self)
  if not ok then return nil, reason, tile end
  if self.route then
    local legs, tiles = legs_of_route(self.route)
    return legs, tiles, self.cost
  end
  local f
  f, reason, tile = fetch(self)
  if not f then return nil, reason, tile end
  local world, legs, tiles = self.world, {}, {}
  local enter = self.a
  if self.sc.kind == "hole" then
    local w = self.swhat[f.start]
    local door = world.holes[w.hole].doors[w.door]
    legs[1] = { kind = "hole", hole = w.hole, enter = copy(self.a), exit = copy(door.inside), via = w.door,
      via_kind = "door", via_hole = w.hole }
    enter = door.outside
  end
  local n = f.n
  local leg = { kind = "tile", tile = n > 0 and f[1] or tile_of(world, enter), enter = copy(enter) }
  tiles[1] = leg.tile
  for i = 1, n - 1 do tiles[i + 1] = f[FLAT * i + 1] end -- (the step after crossing i - 1 is crossing i's tile)
  if n > 0 then tiles[n + 1] = f[FLAT * (n - 1) + 3] end
  legs[#legs + 1] = leg
  if self.gc.kind == "hole" then
    local w = self.gwhat[f.goal]
    local door = world.holes[w.hole].doors[w.door]
    leg.exit, leg.via, leg.via_kind, leg.via_hole = copy(door.outside), w.door, "door", w.hole
    legs[#legs + 1] = { kind = "hole", hole = w.hole, enter = copy(door.inside), exit = copy(self.b) }
  else
    leg.exit = copy(self.b)
  end
  return legs, tiles, self.cost
end

local function plan(fname, world, a, b, r, w)
  local job = start(fname, world, a, b, nil, r, w)
  local st, reason, tile = job:step(PLAN_BUDGET)
  while st == "running" do st, reason, tile = job:step(PLAN_BUDGET) end
  if st ~= "found" then return nil, reason, tile end
  return job:result()
end

--- plan(world, a, b) -> route, cost | nil, reason[, tile] (see the top of this file and docs/world.md).
function M.plan(world, a, b) return plan("octonav.planner.plan", world, a, b) end

--- The same, with errors naming `fname` (world:plan calls it so); r: the radius the ends keep (see
-- planner.start); w: the world search's heuristic weight (planner.start).
function M.plan_named(fname, world, a, b, r, w)
  if type(fname) ~= "string" then raise("octonav.planner.plan_named: fname: string expected, got " .. type(fname)) end
  return plan(fname, world, a, b, r, w)
end

--- planner.start(world, a, b[, p[, r]]) -> a sliced job (job:step(budget), job:result()). r (world units
-- >= 0; default: a one-tree pack agent's radius less its tree's, else 0): a start or goal in a tile
-- closer than r to blocked space fails as start_blocked / goal_blocked, and a hole's doors whose
-- outside point is are left out (issue 33: the joins keep the agent's radius). w (1 .. 4; default 1.5):
-- the world search's heuristic weight (f = g + w h over the portals: 1 the cheapest route over the world
-- graph, more a faster search whose route costs at most w times that one's; core route.h).
function M.start(world, a, b, p, r, w) return start("octonav.planner.start", world, a, b, p, r, w) end

--- The same, with errors naming `fname`.
function M.start_named(fname, world, a, b, p, r, w)
  if type(fname) ~= "string" then raise("octonav.planner.start_named: fname: string expected, got " .. type(fname)) end
  return start(fname, world, a, b, p, r, w)
end

--- planner.tile_of(world, p) -> the linear tile index of world point p (i + nx*(j + ny*k)), or nil
-- outside the tile grid (world:tile_of when the world has it). The navigator locks tiles by it.
function M.tile_of(world, p)
  if type(world) ~= "table" then raise("octonav.planner.tile_of: world must be a world table") end
  check_point("octonav.planner.tile_of", p, "p")
  return tile_of(world, p)
end

return M
