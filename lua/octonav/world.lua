--- The world: a loaded nav pack (docs/world.md, "The world object").
--
--   local world = octonav.world.load("pack_dir")   -- world or nil, err
--   world:tile_of(p), world:tile_bounds(tile), world:to_nav(p [, hole]), world:to_world(p [, hole])
--   world:in_hole(p) -> name, i | nil
--   world:validate() -> { ok, doors = { { hole, name, door, outside_blocked, inside_free, connected,
--                                         outside_free } } }
--   world:set_door(hole, door, open), world:rebake(region, config), world:plan(a, b), world:close()
--
-- Loading reads the manifest, every tile file (decoded into one tree), every hole tree and the graph,
-- all through octonav.pack (patterns only, checksums checked). For streaming (octonav.streamer),
-- `octonav.world.load(dir, { tiles = false })` reads the manifest, the holes' lines and the graph only:
-- world.tree has every tile unloaded and every hole's `tree` is nil; the streamer loads them
-- (world:load_hole(h) reads one hole's tree without installing it). Besides the fields of docs/world.md the
-- world keeps `dir` (its pack directory) and `grid` ({ origin, tiles, tile_size, count, ... }); each
-- hole also has `depth`, `origin` and `tree_tiles` (its tree's parameters).
local core = require "octonav.core"
local pack = require "octonav.pack"
local util = require "octonav.util"
local tilegrid = require "octonav.tilegrid"

local M = {}

local World = {}
World.__index = World
M.World = World

local function check_point(p, fname, what)
  if not util.is_point(p) then
    error(("world:%s: %s: point {x, y, z} of finite numbers expected"):format(fname, what or "point"), 3)
  end
  return p
end

local function grid_of(m) return tilegrid.new(m.origin, m.tiles, m.depth, m.scale, m.radius) end

local same3 = util.same3

-- A hole's tree, checked against its manifest entry.
local function check_hole(path, h, radius, tree)
  local p = tree:params()
  if p.depth ~= h.depth or p.scale ~= h.scale or p.radius ~= radius or not same3(p.origin, h.origin)
    or not same3(p.tiles, h.tiles) then
    tree:close()
    return nil, path .. ": the tree's parameters differ from the manifest's hole line"
  end
  return tree
end

local function load_hole(dir, h, radius)
  local path = pack.hole_path(dir, h.name)
  local tree, err = core.tree.load(path)
  if not tree then return nil, err end
  return check_hole(path, h, radius, tree)
end

-- Graph tables of docs/world.md from a parsed graph; every tile, block and door gets its table.
local function graph_tables(world, g)
  local blocks, tile_blocks, links, weights, door_links = {}, {}, {}, {}, {}
  for t = 0, world.grid.count - 1 do
    tile_blocks[t] = {}
    weights[t] = {}
  end
  for _, b in ipairs(g.blocks) do
    blocks[b.id] = { id = b.id, tile = b.tile, face = b.face, center = b.center, points = b.points }
    table.insert(tile_blocks[b.tile], b.id)
    links[b.id] = {}
  end
  for _, l in ipairs(g.links) do
    table.insert(links[l.a], { block = l.b, cost = l.cost })
  end
  for _, w in ipairs(g.weights) do
    local wt = weights[w.tile]
    wt[w.a] = wt[w.a] or {}
    wt[w.b] = wt[w.b] or {}
    wt[w.a][w.b] = w.cost
    wt[w.b][w.a] = w.cost
  end
  for i, h in ipairs(world.holes) do
    door_links[i] = {}
    for j = 1, #h.doors do door_links[i][j] = {} end
  end
  for _, d in ipairs(g.doors) do
    local i = world.hole_index[d.hole]
    table.insert(door_links[i][d.door], { block = d.block, cost = d.cost })
  end
  world.blocks, world.tile_blocks, world.links, world.weights, world.door_links =
    blocks, tile_blocks, links, weights, door_links
end

-- Marks every tile of a fresh tree unloaded (what the C streamer does when it starts): a tree
-- without a tile's data must not read as free space.
local function unload_all(tree, dir)
  core.streamer.new(tree, dir, { load_padding = 0, unload_padding = 1, workers = 0 }):close()
end

--- Loads a pack directory. Returns the world or nil, "PATH[:LINE]: reason".
-- opts (optional): { tiles = true }; tiles = false: no tile file and no hole tree is read (for
-- octonav.streamer): world.tree has every tile unloaded, each hole's tree is nil.
function M.load(dir, opts)
  if type(dir) ~= "string" or dir == "" then error("octonav.world.load: dir must be a non-empty string", 2) end
  if opts ~= nil and type(opts) ~= "table" then error("octonav.world.load: opts must be a table", 2) end
  local with_tiles = true
  for k, v in pairs(opts or {}) do
    if k ~= "tiles" then error("octonav.world.load: unknown option '" .. tostring(k) .. "'", 2) end
    if type(v) ~= "boolean" then error("octonav.world.load: option 'tiles' must be a boolean", 2) end
    with_tiles = v
  end
  local m, err = pack.read_manifest(dir)
  if not m then return nil, err end
  local grid = grid_of(m)
  local world = {
    dir = dir, grid = grid,
    scale = m.scale, depth = m.depth, radius = m.radius, origin = m.origin, tiles = m.tiles,
    tile_size = grid.tile_size, holes = {}, hole_index = {},
  }
  -- a manifest the tree cannot hold (too many tiles) is a bad file, not misuse: nil, reason
  local made, tree = pcall(core.tree.new, { tiles = m.tiles, depth = m.depth, scale = m.scale, origin = m.origin,
    radius = m.radius })
  if not made then return nil, ("%s: %s"):format(pack.manifest_path(dir), tostring(tree):gsub("^octonav%.tree%.new: ", "")) end
  local function abort(e)
    tree:close()
    for _, h in ipairs(world.holes) do
      if h.tree then h.tree:close() end
    end
    return nil, e
  end
  if with_tiles then
    for t = 0, grid.count - 1 do
      local i, j, k = tilegrid.coords(grid, t)
      local blob, rerr = pack.read_tile(dir, i, j, k)
      if not blob then return abort(rerr) end
      local ok, derr = tree:decode_tile(i, j, k, blob)
      if not ok then return abort(("%s: %s"):format(pack.tile_path(dir, i, j, k), tostring(derr))) end
    end
    tree:compact()
  else
    unload_all(tree, dir)
  end
  world.tree = tree
  for i, h in ipairs(m.holes) do
    local ht
    if with_tiles then
      local herr
      ht, herr = load_hole(dir, h, m.radius)
      if not ht then return abort(herr) end
    end
    local doors = {}
    for j, d in ipairs(h.doors) do doors[j] = { inside = d.inside, outside = d.outside, open = true } end
    world.holes[i] = {
      name = h.name, kind = h.kind, min = h.min, max = h.max, scale = h.scale, depth = h.depth,
      origin = h.origin, tree_tiles = h.tiles, tree = ht, doors = doors, tiles = tilegrid.hole_tiles(grid, h),
    }
    world.hole_index[h.name] = i
  end
  local g, gerr = pack.read_graph(dir, m)
  if not g then return abort(gerr) end
  graph_tables(world, g)
  return setmetatable(world, World)
end

-- ---- spaces ---------------------------------------------------------------------------------------

--- Tile index (i + nx*(j + ny*k)) of a world point, or nil outside the tile grid.
function World:tile_of(p)
  check_point(p, "tile_of")
  return tilegrid.tile_of(self.grid, p)
end

--- World box of a tile: min, max.
function World:tile_bounds(tile)
  if math.type(tile) ~= "integer" or tile < 0 or tile >= self.grid.count then
    error(("world:tile_bounds: tile must be an integer 0..%d"):format(self.grid.count - 1), 2)
  end
  return tilegrid.bounds(self.grid, tile)
end

local function hole_arg(self, hole, fname)
  local i = hole
  if type(hole) == "string" then i = self.hole_index[hole] end
  if math.type(i) ~= "integer" or not self.holes[i] then
    error(("world:%s: hole: unknown hole %s"):format(fname, tostring(hole)), 3)
  end
  return i, self.holes[i]
end

--- World -> nav space (the seed: P_nav = (P_world - Origin) / Scale), of the world or of a hole
-- (index or name), whose origin is its min corner and scale its own.
function World:to_nav(p, hole)
  check_point(p, "to_nav")
  local o, s = self.origin, self.scale
  if hole ~= nil then
    local _, h = hole_arg(self, hole, "to_nav")
    o, s = h.origin, h.scale
  end
  return { (p[1] - o[1]) / s, (p[2] - o[2]) / s, (p[3] - o[3]) / s }
end

--- Nav -> world space (P_world = Origin + P_nav * Scale).
function World:to_world(p, hole)
  check_point(p, "to_world")
  local o, s = self.origin, self.scale
  if hole ~= nil then
    local _, h = hole_arg(self, hole, "to_world")
    o, s = h.origin, h.scale
  end
  return { o[1] + p[1] * s, o[2] + p[2] * s, o[3] + p[3] * s }
end

--- The hole a point is in: inside its bounds and free in its tree (whose outside is sealed).
-- Returns name, index or nil. Streaming: a hole whose bounds hold p must be loaded (its tree not nil;
-- the navigator force-loads it first), else this raises.
function World:in_hole(p)
  check_point(p, "in_hole")
  for i, h in ipairs(self.holes) do
    local mn, mx = h.min, h.max
    if p[1] >= mn[1] and p[1] <= mx[1] and p[2] >= mn[2] and p[2] <= mx[2] and p[3] >= mn[3] and p[3] <= mx[3] then
      if not h.tree then
        error(("world:in_hole: hole '%s' is not loaded (streaming: load it first)"):format(h.name), 2)
      end
      if h.tree:locate(p) == "free" then return h.name, i end
    end
  end
  return nil
end

--- Reads a hole's tree (hole: index or name) from the pack, checked against the manifest, without
-- installing it (octonav.streamer sets hole.tree). Returns the tree or nil, err.
function World:load_hole(hole)
  local _, h = hole_arg(self, hole, "load_hole")
  return load_hole(self.dir, { name = h.name, depth = h.depth, scale = h.scale, origin = h.origin,
    tiles = h.tree_tiles }, self.radius)
end

--- world:hole_path(h) -> the file of hole h's tree (what load_hole reads).
function World:hole_path(hole)
  local _, h = hole_arg(self, hole, "hole_path")
  return pack.hole_path(self.dir, h.name)
end

--- world:check_hole_tree(h, tree) -> tree | nil, err: load_hole's check of a tree read elsewhere (the
-- streamer's workers); a tree whose parameters differ from the manifest's is closed.
function World:check_hole_tree(hole, tree)
  local _, h = hole_arg(self, hole, "check_hole_tree")
  return check_hole(pack.hole_path(self.dir, h.name), { name = h.name, depth = h.depth, scale = h.scale,
    origin = h.origin, tiles = h.tree_tiles }, self.radius, tree)
end

-- ---- checks and edits ----------------------------------------------------------------------------

--- Checks every door (the seed's check of a hole's configuration):
--   outside_blocked  the outside point is blocked in the hole's tree (or outside that tree): the
--                    sealing reached it, so the outside does not count as inside the hole
--   inside_free      the inside point is free in the hole's tree: the sealing did not leak in
--   connected        the inside point is reachable, by a query on the hole's tree, from the inside
--                    point of the hole's first door whose inside point is free (for that door
--                    itself: inside_free): no door leads into a pocket cut off from the others
--   outside_free     the outside point is free in the world tree: agents can reach the door
-- ok is true when every door passes all four.
-- A hole whose tree is not loaded (a streamed world) is read for the check and closed after; one whose
-- file cannot be read gives door entries with ok = false and `error`. On a streamed world,
-- outside_free is only true where the world tile holding the outside point is loaded.
function World:validate()
  local report = { ok = true, doors = {} }
  for i, h in ipairs(self.holes) do
    local q
    local ref
    local tree, temp = h.tree, false
    if not tree then
      local err
      tree, err = self:load_hole(i)
      if not tree then
        for j in ipairs(h.doors) do
          report.doors[#report.doors + 1] = { hole = i, name = h.name, door = j, ok = false, error = err }
        end
        report.ok = false
        goto next_hole
      end
      temp = true
    end
    for _, d in ipairs(h.doors) do
      if tree:locate(d.inside) == "free" then
        ref = d.inside
        break
      end
    end
    for j, d in ipairs(h.doors) do
      local outside_blocked = tree:locate(d.outside) ~= "free"
      local inside_free = tree:locate(d.inside) == "free"
      local connected = false
      if inside_free and ref then
        if ref == d.inside then
          connected = true
        else
          q = q or core.query.new(tree)
          local path, info = q:find(ref, d.inside)
          connected = path ~= nil and info.status == "found"
        end
      end
      local outside_free = self.tree:locate(d.outside) == "free"
      local r = { hole = i, name = h.name, door = j, outside_blocked = outside_blocked, inside_free = inside_free,
        connected = connected, outside_free = outside_free }
      r.ok = outside_blocked and inside_free and connected and outside_free
      if not r.ok then report.ok = false end
      report.doors[#report.doors + 1] = r
    end
    if q then q:close() end
    if temp then tree:close() end
    ::next_hole::
  end
  return report
end

--- Opens or closes a door (hole: index or name; door: index; open: boolean). The planner only uses
-- open doors.
function World:set_door(hole, door, open)
  local _, h = hole_arg(self, hole, "set_door")
  if math.type(door) ~= "integer" or not h.doors[door] then
    error(("world:set_door: door: integer 1..%d expected, got %s"):format(#h.doors, tostring(door)), 2)
  end
  if type(open) ~= "boolean" then error("world:set_door: open: boolean expected, got " .. type(open), 2) end
  h.doors[door].open = open
  return self
end

-- Two holes' trees hold the same cells (same parameters, same tile blobs).
local function trees_equal(a, b)
  if not (same3(a.tree_tiles, b.tree_tiles) and a.depth == b.depth and a.scale == b.scale
    and same3(a.origin, b.origin)) then
    return false
  end
  local n = a.tree_tiles
  for k = 0, n[3] - 1 do
    for j = 0, n[2] - 1 do
      for i = 0, n[1] - 1 do
        if a.tree:encode_tile(i, j, k) ~= b.tree:encode_tile(i, j, k) then return false end
      end
    end
  end
  return true
end

--- Re-bakes the tiles overlapping region ({ min = {..}, max = {..} }) from config (the pack keeps no
-- config: pass the one it was baked from, edited), see octonav.bake.rebake. Then reloads: the
-- re-baked tiles are decoded into the same world tree (its salts change, so handles and running
-- searches notice), re-baked holes get new trees, the graph tables are replaced; doors keep their
-- open state. Returns the bake summary or nil, err.
function World:rebake(region, config)
  local s, err = require("octonav.bake").rebake(self.dir, region, config)
  if not s then return nil, err end
  local fresh, lerr = M.load(self.dir)
  if not fresh then return nil, lerr end
  for _, t in ipairs(s.rebaked) do
    local i, j, k = tilegrid.coords(self.grid, t)
    assert(self.tree:decode_tile(i, j, k, fresh.tree:encode_tile(i, j, k)))
  end
  fresh.tree:close()
  local old = {}
  for _, h in ipairs(self.holes) do old[h.name] = h end
  for _, h in ipairs(fresh.holes) do
    local o = old[h.name]
    if o then
      for j, d in ipairs(h.doors) do
        if o.doors[j] then d.open = o.doors[j].open end
      end
      if o.tree and trees_equal(o, h) then
        -- unchanged tree: keep the object the planner and navigators may hold
        h.tree:close()
        h.tree = o.tree
        old[h.name] = nil
      end
    end
  end
  for _, o in pairs(old) do
    if o.tree then o.tree:close() end
  end
  self.holes, self.hole_index = fresh.holes, fresh.hole_index
  self.blocks, self.tile_blocks, self.links, self.weights, self.door_links =
    fresh.blocks, fresh.tile_blocks, fresh.links, fresh.weights, fresh.door_links
  return s
end

--- The Cell-level route from a to b (octonav.planner, docs/world.md "Route"): route or nil, reason.
function World:plan(a, b)
  return require("octonav.planner").plan_named("world:plan", self, a, b)
end

--- Frees the trees (the world is unusable afterwards).
function World:close()
  if self.tree then self.tree:close() end
  for _, h in ipairs(self.holes or {}) do
    if h.tree then h.tree:close() end
  end
end

-- `local w <close> = octonav.world.load(dir)` closes it at the end of the block
World.__close = function(self) self:close() end

function World:__tostring()
  local nb = 0
  for _ in pairs(self.blocks) do nb = nb + 1 end
  return ("octonav.world: %dx%dx%d tiles of %g units, %d holes, %d connect blocks"):format(self.tiles[1],
    self.tiles[2], self.tiles[3], self.tile_size, #self.holes, nb)
end

return M
