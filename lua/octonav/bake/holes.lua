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

-- The leaf layers (0-based indices along axis a) just inside the min and max faces of the bounds on
-- axis a: the first, the last, and the one before the last when the max face cuts a leaf (the block
-- beyond the bounds takes that leaf).
local function layers(h, n, a)
  local s, o = h.scale, h.min
  local minl, maxl = { 0 }, { n[a] - 1 }
  if o[a] + n[a] * s > h.max[a] + 1e-9 * s and n[a] >= 2 then maxl[2] = n[a] - 2 end
  return minl, maxl
end

local function key(a, la, j, k) return (((a << 20) + la << 20) + j << 20) + k end

-- The openings of the doors without a box (see the module comment): for each such door whose
-- segment from inside to outside leaves the bounds, the free leaves of the face layers there that
-- are joined, within the layer, to the leaf where the segment crosses. Returns a set of keys.
local function openings(tree, h, n)
  local s, o, set = h.scale, h.min, {}
  for _, d in ipairs(h.doors) do
    local I, O = d.inside, d.outside
    local t, axis, side = math.huge, nil, nil
    for a = 1, 3 do
      local dv = O[a] - I[a]
      if dv > 0 and O[a] > h.max[a] then
        local u = (h.max[a] - I[a]) / dv
        if u < t then t, axis, side = u, a, "max" end
      elseif dv < 0 and O[a] < h.min[a] then
        local u = (h.min[a] - I[a]) / dv
        if u < t then t, axis, side = u, a, "min" end
      end
    end
    if not d.box and axis then
      local a = axis
      local b, c = a % 3 + 1, (a + 1) % 3 + 1
      local minl, maxl = layers(h, n, a)
      local function leaf(v, ax)
        local i = math.floor((v - o[ax]) / s)
        return math.max(0, math.min(n[ax] - 1, i))
      end
      for _, la in ipairs(side == "min" and minl or maxl) do
        local p = {}
        p[a] = o[a] + (la + 0.5) * s
        -- a depth-first walk over the layer's leaves; stack entries j * 2^20 + k
        local stack = { (leaf(I[b] + t * (O[b] - I[b]), b) << 20) + leaf(I[c] + t * (O[c] - I[c]), c) }
        local top = 1
        while top > 0 do
          local jk = stack[top]
          top = top - 1
          local j, k = jk >> 20, jk & 0xfffff
          local kk = key(a, la, j, k)
          if not set[kk] then
            p[b], p[c] = o[b] + (j + 0.5) * s, o[c] + (k + 0.5) * s
            if tree:locate(p) == "free" then
              set[kk] = true
              if j + 1 < n[b] then top = top + 1; stack[top] = ((j + 1) << 20) + k end
              if j > 0 then top = top + 1; stack[top] = ((j - 1) << 20) + k end
              if k + 1 < n[c] then top = top + 1; stack[top] = (j << 20) + k + 1 end
              if k > 0 then top = top + 1; stack[top] = (j << 20) + k - 1 end
            end
          end
        end
      end
    end
  end
  return set
end

--- Seals a hole's tree (see the module comment: the sealing rule). Returns the number of fills from
-- the faces.
function M.seal(tree, h)
  local s, o = h.scale, h.min
  local n = {}
  for a = 1, 3 do n[a] = math.max(1, math.ceil((h.max[a] - o[a]) / s - 1e-9)) end
  local open = openings(tree, h, n)
  local fills, seeds, seen = 0, {}, {}
  for a = 1, 3 do
    local b, c = a % 3 + 1, (a + 1) % 3 + 1
    local minl, maxl = layers(h, n, a)
    for _, la in ipairs(table.move(maxl, 1, #maxl, 2, { minl[1] })) do
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
