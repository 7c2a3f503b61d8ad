-- Geometry: which leaves boxes, triangles, OBJ meshes and heightfields block (csrc/core/geometry.c), fill,
-- the agent radius, and export_obj. Expectations are computed here, leaf by leaf.
local octonav = require "octonav"
local Tree = octonav.tree

-- ---- helpers ------------------------------------------------------------------------------------

local files = dofile("spec/support/files.lua")

-- tmppath(suffix): os.tmpname() (.. suffix when given); cleanup() removes them (spec/support/files.lua)
local tmp = files.tracker()
local tmppath, cleanup = tmp.file, tmp.cleanup
local readfile, writefile = files.read, files.write

local function key(x, y, z) return x .. "," .. y .. "," .. z end

-- Leaf-by-leaf comparison of the tree against a predicate expected(x, y, z) -> true when blocked,
-- or "either" for a tie the reference cannot decide in floating point (leaf coordinates are global,
-- nav space). Reports the first few differences.
local function check_leaves(t, expected, label)
  local p = t:params()
  local N, s, o = p.tile_leaves, p.scale, p.origin
  local bad, nblocked = {}, 0
  for z = 0, p.tiles[3] * N - 1 do
    for y = 0, p.tiles[2] * N - 1 do
      for x = 0, p.tiles[1] * N - 1 do
        local st = t:locate { o[1] + (x + 0.5) * s, o[2] + (y + 0.5) * s, o[3] + (z + 0.5) * s }
        local got = st == "blocked"
        if got then nblocked = nblocked + 1 end
        local want = expected(x, y, z)
        if want ~= "either" and got ~= (want and true or false) then
          if #bad < 8 then
            bad[#bad + 1] = ("leaf %d,%d,%d: expected %s, got %s"):format(x, y, z,
              expected(x, y, z) and "blocked" or "free", st)
          else
            bad.more = (bad.more or 0) + 1
          end
        end
      end
    end
  end
  if #bad > 0 then
    error((label or "") .. "\n" .. table.concat(bad, "\n") .. (bad.more and ("\n... and %d more"):format(bad.more) or ""), 2)
  end
  return nblocked
end

