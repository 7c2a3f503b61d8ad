--- The bake: a config (docs/world.md, "Bake config") -> a nav pack directory.
--
--   local bake = require "octonav.bake"
--   bake(config)               -- or bake.run(config): every tile, then the link step -> summary
--   bake.tile(config, i, j, k) -- one tile -> OUTPUT/tiles/I_J_K.tile (parallel processes)
--   bake.job(config, n, m)     -- the tiles t with t % m == n (job n of m of a batch array)
--   bake.link(config)          -- holes, graph and manifest from the tile files already written
--   bake.grid(config)          -- the tile grid the config gives (origin, tiles, tile_size)
--   bake.rebake(dir, region, config) -- re-bake the tiles overlapping a box (world:rebake calls it)
--
-- The pipeline (the seed's "大世界地图的烘焙过程" and "洞的定义及其烘焙过程"), one module per stage:
--   octonav.bake.config    the config checked and normalised, the tile grid computed
--   octonav.bake.geometry  the geometry gathered once; the part one tile or hole overlaps
--   octonav.bake.tiles     each tile baked on its own into a tile file
--   octonav.bake.holes     each hole's own tree, sealed outside its doors
--   octonav.bake.link      from the tile files: top-reachable face regions -> connect blocks, links,
--                          weights, door links; the graph and the manifest written last
-- The grid arithmetic is octonav.tilegrid's (bake.tile_of and the other grid functions below are it).
--
-- Misuse (a bad config) raises an error naming the field; runtime failures (files) return nil, err.
local core = require "octonav.core"
local pack = require "octonav.pack"
local progress = require "octonav.progress"
local util = require "octonav.util"
local tilegrid = require "octonav.tilegrid"
local config_mod = require "octonav.bake.config"
local geometry = require "octonav.bake.geometry"
local tiles = require "octonav.bake.tiles"
local holes = require "octonav.bake.holes"
local link = require "octonav.bake.link"

local clock = core.clock

local M = {}

--- Validates a config and returns a normalised copy (defaults filled in, grid computed).
-- Raises "octonav.bake: FIELD: reason" on misuse.
M.check = config_mod.check

--- The grid of a config table (checked): { origin, tiles = {nx,ny,nz}, tile_size, count, ... }.
function M.grid(config)
  return M.check(config).grid
end

-- Grid arithmetic (octonav.tilegrid), kept under the bake's names.
M.tile_index, M.tile_coords, M.tile_min, M.tile_bounds = tilegrid.index, tilegrid.coords, tilegrid.min, tilegrid.bounds
M.tile_of, M.tiles_in_box, M.hole_tiles = tilegrid.tile_of, tilegrid.in_box, tilegrid.hole_tiles
M.hole_params = holes.params
M.read_obj, M.collect = geometry.read_obj, geometry.collect

-- The bake's progress: `tiles` tile steps ("tile I,J,K"), then the link step's holes ("hole NAME") and
-- graph tiles ("graph tile T"); each kind is a phase of its own for the time left (their steps cost
-- very different times).
local function reporter(cfg, ntiles)
  local phases = { tile = ntiles, hole = #cfg.holes, graph = cfg.grid.count }
  return progress.new { callback = cfg.progress, total = ntiles + #cfg.holes + cfg.grid.count, label = "steps",
    phases = phases }
end

--- Bakes one tile of the config and writes OUTPUT/tiles/I_J_K.tile. Returns true, bytes or nil, err.
function M.tile(config, i, j, k)
  local cfg = M.check(config)
  tiles.check_args(cfg.grid, i, j, k)
  local geo, err = geometry.collect(cfg)
  if not geo then return nil, err end
  local ok, derr = tiles.ensure_dirs(cfg.output)
  if not ok then return nil, derr end
  local blob = tiles.one(cfg, geo, i, j, k)
  local wok, werr = pack.write_tile(cfg.output, i, j, k, blob)
  if not wok then return nil, werr end
  return true, #blob
end

--- Job n of m (0 <= n < m): bakes the tiles whose linear index t has t % m == n, in one process with
-- the geometry gathered once (what `bin/octonav bake CONFIG --job N/M` runs: a batch array's job
-- index -> tiles). Each tile's file is the one bake.tile and bake.run write. Returns the number of
-- tiles and their bytes, or nil, err.
function M.job(config, n, m)
  local cfg = M.check(config)
  if math.type(n) ~= "integer" or math.type(m) ~= "integer" or m < 1 or n < 0 or n >= m then
    error("octonav.bake.job: n, m: integers with 0 <= n < m expected", 2)
  end
  local geo, err = geometry.collect(cfg)
  if not geo then return nil, err end
  local ok, derr = tiles.ensure_dirs(cfg.output)
  if not ok then return nil, derr end
  local list = {}
  for t = n, cfg.grid.count - 1, m do list[#list + 1] = t end
  local bytes, terr = tiles.bake(cfg, geo, cfg.output, list)
  if not bytes then return nil, terr end
  return #list, bytes
end

--- The link step alone: reads OUTPUT/tiles/*.tile, bakes the holes, writes graph and manifest.
-- Returns a summary or nil, err.
function M.link(config)
  local cfg = M.check(config)
  local ok, err = tiles.ensure_dirs(cfg.output)
  if not ok then return nil, err end
  local p = reporter(cfg, 0)
  local done = 0
  local s, lerr = link.run(cfg, { dir = cfg.output, report = function(what) done = done + 1; p:update(done, what) end })
  p:finish()
  return s, lerr
end

--- The whole bake: every tile, then the link step. Returns a summary
-- { tiles, nodes, bytes, blocks, points, links, weights, door_links, holes, seconds } or nil, err.
function M.run(config)
  local t0 = clock()
  local cfg = M.check(config)
  local geo, err = geometry.collect(cfg)
  if not geo then return nil, err end
  local ok, derr = tiles.ensure_dirs(cfg.output)
  if not ok then return nil, derr end
  local n = cfg.grid.count
  local p = reporter(cfg, n)
  local list = {}
  for t = 0, n - 1 do list[#list + 1] = t end
  local _, terr = tiles.bake(cfg, geo, cfg.output, list, function(done, what) p:update(done, what) end)
  if terr then
    p:finish()
    return nil, terr
  end
  local done = n
  local s, lerr = link.run(cfg, { dir = cfg.output, geo = geo,
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
  local rmin, rmax = config_mod.check_bounds(region, "region", false)
  local grid = cfg.grid
  local manifest, merr = pack.read_manifest(dir)
  if not manifest then return nil, merr end
  if manifest.scale ~= cfg.scale or manifest.depth ~= cfg.depth or manifest.radius ~= cfg.radius
    or not util.same3(manifest.origin, grid.origin) or not util.same3(manifest.tiles, grid.tiles) then
    error("octonav.bake.rebake: the config's grid (scale, depth, radius, range) differs from the pack's", 2)
  end
  local previous, gerr = pack.read_graph(dir, manifest)
  if not previous then return nil, gerr end
  local geo, err = geometry.collect(cfg)
  if not geo then return nil, err end
  local lo, hi = geometry.grow(rmin, rmax, geometry.margin(cfg))
  local list = tilegrid.in_box(grid, lo, hi, false)
  local changed = {}
  for _, t in ipairs(list) do changed[t] = true end
  local t0 = clock()
  local p = reporter(cfg, #list)
  local _, terr = tiles.bake(cfg, geo, dir, list, function(done, what) p:update(done, what) end)
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
  local new_holes = holes.manifest_lines(cfg)
  local rebake_holes = {}
  for n, h in ipairs(cfg.holes) do
    local hl, hh = geometry.grow(h.min, h.max, geometry.margin(cfg, h.scale))
    if geometry.overlaps(hl, hh, rmin, rmax) or old_holes[h.name] ~= hole_text(new_holes[n])
      or (util.file_size(pack.hole_path(dir, h.name)) or 0) == 0 then
      rebake_holes[h.name] = true
    end
  end
  local done = #list
  local s, lerr = link.run(cfg, { dir = dir, geo = geo, changed = changed, previous = previous, holes = rebake_holes,
    report = function(what) done = done + 1; p:update(done, what) end })
  p:finish()
  if not s then return nil, lerr end
  s.rebaked = list
  s.seconds = clock() - t0
  return s
end

setmetatable(M, { __call = function(_, config) return M.run(config) end })

return M
