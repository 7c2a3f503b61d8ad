--- The bake: a config (docs/world.md, "Bake config") -> a nav pack directory.
--
--   local bake = require "octonav.bake"
--   bake(config)               -- or bake.run(config): every tile, then the link step -> summary
--   bake.tile(config, i, j, k) -- one tile -> OUTPUT/tiles/I_J_K.tile (parallel processes)
--   bake.link(config)          -- holes, graph and manifest from the tile files already written
--   bake.grid(config)          -- the tile grid the config gives (origin, tiles, tile_size)
--   bake.rebake(dir, region, config) -- re-bake the tiles overlapping a box (world:rebake calls it)
--
-- Steps (the seed's "大世界地图的烘焙过程" and "洞的定义及其烘焙过程"):
--  * tiles: each tile is baked on its own into a 1x1x1 tree whose origin is the tile's world corner
--    (same depth, scale and radius), from only the geometry that overlaps the tile grown by the radius
--    and half a leaf; its blob equals that tile of one tree over the whole grid.
--  * link (reads only tile files): the world tree is assembled from the blobs; a clone is filled from
--    every free cell on the world's top face, so a free region reachable from the top is blocked in
--    the clone. On each face shared by two tiles, the free cells of the tile on that face (face_cells)
--    are clustered into regions (two cells join when their squares on the face share an edge of
--    positive length); a region is kept iff it is reachable from the top. Each cell of a kept region
--    gives a connect point: the centre of its square on the face, pushed half a leaf into the tile
--    (inside) and half a leaf into the neighbour (outside). Points of a region closer than
--    connect.merge_distance to a block's first point join that block (else start a new one); a
--    block's centre is its point (inside) nearest the mean of its points, so it is always free. A
--    block links to the neighbour's blocks holding the cells its outside points fall in (cost: the
--    inside->outside distance, one leaf). Weights join every pair of blocks of a tile: "straight"
--    (distance between centres) or "path" (query length on a 1-tile tree of that tile; pairs
--    without a path are left out).
--  * holes: each hole gets its own tree (its scale, origin at its min corner, depth and tile counts
--    fitted to its bounds) with the geometry overlapping its bounds (heightfields only for
--    kind = "over_terrain": "under_terrain" holes are made of meshes and boxes), everything of that
--    tree outside the bounds blocked, each door's optional `box` (the doorway) blocked, then the
--    free space outside the doors sealed with tree:fill from each door's outside point. A hole
--    is registered with the tiles it overlaps and the tiles holding its doors' outside points; each
--    door links to every block of those tiles (cost: straight distance outside point -> block
--    centre, or with weights = "path" the query length on the world tree, left out without a path).
--
-- Misuse (a bad config) raises an error naming the field; runtime failures (files) return nil, err.
local core = require "octonav.core"
local pack = require "octonav.pack"
local progress = require "octonav.progress"

local Tree, Query = core.tree, core.query
local FACES = pack.FACES
local clock = core.clock

local M = {}

-- ---- config validation --------------------------------------------------------------------------

local function fail(field, msg)
  error(("octonav.bake: %s: %s"):format(field, msg), 0)
end

local function finite(v) return type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge end

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

local function check_triangles(v, field)
  check_table(v, field, "{ vertices = {...}, indices = {...} }")
  check_keys(v, { vertices = true, indices = true }, field)
  local verts = check_table(v.vertices, field .. ".vertices", "flat array of numbers")
  local idx = check_table(v.indices, field .. ".indices", "flat array of 1-based vertex numbers")
  if #verts % 3 ~= 0 then fail(field .. ".vertices", "length must be a multiple of 3") end
  if #idx % 3 ~= 0 then fail(field .. ".indices", "length must be a multiple of 3") end
  for n = 1, #verts do
    if not finite(verts[n]) then fail(field .. ".vertices", ("element %d is not a finite number"):format(n)) end
  end
  local nv = #verts // 3
  for n = 1, #idx do
    local k = idx[n]
    if math.type(k) ~= "integer" or k < 1 or k > nv then
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
  if math.type(nx) ~= "integer" or nx < 2 then fail(field .. ".nx", "integer >= 2 expected") end
  if math.type(nz) ~= "integer" or nz < 2 then fail(field .. ".nz", "integer >= 2 expected") end
  local h = check_table(v.heights, field .. ".heights", "array of nx*nz numbers")
  if #h ~= nx * nz then fail(field .. ".heights", ("has %d values, nx*nz = %d"):format(#h, nx * nz)) end
  local top = -math.huge
  for n = 1, #h do
    if not finite(h[n]) then fail(field .. ".heights", ("element %d is not a finite number"):format(n)) end
    if h[n] > top then top = h[n] end
  end
  return { origin = origin, cell = cell, nx = nx, nz = nz, heights = h, top = origin[2] + top }
end

local GEO_KEYS = { obj = true, box = true, triangles = true, heightfield = true, fn = true }