-- A closed cube of 12 triangles with corners lo, hi.
local function cube_mesh(lo, hi)
  local v = {}
  for i = 0, 7 do
    v[#v + 1] = (i % 2 == 1) and hi[1] or lo[1]
    v[#v + 1] = (math.floor(i / 2) % 2 == 1) and hi[2] or lo[2]
    v[#v + 1] = (math.floor(i / 4) % 2 == 1) and hi[3] or lo[3]
  end
  local quads = { { 0, 2, 6, 4 }, { 1, 5, 7, 3 }, { 0, 4, 5, 1 }, { 2, 3, 7, 6 }, { 0, 1, 3, 2 }, { 4, 6, 7, 5 } }
  local idx = {}
  for _, q in ipairs(quads) do
    for _, k in ipairs { q[1], q[2], q[3], q[1], q[3], q[4] } do idx[#idx + 1] = k + 1 end
  end
  return v, idx
end

-- Exact-enough reference for "does a triangle touch the closed box": clip the triangle against the
-- box's 6 planes (Sutherland-Hodgman), with a slack eps (positive: generous, negative: strict).
local function tri_touches_box(tri, lo, hi, eps)
  local poly = { tri[1], tri[2], tri[3] }
  for axis = 1, 3 do
    for side = 0, 1 do
      local out = {}
      local function inside(p)
        if side == 0 then return p[axis] >= lo[axis] - eps else return p[axis] <= hi[axis] + eps end
      end
      local lim = side == 0 and lo[axis] - eps or hi[axis] + eps
      for i = 1, #poly do
        local a, b = poly[i], poly[i % #poly + 1]
        local ia, ib = inside(a), inside(b)
        if ia then out[#out + 1] = a end
        if ia ~= ib then
          local u = (lim - a[axis]) / (b[axis] - a[axis])
          out[#out + 1] = { a[1] + u * (b[1] - a[1]), a[2] + u * (b[2] - a[2]), a[3] + u * (b[3] - a[3]) }
        end
      end
      poly = out
      if #poly == 0 then return false end
    end
  end
  return true
end

-- Parse the v lines of an OBJ file: vertices and the bounding box.
local function obj_vertices(path)
  local vs, lo, hi = {}, { math.huge, math.huge, math.huge }, { -math.huge, -math.huge, -math.huge }
  for line in io.lines(path) do
    local x, y, z = line:match("^v%s+(%S+)%s+(%S+)%s+(%S+)")
    if x then
      local v = { tonumber(x), tonumber(y), tonumber(z) }
      vs[#vs + 1] = v
      for a = 1, 3 do
        lo[a] = math.min(lo[a], v[a])
        hi[a] = math.max(hi[a], v[a])
      end
    end
  end
  return vs, lo, hi
end

-- ---- boxes ----------------------------------------------------------------------------------------

describe("boxes", function()
  it("block the leaves they overlap with positive volume", function()
    local t = Tree.new { tiles = { 2, 1, 1 }, depth = 3 }
    t:add_box({ 2.5, 1, 3 }, { 9.25, 2, 4.5 })
    check_leaves(t, function(x, y, z) return x >= 2 and x <= 9 and y == 1 and z >= 3 and z <= 4 end)
  end)

  it("a flat box blocks the leaves it lies in (both sides of a lattice plane)", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 3 }
    t:add_box({ 1, 3, 1 }, { 3, 3, 2 })
    check_leaves(t, function(x, y, z) return x >= 1 and x <= 2 and (y == 2 or y == 3) and z == 1 end)
  end)

  it("a box that exactly covers a tile makes it solid (no nodes)", function()
    local t = Tree.new { tiles = { 2, 1, 1 }, depth = 3 }
    t:add_box({ 8, 0, 0 }, { 16, 8, 8 })
    assert.are.equal(0, t:stats().nodes)
    check_leaves(t, function(x) return x >= 8 end)
  end)

  it("are placed through origin and scale", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 3, scale = 0.5, origin = { 10, -4, 2 } }
    t:add_box({ 10.5, -3, 2.25 }, { 11, -2.75, 2.5 })
    check_leaves(t, function(x, y, z) return x == 1 and y == 2 and z == 0 end)
  end)

  it("raise when max is below min", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 3 }
    assert.has_error(function() t:add_box({ 1, 1, 1 }, { 2, 0.5, 2 }) end)
    assert.are.equal(0, t:stats().nodes)
  end)

  it("outside the grid are ignored", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 3 }
    t:add_box({ -5, -5, -5 }, { -1, -1, -1 })
    t:add_box({ 9, 0, 0 }, { 12, 4, 4 })
    assert.are.equal(0, t:stats().nodes)
    check_leaves(t, function() return false end)
  end)
end)

-- ---- triangles ------------------------------------------------------------------------------------

describe("triangles", function()
  -- Does the closed square [i-r, i+1+r] x [k-r, k+1+r] touch the right triangle {x >= 2, z >= 2, x + z <= 8}?
  -- Its point nearest the hypotenuse within x >= 2, z >= 2 is (max(i - r, 2), max(k - r, 2)).
  local function foot(i, k, r)
    r = r or 0
    return i + 1 + r >= 2 and k + 1 + r >= 2 and math.max(i - r, 2) + math.max(k - r, 2) <= 8
  end

  local function tri_tree(v, radius)
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 4, radius = radius }
    assert.are.equal(1, t:add_triangles(v, { 1, 2, 3 }))
    return t
  end

  it("a triangle in the plane y = 5.5 blocks the y = 5 leaves whose closed cube it touches", function()
    local t = tri_tree { 2, 5.5, 2, 6, 5.5, 2, 2, 5.5, 6 }
    -- footprint {x >= 2, z >= 2, x + z <= 8}: see foot()
    local n = check_leaves(t, function(x, y, z) return y == 5 and foot(x, z) end)
    assert.are.equal(26, n)
  end)

  it("a triangle exactly on y = 5 blocks both the y = 4 and the y = 5 layers", function()
    local t = tri_tree { 2, 5, 2, 6, 5, 2, 2, 5, 6 }
    local n = check_leaves(t, function(x, y, z) return (y == 4 or y == 5) and foot(x, z) end)
    assert.are.equal(52, n)
  end)

  it("a triangle inside one leaf's open interior blocks that leaf alone", function()
    local t = tri_tree { 3.2, 7.1, 9.3, 3.8, 7.2, 9.4, 3.5, 7.9, 9.9 }
    assert.are.equal(1, check_leaves(t, function(x, y, z) return x == 3 and y == 7 and z == 9 end))
  end)

  it("a vertical triangle on x = 3.25 blocks the x = 3 column under it only", function()
    local t = tri_tree { 3.25, 1.5, 1.5, 3.25, 1.5, 12.5, 3.25, 12.5, 1.5 }
    -- footprint in (y, z): y >= 1.5, z >= 1.5, y + z <= 14 -> squares j >= 1, k >= 1, j + k <= 14 (touching)
    check_leaves(t, function(x, y, z) return x == 3 and y >= 1 and z >= 1 and y + z <= 14 and y <= 12 and z <= 12 end)
  end)

  it("tilted triangles block what a clipping reference says (generic positions)", function()
    math.randomseed(42)
    local checked = 0
    for _ = 1, 6 do
      local v = {}
      for i = 1, 9 do v[i] = 1 + math.random() * 14 end
      local t = tri_tree(v)
      local tri = { { v[1], v[2], v[3] }, { v[4], v[5], v[6] }, { v[7], v[8], v[9] } }
      check_leaves(t, function(x, y, z)
        local lo, hi = { x, y, z }, { x + 1, y + 1, z + 1 }
        local strict, loose = tri_touches_box(tri, lo, hi, -1e-9), tri_touches_box(tri, lo, hi, 1e-9)
        if strict ~= loose then
          -- a near tie: accept whatever the tree says
          local p = t:params()
          return t:locate { (x + 0.5) * p.scale, (y + 0.5) * p.scale, (z + 0.5) * p.scale } == "blocked"
        end
        checked = checked + 1
        return strict
      end)
    end
    assert.is_true(checked > 6 * 4000)
  end)

  it("degenerate triangles: a segment and a point block the leaves whose closed cube they touch", function()
    local t = tri_tree { 2.5, 2.5, 2.5, 5.5, 2.5, 2.5, 2.5, 2.5, 2.5 }
    assert.are.equal(4, check_leaves(t, function(x, y, z) return x >= 2 and x <= 5 and y == 2 and z == 2 end))
    -- a diagonal through lattice edges (3,3) and (4,4) at z 2.5 also touches the leaves meeting there
    t = tri_tree { 2.5, 2.5, 2.5, 4.5, 4.5, 2.5, 3.5, 3.5, 2.5 }
    local want = { ["2,2"] = true, ["3,3"] = true, ["4,4"] = true, ["2,3"] = true, ["3,2"] = true, ["3,4"] = true, ["4,3"] = true }
    assert.are.equal(7, check_leaves(t, function(x, y, z) return z == 2 and want[x .. "," .. y] == true end))
    -- a point in a leaf's interior, and one on a lattice corner (8 leaves)
    t = tri_tree { 7.25, 1.5, 9.75, 7.25, 1.5, 9.75, 7.25, 1.5, 9.75 }
    assert.are.equal(1, check_leaves(t, function(x, y, z) return x == 7 and y == 1 and z == 9 end))
    t = tri_tree { 7, 2, 9, 7, 2, 9, 7, 2, 9 }
    assert.are.equal(8, check_leaves(t, function(x, y, z) return x >= 6 and x <= 7 and y >= 1 and y <= 2 and z >= 8 and z <= 9 end))
  end)

  it("are given in world space (origin, scale)", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 4, scale = 0.25, origin = { -2, 1, 0 } }
    -- nav = (world - origin) / 0.25: world y = 2.375 -> nav 5.5; x, z in [-1.5, -0.5] -> nav [2, 6]
    t:add_triangles({ -1.5, 2.375, 0.5, -0.5, 2.375, 0.5, -1.5, 2.375, 1.5 }, { 1, 2, 3 })
    check_leaves(t, function(x, y, z) return y == 5 and foot(x, z) end)
  end)

  it("reject bad arguments with errors", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 3 }
    assert.has_error(function() t:add_triangles({ 0, 0, 0, 1, 1 }, { 1, 2, 3 }) end)
    assert.has_error(function() t:add_triangles({ 0, 0, 0, 1, 1, 1, 2, 2, 2 }, { 1, 2 }) end)
    assert.has_error(function() t:add_triangles({ 0, 0, 0, 1, 1, 1, 2, 2, 2 }, { 1, 2, 4 }) end)
    assert.has_error(function() t:add_triangles({ 0, 0, 0, 1, 1, 1, 2, 2, 2 }, { 0, 1, 2 }) end)
    assert.has_error(function() t:add_triangles({ 0, 0, 0, 1, 1, 1, 2, 2, 0 / 0 }, { 1, 2, 3 }) end)
    assert.has_error(function() t:add_triangles({ 0, 0, 0, 1, 1, 1, 2, 2, math.huge }, { 1, 2, 3 }) end)
    assert.has_error(function() t:add_triangles({ 0, 0, 0, 1, 1, 1, 2, 2, 2 }, { 1, 2, 1.5 }) end)
    assert.are.equal(0, t:stats().nodes)
  end)
end)

-- ---- fill -----------------------------------------------------------------------------------------

describe("fill", function()
  -- The shell a closed cube mesh [4,12]^3 blocks: leaves touching a face; the faces at 4 and 12 touch
  -- leaves 3,4 and 11,12, so the shell is [3,12]^3 minus the interior [5,10]^3.
  local function in_box(x, y, z, a, b)
    return x >= a and x <= b and y >= a and y <= b and z >= a and z <= b
  end
  local function shell(x, y, z) return in_box(x, y, z, 3, 12) and not in_box(x, y, z, 5, 10) end

  local function free_cells(t)
    local path = os.tmpname()
    local n = assert(t:export_obj(path, { what = "free", form = "boxes" }))
    os.remove(path)
    return n
  end

  it("a closed cube mesh blocks exactly its shell", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 4 }
    local v, idx = cube_mesh({ 4, 4, 4 }, { 12, 12, 12 })
    assert.are.equal(12, t:add_triangles(v, idx))
    assert.are.equal(10 ^ 3 - 6 ^ 3, check_leaves(t, shell))
  end)

  it("from outside a closed cube mesh leaves the interior free and blocks the rest", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 4 }
    t:add_triangles(cube_mesh({ 4, 4, 4 }, { 12, 12, 12 }))
    local before = free_cells(t)
    local n = assert(t:fill { 0.5, 0.5, 0.5 })
    assert.is_true(n > 0)
    assert.are.equal(before - n, free_cells(t))      -- every cell counted was a free cell, now gone
    check_leaves(t, function(x, y, z) return not in_box(x, y, z, 5, 10) end)
    -- the interior is one connected free region: filling it blocks everything
    assert.is_true(assert(t:fill { 8, 8, 8 }) > 0)
    check_leaves(t, function() return true end)
  end)

  it("from inside a closed cube mesh blocks the interior only", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 4 }
    t:add_triangles(cube_mesh({ 4, 4, 4 }, { 12, 12, 12 }))
    local before = free_cells(t)
    local n = assert(t:fill { 7.3, 8.9, 10.2 })
    assert.are.equal(before - n, free_cells(t))
    check_leaves(t, function(x, y, z) return in_box(x, y, z, 3, 12) end)
  end)

  it("from inside a hollow box of walls blocks it, across tile borders", function()
    local t = Tree.new { tiles = { 2, 2, 1 }, depth = 3 }
    -- walls one leaf thick around [3,13] x [3,13] x [1,7] (interior [4,12] x [4,12] x [2,6])
    t:add_box({ 3, 3, 1 }, { 13, 13, 2 })
    t:add_box({ 3, 3, 6 }, { 13, 13, 7 })
    t:add_box({ 3, 3, 1 }, { 4, 13, 7 })
    t:add_box({ 12, 3, 1 }, { 13, 13, 7 })
    t:add_box({ 3, 3, 1 }, { 13, 4, 7 })
    t:add_box({ 3, 12, 1 }, { 13, 13, 7 })
    local function hollow(x, y, z) return x >= 3 and x <= 12 and y >= 3 and y <= 12 and z >= 1 and z <= 6 end
    local walls = check_leaves(t, function(x, y, z) return hollow(x, y, z) and not (x >= 4 and x <= 11 and y >= 4 and y <= 11 and z >= 2 and z <= 5) end)
    assert.are.equal(10 * 10 * 6 - 8 * 8 * 4, walls)
    local before = free_cells(t)
    local n = assert(t:fill { 8, 8, 4 })              -- on a tile corner: x = 8, y = 8
    assert.are.equal(before - n, free_cells(t))
    check_leaves(t, hollow)
  end)

  it("returns nil, 'blocked' in blocked space and nil, 'outside' outside", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 3 }
    t:add_box({ 0, 0, 0 }, { 1, 1, 1 })
    local n, why = t:fill { 0.5, 0.5, 0.5 }
    assert.is_nil(n)
    assert.are.equal("blocked", why)
    n, why = t:fill { -0.5, 0.5, 0.5 }
    assert.is_nil(n)
    assert.are.equal("outside", why)
    n, why = t:fill { 8, 0.5, 0.5 }
    assert.is_nil(n)
    assert.are.equal("outside", why)
    assert.are.equal(1, check_leaves(t, function(x, y, z) return x == 0 and y == 0 and z == 0 end))
  end)
