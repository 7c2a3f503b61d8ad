--- octonav.bake.geometry: the config's geometry gathered once, and the part of it one region needs.
--
--   geometry.read_obj(path, V, I) -> ntris | nil, err   append an OBJ's triangles to flat arrays
--   geometry.collect(cfg) -> geo | nil, err             boxes, one triangle soup, heightfields
--   geometry.bucket_triangles(geo, grid, m)             triangle numbers per tile (bounds grown by m)
--   geometry.select(geo, lo, hi, tris, terrain)         the geometry overlapping [lo, hi]
--   geometry.insert(tree, sub)                          add selected geometry to a tree
--   geometry.margin(cfg [, scale]), geometry.grow(lo, hi, m), geometry.overlaps(alo, ahi, blo, bhi)
local config = require "octonav.bake.config"
local tilegrid = require "octonav.tilegrid"

local check_bounds, check_triangles, check_heightfield = config.check_bounds, config.check_triangles,
  config.check_heightfield

local M = {}

--- Reads a Wavefront OBJ with the core's reader (octonav.core.read_obj) into the flat arrays V and I
-- (appending, indices 1-based). Returns ntris or nil, "PATH:LINE: reason".
function M.read_obj(path, V, I)
  local v, idx = require("octonav.core").read_obj(path)
  if not v then return nil, idx end
  local base = math.floor(#V / 3)
  for n = 1, #v do V[#V + 1] = v[n] end
  for n = 1, #idx do I[#I + 1] = base + idx[n] end
  return math.floor(#idx / 3)
end

--- All the geometry of a checked config, gathered once: boxes, one triangle soup, heightfields.
-- Runs the config's fn entries and reads its obj files. Returns geo or nil, err.
function M.collect(cfg)
  local geo = { boxes = {}, V = {}, I = {}, hfs = {} }
  local function add_tris(v, idx)
    local base = math.floor(#geo.V / 3)
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
  if hf.top and lo[2] > hf.top then return nil end
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
        m = math.floor(#sV / 3) + 1
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
    for t = 1, math.floor(#I / 3) do
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
  for _, hf in ipairs(sub.hfs) do
    tree:add_heightfield { origin = hf.origin, cell = hf.cell, nx = hf.nx, nz = hf.nz, heights = hf.heights }
  end
end

-- margin around a tile: the radius and half a leaf (so rounding can never drop a touching triangle)
local function margin(cfg, scale) return cfg.radius + 0.5 * (scale or cfg.scale) end

-- Triangles bucketed by the tiles their grown bounds overlap: bucket[t] = { triangle numbers }.
local function bucket_triangles(geo, grid, m)
  local buckets = {}
  local V, I = geo.V, geo.I
  for t = 1, math.floor(#I / 3) do
    local lo, hi = tri_bounds(V, I, t)
    lo, hi = grow(lo, hi, m)
    for _, ti in ipairs(tilegrid.in_box(grid, lo, hi, false)) do
      local b = buckets[ti]
      if not b then b = {}; buckets[ti] = b end
      b[#b + 1] = t
    end
  end
  return buckets
end

M.overlaps, M.grow, M.select, M.insert, M.margin, M.bucket_triangles =
  overlaps, grow, select_geo, insert, margin, bucket_triangles

return M