local function check_geometry_entry(g, field)
  check_table(g, field, "geometry entry")
  local key
  for k in pairs(g) do
    if not GEO_KEYS[k] then fail(field, ("unknown key '%s' (one of obj, box, triangles, heightfield, fn)"):format(tostring(k))) end
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
  range = true, scale = true, depth = true, radius = true, geometry = true, holes = true, connect = true,
  output = true, progress = true,
}

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
  if math.type(depth) ~= "integer" or depth < 1 or depth > 9 then fail("config.depth", "integer 1..9 expected") end
  cfg.depth = depth
  cfg.radius = check_number(config.radius, "config.radius", 0, 0, false)
  cfg.geometry = {}
  for n, g in ipairs(check_table(config.geometry or {}, "config.geometry", "array of geometry entries")) do
    cfg.geometry[n] = check_geometry_entry(g, ("config.geometry[%d]"):format(n))
  end
  local names = {}
  cfg.holes = {}
  for n, h in ipairs(check_table(config.holes or {}, "config.holes", "array of holes")) do
    cfg.holes[n] = check_hole(h, ("config.holes[%d]"):format(n), names)
  end
  local connect = check_table(config.connect or {}, "config.connect", "table")
  check_keys(connect, { merge_distance = true, weights = true }, "config.connect")
  cfg.connect = {
    merge_distance = check_number(connect.merge_distance, "config.connect.merge_distance", 4, 0, false),
    weights = connect.weights or "straight",
  }
  if cfg.connect.weights ~= "straight" and cfg.connect.weights ~= "path" then
    fail("config.connect.weights", "\"straight\" or \"path\" expected")
  end
  if type(config.output) ~= "string" or config.output == "" then fail("config.output", "required: directory path") end
  cfg.output = config.output
  if config.progress ~= nil and type(config.progress) ~= "function" then
    fail("config.progress", "function(done, total, what) expected")
  end
  cfg.progress = config.progress
  cfg.grid = M.grid_of(cfg)
  for n, h in ipairs(cfg.holes) do
    for j, d in ipairs(h.doors) do
      if not M.tile_of(cfg.grid, d.outside) then
        fail(("config.holes[%d].doors[%d].outside"):format(n, j), "must lie inside the world's tile grid")
      end
    end
  end
  return cfg
end

-- ---- tile grid ------------------------------------------------------------------------------------

--- The tile grid of a checked config: T = 2^depth * scale, n = ceil(extent / T) (at least 1), the
-- range grown to whole tiles keeping its top face and its min x and min z.
function M.grid_of(cfg)
  local N = 1 << cfg.depth
  local T = N * cfg.scale
  local mn, mx = cfg.range.min, cfg.range.max
  local n = {}
  for a = 1, 3 do
    n[a] = math.max(1, math.ceil((mx[a] - mn[a]) / T))
    if n[a] > 4096 then fail("config.range", "too many tiles along one axis (at most 4096)") end
  end
  return {
    origin = { mn[1], mx[2] - n[2] * T, mn[3] },
    tiles = n,
    tile_size = T,
    leaves = N,
    scale = cfg.scale,
    depth = cfg.depth,
    radius = cfg.radius,
    count = n[1] * n[2] * n[3],
  }
end

--- The grid of a config table (checked): { origin, tiles = {nx,ny,nz}, tile_size, count, ... }.
function M.grid(config)
  return M.check(config).grid
end

function M.tile_index(grid, i, j, k)
  return i + grid.tiles[1] * (j + grid.tiles[2] * k)
end