end)

-- ---- OBJ files ------------------------------------------------------------------------------------

describe("add_obj", function()
  after_each(cleanup)

  local function obj(text, eol)
    local path = tmppath(".obj")
    writefile(path, (text:gsub("\n", eol or "\n")))
    return path
  end

  it("reads v/vt/vn, negative indices, CRLF, fan-splits polygons; counts vertices and triangles", function()
    local text = table.concat({
      "# a comment",
      "mtllib nowhere.mtl",
      "o thing",
      "g group",
      "v 2 2 2",
      "v 14 2 2",
      "v 14 14 14",
      "v 2 14 2",
      "vt 0 0",
      "vn 0 1 0",
      "s off",
      "usemtl stone",
      "f 1/1/1 2/1/1 3/1/1 4/1/1",      -- a non-planar quad: (1,2,3), (1,3,4)
      "v 9.5 1 9.5",
      "v 12.5 1 9.5",
      "v 9.5 1 12.5",
      "v 12.5 1 12.5",
      "v 11 1 14",
      "f -5 -4 -3",                      -- 5, 6, 7
      "f 5//1 6//1 8//1 9//1 7//1",      -- a pentagon: 3 triangles
      "f 6/1 8/1 9/1",
      "l 1 2",
      "",
    }, "\n")
    local tris = { 1, 2, 3, 1, 3, 4, 5, 6, 7, 5, 6, 8, 5, 8, 9, 5, 9, 7, 6, 8, 9 }
    local verts = { 2, 2, 2, 14, 2, 2, 14, 14, 14, 2, 14, 2, 9.5, 1, 9.5, 12.5, 1, 9.5, 9.5, 1, 12.5, 12.5, 1, 12.5, 11, 1, 14 }
    local ref = Tree.new { tiles = { 1, 1, 1 }, depth = 4 }
    assert.are.equal(7, ref:add_triangles(verts, tris))
    for _, eol in ipairs { "\n", "\r\n", "\r" } do
      local t = Tree.new { tiles = { 1, 1, 1 }, depth = 4 }
      local nv, nt = t:add_obj(obj(text, eol))
      assert.are.equal(9, nv)
      assert.are.equal(7, nt)
      assert.are.equal(ref:encode_tile(0, 0, 0), t:encode_tile(0, 0, 0))
    end
    -- the other diagonal of the non-planar quad blocks different leaves: the split is the fan one
    local other = Tree.new { tiles = { 1, 1, 1 }, depth = 4 }
    other:add_triangles(verts, { 1, 2, 4, 2, 3, 4, 5, 6, 7, 5, 6, 8, 5, 8, 9, 5, 9, 7, 6, 8, 9 })
    assert.are_not.equal(ref:encode_tile(0, 0, 0), other:encode_tile(0, 0, 0))
  end)

  it("accepts extra numbers on v lines, a byte order mark, tabs and a missing final newline", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 3 }
    local nv, nt = t:add_obj(obj("\239\187\191v 1 1 1 1\nv\t2 1 1 0.5 0.5 0.5\nv 1 2 1\nf 1 2 3"))
    assert.are.equal(3, nv)
    assert.are.equal(1, nt)
    assert.are.equal("blocked", (t:locate { 1.5, 1.5, 1.5 }))
  end)

  it("an empty file or one without faces inserts nothing", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 3 }
    assert.are.same({ 0, 0 }, { t:add_obj(obj("")) })
    assert.are.same({ 2, 0 }, { t:add_obj(obj("v 1 1 1\nv 2 2 2\n")) })
    assert.are.equal(0, t:stats().nodes)
  end)

  local bad = {
    { "bad vertex index", "v 1 1 1\nv 2 1 1\nv 1 2 1\n\nf 1 2 4\n", 5 },
    { "bad vertex index", "v 1 1 1\nv 2 1 1\nv 1 2 1\nf 1 2 0\n", 4 },
    { "bad vertex index", "v 1 1 1\nv 2 1 1\nv 1 2 1\nf -4 -1 -2\n", 4 },
    { "bad vertex index", "f 1 2 3\nv 1 1 1\nv 2 1 1\nv 1 2 1\n", 1 },         -- not yet defined
    { "bad number", "v 1 1 1\nv 2 x 1\n", 2 },
    { "bad number", "v 1 1 1\nv 2 1e 1\n", 2 },
    { "bad face vertex", "v 1 1 1\nv 2 1 1\nv 1 2 1\nf 1 2 3a\n", 4 },
    { "bad face vertex", "v 1 1 1\nv 2 1 1\nv 1 2 1\nf 1 2 x\n", 4 },
    { "bad face vertex", "v 1 1 1\nv 2 1 1\nv 1 2 1\nf 1 2 3/1/1/1\n", 4 },
    { "face with fewer than 3 vertices", "v 1 1 1\nv 2 1 1\nv 1 2 1\nf 1 2\n", 4 },
    { "face with fewer than 3 vertices", "v 1 1 1\nf\n", 2 },
    { "vertex with fewer than 3 coordinates", "v 1 1\n", 1 },
    { "not finite", "v 1 inf 1\n", 1 },
  }
  for _, case in ipairs(bad) do
    it(("reports '%s' with its line number (line %d)"):format(case[1], case[3]), function()
      for _, eol in ipairs { "\n", "\r\n", "\r" } do
        local t = Tree.new { tiles = { 1, 1, 1 }, depth = 3 }
        local path = obj(case[2], eol)
        local nv, err = t:add_obj(path)
        assert.is_nil(nv)
        assert.are.equal("string", type(err))
        assert.is_truthy(err:find(path .. ":" .. case[3] .. ": ", 1, true), err)
        assert.is_truthy(err:find(case[1], 1, true), err)
        assert.are.equal(0, t:stats().nodes)     -- nothing inserted from a file that failed to parse
      end
    end)
  end

  it("reports a missing file with its path", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 3 }
    local path = files.tmpname()
    local nv, err = t:add_obj(path)
    assert.is_nil(nv)
    assert.is_truthy(err:find(path, 1, true), err)
    assert.is_truthy(err:find("cannot read", 1, true), err)
  end)

  local meshdir = "../shared/data/meshes/"
  local meshes = {
    { "dungeon.obj", 5101, 10133 },
    { "nav_test.obj", 884, 1612 },
    { "undulating.obj", 2800, 5202 },
    { "house.obj", 2779, 4494 },
  }
  for _, m in ipairs(meshes) do
    local path = meshdir .. m[1]
    local fh = io.open(path, "rb")
    if fh then fh:close() end
    if not fh then
      pending(m[1] .. ": ../shared/data/meshes is absent")
    else
      it(m[1] .. " gives the documented counts and every vertex lands in a blocked leaf", function()
        local vs, lo, hi = obj_vertices(path)
        assert.are.equal(m[2], #vs)
        -- about 200 leaves along the longest axis, tiles of depth 6 (64 leaves), a leaf of margin
        local ext = math.max(hi[1] - lo[1], hi[2] - lo[2], hi[3] - lo[3])
        local scale = ext / 200
        local tiles, origin = {}, {}
        for a = 1, 3 do
          origin[a] = lo[a] - scale
          tiles[a] = math.ceil(((hi[a] - lo[a]) / scale + 2) / 64)
        end
        local t = Tree.new { tiles = tiles, depth = 6, scale = scale, origin = origin }
        local nv, nt = t:add_obj(path)
        assert.are.equal(m[2], nv, "vertices")
        assert.are.equal(m[3], nt)
        for i, v in ipairs(vs) do
          local st = t:locate(v)
          if st ~= "blocked" then
            error(("vertex %d (%.9g, %.9g, %.9g) is %s"):format(i, v[1], v[2], v[3], tostring(st)))
          end
        end
      end)
    end
  end
end)

