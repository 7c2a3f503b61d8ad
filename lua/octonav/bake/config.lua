--- octonav.bake.config: the bake config's checks (docs/world.md, "Bake config").
--
--   config.check(config) -> cfg   a normalised copy: defaults filled in, the tile grid computed
--   config.check_bounds, check_triangles, check_heightfield   (also used for what fn entries emit)
--
-- Misuse raises "octonav.bake: FIELD: reason".
local compat = require "octonav.compat"
local pack = require "octonav.pack"
local util = require "octonav.util"
local tilegrid = require "octonav.tilegrid"

local M = {}

local finite = util.finite

local function fail(field, msg)
  error(("octonav.bake: %s: %s"):format(field, msg), 0)
end


local function check_keys(t, known, field)
  for k in pairs(t) do
    if not known[k] then fail(field, ("unknown key '%s'"):format(tostring(k))) end
  end
end

local function check_table(v, field, what)
  if type(v) ~= "table" then fail(field, ("%s expected, got %s"):format(what or "table", type(v))) end
  return v
end

local function check_point(v, field)
  if type(v) ~= "table" then fail(field, "point {x, y, z} expected, got " .. type(v)) end
  for a = 1, 3 do
    if not finite(v[a]) then fail(field, "point {x, y, z} of finite numbers expected") end
  end
  return { v[1], v[2], v[3] }
end

local function check_bounds(v, field, strict)
  check_table(v, field, "{ min = {x, y, z}, max = {x, y, z} }")
  check_keys(v, { min = true, max = true }, field)
  local mn = check_point(v.min, field .. ".min")
  local mx = check_point(v.max, field .. ".max")
  for a = 1, 3 do
    if strict and not (mn[a] < mx[a]) then fail(field .. ".max", "must be above min on every axis") end
    if not strict and mn[a] > mx[a] then fail(field .. ".max", "must not be below min on any axis") end
  end
  return mn, mx
end

local function check_number(v, field, default, lo, lo_open)
  if v == nil then return default end
  if not finite(v) then fail(field, "finite number expected, got " .. (type(v) == "number" and tostring(v) or type(v))) end
  if lo ~= nil and (v < lo or (lo_open and v == lo)) then fail(field, ("must be %s %s"):format(lo_open and ">" or ">=", lo)) end
  return v
end

