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
local onetree = require "octonav.onetree"

local M = {}

-- Checks agent n's tile graphs and hole files (under pack.agent_dir) into its summary entry.
local function check_agent(cfg, dir, n, report)
  local grid, a = cfg.grid, cfg.agents[n]
  local adir, hdir = pack.agent_dir(dir, n, a.name), nil -- its graphs' directory, its holes'
  if cfg.one_tree then -- (octonav.onetree: the holes are the one tree's, counted with the first agent)
    adir, hdir = onetree.graph_dir(dir, cfg.radius, a), dir
  end
  local e = { name = a.name, radius = a.radius, graph_bytes = 0, portals = 0, edges = 0, hole_bytes = 0 }
  local suffix = #cfg.agents > 1 and (" (%s)"):format(a.name) or ""
  for t = 0, grid.count - 1 do
    local i, j, k = tilegrid.coords(grid, t)
    local blob, err = pack.read_graph(adir, i, j, k)
    if not blob then return nil, err .. (" (bake the tile: --tile %d,%d,%d)"):format(i, j, k) end
    local info, ierr = core.route.info(blob)
    if not info then return nil, ("%s: %s"):format(pack.graph_path(adir, i, j, k), ierr) end
    if info.depth ~= cfg.depth then
      return nil, ("%s: built for tiles of depth %d, the config's is %d"):format(pack.graph_path(adir, i, j, k),
        info.depth, cfg.depth)
    end
    e.graph_bytes, e.portals, e.edges = e.graph_bytes + #blob, e.portals + info.portals, e.edges + info.edges
    report("graph tile " .. t .. suffix)
  end
  for _, h in ipairs(cfg.holes) do
    local size = util.file_size(pack.hole_path(hdir or adir, h.name))
    if not size or size == 0 then
      return nil, ("%s: missing (bake the hole: --hole %s)"):format(pack.hole_path(hdir or adir, h.name), h.name)
    end
    if not hdir or n == 1 then e.hole_bytes = e.hole_bytes + size end
  end
  return e
end

--- The manifest of a checked config (its grid, agents and holes).
function M.manifest(cfg)
  return { scale = cfg.scale, depth = cfg.depth, origin = cfg.grid.origin, tiles = cfg.grid.tiles,
    radius = cfg.radius, agents = cfg.agents, agents_listed = cfg.agents_listed, one_tree = cfg.one_tree,
    holes = holes.manifest_lines(cfg) }
end

--- Checks every tile graph and hole file of the pack at opts.dir against cfg (every agent's), writes
-- the manifest. opts.report(what) is called after each tile graph. Returns { tiles, graph_bytes,
-- portals, edges, holes, hole_bytes, link_seconds, agents = { { name, radius, graph_bytes, portals,
-- edges, hole_bytes, link_seconds }, ... } } (the totals over the agents) or nil, err (a missing or
-- bad file, naming what bakes it).
function M.run(cfg, opts)
  local t0 = core.clock()
  local dir = opts.dir
  local report = opts.report or function() end
  local s = { tiles = cfg.grid.count, graph_bytes = 0, portals = 0, edges = 0, holes = #cfg.holes, hole_bytes = 0,
    agents = {} }
  for n in ipairs(cfg.agents) do
    local ta = core.clock()
    local e, err = check_agent(cfg, dir, n, report)
    if not e then return nil, err end
    e.link_seconds = core.clock() - ta
    s.agents[n] = e
    for _, key in ipairs { "graph_bytes", "portals", "edges", "hole_bytes" } do s[key] = s[key] + e[key] end
  end
  local ok, err = pack.write_file(pack.manifest_path(dir), pack.manifest_text(M.manifest(cfg)))
  if not ok then return nil, err end
  s.link_seconds = core.clock() - t0
  return s
end

return M