-- ---- heightfields ---------------------------------------------------------------------------------

-- Reference: the heightfield surface h(x, z) (world space), two triangles a square split along the
-- (i,k)-(i+1,k+1) diagonal, and its maximum over a rectangle (at a vertex of the rectangle cut by the
-- grid lines and diagonals).
local function hf_surface(hf)
  local c, ox, oz, nx, nz, H = hf.cell, hf.origin[1], hf.origin[3], hf.nx, hf.nz, hf.heights
  local function h(x, z)
    local u, v = (x - ox) / c, (z - oz) / c
    local i = math.max(0, math.min(nx - 2, math.floor(u)))
    local k = math.max(0, math.min(nz - 2, math.floor(v)))
    local fu, fv = u - i, v - k
    local h00, h10 = H[i + k * nx + 1], H[i + 1 + k * nx + 1]
    local h01, h11 = H[i + (k + 1) * nx + 1], H[i + 1 + (k + 1) * nx + 1]
    local r
    if fu >= fv then r = h00 + fu * (h10 - h00) + fv * (h11 - h10)
    else r = h00 + fv * (h01 - h00) + fu * (h11 - h01) end
    return hf.origin[2] + r
  end
  local dx0, dx1 = ox, ox + (nx - 1) * c
  local dz0, dz1 = oz, oz + (nz - 1) * c
  -- max of h over [x0,x1] x [z0,z1] clipped to the domain; nil when the overlap has no area
  local function hmax(x0, x1, z0, z1)
    x0, x1, z0, z1 = math.max(x0, dx0), math.min(x1, dx1), math.max(z0, dz0), math.min(z1, dz1)
    if not (x1 > x0 and z1 > z0) then return nil end
    local pts = { { x0, z0 }, { x1, z0 }, { x0, z1 }, { x1, z1 } }
    for i = 0, nx - 1 do
      local x = ox + i * c
      if x > x0 and x < x1 then
        pts[#pts + 1] = { x, z0 }
        pts[#pts + 1] = { x, z1 }
        for k = 0, nz - 1 do
          local z = oz + k * c
          if z > z0 and z < z1 then pts[#pts + 1] = { x, z } end
        end
      end
    end
    for k = 0, nz - 1 do
      local z = oz + k * c
      if z > z0 and z < z1 then
        pts[#pts + 1] = { x0, z }
        pts[#pts + 1] = { x1, z }
      end
    end
    -- diagonals: (x - ox) - (z - oz) = m * c
    for m = -(nz - 1), nx - 1 do
      local d = ox - oz + m * c
      for _, z in ipairs { z0, z1 } do
        local x = z + d
        if x > x0 and x < x1 then pts[#pts + 1] = { x, z } end
      end
      for _, x in ipairs { x0, x1 } do
        local z = x - d
        if z > z0 and z < z1 then pts[#pts + 1] = { x, z } end
      end
    end
    local best = -math.huge
    for _, p in ipairs(pts) do best = math.max(best, h(p[1], p[2])) end
    return best
  end
  return h, hmax
end

-- blocked(x, y, z) for a tree's leaf lattice: bottom below the max surface (+ r) over the footprint
-- grown by r, clipped to the domain.
local function hf_expected(t, hf)
  local p = t:params()
  local s, o, r = p.scale, p.origin, p.radius
  local _, hmax = hf_surface(hf)
  local cache = {}
  return function(x, y, z)
    local ck = x .. "," .. z
    local m = cache[ck]
    if m == nil then
      local wx, wz = o[1] + x * s, o[3] + z * s
      m = hmax(wx - r, wx + s + r, wz - r, wz + s + r) or false
      cache[ck] = m
    end
    if not m then return false end
    local bottom, top = o[2] + y * s, m + r
    if math.abs(bottom - top) <= 1e-9 * math.max(1, math.abs(top)) then return "either" end
    return bottom < top
  end
end

describe("heightfields", function()
  it("a flat one at y = 3.5 blocks every leaf with y <= 3 over its footprint and none above", function()
    local t = Tree.new { tiles = { 2, 1, 1 }, depth = 3 }
    local h = {}
    for i = 1, 6 * 4 do h[i] = 3.5 end
    t:add_heightfield { origin = { 2, 0, 2 }, cell = 2, nx = 6, nz = 4, heights = h }
    -- domain x in [2, 12], z in [2, 8]: leaves x 2..11, z 2..7 (z 7 is the last row of the tile)
    local n = check_leaves(t, function(x, y, z) return x >= 2 and x <= 11 and z >= 2 and z <= 7 and y <= 3 end)
    assert.are.equal(10 * 6 * 4, n)
  end)

  it("a flat one through a lattice plane (y = 4) blocks y <= 3 only", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 3 }
    t:add_heightfield { origin = { 1, 0, 1 }, cell = 1, nx = 3, nz = 3, heights = { 4, 4, 4, 4, 4, 4, 4, 4, 4 } }
    check_leaves(t, function(x, y, z) return x >= 1 and x <= 2 and z >= 1 and z <= 2 and y <= 3 end)
  end)

  local function random_hf(seed, nx, nz, cell, origin, lo, hi)
    math.randomseed(seed)
    local h = {}
    for i = 1, nx * nz do h[i] = math.random(lo * 4, hi * 4) / 4 end
    return { origin = origin, cell = cell, nx = nx, nz = nz, heights = h }
  end

  it("a sloped one blocks exactly the leaves below its surface", function()
    local cases = {
      { tiles = { 2, 1, 2 }, depth = 3, hf = random_hf(1, 9, 9, 2, { 0, 0, 0 }, 0, 7.75) },
      { tiles = { 2, 1, 2 }, depth = 3, hf = random_hf(2, 12, 10, 1, { 2.5, 0, 3.5 }, 0.5, 7.5) },
      { tiles = { 1, 1, 1 }, depth = 4, hf = random_hf(3, 5, 6, 3, { 0.5, 2.25, -1.5 }, -2, 12) },
      { tiles = { 2, 2, 1 }, depth = 3, hf = random_hf(4, 20, 9, 0.75, { 0.25, 0, 0.5 }, 1, 14) },
      -- reaching past the tree on every side, partly below it
      { tiles = { 2, 1, 1 }, depth = 3, hf = random_hf(6, 15, 9, 1.5, { -3, -2, -2.5 }, -1, 12) },
    }
    for ci, c in ipairs(cases) do
      local t = Tree.new { tiles = c.tiles, depth = c.depth }
      t:add_heightfield(c.hf)
      check_leaves(t, hf_expected(t, c.hf), "case " .. ci)
    end
  end)

  it("a sloped one in a scaled, offset tree", function()
    local hf = random_hf(5, 7, 7, 0.6, { -1.3, 0.2, 4.1 }, 0, 3)
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 4, scale = 0.25, origin = { -1.5, -0.5, 4 } }
    t:add_heightfield(hf)
    check_leaves(t, hf_expected(t, hf))
  end)

  it("a ridge: the maximum over a leaf's footprint counts, not the value at its centre", function()
    -- one sample high in the middle of a 3x3 grid of cell 4: leaves around it see the peak
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 4 }
    local hf = { origin = { 0, 0, 0 }, cell = 4, nx = 3, nz = 3, heights = { 0, 0, 0, 0, 8, 0, 0, 0, 0 } }
    t:add_heightfield(hf)
    check_leaves(t, hf_expected(t, hf))
    assert.are.equal("blocked", (t:locate { 3.5, 7.5, 3.5 }))   -- the leaf whose corner is the peak
    -- leaf (0,*,0): the surface over [0,1]^2 peaks at (1,1) with 8 * 1/4 = 2
    assert.are.equal("blocked", (t:locate { 0.5, 1.5, 0.5 }))
    assert.are.equal("free", (t:locate { 0.5, 2.5, 0.5 }))
  end)

  it("rejects bad arguments", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 3 }
    assert.has_error(function() t:add_heightfield { nx = 1, nz = 2, heights = { 1, 1 } } end)
    assert.has_error(function() t:add_heightfield { nx = 2, nz = 2, heights = { 1, 1, 1 } } end)
    assert.has_error(function() t:add_heightfield { nx = 2, nz = 2, cell = 0, heights = { 1, 1, 1, 1 } } end)
    assert.has_error(function() t:add_heightfield { nx = 2, nz = 2, heights = { 1, 1, 1, 0 / 0 } } end)
    assert.has_error(function() t:add_heightfield { nx = 2, nz = 2, heights = { 1, 1, 1, 1 }, bogus = 1 } end)
    assert.are.equal(0, t:stats().nodes)
  end)
end)

-- ---- radius ---------------------------------------------------------------------------------------

describe("agent radius", function()
  it("grows a box by one leaf on every side (radius 1, scale 1)", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 4, radius = 1 }
    t:add_box({ 5, 6, 7 }, { 8, 8, 9 })
    assert.are.equal(5 * 4 * 4, check_leaves(t, function(x, y, z)
      return x >= 4 and x <= 8 and y >= 5 and y <= 8 and z >= 6 and z <= 9
    end))
  end)

  it("is in world units (radius 0.5 at scale 0.5 is one leaf)", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 4, scale = 0.5, origin = { 1, 1, 1 }, radius = 0.5 }
    t:add_box({ 3, 3, 3 }, { 4, 4, 4 })                       -- leaves 4..5, grown to 3..6
    check_leaves(t, function(x, y, z) return x >= 3 and x <= 6 and y >= 3 and y <= 6 and z >= 3 and z <= 6 end)
  end)

  it("grows a triangle by the cube of half-size r", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 4, radius = 1 }
    t:add_triangles({ 2, 5.5, 2, 6, 5.5, 2, 2, 5.5, 6 }, { 1, 2, 3 })
    -- a leaf's cube grown by 1 ([i-1, i+2]) touches the triangle {x >= 2, z >= 2, x + z <= 8} at y 5.5
    local function foot(i, k)
      return i + 2 >= 2 and k + 2 >= 2 and math.max(i - 1, 2) + math.max(k - 1, 2) <= 8
    end
    check_leaves(t, function(x, y, z) return y >= 4 and y <= 6 and foot(x, z) end)
  end)

  it("grows a heightfield up and sideways", function()
    local hf = { origin = { 4, 0, 4 }, cell = 2, nx = 4, nz = 4,
      heights = { 1, 2, 3, 2, 2, 3.5, 4, 1, 0.5, 1, 5.25, 2, 1, 1, 1, 1 } }
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 4, radius = 1 }
    t:add_heightfield(hf)
    check_leaves(t, hf_expected(t, hf))
    assert.are.equal("blocked", (t:locate { 3.5, 1.5, 3.5 }))   -- outside the domain, within r of it
  end)
