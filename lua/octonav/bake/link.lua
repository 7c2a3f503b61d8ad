--- octonav.bake.link: the last step of a bake. It reads only what the tile jobs and hole jobs wrote
-- (each tile's graph file, decoded by octonav.core.route.info to check it; the hole files' presence)
-- and the config's holes and doors, never the geometry nor the tile files, then writes the manifest
-- last (a pack without a manifest is not a pack: a bake interrupted before this step cannot be
-- opened). The links between tiles are not baked: the world graph makes them when it adds a tile's
-- graph beside its neighbours' (docs/world.md, "World graph").
--
--   link.run(cfg, { dir, report }) -> summary | nil, err
local core = require "octonav.core"
local pack = require "octonav.pack"
local util = require "octonav.util"
local tilegrid = require "octonav.tilegrid"
local holes = require "octonav.bake.holes"

local M = {}

--- Checks every tile graph and hole file of the pack at opts.dir against cfg, writes the manifest.
-- opts.report(what) is called after each tile graph. Returns { tiles, graph_bytes, portals, edges,
-- holes, hole_bytes, link_seconds } or nil, err (a missing or bad file, naming what bakes it).
function M.run(cfg, opts)
  local t0 = core.clock()
  local grid, dir = cfg.grid, opts.dir
  local report = opts.report or function() end
  local s = { tiles = grid.count, graph_bytes = 0, portals = 0, edges = 0, holes = #cfg.holes, hole_bytes = 0 }
  for t = 0, grid.count - 1 do
    local i, j, k = tilegrid.coords(grid, t)
    local blob, err = pack.read_graph(dir, i, j, k)
    if not blob then return nil, err .. (" (bake the tile: --tile %d,%d,%d)"):format(i, j, k) end
    local info, ierr = core.route.info(blob)
    if not info then return nil, ("%s: %s"):format(pack.graph_path(dir, i, j, k), ierr) end
    if info.depth ~= cfg.depth then
      return nil, ("%s: built for tiles of depth %d, the config's is %d"):format(pack.graph_path(dir, i, j, k),
        info.depth, cfg.depth)
    end
    s.graph_bytes, s.portals, s.edges = s.graph_bytes + #blob, s.portals + info.portals, s.edges + info.edges
    report("graph tile " .. t)
  end
  for _, h in ipairs(cfg.holes) do
    local size = util.file_size(pack.hole_path(dir, h.name))
    if not size or size == 0 then
      return nil, ("%s: missing (bake the hole: --hole %s)"):format(pack.hole_path(dir, h.name), h.name)
    end
    s.hole_bytes = s.hole_bytes + size
  end
  local mtext = pack.manifest_text {
    scale = cfg.scale, depth = cfg.depth, origin = grid.origin, tiles = grid.tiles, radius = cfg.radius,
    holes = holes.manifest_lines(cfg),
  }
  local ok, err = pack.write_file(pack.manifest_path(dir), mtext)
  if not ok then return nil, err end
  s.link_seconds = core.clock() - t0
  return s
end

return M