-- The largest of a[1..#a] when every element is a finite number, else nil and the first element that
-- is not. The fast pass leans on Lua raising for a comparison of a number with anything but a number,
-- and on v * 0 being 0 for a finite v only (NaN for an infinity or a NaN); a string that looks like a
-- number passes the multiplication but not the comparison. Only when it fails does the slow pass look
-- for the element (a 4097^2 heightfield: ~7x faster than finite() on every element). An element with
-- __lt and __mul metamethods could pass the fast pass: the tree's add_heightfield and add_triangles
-- check every element again in C.
local function finite_max(a)
  local n = #a
  local ok, top = pcall(function()
    local t, z = -math.huge, 0
    for k = 1, n do
      local v = a[k]
      if v > t then t = v end
      z = z + v * 0
    end
    if z ~= 0 then error("not finite") end
    return t
  end)
  if ok then return top end
  for k = 1, n do
    if not finite(a[k]) then return nil, k end
  end
  error("octonav.bake: finite_max: no bad element found") -- unreachable
end

local function check_triangles(v, field)
  check_table(v, field, "{ vertices = {...}, indices = {...} }")
  check_keys(v, { vertices = true, indices = true }, field)
  local verts = check_table(v.vertices, field .. ".vertices", "flat array of numbers")
  local idx = check_table(v.indices, field .. ".indices", "flat array of 1-based vertex numbers")
  if #verts % 3 ~= 0 then fail(field .. ".vertices", "length must be a multiple of 3") end
  if #idx % 3 ~= 0 then fail(field .. ".indices", "length must be a multiple of 3") end
  local vok, vbad = finite_max(verts)
  if not vok then fail(field .. ".vertices", ("element %d is not a finite number"):format(vbad)) end
  local nv = math.floor(#verts / 3)
  for n = 1, #idx do
    local k = idx[n]
    if not compat.isinteger(k) or k < 1 or k > nv then
      fail(field .. ".indices", ("element %d is not a vertex number (1..%d)"):format(n, nv))
    end
  end
  return { vertices = verts, indices = idx }
end

local function check_heightfield(v, field)
  check_table(v, field, "heightfield table")
  check_keys(v, { origin = true, cell = true, nx = true, nz = true, heights = true }, field)
  local origin = v.origin and check_point(v.origin, field .. ".origin") or { 0, 0, 0 }
  local cell = check_number(v.cell, field .. ".cell", 1, 0, true)
  local nx, nz = v.nx, v.nz
  if not compat.isinteger(nx) or nx < 2 then fail(field .. ".nx", "integer >= 2 expected") end
  if not compat.isinteger(nz) or nz < 2 then fail(field .. ".nz", "integer >= 2 expected") end
  local h = check_table(v.heights, field .. ".heights", "array of nx*nz numbers")
  if #h ~= nx * nz then fail(field .. ".heights", ("has %d values, nx*nz = %d"):format(#h, nx * nz)) end
  local top, bad = finite_max(h)
  if not top then fail(field .. ".heights", ("element %d is not a finite number"):format(bad)) end
  return { origin = origin, cell = cell, nx = nx, nz = nz, heights = h, top = origin[2] + top }
end

local GEO_KEYS = { obj = true, box = true, triangles = true, heightfield = true, fn = true }

local function check_geometry_entry(g, field)
  check_table(g, field, "geometry entry")
  local key
  for k in pairs(g) do
    if not GEO_KEYS[k] then
      fail(field, ("unknown key '%s' (one of obj, box, triangles, heightfield, fn)"):format(tostring(k)))
    end
    if key then fail(field, ("has both '%s' and '%s': exactly one key expected"):format(key, k)) end
    key = k
  end
  if not key then fail(field, "empty entry: one of obj, box, triangles, heightfield, fn expected") end
  local v = g[key]
  if key == "obj" then
    if type(v) ~= "string" or v == "" then fail(field .. ".obj", "file path expected") end
    return { obj = v }
  elseif key == "box" then
    local mn, mx = check_bounds(v, field .. ".box", false)
    return { box = { min = mn, max = mx } }
  elseif key == "triangles" then
    return { triangles = check_triangles(v, field .. ".triangles") }
  elseif key == "heightfield" then
    return { heightfield = check_heightfield(v, field .. ".heightfield") }
  else
    if type(v) ~= "function" then fail(field .. ".fn", "function expected, got " .. type(v)) end
    return { fn = v }
  end
end

local HOLE_KEYS = { name = true, min = true, max = true, scale = true, kind = true, doors = true }
local DOOR_KEYS = { inside = true, outside = true, box = true }

local function check_hole(h, field, names)
  check_table(h, field, "hole table")
  check_keys(h, HOLE_KEYS, field)
  if not pack.is_name(h.name) then fail(field .. ".name", "name of letters, digits, '_' or '-' expected") end
  if names[h.name] then fail(field .. ".name", ("duplicate hole name '%s'"):format(h.name)) end
  names[h.name] = true
  local mn, mx = check_bounds({ min = h.min, max = h.max }, field, true)
  local scale = check_number(h.scale, field .. ".scale", nil, 0, true)
  if scale == nil then fail(field .. ".scale", "required (leaf edge of the hole's tree, world units)") end
  local kind = h.kind or "under_terrain"
  if not pack.KINDS[kind] then fail(field .. ".kind", "\"under_terrain\" or \"over_terrain\" expected") end
  local doors = check_table(h.doors, field .. ".doors", "array of doors")
  if #doors == 0 then fail(field .. ".doors", "at least one door expected") end
  local out = { name = h.name, min = mn, max = mx, scale = scale, kind = kind, doors = {} }
  for j, d in ipairs(doors) do
    local df = ("%s.doors[%d]"):format(field, j)
    check_table(d, df, "door table")
    check_keys(d, DOOR_KEYS, df)
    local door = { inside = check_point(d.inside, df .. ".inside"), outside = check_point(d.outside, df .. ".outside") }
    for a = 1, 3 do
      if door.inside[a] < mn[a] or door.inside[a] > mx[a] then fail(df .. ".inside", "must lie inside the hole's bounds") end
    end
    if d.box ~= nil then
      local bmn, bmx = check_bounds(d.box, df .. ".box", false)
      door.box = { min = bmn, max = bmx }
    end
    out.doors[j] = door
  end
  return out
end

local CONFIG_KEYS = {
  range = true, scale = true, depth = true, radius = true, agents = true, geometry = true, holes = true,
  connect = true, output = true, progress = true, one_tree = true,
}

-- The agents: config.agents (a list of { name = identifier, radius = r >= 0 }, names unique) or one
-- agent "default" of config.radius (default 0). Giving both is an error. Returns the list and whether
-- the config listed them (then the manifest lists them: a config with `radius` gives the same pack as
-- before agents existed).
local function check_agents(config)
  if config.agents == nil then
    return { { name = "default", radius = check_number(config.radius, "config.radius", 0, 0, false) } }, false
  end
  if config.radius ~= nil then
    fail("config", "give either 'radius' (one agent) or 'agents' (a list of { name, radius }), not both")
  end
  local list = check_table(config.agents, "config.agents", "array of { name = ..., radius = ... }")
  if #list == 0 then fail("config.agents", "at least one agent expected") end
  if #list > pack.MAX_AGENTS then fail("config.agents", ("at most %d agents"):format(pack.MAX_AGENTS)) end
  for k in pairs(list) do
    if not compat.isinteger(k) or k < 1 or k > #list then fail("config.agents", "array of agents expected (no other keys)") end
  end
  local out, names = {}, {}
  for n, a in ipairs(list) do
    local field = ("config.agents[%d]"):format(n)
    check_table(a, field, "agent table { name = ..., radius = ... }")
    check_keys(a, { name = true, radius = true }, field)
    if not pack.is_agent_name(a.name) then
      fail(field .. ".name", "identifier expected (a letter or '_', then letters, digits or '_')")
    end
    if names[a.name] then fail(field .. ".name", ("duplicate agent name '%s'"):format(a.name)) end
    names[a.name] = true
    if a.radius == nil then fail(field .. ".radius", "required (the agent's clearance, world units, >= 0)") end
    out[n] = { name = a.name, radius = check_number(a.radius, field .. ".radius", 0, 0, false) }
  end
  return out, true
end

--- Validates a config and returns a normalised copy (defaults filled in, grid computed).
-- Raises "octonav.bake: FIELD: reason" on misuse.
function M.check(config)
  if type(config) ~= "table" then fail("config", "table expected, got " .. type(config)) end
  check_keys(config, CONFIG_KEYS, "config")
  if config.range == nil then fail("config.range", "required: { min = {x, y, z}, max = {x, y, z} }") end
  local rmin, rmax = check_bounds(config.range, "config.range", false)
  local cfg = { range = { min = rmin, max = rmax } }
  cfg.scale = check_number(config.scale, "config.scale", 1.0, 0, true)
  local depth = config.depth == nil and 6 or config.depth
  if not compat.isinteger(depth) or depth < 1 or depth > 9 then fail("config.depth", "integer 1..9 expected") end
  cfg.depth = depth
  cfg.agents, cfg.agents_listed = check_agents(config)
  cfg.radius = cfg.agents[1].radius -- the default agent's (what one-agent stages read)
  -- one_tree (default false): one tree for every agent (pack version 3, octonav.onetree), baked for the
  -- smallest agent radius, with a tile graph per agent radius
  if config.one_tree ~= nil and type(config.one_tree) ~= "boolean" then
    fail("config.one_tree", "boolean expected, got " .. type(config.one_tree))
  end
  cfg.one_tree = config.one_tree == true
  if cfg.one_tree then cfg.radius = require("octonav.onetree").tree_radius(cfg.agents) end
  cfg.geometry = {}
  for n, g in ipairs(check_table(config.geometry or {}, "config.geometry", "array of geometry entries")) do
    cfg.geometry[n] = check_geometry_entry(g, ("config.geometry[%d]"):format(n))
  end
  local names = {}
  cfg.holes = {}
  for n, h in ipairs(check_table(config.holes or {}, "config.holes", "array of holes")) do
    cfg.holes[n] = check_hole(h, ("config.holes[%d]"):format(n), names)
  end
  -- connect: the tile graphs' options (octonav.core.route.build): bound (portal size bound S, leaves;
  -- 0 = the default for the depth), stretch (>= 1: the greedy spanner's factor). merge_distance and
  -- weights (the Lua connect blocks of pack version 1) are still accepted and checked, and ignored.
  local connect = check_table(config.connect or {}, "config.connect", "table")
  check_keys(connect, { merge_distance = true, weights = true, bound = true, stretch = true }, "config.connect")
  check_number(connect.merge_distance, "config.connect.merge_distance", 4, 0, false)
  if connect.weights ~= nil and connect.weights ~= "straight" and connect.weights ~= "path" then
    fail("config.connect.weights", "\"straight\" or \"path\" expected")
  end
  local bound = connect.bound == nil and 0 or connect.bound
  if not compat.isinteger(bound) or bound < 0 or bound > compat.pow2(depth) then
    fail("config.connect.bound", ("integer 0..%d expected (0: the default)"):format(compat.pow2(depth)))
  end
  local stretch = connect.stretch == nil and 1 or connect.stretch
  if type(stretch) ~= "number" or not (stretch >= 1) or stretch == math.huge then
    fail("config.connect.stretch", "finite number >= 1 expected")
  end
  cfg.connect = { bound = bound, stretch = stretch }
  if type(config.output) ~= "string" or config.output == "" then fail("config.output", "required: directory path") end
  cfg.output = config.output
  if config.progress ~= nil and type(config.progress) ~= "function" then
    fail("config.progress", "function(done, total, what) expected")
  end
  cfg.progress = config.progress
  local grid, gerr = tilegrid.from_range(rmin, rmax, depth, cfg.scale, cfg.radius)
  if not grid then fail("config.range", gerr) end
  cfg.grid = grid
  local hole_params = require("octonav.bake.holes").params
  for n, h in ipairs(cfg.holes) do
    for j, d in ipairs(h.doors) do
      if not tilegrid.tile_of(cfg.grid, d.outside) then
        fail(("config.holes[%d].doors[%d].outside"):format(n, j), "must lie inside the world's tile grid")
      end
      -- (what the loader refuses, the bake refuses: door count, door boxes, the hole tree's grid)
      for a = 1, 3 do
        if d.box and not (math.abs(d.box.min[a]) <= pack.MAX_COORD and math.abs(d.box.max[a]) <= pack.MAX_COORD) then
          fail(("config.holes[%d].doors[%d].box"):format(n, j), ("must lie within +-%g"):format(pack.MAX_COORD))
        end
      end
    end
    if #h.doors > pack.MAX_DOORS then fail(("config.holes[%d].doors"):format(n), ("at most %d doors"):format(pack.MAX_DOORS)) end
    local hp = hole_params(h)
    local why = tilegrid.check(hp.origin, hp.tiles, hp.scale)
    if why then fail(("config.holes[%d]"):format(n), "its tree's grid: " .. why) end
  end
  return cfg
end

--- The config of agent n of a checked cfg: a shallow copy whose radius is the agent's and whose
-- output is the agent's directory (pack.agent_dir), with `agent` (its entry) and `agent_index` set.
function M.agent_cfg(cfg, n)
  local a = cfg.agents[n]
  local c = {}
  for k, v in pairs(cfg) do c[k] = v end
  c.radius, c.agent, c.agent_index = a.radius, a, n
  c.output = pack.agent_dir(cfg.output, n, a.name)
  return c
end

M.fail = fail
M.check_bounds, M.check_triangles, M.check_heightfield = check_bounds, check_triangles, check_heightfield

return M