function M.tile_coords(grid, t)
  local nx, ny = grid.tiles[1], grid.tiles[2]
  return t % nx, (t // nx) % ny, t // (nx * ny)
end

function M.tile_min(grid, i, j, k)
  local T, o = grid.tile_size, grid.origin
  return { o[1] + i * T, o[2] + j * T, o[3] + k * T }
end

function M.tile_bounds(grid, t)
  local i, j, k = M.tile_coords(grid, t)
  local mn = M.tile_min(grid, i, j, k)
  local T = grid.tile_size
  return mn, { mn[1] + T, mn[2] + T, mn[3] + T }
end

--- Tile index of a world point, or nil outside the grid (points on the grid's max faces count).
function M.tile_of(grid, p)
  local c = {}
  for a = 1, 3 do
    local v = (p[a] - grid.origin[a]) / grid.tile_size
    local n = grid.tiles[a]
    if not (v >= 0 and v <= n) then return nil end
    local f = math.floor(v)
    if f >= n then f = n - 1 end
    c[a] = f
  end
  return M.tile_index(grid, c[1], c[2], c[3])
end

--- Tiles overlapping the box [lo, hi] (closed), as a sorted array of indices.
function M.tiles_in_box(grid, lo, hi, strict)
  local r = {}
  for a = 1, 3 do
    local T, o, n = grid.tile_size, grid.origin[a], grid.tiles[a]
    local a0 = math.floor((lo[a] - o) / T)
    local a1 = math.floor((hi[a] - o) / T)
    -- a box ending exactly on a tile border does not overlap the next tile (strict) or does (closed)
    if strict and a1 > a0 and o + a1 * T >= hi[a] then a1 = a1 - 1 end
    if a0 < 0 then a0 = 0 end
    if a1 > n - 1 then a1 = n - 1 end
    if a0 > a1 or hi[a] < o or lo[a] > o + n * T then return {} end
    r[a] = { a0, a1 }
  end
  local out = {}
  for k = r[3][1], r[3][2] do
    for j = r[2][1], r[2][2] do
      for i = r[1][1], r[1][2] do out[#out + 1] = M.tile_index(grid, i, j, k) end
    end
  end
  table.sort(out)
  return out
end

--- Tiles a hole is registered with: those its bounds overlap with positive volume, and those
-- holding its doors' outside points. Sorted.
function M.hole_tiles(grid, hole)
  local set, out = {}, {}
  for _, t in ipairs(M.tiles_in_box(grid, hole.min, hole.max, true)) do set[t] = true end
  for _, d in ipairs(hole.doors) do
    local t = M.tile_of(grid, d.outside)
    if t then set[t] = true end
  end
  for t in pairs(set) do out[#out + 1] = t end
  table.sort(out)
  return out
end

--- A hole's tree parameters: origin at its min corner, its scale, the smallest depth (1..9) whose
-- tile holds the largest extent (9 when none does), and enough tiles to cover the bounds.
function M.hole_params(hole)
  local leaves, most = {}, 1
  for a = 1, 3 do
    leaves[a] = math.max(1, math.ceil((hole.max[a] - hole.min[a]) / hole.scale))
    if leaves[a] > most then most = leaves[a] end
  end
  local depth = 1
  while depth < 9 and (1 << depth) < most do depth = depth + 1 end
  local N = 1 << depth
  local tiles = {}
  for a = 1, 3 do tiles[a] = math.max(1, math.ceil(leaves[a] / N)) end
  return { depth = depth, origin = { hole.min[1], hole.min[2], hole.min[3] }, tiles = tiles, scale = hole.scale }
end

-- ---- geometry -------------------------------------------------------------------------------------

--- Reads a Wavefront OBJ with the core's reader (octonav.core.read_obj) into the flat arrays V and I
-- (appending, indices 1-based). Returns ntris or nil, "PATH:LINE: reason".
function M.read_obj(path, V, I)
  local v, idx = require("octonav.core").read_obj(path)
  if not v then return nil, idx end
  local base = #V // 3
  for n = 1, #v do V[#V + 1] = v[n] end
  for n = 1, #idx do I[#I + 1] = base + idx[n] end
  return #idx // 3
end

--- All the geometry of a checked config, gathered once: boxes, one triangle soup, heightfields.
-- Runs the config's fn entries and reads its obj files. Returns geo or nil, err.
function M.collect(cfg)
  local geo = { boxes = {}, V = {}, I = {}, hfs = {} }
  local function add_tris(v, idx)
    local base = #geo.V // 3
    for n = 1, #v do geo.V[#geo.V + 1] = v[n] end
    for n = 1, #idx do geo.I[#geo.I + 1] = base + idx[n] end
  end
  for n, g in ipairs(cfg.geometry) do
    local field = ("config.geometry[%d]"):format(n)
    if g.obj then
      local ok, err = M.read_obj(g.obj, geo.V, geo.I)
      if not ok then return nil, err end
    elseif g.box then
      geo.boxes[#geo.boxes + 1] = g.box
    elseif g.triangles then
      add_tris(g.triangles.vertices, g.triangles.indices)
    elseif g.heightfield then
      geo.hfs[#geo.hfs + 1] = g.heightfield
    else
      local emit = {}
      function emit.box(mn, mx)
        local a, b = check_bounds({ min = mn, max = mx }, field .. ".fn: emit.box", false)
        geo.boxes[#geo.boxes + 1] = { min = a, max = b }
      end
      function emit.triangles(v, idx)
        local t = check_triangles({ vertices = v, indices = idx }, field .. ".fn: emit.triangles")
        add_tris(t.vertices, t.indices)
      end
      function emit.heightfield(hf)
        geo.hfs[#geo.hfs + 1] = check_heightfield(hf, field .. ".fn: emit.heightfield")
      end
      g.fn(emit)
    end
  end
  return geo
end

local function overlaps(alo, ahi, blo, bhi)
  for a = 1, 3 do
    if alo[a] > bhi[a] or ahi[a] < blo[a] then return false end
  end
  return true
end

local function grow(lo, hi, m)
  return { lo[1] - m, lo[2] - m, lo[3] - m }, { hi[1] + m, hi[2] + m, hi[3] + m }
end

local function tri_bounds(V, I, t)
  local b = 3 * (t - 1)
  local i1, i2, i3 = 3 * (I[b + 1] - 1), 3 * (I[b + 2] - 1), 3 * (I[b + 3] - 1)
  local lo, hi = {}, {}
  for a = 1, 3 do
    local x, y, z = V[i1 + a], V[i2 + a], V[i3 + a]
    lo[a] = math.min(x, y, z)
    hi[a] = math.max(x, y, z)
  end
  return lo, hi
end

-- The part of a heightfield that can touch [lo, hi] (whole squares, one square of margin), or nil.
local function crop_hf(hf, lo, hi)
  if lo[2] > hf.top then return nil end
  local ox, oz, c = hf.origin[1], hf.origin[3], hf.cell
  if ox > hi[1] or ox + (hf.nx - 1) * c < lo[1] or oz > hi[3] or oz + (hf.nz - 1) * c < lo[3] then return nil end
  local function range(o, n, a, b)
    local i0 = math.max(0, math.floor((a - o) / c) - 1)
    local i1 = math.min(n - 1, math.ceil((b - o) / c) + 1)
    if i1 <= i0 then
      if i0 >= n - 1 then i0 = n - 2 end
      i1 = i0 + 1
    end
    return i0, i1
  end
  local i0, i1 = range(ox, hf.nx, lo[1], hi[1])
  local k0, k1 = range(oz, hf.nz, lo[3], hi[3])
  if i0 == 0 and k0 == 0 and i1 == hf.nx - 1 and k1 == hf.nz - 1 then return hf end
  local h = {}
  for k = k0, k1 do
    for i = i0, i1 do h[#h + 1] = hf.heights[i + 1 + k * hf.nx] end
  end
  return { origin = { ox + i0 * c, hf.origin[2], oz + k0 * c }, cell = c, nx = i1 - i0 + 1, nz = k1 - k0 + 1, heights = h }
end

-- Geometry for one region: the boxes, triangles (listed, or all tested) and cropped heightfields that
-- overlap [lo, hi]. tris: an array of triangle numbers to take (already bucketed) or nil to test all.
local function select_geo(geo, lo, hi, tris, terrain)
  local sub = { boxes = {}, V = {}, I = {}, hfs = {} }
  for _, b in ipairs(geo.boxes) do
    if overlaps(b.min, b.max, lo, hi) then sub.boxes[#sub.boxes + 1] = b end
  end
  local V, I = geo.V, geo.I
  local remap, sV, sI = {}, sub.V, sub.I
  local function take(t)
    local b = 3 * (t - 1)
    for q = 1, 3 do
      local v = I[b + q]
      local m = remap[v]
      if not m then
        m = #sV // 3 + 1
        local o = 3 * (v - 1)
        sV[#sV + 1], sV[#sV + 2], sV[#sV + 3] = V[o + 1], V[o + 2], V[o + 3]
        remap[v] = m
      end
      sI[#sI + 1] = m
    end
  end
  if tris then
    for _, t in ipairs(tris) do take(t) end
  else
    for t = 1, #I // 3 do
      local tlo, thi = tri_bounds(V, I, t)
      if overlaps(tlo, thi, lo, hi) then take(t) end
    end
  end
  if terrain then
    for _, hf in ipairs(geo.hfs) do
      local c = crop_hf(hf, lo, hi)
      if c then sub.hfs[#sub.hfs + 1] = c end
    end
  end
  return sub
end

local function insert(tree, sub)
  for _, b in ipairs(sub.boxes) do tree:add_box(b.min, b.max) end
  if #sub.I > 0 then tree:add_triangles(sub.V, sub.I) end
  for _, hf in ipairs(sub.hfs) do tree:add_heightfield(hf) end
end

-- margin around a tile: the radius and half a leaf (so rounding can never drop a touching triangle)
local function margin(cfg, scale) return cfg.radius + 0.5 * (scale or cfg.scale) end

-- Triangles bucketed by the tiles their grown bounds overlap: bucket[t] = { triangle numbers }.
local function bucket_triangles(geo, grid, m)
  local buckets = {}
  local V, I = geo.V, geo.I
  for t = 1, #I // 3 do
    local lo, hi = tri_bounds(V, I, t)
    lo, hi = grow(lo, hi, m)
    for _, ti in ipairs(M.tiles_in_box(grid, lo, hi, false)) do
      local b = buckets[ti]
      if not b then b = {}; buckets[ti] = b end
      b[#b + 1] = t
    end
  end
  return buckets
end

-- One tile's blob from its geometry.
local function tile_blob(cfg, grid, sub, i, j, k)
  local tree = Tree.new { tiles = { 1, 1, 1 }, depth = cfg.depth, scale = cfg.scale, radius = cfg.radius,
    origin = M.tile_min(grid, i, j, k) }
  insert(tree, sub)
  local blob = tree:encode_tile(0, 0, 0)
  tree:close()
  return blob
end

local function check_tile_args(grid, i, j, k)
  for a, v in ipairs { i, j, k } do
    if math.type(v) ~= "integer" or v < 0 or v >= grid.tiles[a] then
      error(("octonav.bake.tile: tile index %s out of range (0..%d on axis %d)"):format(tostring(v), grid.tiles[a] - 1, a), 3)
    end
  end
end

local function ensure_dirs(dir)
  local ok, err = pack.mkdir(dir .. "/tiles")
  if not ok then return nil, err end
  ok, err = pack.mkdir(dir .. "/holes")
  if not ok then return nil, err end
  return true
end

--- Bakes one tile of the config and writes OUTPUT/tiles/I_J_K.tile. Returns true, bytes or nil, err.
function M.tile(config, i, j, k)
  local cfg = M.check(config)
  check_tile_args(cfg.grid, i, j, k)
  local geo, err = M.collect(cfg)
  if not geo then return nil, err end
  local ok, derr = ensure_dirs(cfg.output)
  if not ok then return nil, derr end
  local lo, hi = M.tile_bounds(cfg.grid, M.tile_index(cfg.grid, i, j, k))
  lo, hi = grow(lo, hi, margin(cfg))
  local blob = tile_blob(cfg, cfg.grid, select_geo(geo, lo, hi, nil, true), i, j, k)
  local wok, werr = pack.write_tile(cfg.output, i, j, k, blob)
  if not wok then return nil, werr end
  return true, #blob
end

-- Bakes the tiles in `list` (indices) with geometry bucketed once; writes their files.
local function bake_tiles(cfg, geo, dir, list, report)
  local grid = cfg.grid
  local m = margin(cfg)
  local buckets = bucket_triangles(geo, grid, m)
  local bytes = 0
  for n, t in ipairs(list) do
    local i, j, k = M.tile_coords(grid, t)
    local lo, hi = M.tile_bounds(grid, t)
    lo, hi = grow(lo, hi, m)
    local blob = tile_blob(cfg, grid, select_geo(geo, lo, hi, buckets[t] or {}, true), i, j, k)
    local ok, err = pack.write_tile(dir, i, j, k, blob)
    if not ok then return nil, err end
    bytes = bytes + #blob
    if report then report(n, ("tile %d,%d,%d"):format(i, j, k)) end
  end
  return bytes
end

-- ---- holes ----------------------------------------------------------------------------------------

local function file_size(path)
  local f = io.open(path, "rb")
  if not f then return 0 end
  local n = f:seek("end")
  f:close()
  return n or 0
end

--- Bakes one hole's tree (see the module comment) and saves it to DIR/holes/NAME.tree.
-- Returns the tree (open; the caller closes it) or nil, err.
local function bake_hole(cfg, geo, h, dir)
  local p = M.hole_params(h)
  local r = cfg.radius
  local tree = Tree.new { tiles = p.tiles, depth = p.depth, scale = h.scale, origin = p.origin, radius = r }
  local lo, hi = grow(h.min, h.max, margin(cfg, h.scale))
  insert(tree, select_geo(geo, lo, hi, nil, h.kind == "over_terrain"))
  -- block the part of the tree beyond the bounds; boxes grow by the radius, so start them r further
  local ext = (1 << p.depth) * h.scale
  local gmin = p.origin
  local gmax = { gmin[1] + p.tiles[1] * ext, gmin[2] + p.tiles[2] * ext, gmin[3] + p.tiles[3] * ext }
  for a = 1, 3 do
    if h.max[a] < gmax[a] then
      local bmin, bmax = { gmin[1], gmin[2], gmin[3] }, { gmax[1], gmax[2], gmax[3] }
      bmin[a] = h.max[a] + r
      if bmax[a] < bmin[a] then bmax[a] = bmin[a] end
      tree:add_box(bmin, bmax)
    end
  end
  for _, d in ipairs(h.doors) do
    if d.box then tree:add_box(d.box.min, d.box.max) end
  end
  for _, d in ipairs(h.doors) do
    if tree:locate(d.outside) == "free" then tree:fill(d.outside) end
  end
  tree:compact()
  local path = pack.hole_path(dir, h.name)
  local ok, err = tree:save(path)
  if not ok then
    tree:close()
    return nil, err
  end
  return tree
end

local function manifest_holes(cfg)
  local out = {}
  for n, h in ipairs(cfg.holes) do
    local p = M.hole_params(h)
    out[n] = { name = h.name, kind = h.kind, min = h.min, max = h.max, scale = h.scale, depth = p.depth,
      origin = p.origin, tiles = p.tiles, doors = h.doors }
  end
  return out
end

-- ---- link step ------------------------------------------------------------------------------------

local function dist(a, b)
  local dx, dy, dz = a[1] - b[1], a[2] - b[2], a[3] - b[3]
  return math.sqrt(dx * dx + dy * dy + dz * dz)
end

local function same_tile(a, b)
  return a[1] == b[1] and a[2] == b[2] and a[3] == b[3]
end

-- Regions of free cells on one face of a tile: arrays of cells, in the order of their first cell.
local function face_regions(tree, i, j, k, face)
  local cells = tree:face_cells(i, j, k, FACES[face + 1])
  local index, parent = {}, {}
  for n, c in ipairs(cells) do
    index[c.code] = n
    parent[n] = n
  end
  local function find(x)
    while parent[x] ~= x do
      parent[x] = parent[parent[x]]
      x = parent[x]
    end
    return x
  end
  for n, c in ipairs(cells) do
    for _, nb in ipairs(tree:neighbors(c)) do
      local m = index[nb.code]
      if m and same_tile(nb.tile, c.tile) then
        local a, b = find(n), find(m)
        if a ~= b then
          if a < b then parent[b] = a else parent[a] = b end
        end
      end
    end
  end
  local regions, of_root = {}, {}
  for n, c in ipairs(cells) do
    local root = find(n)
    local reg = of_root[root]
    if not reg then
      reg = {}
      of_root[root] = reg
      regions[#regions + 1] = reg
    end
    reg[#reg + 1] = c
  end
  return regions
end

-- The connect point of a face cell: inside and outside points (world).
local function cell_point(cell, face, plane, half)
  local axis = face // 2 + 1
  local s = cell.size
  local c = { cell.min[1] + s / 2, cell.min[2] + s / 2, cell.min[3] + s / 2 }
  local sign = face % 2 == 1 and 1 or -1 -- +face: outside is towards +axis
  local inside, outside = { c[1], c[2], c[3] }, { c[1], c[2], c[3] }
  inside[axis] = plane - sign * half
  outside[axis] = plane + sign * half
  return inside, outside
end

-- Blocks of one region: points merged by distance to each block's first point.
local function region_blocks(region, face, plane, half, merge)
  local blocks = {}
  for _, cell in ipairs(region) do
    local inside, outside = cell_point(cell, face, plane, half)
    local into
    for _, b in ipairs(blocks) do
      if dist(b.points[1].inside, inside) < merge then
        into = b
        break
      end
    end
    if not into then
      into = { points = {} }
      blocks[#blocks + 1] = into
    end
    into.points[#into.points + 1] = { inside = inside, outside = outside }
  end
  for _, b in ipairs(blocks) do
    local m = { 0, 0, 0 }
    for _, p in ipairs(b.points) do
      for a = 1, 3 do m[a] = m[a] + p.inside[a] end
    end
    for a = 1, 3 do m[a] = m[a] / #b.points end
    local best, bd = b.points[1].inside, math.huge
    for _, p in ipairs(b.points) do
      local d = dist(p.inside, m)
      if d < bd then best, bd = p.inside, d end
    end
    b.center = { best[1], best[2], best[3] }
  end
  return blocks
end

local function neighbour_tile(grid, i, j, k, face)
  local c = { i, j, k }
  local axis = face // 2 + 1
  c[axis] = c[axis] + (face % 2 == 1 and 1 or -1)
  if c[axis] < 0 or c[axis] >= grid.tiles[axis] then return nil end
  return M.tile_index(grid, c[1], c[2], c[3])
end

local function new_tree(cfg, grid)
  return Tree.new { tiles = grid.tiles, depth = cfg.depth, scale = cfg.scale, origin = grid.origin, radius = cfg.radius }
end

--[[ The link step. opts:
  dir       pack directory (tile files are read from it; holes, graph and manifest written to it)
  geo       collected geometry (read when a hole needs baking and geo is nil)
  changed   nil (everything) or a set of tile indices whose tiles were re-baked
  previous  with `changed`: the previous graph (pack.read_graph format)
  holes     nil (bake every hole) or a set of hole names to re-bake (the others keep their files)
  report    function(what) called after each unit of work
Returns a summary table or nil, err. ]]
local function link(cfg, opts)
  local grid, dir = cfg.grid, opts.dir
  local t0 = clock()
  local report = opts.report or function() end
  local ntiles = grid.count
  local summary = { tiles = ntiles, bytes = 0 }
  -- 1. the world tree from the tile files
  local tree = new_tree(cfg, grid)
  local blobs = {}
  for t = 0, ntiles - 1 do
    local i, j, k = M.tile_coords(grid, t)
    local blob, err = pack.read_tile(dir, i, j, k)
    if not blob then
      tree:close()
      return nil, err
    end
    local ok, derr = tree:decode_tile(i, j, k, blob)
    if not ok then
      tree:close()
      return nil, ("%s: %s"):format(pack.tile_path(dir, i, j, k), tostring(derr))
    end
    blobs[t] = blob
    summary.bytes = summary.bytes + #blob
  end
  tree:compact()
  summary.nodes = tree:stats().nodes
  -- 2. holes
  local geo = opts.geo
  for _, h in ipairs(cfg.holes) do
    local path = pack.hole_path(dir, h.name)
    if opts.holes == nil or opts.holes[h.name] then
      if not geo then
        local gerr
        geo, gerr = M.collect(cfg)
        if not geo then
          tree:close()
          return nil, gerr
        end
      end
      local ht, err = bake_hole(cfg, geo, h, dir)
      if not ht then
        tree:close()
        return nil, err
      end
      ht:close()
    end
    summary.bytes = summary.bytes + file_size(path)
    report("hole " .. h.name)
  end
  -- 3. reachability from the top: a clone filled from every free cell on the world's top face
  local clone = new_tree(cfg, grid)
  for t = 0, ntiles - 1 do
    local i, j, k = M.tile_coords(grid, t)
    assert(clone:decode_tile(i, j, k, blobs[t]))
  end
  local ny = grid.tiles[2]
  for k = 0, grid.tiles[3] - 1 do
    for i = 0, grid.tiles[1] - 1 do
      for _, c in ipairs(tree:face_cells(i, ny - 1, k, "+y")) do
        local s = c.size / 2
        local p = { c.min[1] + s, c.min[2] + s, c.min[3] + s }
        if clone:locate(p) == "free" then clone:fill(p) end
      end
    end
  end
  -- 4. regions and blocks per tile face (in tile, face order: that order numbers the blocks)
  local changed = opts.changed
  local old = {} -- old[tile][face] = { blocks }
  if changed then
    for _, b in ipairs(opts.previous.blocks) do
      old[b.tile] = old[b.tile] or {}
      old[b.tile][b.face] = old[b.tile][b.face] or {}
      table.insert(old[b.tile][b.face], b)
    end
  end
  local half = cfg.scale / 2
  local merge = cfg.connect.merge_distance
  local blocks = {}           -- new blocks, in id order
  local redo = {}             -- tiles whose weights must be recomputed
  local old_to_new = {}       -- old id -> new id (blocks kept from the previous graph)
  for t = 0, ntiles - 1 do
    local i, j, k = M.tile_coords(grid, t)
    local tmin, tmax = M.tile_bounds(grid, t)
    for face = 0, 5 do
      local nb = neighbour_tile(grid, i, j, k, face)
      if nb then
        local affected = not changed or changed[t] or changed[nb]
        if affected then
          redo[t] = true
          local axis = face // 2 + 1
          local plane = face % 2 == 1 and tmax[axis] or tmin[axis]
          for _, region in ipairs(face_regions(tree, i, j, k, face)) do
            local probe = cell_point(region[1], face, plane, half)
            if clone:locate(probe) == "blocked" then
              for _, b in ipairs(region_blocks(region, face, plane, half, merge)) do
                b.id = #blocks + 1
                b.tile = t
                b.face = face
                blocks[#blocks + 1] = b
              end
            end
          end
        else
          for _, ob in ipairs(old[t] and old[t][face] or {}) do
            local b = { id = #blocks + 1, tile = t, face = face, center = ob.center, points = ob.points }
            old_to_new[ob.id] = b.id
            blocks[#blocks + 1] = b
          end
        end
      end
    end
  end
  clone:close()
  summary.blocks = #blocks
  -- 5. links: each block's outside points fall in cells of the neighbour's blocks
  local block_of_cell = {} -- [tile index][code] = block id
  local points = 0
  for _, b in ipairs(blocks) do
    block_of_cell[b.tile] = block_of_cell[b.tile] or {}
    for _, p in ipairs(b.points) do
      points = points + 1
      local st, cell = tree:locate(p.inside)
      if st == "free" then block_of_cell[b.tile][cell.code] = b.id end
    end
  end
  summary.points = points
  local links = {}
  for _, b in ipairs(blocks) do
    local seen = {}
    for _, p in ipairs(b.points) do
      local st, cell = tree:locate(p.outside)
      if st == "free" then
        local nt = M.tile_index(grid, cell.tile[1], cell.tile[2], cell.tile[3])
        local other = block_of_cell[nt] and block_of_cell[nt][cell.code]
        if other and other ~= b.id then
          local cost = dist(p.inside, p.outside)
          if not seen[other] then
            seen[other] = #links + 1
            links[#links + 1] = { a = b.id, b = other, cost = cost }
          elseif cost < links[seen[other]].cost then
            links[seen[other]].cost = cost
          end
        end
      end
    end
  end
  summary.links = #links
  -- 6. weights inside each tile
  local by_tile = {}
  for _, b in ipairs(blocks) do
    by_tile[b.tile] = by_tile[b.tile] or {}
    table.insert(by_tile[b.tile], b)
  end
  local weights = {}
  local old_weights = {}
  if changed then
    for _, w in ipairs(opts.previous.weights) do
      old_weights[w.tile] = old_weights[w.tile] or {}
      table.insert(old_weights[w.tile], w)
    end
  end
  local path_mode = cfg.connect.weights == "path"
  for t = 0, ntiles - 1 do
    local list = by_tile[t]
    if redo[t] or not changed then
      if list and #list > 1 then
        local q, one
        if path_mode then
          local i, j, k = M.tile_coords(grid, t)
          one = Tree.new { tiles = { 1, 1, 1 }, depth = cfg.depth, scale = cfg.scale, radius = cfg.radius,
            origin = M.tile_min(grid, i, j, k) }
          assert(one:decode_tile(0, 0, 0, blobs[t]))
          q = Query.new(one)
        end
        for x = 1, #list - 1 do
          for y = x + 1, #list do
            local a, b = list[x], list[y]
            local cost
            if q then
              local path, info = q:find(a.center, b.center)
              if path and info.status == "found" then cost = info.length end
            else
              cost = dist(a.center, b.center)
            end
            if cost then weights[#weights + 1] = { tile = t, a = a.id, b = b.id, cost = cost } end
          end
        end
        if one then one:close() end
      end
    else
      for _, w in ipairs(old_weights[t] or {}) do
        local a, b = old_to_new[w.a], old_to_new[w.b]
        if a and b then weights[#weights + 1] = { tile = t, a = a, b = b, cost = w.cost } end
      end
    end
    report(("graph tile %d"):format(t))
  end
  summary.weights = #weights
  -- 7. door links
  local doors = {}
  local wq
  for _, h in ipairs(cfg.holes) do
    local tiles = M.hole_tiles(grid, h)
    local recompute = not changed or (opts.holes and opts.holes[h.name])
    for _, t in ipairs(tiles) do
      if redo[t] then recompute = true end
    end
    if not recompute then
      -- the old links stay valid when the hole and the blocks of its tiles are unchanged
      local olds = {}
      for _, d in ipairs(opts.previous.doors) do
        if d.hole == h.name and old_to_new[d.block] then olds[#olds + 1] = d end
      end
      if #olds == 0 then recompute = true end
      for _, d in ipairs(olds) do
        doors[#doors + 1] = { hole = h.name, door = d.door, block = old_to_new[d.block], cost = d.cost }
      end
    end
    if recompute then
      for j, d in ipairs(h.doors) do
        for _, t in ipairs(tiles) do
          for _, b in ipairs(by_tile[t] or {}) do
            local cost
            if path_mode then
              wq = wq or Query.new(tree)
              local path, info = wq:find(d.outside, b.center)
              if path and info.status == "found" then cost = info.length end
            else
              cost = dist(d.outside, b.center)
            end
            if cost then doors[#doors + 1] = { hole = h.name, door = j, block = b.id, cost = cost } end
          end
        end
      end
    end
  end
  summary.door_links = #doors
  tree:close()
  -- 8. graph, then the manifest last
  local g = { blocks = blocks, links = links, weights = weights, doors = doors }
  local gtext = pack.graph_text(g)
  local ok, err = pack.write_file(pack.graph_path(dir), gtext)
  if not ok then return nil, err end
  local mtext = pack.manifest_text {
    scale = cfg.scale, depth = cfg.depth, origin = grid.origin, tiles = grid.tiles, radius = cfg.radius,
    holes = manifest_holes(cfg),
  }
  ok, err = pack.write_file(pack.manifest_path(dir), mtext)
  if not ok then return nil, err end
  summary.bytes = summary.bytes + #gtext + #mtext
  summary.holes = #cfg.holes
  summary.link_seconds = clock() - t0
  return summary
end

local function reporter(cfg, total)
  return progress.new { callback = cfg.progress, total = total, label = "steps" }
end

--- The link step alone: reads OUTPUT/tiles/*.tile, bakes the holes, writes graph and manifest.
-- Returns a summary or nil, err.
function M.link(config)
  local cfg = M.check(config)
  local ok, err = ensure_dirs(cfg.output)
  if not ok then return nil, err end
  local p = reporter(cfg, cfg.grid.count + #cfg.holes)
  local done = 0
  local s, lerr = link(cfg, { dir = cfg.output, report = function(what) done = done + 1; p:update(done, what) end })
  p:finish()
  return s, lerr
end

--- The whole bake: every tile, then the link step. Returns a summary
-- { tiles, nodes, bytes, blocks, points, links, weights, door_links, holes, seconds } or nil, err.
function M.run(config)
  local t0 = clock()
  local cfg = M.check(config)
  local geo, err = M.collect(cfg)
  if not geo then return nil, err end
  local ok, derr = ensure_dirs(cfg.output)
  if not ok then return nil, derr end
  local n = cfg.grid.count
  local p = reporter(cfg, 2 * n + #cfg.holes)
  local list = {}
  for t = 0, n - 1 do list[#list + 1] = t end
  local _, terr = bake_tiles(cfg, geo, cfg.output, list, function(done, what) p:update(done, what) end)
  if terr then
    p:finish()
    return nil, terr
  end
  local done = n
  local s, lerr = link(cfg, { dir = cfg.output, geo = geo,
    report = function(what) done = done + 1; p:update(done, what) end })
  p:finish()
  if not s then return nil, lerr end
  s.seconds = clock() - t0
  return s
end

--- Re-bakes the tiles overlapping `region` ({ min = {..}, max = {..} }, grown by the radius and half a
-- leaf) from `config` into the pack at `dir` (config.output is not used): rewrites those tile files
-- only, re-bakes the holes whose bounds overlap the region (or that the pack lacks), and recomputes
-- the graph for the faces of those tiles (regions, culling, blocks), the weights of those tiles and
-- their neighbours, all links, and the door links of holes whose tiles changed; the rest of the graph
-- is carried over. The config must give the pack's grid. Returns a summary or nil, err.
function M.rebake(dir, region, config)
  if type(dir) ~= "string" then error("octonav.bake.rebake: dir must be a string", 2) end
  local cfg = M.check(config)
  local rmin, rmax = check_bounds(region, "region", false)
  local grid = cfg.grid
  local manifest, merr = pack.read_manifest(dir)
  if not manifest then return nil, merr end
  local function same(a, b) return a[1] == b[1] and a[2] == b[2] and a[3] == b[3] end
  if manifest.scale ~= cfg.scale or manifest.depth ~= cfg.depth or manifest.radius ~= cfg.radius
    or not same(manifest.origin, grid.origin) or not same(manifest.tiles, grid.tiles) then
    error("octonav.bake.rebake: the config's grid (scale, depth, radius, range) differs from the pack's", 2)
  end
  local previous, gerr = pack.read_graph(dir, manifest)
  if not previous then return nil, gerr end
  local geo, err = M.collect(cfg)
  if not geo then return nil, err end
  local lo, hi = grow(rmin, rmax, margin(cfg))
  local list = M.tiles_in_box(grid, lo, hi, false)
  local changed = {}
  for _, t in ipairs(list) do changed[t] = true end
  local t0 = clock()
  local p = reporter(cfg, #list + grid.count + #cfg.holes)
  local _, terr = bake_tiles(cfg, geo, dir, list, function(done, what) p:update(done, what) end)
  if terr then
    p:finish()
    return nil, terr
  end
  -- holes: re-bake those overlapping the region, new or changed ones, and those whose file is missing
  local function hole_text(h)
    return pack.manifest_text { scale = 1, depth = 1, origin = { 0, 0, 0 }, tiles = { 1, 1, 1 }, radius = 0, holes = { h } }
  end
  local old_holes = {}
  for _, h in ipairs(manifest.holes) do old_holes[h.name] = hole_text(h) end
  local new_holes = manifest_holes(cfg)
  local holes = {}
  for n, h in ipairs(cfg.holes) do
    local hl, hh = grow(h.min, h.max, margin(cfg, h.scale))
    if overlaps(hl, hh, rmin, rmax) or old_holes[h.name] ~= hole_text(new_holes[n])
      or file_size(pack.hole_path(dir, h.name)) == 0 then
      holes[h.name] = true
    end
  end
  local done = #list
  local s, lerr = link(cfg, { dir = dir, geo = geo, changed = changed, previous = previous, holes = holes,
    report = function(what) done = done + 1; p:update(done, what) end })
  p:finish()
  if not s then return nil, lerr end
  s.rebaked = list
  s.seconds = clock() - t0
  return s
end

setmetatable(M, { __call = function(_, config) return M.run(config) end })

return M
