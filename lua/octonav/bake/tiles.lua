--- octonav.bake.tiles: the tile stage. Each tile is baked on its own into a 1x1x1 tree whose origin
-- is the tile's world corner (same depth, scale and radius), from only the geometry that overlaps the
-- tile grown by the radius and half a leaf; its blob equals that tile of one tree over the whole grid.
--
--   tiles.check_args(grid, i, j, k)         raises for a tile index outside the grid (for bake.tile)
--   tiles.ensure_dirs(dir)                  OUTPUT/tiles and OUTPUT/holes -> true | nil, err
--   tiles.one(cfg, geo, i, j, k) -> blob    one tile, its geometry selected by testing every triangle
--   tiles.bake(cfg, geo, dir, list, report) the tiles in `list` (indices), triangles bucketed once;
--                                           writes their files -> bytes | nil, err
local core = require "octonav.core"
local pack = require "octonav.pack"
local tilegrid = require "octonav.tilegrid"
local geometry = require "octonav.bake.geometry"

local M = {}

-- One tile's blob from its geometry.
local function tile_blob(cfg, sub, i, j, k)
  local tree = core.tree.new { tiles = { 1, 1, 1 }, depth = cfg.depth, scale = cfg.scale, radius = cfg.radius,
    origin = tilegrid.min(cfg.grid, i, j, k) }
  geometry.insert(tree, sub)
  local blob = tree:encode_tile(0, 0, 0)
  tree:close()
  return blob
end

function M.check_args(grid, i, j, k)
  for a, v in ipairs { i, j, k } do
    if math.type(v) ~= "integer" or v < 0 or v >= grid.tiles[a] then
      error(("octonav.bake.tile: tile index %s out of range (0..%d on axis %d)"):format(tostring(v), grid.tiles[a] - 1, a), 3)
    end
  end
end

function M.ensure_dirs(dir)
  local ok, err = pack.mkdir(dir .. "/tiles")
  if not ok then return nil, err end
  ok, err = pack.mkdir(dir .. "/holes")
  if not ok then return nil, err end
  return true
end

function M.one(cfg, geo, i, j, k)
  local lo, hi = tilegrid.bounds(cfg.grid, tilegrid.index(cfg.grid, i, j, k))
  lo, hi = geometry.grow(lo, hi, geometry.margin(cfg))
  return tile_blob(cfg, geometry.select(geo, lo, hi, nil, true), i, j, k)
end

function M.bake(cfg, geo, dir, list, report)
  local grid = cfg.grid
  local m = geometry.margin(cfg)
  local buckets = geometry.bucket_triangles(geo, grid, m)
  local bytes = 0
  for n, t in ipairs(list) do
    local i, j, k = tilegrid.coords(grid, t)
    local lo, hi = tilegrid.bounds(grid, t)
    lo, hi = geometry.grow(lo, hi, m)
    local blob = tile_blob(cfg, geometry.select(geo, lo, hi, buckets[t] or {}, true), i, j, k)
    local ok, err = pack.write_tile(dir, i, j, k, blob)
    if not ok then return nil, err end
    bytes = bytes + #blob
    if report then report(n, ("tile %d,%d,%d"):format(i, j, k)) end
  end
  return bytes
end

return M
