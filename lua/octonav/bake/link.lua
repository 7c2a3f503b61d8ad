--- octonav.bake.link: the link step (reads only tile files). The world tree is assembled from the
-- blobs; a clone is filled from every free cell on the world's top face, so a free region reachable
-- from the top is blocked in the clone. On each face shared by two tiles, the free cells of the tile
-- on that face (face_cells) are clustered into regions (two cells join when their squares on the
-- face share an edge of positive length); a region is kept iff it is reachable from the top. Each
-- cell of a kept region gives a connect point: the centre of its square on the face, pushed half a
-- leaf into the tile (inside) and half a leaf into the neighbour (outside). Points of a region closer
-- than connect.merge_distance to a block's first point join that block (else start a new one); a
-- block's centre is its point (inside) nearest the mean of its points, so it is always free. A block
-- links to the neighbour's blocks holding the cells its outside points fall in (cost: the
-- inside->outside distance, one leaf). Weights join every pair of blocks of a tile: "straight"
-- (distance between centres) or "path" (query length on a 1-tile tree of that tile; pairs without a
-- path are left out). A hole is registered with the tiles it overlaps and the tiles holding its
-- doors' outside points; each door links to every block of those tiles (cost: straight distance
-- outside point -> block centre, or with weights = "path" the query length on the world tree, left
-- out without a path).
--
--   link.run(cfg, opts) -> summary | nil, err   (opts: see run below)
local core = require "octonav.core"
local pack = require "octonav.pack"
local util = require "octonav.util"
local tilegrid = require "octonav.tilegrid"
local geometry = require "octonav.bake.geometry"
local holes = require "octonav.bake.holes"

local Tree, Query = core.tree, core.query
local FACES = pack.FACES
local clock = core.clock
local dist, same_tile = util.dist, util.same3

local M = {}

