-- spec/support/scenes.lua: test scenes shared by spec/06 (query) and spec/15 (query model): a tree
-- (scale 1, origin 0, so world and nav coordinates are the same numbers) and a Lua voxel map of the
-- same boxes for octonav.checker, plus random free points in them and a key for tree cells.
-- Loaded with dofile("spec/support/scenes.lua"); returns { scene, free_points, cell_key }.
local octonav = require "octonav"

-- scene{ depth = 4, tiles = {1,1,1} } with s:box(min, max) adding to both the tree and the map;
-- `boxes` (optional) is a list of {min, max} added at once. s.X, s.Y, s.Z: the size in leaves.
local function scene(params, boxes)
  params = params or {}
  local depth, tiles = params.depth or 4, params.tiles or { 1, 1, 1 }
  local N = math.floor(2 ^ depth)
  local s = {
    tree = octonav.tree.new { depth = depth, tiles = tiles },
    X = tiles[1] * N, Y = tiles[2] * N, Z = tiles[3] * N,
    boxes = {},
  }
  -- the voxel map: outside the tile grid is blocked; a voxel [x, x+1]^3 is blocked iff it overlaps
  -- a box with positive volume (the rule of add_box)
  function s:blocked(x, y, z)
    if x < 0 or y < 0 or z < 0 or x >= self.X or y >= self.Y or z >= self.Z then return true end
    for _, b in ipairs(self.boxes) do
      local mn, mx = b[1], b[2]
      if x < mx[1] and x + 1 > mn[1] and y < mx[2] and y + 1 > mn[2] and z < mx[3] and z + 1 > mn[3] then
        return true
      end
    end
    return false
  end
  function s:box(mn, mx)
    self.tree:add_box(mn, mx)
    self.boxes[#self.boxes + 1] = { mn, mx }
    return self
  end
  for _, b in ipairs(boxes or {}) do s:box(b[1], b[2]) end
  return s
end

-- free_points(tries) is random_free_point(r, s, xlo, xhi): a point drawn uniformly from the scene
-- (x within [xlo, xhi] when given, else [0, s.X]; r is a prng.xorshift generator) until the tree
-- locates it in free space; at most `tries` draws, then an error.
local function free_points(tries)
  return function(r, s, xlo, xhi)
    for _ = 1, tries do
      local p = { r.range(xlo or 0, xhi or s.X), r.range(0, s.Y), r.range(0, s.Z) }
      if s.tree:locate(p) == "free" then return p end
    end
    error("no free point found")
  end
end

-- A cell (from tree:locate or tree:neighbors) as a string key "i,j,k:code".
local function cell_key(c) return ("%d,%d,%d:%d"):format(c.tile[1], c.tile[2], c.tile[3], c.code) end

return { scene = scene, free_points = free_points, cell_key = cell_key }
