--- octonav.bake.holes: the hole stage. Each hole gets its own tree (its scale, origin at its min
-- corner, depth and tile counts fitted to its bounds) with the geometry overlapping its bounds
-- (heightfields only for kind = "over_terrain": "under_terrain" holes are made of meshes and boxes),
-- everything of that tree outside the bounds blocked, each door's optional `box` (the doorway)
-- blocked, then the free space outside the doors sealed with tree:fill from each door's outside point.
--
--   holes.params(hole) -> { depth, origin, tiles, scale }   the hole tree's parameters
--   holes.bake(cfg, geo, hole, dir) -> tree | nil, err       bakes and saves DIR/holes/NAME.tree
--   holes.manifest_lines(cfg)                                the manifest's hole entries
local core = require "octonav.core"
local pack = require "octonav.pack"
local geometry = require "octonav.bake.geometry"

local M = {}

local grow, margin, insert, select_geo = geometry.grow, geometry.margin, geometry.insert, geometry.select

--- A hole's tree parameters: origin at its min corner, its scale, the smallest depth (1..9) whose
-- tile holds the largest extent (9 when none does), and enough tiles to cover the bounds.
function M.params(hole)
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

--- Bakes one hole's tree (see the module comment) and saves it to DIR/holes/NAME.tree.
-- Returns the tree (open; the caller closes it) or nil, err.
function M.bake(cfg, geo, h, dir)
  local p = M.params(h)
  local r = cfg.radius
  local tree = core.tree.new { tiles = p.tiles, depth = p.depth, scale = h.scale, origin = p.origin, radius = r }
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

function M.manifest_lines(cfg)
  local out = {}
  for n, h in ipairs(cfg.holes) do
    local p = M.params(h)
    out[n] = { name = h.name, kind = h.kind, min = h.min, max = h.max, scale = h.scale, depth = p.depth,
      origin = p.origin, tiles = p.tiles, doors = h.doors }
  end
  return out
end


return M
