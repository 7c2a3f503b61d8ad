--- octonav.bake.holes: the hole stage. Each hole gets its own tree (its scale, origin at its min
-- corner, depth and tile counts fitted to its bounds) with the geometry overlapping its bounds
-- (heightfields only for kind = "over_terrain": "under_terrain" holes are made of meshes and boxes),
-- everything of that tree outside the bounds blocked, each door's optional `box` (the doorway)
-- blocked, then the outside sealed (tree:fill blocks the free space connected to a point):
--
-- Sealing rule (watertight): every free cell on the faces of the hole's bounds is outside, except a
-- door's opening, and is filled; then each door's outside point is filled too (outside air enclosed
-- inside the bounds). A door's opening is its `box` (blocked, so it never gets filled through); for a
-- door without a box, the opening is where the bounds' face cuts its doorway: the free leaves of the
-- face's layer joined (within that layer) to the leaf where the segment from its inside to its
-- outside point leaves the bounds (none when the outside point is inside the bounds). A boxless
-- door whose doorway is not cut by a face, with outside air around it, leaks (world:validate
-- reports inside points the sealing reached, and pockets). The free cells on a face are found
-- by walking the leaf layer just inside it (the layer holding the max face, and the one before when
-- that face cuts a leaf, which the block beyond the bounds takes) row by row, skipping each free
-- cell's extent (a blocked leaf is one step), all before the first fill, then filled from: at most
-- one locate per leaf of the faces.
--
--   holes.params(hole) -> { depth, origin, tiles, scale }   the hole tree's parameters
--   holes.bake(cfg, geo, hole, dir) -> tree | nil, err       bakes and saves DIR/holes/NAME.tree
--   holes.manifest_lines(cfg)                                the manifest's hole entries
local compat = require "octonav.compat"
local core = require "octonav.core"
local pack = require "octonav.pack"
local geometry = require "octonav.bake.geometry"
local doorway = require "octonav.doorway"

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
  while depth < 9 and compat.pow2(depth) < most do depth = depth + 1 end
  local N = compat.pow2(depth)
  local tiles = {}
  for a = 1, 3 do tiles[a] = math.max(1, math.ceil(leaves[a] / N)) end
  return { depth = depth, origin = { hole.min[1], hole.min[2], hole.min[3] }, tiles = tiles, scale = hole.scale }
end

local layers = doorway.layers

-- (a, la, j, k) with la, j, k < 2^20 as one integer where integers have 64 bits; as a string before 5.3
-- (62 bits do not fit a double's 53)
local key
if compat.int64 then
  key = function(a, la, j, k) return ((a * 1048576 + la) * 1048576 + j) * 1048576 + k end
else
  key = function(a, la, j, k) return ("%d %d %d %d"):format(a, la, j, k) end
end

-- The openings of the doors without a box (see the module comment; octonav.doorway.flood): the set
-- of their leaves' keys.
local function openings(tree, h, n)
  local set = {}
  local function visit(a, la, j, k) set[key(a, la, j, k)] = true end
  for _, d in ipairs(h.doors) do
    if not d.box then doorway.flood(tree, h, n, d, visit) end
  end
  return set
end

--- Seals a hole's tree (see the module comment: the sealing rule). Returns the number of fills from
-- the faces.
function M.seal(tree, h)
  local s, o = h.scale, h.min
  local n = doorway.grid(h)
  local open = openings(tree, h, n)
  local fills, seeds, seen = 0, {}, {}
  for a = 1, 3 do
    local b, c = a % 3 + 1, (a + 1) % 3 + 1
    local minl, maxl = layers(h, n, a)
    for _, la in ipairs(compat.move(maxl, 1, #maxl, 2, { minl[1] })) do
      local p = {}
      p[a] = o[a] + (la + 0.5) * s
      for k = 0, n[c] - 1 do
        p[c] = o[c] + (k + 0.5) * s
        local j = 0
        while j < n[b] do
          p[b] = o[b] + (j + 0.5) * s
          local st, cell = tree:locate(p)
          if st == "free" and not open[key(a, la, j, k)] then
            local id = cell.code .. "@" .. cell.tile[1] .. "," .. cell.tile[2] .. "," .. cell.tile[3]
            if not seen[id] then
              seen[id] = true
              seeds[#seeds + 1] = { p[1], p[2], p[3] }
            end
            -- the rest of this cell along b is the same cell
            local after = math.floor((cell.min[b] + cell.size - o[b]) / s + 0.5)
            j = after > j and after or j + 1
          else
            j = j + 1
          end
        end
      end
    end
  end
  -- fill after the walk: before any fill the free cells are whole, so the walk skips them whole
  for _, q in ipairs(seeds) do
    if tree:locate(q) == "free" then
      tree:fill(q)
      fills = fills + 1
    end
  end
  for _, d in ipairs(h.doors) do
    if tree:locate(d.outside) == "free" then tree:fill(d.outside) end
  end
  return fills
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
  local ext = compat.pow2(p.depth) * h.scale
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
  M.seal(tree, h)
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