-- Regions of free cells on one face of a tile: arrays of cells, in the order of their first cell.
local function face_regions(tree, i, j, k, face)
  local cells = tree:face_cells(i, j, k, FACES[face + 1])
  local index, parent = {}, {}
  for n, c in ipairs(cells) do
    index[c.code] = n
    parent[n] = n
  end
  local function find(x)
    while parent[x] ~= x do
      parent[x] = parent[parent[x]]
      x = parent[x]
    end
    return x
  end
  for n, c in ipairs(cells) do
    for _, nb in ipairs(tree:neighbors(c)) do
      local m = index[nb.code]
      if m and same_tile(nb.tile, c.tile) then
        local a, b = find(n), find(m)
        if a ~= b then
          if a < b then parent[b] = a else parent[a] = b end
        end
      end
    end
  end
  local regions, of_root = {}, {}
  for n, c in ipairs(cells) do
    local root = find(n)
    local reg = of_root[root]
    if not reg then
      reg = {}
      of_root[root] = reg
      regions[#regions + 1] = reg
    end
    reg[#reg + 1] = c
  end
  return regions
end

-- The connect point of a face cell: inside and outside points (world).
local function cell_point(cell, face, plane, half)
  local axis = face // 2 + 1
  local s = cell.size
  local c = { cell.min[1] + s / 2, cell.min[2] + s / 2, cell.min[3] + s / 2 }
  local sign = face % 2 == 1 and 1 or -1 -- +face: outside is towards +axis
  local inside, outside = { c[1], c[2], c[3] }, { c[1], c[2], c[3] }
  inside[axis] = plane - sign * half
  outside[axis] = plane + sign * half
  return inside, outside
end

-- Blocks of one region: points merged by distance to each block's first point.
local function region_blocks(region, face, plane, half, merge)
  local blocks = {}
  for _, cell in ipairs(region) do
    local inside, outside = cell_point(cell, face, plane, half)
    local into
    for _, b in ipairs(blocks) do
      if dist(b.points[1].inside, inside) < merge then
        into = b
        break
      end
    end
    if not into then
      into = { points = {} }
      blocks[#blocks + 1] = into
    end
    into.points[#into.points + 1] = { inside = inside, outside = outside }
  end
  for _, b in ipairs(blocks) do
    local m = { 0, 0, 0 }
    for _, p in ipairs(b.points) do
      for a = 1, 3 do m[a] = m[a] + p.inside[a] end
    end
    for a = 1, 3 do m[a] = m[a] / #b.points end
    local best, bd = b.points[1].inside, math.huge
    for _, p in ipairs(b.points) do
      local d = dist(p.inside, m)
      if d < bd then best, bd = p.inside, d end
    end
    b.center = { best[1], best[2], best[3] }
  end
  return blocks
end

local function neighbour_tile(grid, i, j, k, face)
  local c = { i, j, k }
  local axis = face // 2 + 1
  c[axis] = c[axis] + (face % 2 == 1 and 1 or -1)
  if c[axis] < 0 or c[axis] >= grid.tiles[axis] then return nil end
  return tilegrid.index(grid, c[1], c[2], c[3])
end

local function new_tree(cfg, grid)
  return Tree.new { tiles = grid.tiles, depth = cfg.depth, scale = cfg.scale, origin = grid.origin, radius = cfg.radius }
end


-- ---- the stages of run, in order; each reads and adds fields of the link state L ------------------

-- 1. The world tree from the tile files (L.tree, L.blobs).
local function assemble(L)
  local grid, dir = L.grid, L.dir
  local tree = new_tree(L.cfg, grid)
  L.tree, L.blobs = tree, {}
  for t = 0, grid.count - 1 do
    local i, j, k = tilegrid.coords(grid, t)
    local blob, err = pack.read_tile(dir, i, j, k)
    if not blob then return nil, err end
    local ok, derr = tree:decode_tile(i, j, k, blob)
    if not ok then return nil, ("%s: %s"):format(pack.tile_path(dir, i, j, k), tostring(derr)) end
    L.blobs[t] = blob
    L.summary.bytes = L.summary.bytes + #blob
  end
  tree:compact()
  L.summary.nodes = tree:stats().nodes
  return true
end

-- 2. The holes asked for (all without opts.holes) baked and saved; geometry collected when needed.
local function bake_holes(L)
  local geo = L.opts.geo
  for _, h in ipairs(L.cfg.holes) do
    if L.opts.holes == nil or L.opts.holes[h.name] then
      if not geo then
        local gerr
        geo, gerr = geometry.collect(L.cfg)
        if not geo then return nil, gerr end
      end
      local ht, err = holes.bake(L.cfg, geo, h, L.dir)
      if not ht then return nil, err end
      ht:close()
    end
    L.summary.bytes = L.summary.bytes + (util.file_size(pack.hole_path(L.dir, h.name)) or 0)
    L.report("hole " .. h.name)
  end
  return true
end

-- 3. Reachability from the top: a clone filled from every free cell on the world's top face.
local function top_reachable(L)
  local grid, tree = L.grid, L.tree
  local clone = new_tree(L.cfg, grid)
  for t = 0, grid.count - 1 do
    local i, j, k = tilegrid.coords(grid, t)
    assert(clone:decode_tile(i, j, k, L.blobs[t]))
  end
  local ny = grid.tiles[2]
  for k = 0, grid.tiles[3] - 1 do
    for i = 0, grid.tiles[1] - 1 do
      for _, c in ipairs(tree:face_cells(i, ny - 1, k, "+y")) do
        local s = c.size / 2
        local p = { c.min[1] + s, c.min[2] + s, c.min[3] + s }
        if clone:locate(p) == "free" then clone:fill(p) end
      end
    end
  end
  return clone
end

-- 4. Regions and blocks per tile face, in tile, face order (that order numbers the blocks); with
-- opts.changed, the faces of unchanged tiles keep their previous blocks (L.blocks, L.redo: tiles
-- whose weights must be recomputed, L.old_to_new: old block id -> new id).
local function find_blocks(L, clone)
  local grid, cfg, changed = L.grid, L.cfg, L.opts.changed
  local old = {} -- old[tile][face] = { blocks }
  if changed then
    for _, b in ipairs(L.opts.previous.blocks) do
      old[b.tile] = old[b.tile] or {}
      old[b.tile][b.face] = old[b.tile][b.face] or {}
      table.insert(old[b.tile][b.face], b)
    end
  end
  local half = cfg.scale / 2
  local merge = cfg.connect.merge_distance
  local blocks, redo, old_to_new = {}, {}, {}
  for t = 0, grid.count - 1 do
    local i, j, k = tilegrid.coords(grid, t)
    local tmin, tmax = tilegrid.bounds(grid, t)
    for face = 0, 5 do
      local nb = neighbour_tile(grid, i, j, k, face)
      if nb then
        local affected = not changed or changed[t] or changed[nb]
        if affected then
          redo[t] = true
          local axis = face // 2 + 1
          local plane = face % 2 == 1 and tmax[axis] or tmin[axis]
          for _, region in ipairs(face_regions(L.tree, i, j, k, face)) do
            local probe = cell_point(region[1], face, plane, half)
            if clone:locate(probe) == "blocked" then
              for _, b in ipairs(region_blocks(region, face, plane, half, merge)) do
                b.id = #blocks + 1
                b.tile = t
                b.face = face
                blocks[#blocks + 1] = b
              end
            end
          end
        else
          for _, ob in ipairs(old[t] and old[t][face] or {}) do
            local b = { id = #blocks + 1, tile = t, face = face, center = ob.center, points = ob.points }
            old_to_new[ob.id] = b.id
            blocks[#blocks + 1] = b
          end
        end
      end
    end
  end
  L.blocks, L.redo, L.old_to_new = blocks, redo, old_to_new
  L.summary.blocks = #blocks
end

-- 5. Links: each block's outside points fall in cells of the neighbour's blocks (L.links).
local function link_blocks(L)
  local tree, grid, blocks = L.tree, L.grid, L.blocks
  local block_of_cell = {} -- [tile index][code] = block id
  local points = 0
  for _, b in ipairs(blocks) do
    block_of_cell[b.tile] = block_of_cell[b.tile] or {}
    for _, p in ipairs(b.points) do
      points = points + 1
      local st, cell = tree:locate(p.inside)
      if st == "free" then block_of_cell[b.tile][cell.code] = b.id end
    end
  end
  L.summary.points = points
  local links = {}
  for _, b in ipairs(blocks) do
    local seen = {}
    for _, p in ipairs(b.points) do
      local st, cell = tree:locate(p.outside)
      if st == "free" then
        local nt = tilegrid.index(grid, cell.tile[1], cell.tile[2], cell.tile[3])
        local other = block_of_cell[nt] and block_of_cell[nt][cell.code]
        if other and other ~= b.id then
          local cost = dist(p.inside, p.outside)
          if not seen[other] then
            seen[other] = #links + 1
            links[#links + 1] = { a = b.id, b = other, cost = cost }
          elseif cost < links[seen[other]].cost then
            links[seen[other]].cost = cost
          end
        end
      end
    end
  end
  L.links = links
  L.summary.links = #links
end

-- The weights of one tile's blocks: every pair, straight or by a query on a 1-tile tree.
local function tile_weights(L, t, list, weights)
  local cfg, grid = L.cfg, L.grid
  local q, one
  if cfg.connect.weights == "path" then
    one = Tree.new { tiles = { 1, 1, 1 }, depth = cfg.depth, scale = cfg.scale, radius = cfg.radius,
      origin = tilegrid.min(grid, tilegrid.coords(grid, t)) }
    assert(one:decode_tile(0, 0, 0, L.blobs[t]))
    q = Query.new(one)
  end
  for x = 1, #list - 1 do
    for y = x + 1, #list do
      local a, b = list[x], list[y]
      local cost
      if q then
        local path, info = q:find(a.center, b.center)
        if path and info.status == "found" then cost = info.length end
      else
        cost = dist(a.center, b.center)
      end
      if cost then weights[#weights + 1] = { tile = t, a = a.id, b = b.id, cost = cost } end
    end
  end
  if one then one:close() end
end

-- 6. Weights inside each tile (L.by_tile, L.weights); unchanged tiles keep their previous weights.
local function weigh(L)
  local changed = L.opts.changed
  local by_tile = {}
  for _, b in ipairs(L.blocks) do
    by_tile[b.tile] = by_tile[b.tile] or {}
    table.insert(by_tile[b.tile], b)
  end
  local weights, old_weights = {}, {}
  if changed then
    for _, w in ipairs(L.opts.previous.weights) do
      old_weights[w.tile] = old_weights[w.tile] or {}
      table.insert(old_weights[w.tile], w)
    end
  end
  for t = 0, L.grid.count - 1 do
    local list = by_tile[t]
    if L.redo[t] or not changed then
      if list and #list > 1 then tile_weights(L, t, list, weights) end
    else
      for _, w in ipairs(old_weights[t] or {}) do
        local a, b = L.old_to_new[w.a], L.old_to_new[w.b]
        if a and b then weights[#weights + 1] = { tile = t, a = a, b = b, cost = w.cost } end
      end
    end
    L.report(("graph tile %d"):format(t))
  end
  L.by_tile, L.weights = by_tile, weights
  L.summary.weights = #weights
end

-- 7. Door links (L.doors): recomputed for holes re-baked or whose tiles' blocks changed.
local function link_doors(L)
  local opts, changed, path_mode = L.opts, L.opts.changed, L.cfg.connect.weights == "path"
  local doors = {}
  local wq
  for _, h in ipairs(L.cfg.holes) do
    local tiles = tilegrid.hole_tiles(L.grid, h)
    local recompute = not changed or (opts.holes and opts.holes[h.name])
    for _, t in ipairs(tiles) do
      if L.redo[t] then recompute = true end
    end
    if not recompute then
      -- the old links stay valid when the hole and the blocks of its tiles are unchanged
      local olds = {}
      for _, d in ipairs(opts.previous.doors) do
        if d.hole == h.name and L.old_to_new[d.block] then olds[#olds + 1] = d end
      end
      if #olds == 0 then recompute = true end
      for _, d in ipairs(olds) do
        doors[#doors + 1] = { hole = h.name, door = d.door, block = L.old_to_new[d.block], cost = d.cost }
      end
    end
    if recompute then
      for j, d in ipairs(h.doors) do
        for _, t in ipairs(tiles) do
          for _, b in ipairs(L.by_tile[t] or {}) do
            local cost
            if path_mode then
              wq = wq or Query.new(L.tree)
              local path, info = wq:find(d.outside, b.center)
              if path and info.status == "found" then cost = info.length end
            else
              cost = dist(d.outside, b.center)
            end
            if cost then doors[#doors + 1] = { hole = h.name, door = j, block = b.id, cost = cost } end
          end
        end
      end
    end
  end
  L.doors = doors
  L.summary.door_links = #doors
end

-- 8. The graph, then the manifest last.
local function write(L)
  local cfg, grid, dir = L.cfg, L.grid, L.dir
  local gtext = pack.graph_text { blocks = L.blocks, links = L.links, weights = L.weights, doors = L.doors }
  local ok, err = pack.write_file(pack.graph_path(dir), gtext)
  if not ok then return nil, err end
  local mtext = pack.manifest_text {
    scale = cfg.scale, depth = cfg.depth, origin = grid.origin, tiles = grid.tiles, radius = cfg.radius,
    holes = holes.manifest_lines(cfg),
  }
  ok, err = pack.write_file(pack.manifest_path(dir), mtext)
  if not ok then return nil, err end
  L.summary.bytes = L.summary.bytes + #gtext + #mtext
  return true
end

--[[ The link step. opts:
  dir       pack directory (tile files are read from it; holes, graph and manifest written to it)
  geo       collected geometry (read when a hole needs baking and geo is nil)
  changed   nil (everything) or a set of tile indices whose tiles were re-baked
  previous  with `changed`: the previous graph (pack.read_graph format)
  holes     nil (bake every hole) or a set of hole names to re-bake (the others keep their files)
  report    function(what) called after each unit of work
Returns a summary table or nil, err. ]]
function M.run(cfg, opts)
  local t0 = clock()
  local L = { cfg = cfg, grid = cfg.grid, dir = opts.dir, opts = opts, report = opts.report or function() end,
    summary = { tiles = cfg.grid.count, bytes = 0 } }
  local ok, err = assemble(L)
  if ok then ok, err = bake_holes(L) end
  if not ok then
    L.tree:close()
    return nil, err
  end
  local clone = top_reachable(L)
  find_blocks(L, clone)
  clone:close()
  link_blocks(L)
  weigh(L)
  link_doors(L)
  L.tree:close()
  ok, err = write(L)
  if not ok then return nil, err end
  L.summary.holes = #cfg.holes
  L.summary.link_seconds = clock() - t0
  return L.summary
end

return M
