-- spec/support/handworld.lua: the hand-built world shared by spec/10 (planner) and spec/11
-- (navigator): plain tables following docs/world.md over real octonav trees, no bake involved; its
-- world graph (w.graph) is built from the tree's tiles (graph:add_tile(i, j, k, tree)).
-- Options: tiles (2), closed_wall = k (the wall between tiles k-1 and k has no opening), sealed_tile
-- = t (a wall across the middle of tile t, top to bottom), sealed_den (the den's door opens into a
-- closed box), nook (a third hole), obstacles.
-- Loaded with dofile("spec/support/handworld.lua"); returns { dist, make_hole, make_world }.
local octonav = require "octonav"

-- dist(p, q), also handed on to the specs (spec/support/geometry.lua)
local dist = dofile("spec/support/geometry.lua").dist

---------------------------------------------------------------------------------------------------
-- The hand-built world (opts.obstacles adds obstacles inside the tiles).

local function make_hole(name, mn, mx, room, doors, pillar)
  local tree = octonav.tree.new { depth = 4, scale = 0.5, origin = mn }
  -- seal everything in the box but the room
  tree:add_box(mn, { room[1][1], mx[2], mx[3] })
  tree:add_box({ room[2][1], mn[2], mn[3] }, mx)
  tree:add_box(mn, { mx[1], room[1][2], mx[3] })
  tree:add_box({ mn[1], room[2][2], mn[3] }, mx)
  tree:add_box(mn, { mx[1], mx[2], room[1][3] })
  tree:add_box({ mn[1], mn[2], room[2][3] }, mx)
  if pillar then tree:add_box(pillar[1], pillar[2]) end
  local ds = {}
  for j, d in ipairs(doors) do ds[j] = { inside = d[1], outside = d[2], open = true } end
  return { name = name, kind = "under_terrain", min = mn, max = mx, scale = 0.5, tree = tree, doors = ds }
end

local function make_world(opts)
  opts = opts or {}
  local n = opts.tiles or 2
  local T = 16
  local tree = octonav.tree.new { tiles = { n, 1, 1 }, depth = 4 }
  local w = {
    scale = 1, depth = 4, radius = 0, origin = { 0, 0, 0 }, tiles = { n, 1, 1 }, tile_size = T,
    tree = tree, holes = {}, hole_index = {},
  }
  for k = 1, n - 1 do
    local x = T * k
    if opts.closed_wall == k then
      tree:add_box({ x - 1, 0, 0 }, { x + 1, 16, 16 })
    else
      tree:add_box({ x - 1, 0, 0 }, { x + 1, 6, 16 })
      tree:add_box({ x - 1, 10, 0 }, { x + 1, 16, 16 })
      tree:add_box({ x - 1, 6, 0 }, { x + 1, 10, 6 })
      tree:add_box({ x - 1, 6, 10 }, { x + 1, 10, 16 })
    end
  end
  if opts.sealed_tile then -- a wall across the middle of that tile
    local x = T * opts.sealed_tile + 8
    tree:add_box({ x, 0, 0 }, { x + 1, 16, 16 })
  end
  -- obstacles inside the tiles (clear of the openings, the holes and the doors)
  if opts.obstacles then
    tree:add_box({ 7, 0, 12.5 }, { 14, 14, 13.5 })  -- a fin in tile 0, in front of the cave
    tree:add_box({ 1, 0, 0 }, { 14, 1.5, 16 })      -- a floor in tile 0
    if n >= 2 then
      tree:add_box({ 18, 3, 0 }, { 19, 16, 5 })     -- a post in tile 1
      tree:add_box({ 20, 11, 0 }, { 30, 12, 16 })   -- a shelf above the den
      -- a sealed pocket: a hollow box, free inside, closed on every side
      tree:add_box({ 26, 12, 12 }, { 31, 13, 16 })
      tree:add_box({ 26, 15, 12 }, { 31, 16, 16 })
      tree:add_box({ 26, 12, 12 }, { 27, 16, 16 })
      tree:add_box({ 30, 12, 12 }, { 31, 16, 16 })
      tree:add_box({ 26, 12, 12 }, { 31, 16, 13 })
      tree:add_box({ 26, 12, 15 }, { 31, 16, 16 })
    end
  end
  -- holes
  local cave = make_hole("cave", { 4, 2, 4 }, { 12, 10, 12 }, { { 5, 3, 5 }, { 11, 9, 11 } },
    { { { 5.5, 6, 8 }, { 3.5, 6, 8 } }, { { 10.5, 6, 8 }, { 12.5, 6, 8 } } },
    { { 7.5, 3, 6 }, { 8.5, 9, 10 } })
  cave.tiles = { 0 }
  tree:add_box(cave.min, cave.max)
  w.holes[1] = cave
  w.hole_index.cave = 1
  if n >= 2 then
    local den = make_hole("den", { 20, 2, 4 }, { 28, 10, 12 }, { { 21, 3, 5 }, { 27, 9, 11 } },
      { { { 21.5, 6, 8 }, { 19.5, 6, 8 } } })
    den.tiles = { 1 }
    tree:add_box(den.min, den.max)
    w.holes[2] = den
    w.hole_index.den = 2
    if opts.sealed_den then -- a closed box around the door's outside point (19.5, 6, 8)
      tree:add_box({ 17, 4, 6 }, { 18, 8, 10 })
      tree:add_box({ 17, 4, 6 }, { 20, 5, 10 })
      tree:add_box({ 17, 7, 6 }, { 20, 8, 10 })
      tree:add_box({ 17, 4, 6 }, { 20, 8, 7 })
      tree:add_box({ 17, 4, 9 }, { 20, 8, 10 })
    end
  end
  if opts.nook then -- hole 3, small, in tile 0: a door whose outside shares tile 0 with the cave's
    local nook = make_hole("nook", { 1, 11, 12 }, { 5, 15, 16 }, { { 1.5, 11.5, 12.5 }, { 4.5, 14.5, 15.5 } },
      { { { 3, 13, 13 }, { 3, 13, 11.5 } } })
    nook.tiles = { 0 }
    tree:add_box(nook.min, nook.max)
    local i = #w.holes + 1
    w.holes[i] = nook
    w.hole_index.nook = i
  end
  w.graph = octonav.route.world(tree)
  for t = 0, n - 1 do assert(w.graph:add_tile(t, 0, 0, tree)) end
  function w:in_hole(p)
    for _, h in ipairs(self.holes) do
      if p[1] >= h.min[1] and p[1] < h.max[1] and p[2] >= h.min[2] and p[2] < h.max[2]
        and p[3] >= h.min[3] and p[3] < h.max[3] and h.tree:locate(p) == "free" then
        return h.name
      end
    end
    return nil
  end
  function w:tile_of(p)
    local idx = {}
    for k = 1, 3 do
      local c = math.floor((p[k] - self.origin[k]) / self.tile_size)
      if c < 0 or c >= self.tiles[k] then return nil end
      idx[k] = c
    end
    return idx[1] + self.tiles[1] * (idx[2] + self.tiles[2] * idx[3])
  end
  function w:set_door(h, j, open) self.holes[h].doors[j].open = open end
  return w
end



return { dist = dist, make_hole = make_hole, make_world = make_world }
