--- octonav.bake.tiles: the tile stage. Each tile is baked on its own into a 1x1x1 tree whose origin
-- is the tile's world corner (same depth, scale and radius), from only the geometry that overlaps the
-- tile grown by the radius and half a leaf; its blob equals that tile of one tree over the whole grid.
-- Beside the tile file the job writes the tile's portal graph (octonav.core.route.build on that
-- one-tile tree, options from config.connect, tagged with the CRC-32 of the tile blob): the tile's
-- graph needs nothing from its neighbours, so every tile job is independent of the others.
--
--   tiles.check_args(grid, i, j, k)         raises for a tile index outside the grid (for bake.tile)
--   tiles.ensure_dirs(dir)                  OUTPUT/tiles and OUTPUT/holes -> true | nil, err
--   tiles.bake(cfg, geo, dir, list, report) the tiles in `list` (indices), triangles bucketed once;
--                                           writes their tile and graph files -> bytes (blobs and
--                                           graphs), { tile_bytes, graph_bytes } (the files' sizes) |
--                                           nil, err
local compat = require "octonav.compat"
local core = require "octonav.core"
local pack = require "octonav.pack"
local tilegrid = require "octonav.tilegrid"
local geometry = require "octonav.bake.geometry"

local M = {}

-- One tile's blob and graph blob from its geometry (the graph tagged with `tag`, default the blob's
-- identity: a one-tree pack's agent graph carries the shared tile's, octonav.onetree).
local function tile_blob(cfg, sub, i, j, k, tag)
  local tree = core.tree.new { tiles = { 1, 1, 1 }, depth = cfg.depth, scale = cfg.scale, radius = cfg.radius,
    origin = tilegrid.min(cfg.grid, i, j, k) }
  geometry.insert(tree, sub)
  local blob = tree:encode_tile(0, 0, 0)
  local graph, gerr = core.route.build(tree, 0, 0, 0, { bound = cfg.connect.bound, stretch = cfg.connect.stretch,
    tag = tag or pack.graph_tag(blob) })
  tree:close()
  if not graph then error(("octonav.bake: tile %d,%d,%d: its graph: %s"):format(i, j, k, tostring(gerr)), 0) end
  return blob, graph
end

-- Writes tile (i, j, k)'s two files. Returns bytes or nil, err. Each is written to a temporary and
-- renamed over its name (no reader sees a partial file) but not synced on its own: one fsync a file
-- (two a tile, a journal commit each) took more wall time than baking a small tile and does not run
-- in parallel (16x2x16, one process: 4.3 s with them, 1.1 s without, on this machine's disk at load
-- 4). A machine crash during or right after a bake may leave a tile or graph file short or empty: the
-- tile file's CRC-32 and the graph's checks refuse it when read (bake those tiles again); the
-- manifest, which the link step writes last, is synced.
local function write(dir, i, j, k, blob, graph)
  local ok, err = core.write_file(pack.tile_path(dir, i, j, k), pack.tile_file(i, j, k, blob), false)
  if ok then ok, err = core.write_file(pack.graph_path(dir, i, j, k), graph, false) end
  if not ok then return nil, err end
  return #blob + #graph
end
M.write = write

function M.check_args(grid, i, j, k)
  for a, v in ipairs { i, j, k } do
    if not compat.isinteger(v) or v < 0 or v >= grid.tiles[a] then
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

-- tiles.bake(cfg, geo, dir, list, report [, tags]): with `tags` (tile -> graph tag) only each tile's
-- graph file is written, tagged tags[t] (a one-tree pack's agent graphs: octonav.onetree).
function M.bake(cfg, geo, dir, list, report, tags)
  local grid = cfg.grid
  local m = geometry.margin(cfg)
  if #list * 4 < grid.count then
    -- a few tiles (a --tile job, a rebake): crop the geometry to their box first, so what follows
    -- costs what those tiles hold rather than what the world holds
    local blo, bhi = tilegrid.bounds(grid, list[1])
    for n = 2, #list do
      local lo, hi = tilegrid.bounds(grid, list[n])
      for a = 1, 3 do
        if lo[a] < blo[a] then blo[a] = lo[a] end
        if hi[a] > bhi[a] then bhi[a] = hi[a] end
      end
    end
    blo, bhi = geometry.grow(blo, bhi, m)
    geo = geometry.select(geo, blo, bhi, nil, true)
  end
  local buckets = geometry.bucket_triangles(geo, grid, m)
  local bytes, sizes = 0, { tile_bytes = 0, graph_bytes = 0 }
  for n, t in ipairs(list) do
    local i, j, k = tilegrid.coords(grid, t)
    local lo, hi = tilegrid.bounds(grid, t)
    lo, hi = geometry.grow(lo, hi, m)
    local blob, graph = tile_blob(cfg, geometry.select(geo, lo, hi, buckets[t] or {}, true), i, j, k, tags and tags[t])
    if tags then
      local ok, err = core.write_file(pack.graph_path(dir, i, j, k), graph, false)
      if not ok then return nil, err end
      bytes = bytes + #graph
    else
      local nb, err = write(dir, i, j, k, blob, graph)
      if not nb then return nil, err end
      bytes = bytes + nb
      sizes.tile_bytes = sizes.tile_bytes + pack.TILE_FILE_HEAD + #blob
    end
    sizes.graph_bytes = sizes.graph_bytes + #graph
    if report then report(n, ("tile %d,%d,%d"):format(i, j, k)) end
  end
  return bytes, sizes
end

return M
