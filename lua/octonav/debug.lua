--- octonav.debug: nav data for an engine to draw with its own renderer (Detour's duDebugDraw idea).
--
-- `debug.draw(obj, drawer [, opts])` walks a tree, a path, a route, a world or a query (what its last
-- search used) and calls the drawer's methods, all in world space:
--   drawer:box(min, max, kind)         an axis-aligned box (a cell, a hole's bounds, a tile)
--   drawer:line(a, b, kind)            a segment (a path leg, a door, a route step)
--   drawer:point(p, kind)              a marker (a waypoint, a portal, a start or goal)
--   drawer:quad(a, b, c, d, normal, kind)  optional: a face of the blocked surface, counter-clockwise
--                                      seen from its normal ({x,y,z}, unit, axis-aligned); a drawer
--                                      without `quad` gets the blocked cells as boxes instead
--   drawer:sphere(c, r, kind)          optional: a ball of radius r about c (a crowd's agent); a drawer
--                                      without `sphere` gets the ball's bounding box instead
-- Kinds: "blocked", "free", "surface", "path", "waypoint", "corridor", "visited", "frontier", "route",
-- "portal", "hole", "door", "door_closed", "start", "goal"; a crowd's: "agent", "velocity",
-- "neighbour", "agent_path" (and its goals as "goal"). The viewer (octonav.view) is a drawer like any
-- other.
-- Trees are walked in C (octonav.core.debug) and handed over as packed floats, so a tree of a million
-- cells costs one string, not a million tables, until the drawer is called.
local compat = require "octonav.compat"
local core = require "octonav.core"
local pack = require "octonav.pack"
local tilegrid = require "octonav.tilegrid"

local raise = require("octonav.util").raise -- (errors at the user's call)

local M = {}
local draw_search

local NORMALS = { { -1, 0, 0 }, { 1, 0, 0 }, { 0, -1, 0 }, { 0, 1, 0 }, { 0, 0, -1 }, { 0, 0, 1 } }
local unpack_f = compat.unpack_bytes

local DEFAULTS = {
  cells = "blocked",    -- tree cells to draw: "blocked", "free", "both" or "none"
  surface = true,       -- blocked space as merged faces through drawer:quad when the drawer has it
  corridor = false,     -- paths: also their corridor (kind "corridor"): with `query`, the nodes its search
                        -- built the path through (q:corridor()); without, the free cells of `tree` the
                        -- path's segments pass through, located again. Queries: true unless set false
  tree = nil,           -- paths without `query`: the tree for the corridor
  query = nil,          -- paths: the query whose last result the path is (q:find, q:result): the corridor
                        -- and the visited nodes come from its search
  visited = false,      -- paths with `query`, and queries: the nodes the search expanded (kind "visited",
                        -- its closed set); "all": also those it reached and left open (kind "frontier")
  max_visited = 100000, -- at most this many of the nodes the search reached (the first reached) are drawn
  portals = true,       -- worlds: the portals of the loaded tiles' graphs (their points, read from the pack's
                        -- graph files once per graph: cached while the world holds it); "all": also those
                        -- on the world's border, which no route uses
  holes = true,         -- worlds: hole bounds, doors and the holes' own trees
  -- crowds (octonav.crowd):
  agents = true,        -- each agent a sphere at its radius (kind "agent")
  velocities = true,    -- each agent's velocity, a line from its centre to where it is velocity_scale
                        -- seconds later (kind "velocity"; none for an agent at rest)
  velocity_scale = 1,   -- seconds of velocity a velocity line shows (> 0)
  neighbours = false,   -- a line between each two agents one of which avoided the other in the last
                        -- frame, each pair once (kind "neighbour")
  goals = true,         -- the goal of each agent that has one (not idle): a point of kind "goal"
  paths = true,         -- what is left of the path each agent follows: from its centre through the
                        -- rest of its path's points (kind "agent_path")
}
local KNOWN = { tree = true, query = true }
for k in pairs(DEFAULTS) do KNOWN[k] = true end

local function check_opts(opts)
  if opts == nil then return DEFAULTS end
  if type(opts) ~= "table" then raise("octonav.debug.draw: opts: table expected, got " .. type(opts)) end
  local o = {}
  for k, v in pairs(DEFAULTS) do o[k] = v end
  for k, v in pairs(opts) do
    if not KNOWN[k] then raise("octonav.debug.draw: unknown option '" .. tostring(k) .. "'") end
    o[k] = v
  end
  if o.visited ~= true and o.visited ~= false and o.visited ~= "all" then
    raise("octonav.debug.draw: option 'visited' must be a boolean or \"all\"")
  end
  if not compat.isinteger(o.max_visited) or o.max_visited < 0 then
    raise("octonav.debug.draw: option 'max_visited' must be an integer >= 0")
  end
  if o.cells ~= "blocked" and o.cells ~= "free" and o.cells ~= "both" and o.cells ~= "none" then
    raise("octonav.debug.draw: option 'cells' must be \"blocked\", \"free\", \"both\" or \"none\"")
  end
  if o.portals ~= true and o.portals ~= false and o.portals ~= "all" then
    raise("octonav.debug.draw: option 'portals' must be a boolean or \"all\"")
  end
  if type(o.velocity_scale) ~= "number" or not (o.velocity_scale > 0 and o.velocity_scale < math.huge) then
    raise("octonav.debug.draw: option 'velocity_scale' must be a finite number > 0")
  end
  for _, k in ipairs { "surface", "corridor", "holes", "agents", "velocities", "neighbours", "goals", "paths" } do
    if type(o[k]) ~= "boolean" then raise("octonav.debug.draw: option '" .. k .. "' must be a boolean") end
  end
  return o
end

local function is_class(obj, name)
  local mt = getmetatable(obj)
  return type(obj) == "userdata" and type(mt) == "table" and mt.__name == name
end

local function is_tree(obj) return is_class(obj, "octonav.tree") end

local function point(p)
  return type(p) == "table" and type(p[1]) == "number" and type(p[2]) == "number" and type(p[3]) == "number"
end

local function draw_cells(tree, drawer, what, kind)
  local bytes, n = core.debug.cells(tree, what)
  for i = 0, n - 1 do
    local x, y, z, s = unpack_f("<ffff", bytes, 16 * i + 1)
    drawer:box({ x, y, z }, { x + s, y + s, z + s }, kind)
  end
  return n
end

local function draw_surface(tree, drawer)
  local bytes, n = core.debug.surface(tree, "blocked")
  for i = 0, n - 1 do
    local ax, ay, az, bx, by, bz, cx, cy, cz, dx, dy, dz, nrm = unpack_f("<fffffffffffff", bytes, 52 * i + 1)
    drawer:quad({ ax, ay, az }, { bx, by, bz }, { cx, cy, cz }, { dx, dy, dz }, NORMALS[math.floor(nrm) + 1],
      "surface")
  end
  return n
end

local function draw_tree(tree, drawer, o)
  if o.cells == "blocked" or o.cells == "both" then
    if o.surface and type(drawer.quad) == "function" then draw_surface(tree, drawer)
    else draw_cells(tree, drawer, "blocked", "blocked") end
  end
  if o.cells == "free" or o.cells == "both" then draw_cells(tree, drawer, "free", "free") end
end

--- The free cells a polyline passes through, in order, each once: samples every half of the smallest
-- cell met so far along each leg (a cell is found again where the line leaves it).
function M.corridor(tree, points)
  if not is_class(tree, "octonav.tree") then raise("octonav.debug.corridor: tree: an octonav.tree expected") end
  if type(points) ~= "table" then raise("octonav.debug.corridor: points: an array of points expected, got " .. type(points)) end
  for i, p in ipairs(points) do
    if not point(p) then raise("octonav.debug.corridor: points: point " .. i .. " is not {x, y, z}") end
  end
  local cells, seen = {}, {}
  local function add(p)
    local st, c = tree:locate(p)
    if st ~= "free" then return 1e300 end
    local key = ("%.9g %.9g %.9g %.9g"):format(c.min[1], c.min[2], c.min[3], c.size)
    if not seen[key] then
      seen[key] = true
      cells[#cells + 1] = c
    end
    return c.size
  end
  for i = 1, #points - 1 do
    local a, b = points[i], points[i + 1]
    local len = math.sqrt((b[1] - a[1]) ^ 2 + (b[2] - a[2]) ^ 2 + (b[3] - a[3]) ^ 2)
    local s, t = add(a), 0
    while len > 0 and t < 1 do
      local step = math.min(s, 1e9) * 0.25 / len
      if step <= 0 or step ~= step then break end
      t = math.min(1, t + step)
      s = math.min(add { a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t, a[3] + (b[3] - a[3]) * t }, s * 4)
    end
  end
  if #points > 0 then add(points[#points]) end
  return cells
end

-- What query q's last search used: its result's corridor (kind "corridor") and the nodes it expanded
-- ("visited") or reached and left open ("frontier", with visited = "all"). Raises for a
-- query without a result, or one whose prepared tiles changed since.
function draw_search(q, drawer, corridor, visited, max_visited)
  if corridor then
    local list, why = q:corridor()
    if not list then raise("octonav.debug.draw: the query's corridor: " .. why) end
    for _, c in ipairs(list) do drawer:box(c.min, c.max, "corridor") end
  end
  if visited then
    local list, why = q:visited(max_visited)
    if not list then raise("octonav.debug.draw: the query's visited nodes: " .. why) end
    for _, c in ipairs(list) do
      if c.expanded then drawer:box(c.min, c.max, "visited")
      elseif visited == "all" then drawer:box(c.min, c.max, "frontier") end
    end
  end
end

local function draw_path(path, drawer, o)
  for i = 1, #path do
    if not point(path[i]) then raise("octonav.debug.draw: path point " .. i .. " is not {x, y, z}") end
  end
  for i = 1, #path - 1 do drawer:line(path[i], path[i + 1], "path") end
  for i = 1, #path do
    drawer:point(path[i], i == 1 and "start" or i == #path and "goal" or "waypoint")
  end
  if o.query ~= nil then
    if not is_class(o.query, "octonav.query") then raise("octonav.debug.draw: option 'query' must be an octonav.query") end
    draw_search(o.query, drawer, o.corridor, o.visited, o.max_visited)
  elseif o.corridor then
    local tree = o.tree
    if not is_tree(tree) then
      raise("octonav.debug.draw: option 'query' (the path's query) or 'tree' (an open octonav.tree) is needed for the corridor")
    end
    for _, c in ipairs(M.corridor(tree, path)) do
      drawer:box(c.min, { c.min[1] + c.size, c.min[2] + c.size, c.min[3] + c.size }, "corridor")
    end
  elseif o.visited then
    raise("octonav.debug.draw: option 'visited' needs option 'query' (the path's query)")
  end
end

local function draw_route(route, drawer)
  local prev
  for i, step in ipairs(route) do
    if type(step) ~= "table" then raise("octonav.debug.draw: route step " .. i .. " is not a table") end
    local same = prev and point(step.enter) and prev[1] == step.enter[1] and prev[2] == step.enter[2]
      and prev[3] == step.enter[3]
    if point(step.enter) and not same then
      drawer:point(step.enter, i == 1 and "start" or "portal")
      if prev then drawer:line(prev, step.enter, "route") end
      prev = step.enter
    end
    if point(step.exit) then
      if prev then drawer:line(prev, step.exit, "route") end
      drawer:point(step.exit, i == #route and "goal" or "portal")
      prev = step.exit
    end
  end
end

-- Portal points of the tile graphs already read, per world (weak: gone with the world): for each tile,
-- the graph's id (world.graph_ids[t], which a rebake changes) and its portals as { x, y, z, border }.
local portal_cache = setmetatable({}, { __mode = "k" })

-- Tile t's portals in world space, read from its graph file the first time its graph id is met.
local function tile_portals(world, t, id)
  local cache = portal_cache[world]
  if not cache then
    cache = {}
    portal_cache[world] = cache
  end
  local hit = cache[t]
  if hit and hit.id == id then return hit.points end
  local grid, leaf = world.grid, world.tree:params().scale
  local i, j, k = tilegrid.coords(grid, t)
  local blob = pack.read_graph(world.dir, i, j, k)
  local pts = blob and core.route.portals(blob)
  local mn, c, points = tilegrid.min(grid, i, j, k), { i, j, k }, {}
  for n, p in ipairs(pts or {}) do
    local a = math.floor(p.face / 2) + 1
    local beyond = c[a] + (p.face % 2 == 1 and 1 or -1)
    points[n] = { mn[1] + p[1] * leaf, mn[2] + p[2] * leaf, mn[3] + p[3] * leaf,
      border = beyond < 0 or beyond >= grid.tiles[a] }
  end
  if blob then cache[t] = { id = id, points = points } end -- (a missing file is read again next time)
  return points
end

-- A world's portals: each tile whose graph the world holds (world.graph_ids), its portals' points in
-- world space (kind "portal"); the world border's only with all.
local function draw_portals(world, drawer, all)
  local grid, ids = world.grid, world.graph_ids
  if type(ids) ~= "table" or type(world.dir) ~= "string" or type(grid) ~= "table" or not is_tree(world.tree) then
    return
  end
  local tiles = {}
  if type(world.graph_tiles) == "function" then -- (on every Lua: 5.1 and LuaJIT have no __pairs)
    for t in world:graph_tiles() do tiles[#tiles + 1] = t end
  else
    for t in pairs(ids) do tiles[#tiles + 1] = t end
  end
  table.sort(tiles)
  local cache = portal_cache[world]
  if cache then -- tiles whose graph the world dropped
    for t in pairs(cache) do
      if ids[t] == nil then cache[t] = nil end
    end
  end
  for _, t in ipairs(tiles) do
    for _, p in ipairs(tile_portals(world, t, ids[t])) do
      if all or not p.border then drawer:point({ p[1], p[2], p[3] }, "portal") end
    end
  end
end

local function draw_world(world, drawer, o)
  if is_tree(world.tree) then draw_tree(world.tree, drawer, o) end
  if o.portals then draw_portals(world, drawer, o.portals == "all") end
  if o.holes and type(world.holes) == "table" then
    for _, h in ipairs(world.holes) do
      if point(h.min) and point(h.max) then drawer:box(h.min, h.max, "hole") end
      for _, d in ipairs(h.doors or {}) do
        if point(d.inside) and point(d.outside) then
          drawer:line(d.inside, d.outside, d.open == false and "door_closed" or "door")
        end
      end
      if is_tree(h.tree) then draw_tree(h.tree, drawer, o) end
    end
  end
end

local function is_crowd(obj)
  return is_class(obj, "octonav.crowd") or (type(obj) == "table" and is_class(rawget(obj, "c"), "octonav.crowd"))
end

-- A crowd (octonav.crowd or its core object): per agent in the order of crowd:ids(), its sphere (or
-- box), its velocity line, its goal and the rest of its path; then the neighbour pairs, each once,
-- the lower id first.
local function draw_crowd(crowd, drawer, o)
  local ids, n = crowd:ids()
  local states = crowd:states()
  local sphere = type(drawer.sphere) == "function"
  local info, pts, nbrs = {}, {}, {}
  local scale = o.velocity_scale
  for i = 1, n do
    local id, b = ids[i], 6 * (i - 1)
    local c = { states[b + 1], states[b + 2], states[b + 3] }
    local vx, vy, vz = states[b + 4], states[b + 5], states[b + 6]
    crowd:agent(id, info)
    local r = info.radius
    if o.agents then
      if sphere then drawer:sphere(c, r, "agent")
      else drawer:box({ c[1] - r, c[2] - r, c[3] - r }, { c[1] + r, c[2] + r, c[3] + r }, "agent") end
    end
    if o.velocities and (vx ~= 0 or vy ~= 0 or vz ~= 0) then
      drawer:line(c, { c[1] + vx * scale, c[2] + vy * scale, c[3] + vz * scale }, "velocity")
    end
    if o.paths then
      local np, seg = select(2, crowd:path(id, pts))
      local prev = c
      for k = seg + 1, np do
        drawer:line(prev, pts[k], "agent_path")
        prev = pts[k]
      end
    end
    if o.goals and info.state ~= "idle" then drawer:point(info.goal, "goal") end
  end
  if o.neighbours then
    local at, pairs_ = {}, {}
    for i = 1, n do at[ids[i]] = i end
    for i = 1, n do
      local list, m = crowd:neighbours(ids[i], nbrs)
      for k = 1, m do
        local j = at[list[k]]
        if j then
          local lo, hi = math.min(i, j), math.max(i, j)
          local key = lo * (n + 1) + hi
          if not pairs_[key] then
            pairs_[key] = true
            local a, b = 6 * (lo - 1), 6 * (hi - 1)
            drawer:line({ states[a + 1], states[a + 2], states[a + 3] }, { states[b + 1], states[b + 2], states[b + 3] },
              "neighbour")
          end
        end
      end
    end
  end
end

--- Walk obj (a tree, a path (an array of points), a route (an array of steps with enter/exit), a
-- world (octonav.world: its tree, holes and tile graphs), a crowd (octonav.crowd: its agents, their
-- velocities, goals, paths and neighbours) or a query (octonav.query: what its last
-- search used, the corridor unless opts.corridor is false, the visited nodes with opts.visited)) and
-- call drawer's box/line/point/quad methods. Returns drawer. opts (all optional): see DEFAULTS above.
function M.draw(obj, drawer, opts)
  if type(drawer) ~= "table" and type(drawer) ~= "userdata" then
    raise("octonav.debug.draw: drawer: a drawer table expected, got " .. type(drawer))
  end
  for _, m in ipairs { "box", "line", "point" } do
    if type(drawer[m]) ~= "function" then raise("octonav.debug.draw: drawer: has no method '" .. m .. "'") end
  end
  local o = check_opts(opts)
  if is_crowd(obj) then
    draw_crowd(obj, drawer, o)
  elseif is_class(obj, "octonav.query") then
    draw_search(obj, drawer, not opts or opts.corridor ~= false, o.visited, o.max_visited)
  elseif is_tree(obj) then
    draw_tree(obj, drawer, o)
  elseif type(obj) == "table" and obj.tree ~= nil and obj.holes ~= nil then
    draw_world(obj, drawer, o)
  elseif type(obj) == "table" and (#obj == 0 or point(obj[1])) then
    draw_path(obj, drawer, o)
  elseif type(obj) == "table" and type(obj[1]) == "table" and (obj[1].kind ~= nil or obj[1].enter ~= nil) then
    draw_route(obj, drawer)
  else
    raise("octonav.debug.draw: obj: tree, path, route, world, crowd or query expected, got " .. type(obj))
  end
  return drawer
end

return M