end)

-- ---- export_obj -----------------------------------------------------------------------------------

describe("export_obj", function()
  after_each(cleanup)

  local function scene()
    local t = Tree.new { tiles = { 2, 1, 2 }, depth = 3, scale = 0.5, origin = { -1, 2, 3 } }
    t:add_box({ -0.75, 2.2, 3.1 }, { 3.5, 3.1, 4.4 })
    t:add_box({ 3, 2, 7 }, { 7, 6, 11 })                      -- tile (1,0,1) solid
    t:add_triangles({ 0, 5, 5, 6, 4, 6, 1, 3, 10 }, { 1, 2, 3 })
    return t
  end

  -- boxes of an exported file: { min = {x,y,z}, size = s }; checks 8 v and 6 f lines per box
  local function parse(path, nboxes)
    local vs, fs, boxes = {}, {}, {}
    local first
    for line in io.lines(path) do
      first = first or line
      local tag = line:match("^(%S+)")
      if tag == "v" then
        local x, y, z = line:match("^v (%S+) (%S+) (%S+)$")
        vs[#vs + 1] = { tonumber(x), tonumber(y), tonumber(z) }
      elseif tag == "f" then
        local a, b, c, d = line:match("^f (%d+) (%d+) (%d+) (%d+)$")
        fs[#fs + 1] = { tonumber(a), tonumber(b), tonumber(c), tonumber(d) }
      else
        assert.are.equal("#", tag, line)
      end
    end
    assert.are.equal(8 * nboxes, #vs)
    assert.are.equal(6 * nboxes, #fs)
    for b = 0, nboxes - 1 do
      local mn, mx = { math.huge, math.huge, math.huge }, { -math.huge, -math.huge, -math.huge }
      for i = 1, 8 do
        local v = vs[8 * b + i]
        for a = 1, 3 do
          mn[a] = math.min(mn[a], v[a])
          mx[a] = math.max(mx[a], v[a])
        end
      end
      local s = mx[1] - mn[1]
      assert.is_true(s > 0)
      assert.is_true(math.abs(mx[2] - mn[2] - s) < 1e-9 and math.abs(mx[3] - mn[3] - s) < 1e-9)
      -- 8 distinct corners
      local seen = {}
      for i = 1, 8 do
        local v = vs[8 * b + i]
        local k = ((v[1] == mn[1]) and 0 or 1) + ((v[2] == mn[2]) and 0 or 2) + ((v[3] == mn[3]) and 0 or 4)
        assert.is_nil(seen[k])
        seen[k] = true
      end
      -- 6 quads on this box's vertices, each on one face
      for q = 1, 6 do
        local f = fs[6 * b + q]
        local on = { 0, 0, 0 }
        for _, i in ipairs(f) do
          assert.is_true(i > 8 * b and i <= 8 * b + 8)
          for a = 1, 3 do if vs[i][a] == mn[a] then on[a] = on[a] + 1 end end
        end
        local flat = 0
        for a = 1, 3 do if on[a] == 0 or on[a] == 4 then flat = flat + 1 end end
        assert.are.equal(1, flat)
      end
      boxes[#boxes + 1] = { min = mn, size = s }
    end
    return boxes, first
  end

  it("writes the blocked cubes: 8 v and 6 f lines a box, covering exactly the blocked leaves", function()
    local t = scene()
    local path = tmppath(".obj")
    local n = assert(t:export_obj(path, { form = "boxes" }))
    assert.is_true(n > 0)
    local boxes, first = parse(path, n)
    assert.are.equal("# octonav blocked cells", first)
    local p = t:params()
    local covered, volume = {}, 0
    for _, b in ipairs(boxes) do
      local k = math.floor(b.size / p.scale + 0.5)
      local i0 = math.floor((b.min[1] - p.origin[1]) / p.scale + 0.5)
      local j0 = math.floor((b.min[2] - p.origin[2]) / p.scale + 0.5)
      local l0 = math.floor((b.min[3] - p.origin[3]) / p.scale + 0.5)
      for z = l0, l0 + k - 1 do
        for y = j0, j0 + k - 1 do
          for x = i0, i0 + k - 1 do
            assert.is_nil(covered[key(x, y, z)], "boxes overlap")
            covered[key(x, y, z)] = true
            volume = volume + 1
          end
        end
      end
    end
    local nblocked = check_leaves(t, function(x, y, z) return covered[key(x, y, z)] end)
    assert.are.equal(nblocked, volume)
    -- the same with the option spelled out
    local path2 = tmppath(".obj")
    assert.are.equal(n, t:export_obj(path2, { what = "blocked", form = "boxes" }))
    assert.are.equal(readfile(path), readfile(path2))
  end)

  it("writes the free cubes: one box per free cell", function()
    local t = scene()
    local path = tmppath(".obj")
    local n = assert(t:export_obj(path, { what = "free", form = "boxes" }))
    local boxes, first = parse(path, n)
    assert.are.equal("# octonav free cells", first)
    -- the free cells locate reports, by their min corner and size
    local p = t:params()
    local cells, ncells = {}, 0
    for z = 0, p.tiles[3] * p.tile_leaves - 1 do
      for y = 0, p.tiles[2] * p.tile_leaves - 1 do
        for x = 0, p.tiles[1] * p.tile_leaves - 1 do
          local st, c = t:locate { p.origin[1] + (x + 0.5) * p.scale, p.origin[2] + (y + 0.5) * p.scale,
            p.origin[3] + (z + 0.5) * p.scale }
          if st == "free" then
            local k = ("%.9g %.9g %.9g %.9g"):format(c.min[1], c.min[2], c.min[3], c.size)
            if not cells[k] then
              cells[k] = true
              ncells = ncells + 1
            end
          end
        end
      end
    end
    assert.are.equal(ncells, n)
    for _, b in ipairs(boxes) do
      local k = ("%.9g %.9g %.9g %.9g"):format(b.min[1], b.min[2], b.min[3], b.size)
      assert.is_true(cells[k], "exported box is not a free cell: " .. k)
      cells[k] = nil
    end
  end)

  it("an empty tree exports no blocked box and one free box per tile", function()
    local t = Tree.new { tiles = { 3, 1, 2 }, depth = 2 }
    local path = tmppath(".obj")
    assert.are.equal(0, t:export_obj(path, { form = "boxes" }))
    assert.are.equal(6, t:export_obj(path, { what = "free", form = "boxes" }))
  end)

  it("returns nil, err with the path when it cannot write; raises for a bad option", function()
    local t = scene()
    local path = "/nonexistent-dir-octonav/x.obj"
    local n, err = t:export_obj(path)
    assert.is_nil(n)
    assert.is_truthy(err:find(path, 1, true), err)
    assert.has_error(function() t:export_obj(tmppath(".obj"), { what = "walls" }) end)
    assert.has_error(function() t:export_obj(tmppath(".obj"), { which = "free" }) end)
  end)
end)
