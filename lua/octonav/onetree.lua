--- octonav.onetree: the one-tree pack (pack version 3; issue 33, "one tree for every agent size").
--
-- A pack of version 2 bakes a whole tree per agent (its geometry grown by the agent's radius): tiles,
-- graphs and holes under pack.agent_dir, each agent loaded, held and streamed on its own. A one-tree
-- pack (bake config `one_tree = true`) holds ONE tree, baked for the tree radius (the smallest agent
-- radius, usually 0), and a tile graph per agent:
--
--   DIR/manifest.txt               "octonav-pack 3", the `radius` line is the tree radius, then one
--                                  `agent NAME RADIUS` line per agent (always written)
--   DIR/tiles/I_J_K.tile           the tree's tiles (as in version 2)
--   DIR/holes/NAME.tree            the holes' trees, baked for the tree radius
--   DIR/tiles/I_J_K.graph          the tile graphs of the agents whose radius is the tree radius
--   DIR/agents/NAME/tiles/I_J_K.graph   every other agent's tile graphs: portals and weights of the
--                                  tile baked for that radius (a temporary tree, dropped at once),
--                                  tagged with the shared tile's identity (pack().graph_tag of its blob)
--
-- So a world loads the tree once; each agent is its graph over that tree, and an agent's searches keep
-- its radius less the tree's (search.radius, tree:visible_radius: docs/radius.md). A graph is ~1 % of
-- its tile's bytes, so several radii cost little more than one. Version 2 packs still load as before
-- (octonav.world_agents); a build that reads version 2 only refuses a version 3 pack by its version.
-- Everything that differs between the two layouts is decided here:
--
--   onetree.VERSION                          3
--   onetree.tree_radius(agents)              the smallest agent radius (the tree's)
--   onetree.graph_dir(dir, tree_radius, a)   where agent a's ({ name, radius }) tile graphs are
--   onetree.dirs(cfg, dir)                   makes the pack's directories -> true | nil, err
--   onetree.bake(cfg, geo, dir, list, want, report, bake_holes)   the tiles in `list` (tree and every
--                                            agent's graph) and the holes `want` holds (all when nil,
--                                            none when false) -> { bytes, agents = {...} } | nil, err
-- (octonav.pack reads this module's VERSION: the modules below are required when first used)
local function pack() return require "octonav.pack" end
local function tiles() return require "octonav.bake.tiles" end

local M = {}

M.VERSION = 3

function M.tree_radius(agents)
  local r = math.huge
  for _, a in ipairs(agents) do
    if a.radius < r then r = a.radius end
  end
  return r
end

function M.graph_dir(dir, tree_radius, a)
  if a.radius == tree_radius then return dir end
  return dir .. "/agents/" .. a.name
end

function M.dirs(cfg, dir)
  local ok, err = tiles().ensure_dirs(dir)
  if not ok then return nil, err end
  local tr = M.tree_radius(cfg.agents)
  for _, a in ipairs(cfg.agents) do
    if a.radius ~= tr then
      ok, err = pack().mkdir(M.graph_dir(dir, tr, a) .. "/tiles")
      if not ok then return nil, err end
    end
  end
  return true
end

-- cfg's copy for radius r writing under out
local function cfg_for(cfg, r, out)
  local c = {}
  for k, v in pairs(cfg) do c[k] = v end
  c.radius, c.output = r, out
  return c
end

function M.bake(cfg, geo, dir, list, want, report, bake_holes)
  local clock = require("octonav.core").clock
  local t0 = clock()
  local tr = M.tree_radius(cfg.agents)
  local tc = cfg_for(cfg, tr, dir)
  local several = #cfg.agents > 1
  local out = { bytes = 0, agents = {} }
  local bytes, sizes = 0, { tile_bytes = 0, graph_bytes = 0 }
  if #list > 0 then
    bytes, sizes = tiles().bake(tc, geo, dir, list, report and function(_, what) report(what) end)
    if not bytes then return nil, sizes end
  end
  local hb = 0
  if want ~= false then
    local herr
    hb, herr = bake_holes(tc, geo, dir, want, report)
    if not hb then return nil, herr end
  end
  out.bytes = bytes + hb
  local tags -- tile -> the shared tile's identity, read back once
  local first = true
  for n, a in ipairs(cfg.agents) do
    local ta = clock()
    local e = { name = a.name, radius = a.radius, tile_bytes = 0, graph_bytes = 0, hole_bytes = 0 }
    if a.radius == tr then
      if first then -- the tree's files are counted once, with the first agent of the tree radius
        e.tile_bytes, e.hole_bytes, first = sizes.tile_bytes, hb, false
      end
      e.graph_bytes = sizes.graph_bytes
      e.seconds = ta - t0
    elseif #list > 0 then
      if not tags then
        tags = {}
        for _, t in ipairs(list) do
          local blob, err = pack().read_tile(dir, require("octonav.tilegrid").coords(cfg.grid, t))
          if not blob then return nil, err end
          tags[t] = pack().graph_tag(blob)
        end
      end
      local sfx = several and (" (%s)"):format(a.name) or ""
      local gb, gs = tiles().bake(cfg_for(cfg, a.radius, nil), geo, M.graph_dir(dir, tr, a), list,
        report and function(_, what) report(what .. sfx) end, tags)
      if not gb then return nil, gs end
      out.bytes = out.bytes + gb
      e.graph_bytes = gs.graph_bytes
      e.seconds = clock() - ta
    else
      e.seconds = 0
    end
    out.agents[n] = e
  end
  return out
end

return M
