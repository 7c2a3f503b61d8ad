--- octonav.tilegrid: the arithmetic of a world's tile grid, shared by the bake, the world, the
-- planner, the navigator and the streamer.
--
-- A grid is a table { origin = {x, y, z}, tiles = {nx, ny, nz}, tile_size = T, leaves = 2^depth,
-- scale, depth, radius, count = nx*ny*nz }; a world table has the fields these functions read
-- (origin, tiles, tile_size), so it can be passed in place of its grid. Tiles are numbered
-- i + nx*(j + ny*k) ("tile index"), 0-based.
--
--   tilegrid.new(origin, tiles, depth, scale, radius)     a grid from its parameters (a manifest's)
--   tilegrid.from_range(min, max, depth, scale, radius)   the grid covering a box (the bake config's
--                                                          range), or nil, reason
--   tilegrid.index(g, i, j, k), tilegrid.coords(g, t) -> i, j, k, tilegrid.ijk(g, t) -> {i, j, k}
--   tilegrid.min(g, i, j, k), tilegrid.bounds(g, t) -> min, max
--   tilegrid.tile_of(g, p)              tile index of a world point, or nil outside the grid
--   tilegrid.in_box(g, lo, hi, strict)  sorted tile indices overlapping a box
--   tilegrid.hole_tiles(g, hole)        the tiles a hole is registered with
local compat = require "octonav.compat"
compat.frame_module() -- (LuaJIT: run interpreted; compat.lua)
local M = {}

local floor, ceil, max = math.floor, math.ceil, math.max

M.MAX_TILES_PER_AXIS = 4096

function M.new(origin, tiles, depth, scale, radius)
  local N = compat.pow2(depth)
  return {
    origin = origin, tiles = tiles, tile_size = N * scale, leaves = N, scale = scale, depth = depth,
    radius = radius, count = tiles[1] * tiles[2] * tiles[3],
  }
end

--- tilegrid.check(origin, tiles, scale) -> nil | reason: what the loader (octonav.pack's manifest
-- checks) refuses of a grid: a scale outside [pack.MIN_SCALE, pack.MAX_SCALE], an origin coordinate
-- beyond pack.MAX_COORD, more than MAX_TILES_PER_AXIS tiles an axis or pack.MAX_TILES in all.
function M.check(origin, tiles, scale)
  local pack = require "octonav.pack"
  if not (scale >= pack.MIN_SCALE and scale <= pack.MAX_SCALE) then
    return ("scale must be in [%g, %g]"):format(pack.MIN_SCALE, pack.MAX_SCALE)
  end
  for a = 1, 3 do
    if not (tiles[a] <= M.MAX_TILES_PER_AXIS) then
      return ("too many tiles along one axis (at most %d)"):format(M.MAX_TILES_PER_AXIS)
    end
    if not (math.abs(origin[a]) <= pack.MAX_COORD) then
      return ("origin must be within +-%g"):format(pack.MAX_COORD)
    end
  end
  local count = tiles[1] * tiles[2] * tiles[3]
  if count > pack.MAX_TILES then
    return ("%d x %d x %d tiles, more than %d"):format(tiles[1], tiles[2], tiles[3], pack.MAX_TILES)
  end
end

--- The grid over the box [mn, mx]: T = 2^depth * scale, n = ceil(extent / T) (at least 1) per axis,
-- the box grown to whole tiles keeping its top face and its min x and min z. nil, reason for a grid
-- the loader would refuse (tilegrid.check), checked before the counts are made integers.
function M.from_range(mn, mx, depth, scale, radius)
  local T = compat.pow2(depth) * scale
  local n = {}
  for a = 1, 3 do n[a] = max(1, ceil((mx[a] - mn[a]) / T)) end
  local origin = { mn[1], mx[2] - n[2] * T, mn[3] }
  local why = M.check(origin, n, scale)
  if why then return nil, why end
  for a = 1, 3 do n[a] = compat.tointeger(n[a]) end
  return M.new(origin, n, depth, scale, radius)
end

function M.index(g, i, j, k)
  return i + g.tiles[1] * (j + g.tiles[2] * k)
end

function M.coords(g, t)
  local nx, ny = g.tiles[1], g.tiles[2]
  return t % nx, math.floor(t / nx) % ny, math.floor(t / (nx * ny))
end

function M.ijk(g, t)
  return { M.coords(g, t) }
end

function M.min(g, i, j, k)
  local T, o = g.tile_size, g.origin
  return { o[1] + i * T, o[2] + j * T, o[3] + k * T }
end

function M.bounds(g, t)
  local mn = M.min(g, M.coords(g, t))
  local T = g.tile_size
  return mn, { mn[1] + T, mn[2] + T, mn[3] + T }
end

--- Tile index of a world point, or nil outside the grid (points on the grid's max faces count).
function M.tile_of(g, p)
  -- (three locals, no table: the navigator asks this every plan and every lock)
  local o, n, T = g.origin, g.tiles, g.tile_size
  local i, j, k
  for a = 1, 3 do
    local v = (p[a] - o[a]) / T
    local na = n[a]
    if not (v >= 0 and v <= na) then return nil end
    local f = floor(v)
    if f >= na then f = na - 1 end
    if a == 1 then i = f elseif a == 2 then j = f else k = f end
  end
  return i + n[1] * (j + n[2] * k)
end

--- Tiles overlapping the box [lo, hi] (closed), as a sorted array of indices. strict: a box ending
-- exactly on a tile border does not overlap the next tile.
function M.in_box(g, lo, hi, strict)
  local r = {}
  for a = 1, 3 do
    local T, o, n = g.tile_size, g.origin[a], g.tiles[a]
    local a0 = floor((lo[a] - o) / T)
    local a1 = floor((hi[a] - o) / T)
    if strict and a1 > a0 and o + a1 * T >= hi[a] then a1 = a1 - 1 end
    if a0 < 0 then a0 = 0 end
    if a1 > n - 1 then a1 = n - 1 end
    if a0 > a1 or hi[a] < o or lo[a] > o + n * T then return {} end
    r[a] = { a0, a1 }
  end
  local out = {}
  for k = r[3][1], r[3][2] do
    for j = r[2][1], r[2][2] do
      for i = r[1][1], r[1][2] do out[#out + 1] = M.index(g, i, j, k) end
    end
  end
  table.sort(out)
  return out
end

--- Tiles a hole is registered with: those its bounds overlap with positive volume, and those
-- holding its doors' outside points. Sorted.
function M.hole_tiles(g, hole)
  local set, out = {}, {}
  for _, t in ipairs(M.in_box(g, hole.min, hole.max, true)) do set[t] = true end
  for _, d in ipairs(hole.doors) do
    local t = M.tile_of(g, d.outside)
    if t then set[t] = true end
  end
  for t in pairs(set) do out[#out + 1] = t end
  table.sort(out)
  return out
end

return M
