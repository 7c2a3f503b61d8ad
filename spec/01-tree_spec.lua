-- spec/01-tree_spec.lua -- octonav.tree: API behaviour, argument checking and misuse, and small
-- scenes with exactly known answers. Run: busted --lua=lua5.4 spec/01-tree_spec.lua
local compat = require "octonav.compat" -- Lua 5.1 .. 5.4 (issue 34)
local bits = dofile("spec/support/bits.lua") -- integer operators on every Lua version (issue 34)
local octonav = require "octonav"
local tree = octonav.tree

local NAN, INF = 0 / 0, math.huge

-- The call must raise, and the message must contain `text` (plain substring, not a pattern).
local function raises(fn, text)
  assert.error_matches(fn, text, 1, true)
end

-- A tree of one 16^3 tile (depth 4) unless told otherwise.
local function small(opts)
  opts = opts or {}
  if opts.depth == nil then opts.depth = 4 end
  return tree.new(opts)
end

-- tmpname(suffix): a fresh temporary name (the file is not created); read_file, write_file: whole
-- files (spec/support/files.lua)
local files = dofile("spec/support/files.lua")
local tmpname, read_file, write_file = files.tmpname, files.read, files.write

-- Node count stored in a tile blob (u32 at offset 9, 1-based) and its flags byte.
local function blob_nodes(blob)
  return (compat.unpack_bytes("<I4", blob, 9))
end
local function blob_flags(blob)
  return blob:byte(8)
end

-- zlib's CRC-32, as the tile blobs use (spec/support/crc32.lua)
local crc32 = dofile("spec/support/crc32.lua")

local function all_blobs(t)
  local p, out = t:params(), {}
  for k = 0, p.tiles[3] - 1 do
    for j = 0, p.tiles[2] - 1 do
      for i = 0, p.tiles[1] - 1 do
        out[#out + 1] = t:encode_tile(i, j, k)
      end
    end
  end
  return out
end

-- Expect a free cell with this world min corner and size.
local function assert_free_cell(t, p, min, size)
  local what, cell = t:locate(p)
  assert.are.equal("free", what)
  assert.are.same(min, cell.min)
  assert.are.equal(size, cell.size)
  return cell
end

-- The known scene used in several places: one box [2,6]^3 in a 16^3 tile.
local function box_scene(opts)
  local t = small(opts)
  t:add_box({ 2, 2, 2 }, { 6, 6, 6 })
  return t
end

local it54 = dofile("spec/support/close54.lua")(it, pending, _ENV) -- <close> tests run on Lua 5.4 only

describe("octonav module", function()
  it("exposes tree and a version string", function()
    assert.are.equal("table", type(octonav.tree))
    assert.are.equal("function", type(octonav.tree.new))
    assert.are.equal("function", type(octonav.tree.load))
    assert.truthy(octonav._VERSION:match("^octonav %d+%.%d+%.%d+"))
  end)
end)

describe("octonav.tree.new", function()
  it("has documented defaults", function()
    local p = tree.new():params()
    assert.are.same({ 1, 1, 1 }, p.tiles)
    assert.are.equal(9, p.depth)
    assert.are.equal(1.0, p.scale)
    assert.are.same({ 0, 0, 0 }, p.origin)
    assert.are.equal(0, p.radius)
    assert.are.equal(512, p.tile_leaves)
    assert.are.same(p, tree.new({}):params())
  end)

  it("keeps every option it is given", function()
    local t = tree.new { tiles = { 3, 2, 1 }, depth = 5, scale = 0.25, origin = { -1.5, 2, 1e6 }, radius = 0.75 }
    local p = t:params()
    assert.are.same({ 3, 2, 1 }, p.tiles)
    assert.are.equal(5, p.depth)
    assert.are.equal(0.25, p.scale)
    assert.are.same({ -1.5, 2, 1e6 }, p.origin)
    assert.are.equal(0.75, p.radius)
    assert.are.equal(32, p.tile_leaves)
    assert.are.equal(6, t:stats().tiles)
  end)

  it("accepts the extreme depths 1 and 9", function()
    assert.are.equal(2, tree.new({ depth = 1 }):params().tile_leaves)
    assert.are.equal(512, tree.new({ depth = 9 }):params().tile_leaves)
  end)

  it("rejects unknown option names", function()
    raises(function() tree.new { tile = { 1, 1, 1 } } end, "unknown option 'tile'")
    raises(function() tree.new { x = 1 } end, "unknown option 'x'")
    raises(function() tree.new { depth = 4, Depth = 4 } end, "unknown option 'Depth'")
    raises(function() tree.new { 1, 2, 3 } end, "option names must be strings")
  end)

  it("rejects a non-table argument", function()
    raises(function() tree.new(5) end, "octonav.tree.new: argument #1: table expected, got number")
    raises(function() tree.new("depth=4") end, "table expected, got string")
  end)

  it("validates depth", function()
    raises(function() tree.new { depth = 0 } end, "depth must be 1..9")
    raises(function() tree.new { depth = 10 } end, "depth must be 1..9")
    raises(function() tree.new { depth = -1 } end, "depth must be 1..9")
    raises(function() tree.new { depth = 1.5 } end, "option 'depth': integer expected")
    raises(function() tree.new { depth = "four" } end, "option 'depth': integer expected, got string")
    raises(function() tree.new { depth = NAN } end, "option 'depth': integer expected")
  end)

  it("validates tiles", function()
    raises(function() tree.new { tiles = { 0, 1, 1 } } end, "tiles must be 1..4096 per axis")
    raises(function() tree.new { tiles = { 1, 0, 1 } } end, "tiles must be 1..4096 per axis")
    raises(function() tree.new { tiles = { 1, 1, -2 } } end, "tiles must be 1..4096 per axis")
    raises(function() tree.new { tiles = { 4097, 1, 1 } } end, "tiles must be 1..4096 per axis")
    raises(function() tree.new { tiles = { 4096, 4096, 128 } } end, "too many tiles")
    raises(function() tree.new { tiles = 4 } end, "tiles: table of 3 integers expected, got number")
    raises(function() tree.new { tiles = { 1, 1 } } end, "tiles: element 3 must be an integer")
    raises(function() tree.new { tiles = { 1.5, 1, 1 } } end, "tiles: element 1 must be an integer")
    raises(function() tree.new { tiles = { "a", 1, 1 } } end, "tiles: element 1 must be an integer")
  end)

  it("validates scale", function()
    raises(function() tree.new { scale = 0 } end, "scale must be > 0")
    raises(function() tree.new { scale = -1 } end, "scale must be > 0")
    raises(function() tree.new { scale = NAN } end, "option 'scale': must be a finite number")
    raises(function() tree.new { scale = INF } end, "option 'scale': must be a finite number")
    raises(function() tree.new { scale = "big" } end, "option 'scale': number expected, got string")
  end)

  it("validates radius", function()
    raises(function() tree.new { radius = -1 } end, "radius must be >= 0")
    raises(function() tree.new { radius = -1e-300 } end, "radius must be >= 0")
    raises(function() tree.new { radius = NAN } end, "option 'radius': must be a finite number")
    raises(function() tree.new { radius = INF } end, "option 'radius': must be a finite number")
    raises(function() tree.new { radius = {} } end, "option 'radius': number expected, got table")
    assert.are.equal(0, tree.new({ radius = 0 }):params().radius)
  end)

  it("validates origin", function()
    raises(function() tree.new { origin = 0 } end, "origin: point {x, y, z} expected, got number")
    raises(function() tree.new { origin = { 1, 2 } } end, "origin: point {x, y, z} expected, element 3 is not a number")
    raises(function() tree.new { origin = { "a", 1, 2 } } end, "origin: point {x, y, z} expected, element 1 is not a number")
    raises(function() tree.new { origin = { 0, NAN, 0 } } end, "origin: coordinates must be finite numbers (element 2)")
    raises(function() tree.new { origin = { 0, 0, -INF } } end, "origin: coordinates must be finite numbers (element 3)")
  end)

  -- new takes one argument; an error about a field of it must not blame a second argument.
  it("blames argument #1 for a bad tiles or origin option", function()
    raises(function() tree.new { tiles = { 1, 1 } } end, "octonav.tree.new: tiles:")
    raises(function() tree.new { origin = { 1, 1 } } end, "octonav.tree.new: origin:")
  end)
end)

describe("misuse of tree methods", function()
  local t
  before_each(function()
    t = tree.new { tiles = { 2, 3, 4 }, depth = 3 }
  end)

  -- Every way a point argument can be wrong, with the text the error must contain.
  local bad_points = {
    { nil, "point {x, y, z} expected, got nil" },
    { 7, "point {x, y, z} expected, got number" },
    { "1,2,3", "point {x, y, z} expected, got string" },
    { {}, "point {x, y, z} expected, element 1 is not a number" },
    { { 1, 2 }, "point {x, y, z} expected, element 3 is not a number" },
    { { "a", 1, 2 }, "point {x, y, z} expected, element 1 is not a number" },
    { { 1, {}, 2 }, "point {x, y, z} expected, element 2 is not a number" },
    { { NAN, 1, 2 }, "coordinates must be finite numbers (element 1)" },
    { { 1, NAN, 2 }, "coordinates must be finite numbers (element 2)" },
    { { 1, 2, INF }, "coordinates must be finite numbers (element 3)" },
    { { -INF, 2, 3 }, "coordinates must be finite numbers (element 1)" },
  }
  local good = { 1, 1, 1 }

  -- method name, argument position (1-based, after self), argument name, call builder
  -- (called with method syntax, so that Lua numbers the arguments after self)
  local point_args = {
    { "add_box", 1, "min", function(p) return t:add_box(p, { 2, 2, 2 }) end },
    { "add_box", 2, "max", function(p) return t:add_box({ 0, 0, 0 }, p) end },
    { "locate", 1, "point", function(p) return t:locate(p) end },
    { "fill", 1, "point", function(p) return t:fill(p) end },
    { "raycast", 1, "from", function(p) return t:raycast(p, good) end },
    { "raycast", 2, "to", function(p) return t:raycast(good, p) end },
    { "visible", 1, "from", function(p) return t:visible(p, good) end },
    { "visible", 2, "to", function(p) return t:visible(good, p) end },
  }

  for _, m in ipairs(point_args) do
    local name, arg, call = m[1], m[3], m[4]
    it(name .. " names its '" .. arg .. "' argument for every bad point", function()
      for _, bp in ipairs(bad_points) do
        raises(function() return call(bp[1]) end, ("tree:%s: %s: %s"):format(name, arg, bp[2]))
      end
    end)
  end

  it("add_box rejects max below min on any axis", function()
    for axis = 1, 3 do
      local mx = { 2, 2, 2 }
      mx[axis] = 0.5
      raises(function() t:add_box({ 1, 1, 1 }, mx) end, "tree:add_box: max: must not be below min on any axis")
    end
    assert.are.equal(0, t:stats().nodes)
  end)

  it("add_triangles checks its tables", function()
    raises(function() t:add_triangles(nil, { 1, 2, 3 }) end, "tree:add_triangles: argument #1: table expected, got nil")
    raises(function() t:add_triangles(5, { 1, 2, 3 }) end, "tree:add_triangles: argument #1: table expected, got number")
    raises(function() t:add_triangles({ 0, 0, 0, 1, 0, 0, 0, 1, 0 }) end, "tree:add_triangles: argument #2: table expected, got no value")
    raises(function() t:add_triangles({ 0, 0, 0, 1, 0, 0, 0, 1, 0 }, "1 2 3") end, "tree:add_triangles: argument #2: table expected, got string")
    raises(function() t:add_triangles({ 0, 0, 0, 1 }, {}) end, "vertices: length must be a multiple of 3")
    raises(function() t:add_triangles({ 0, 0, 0 }, { 1, 1 }) end, "indices: length must be a multiple of 3")
    local v = { 0, 0, 0, 1, 0, 0, 0, 1, 0 }
    for i, bad in ipairs { NAN, INF, -INF, "a", {} } do
      local vv = { compat.unpack(v) }
      vv[i + 2] = bad
      raises(function() t:add_triangles(vv, { 1, 2, 3 }) end,
        ("tree:add_triangles: vertices: element %d is not a finite number"):format(i + 2))
    end
    for _, bad in ipairs { 0, 4, -1, 1.5, "x", 2 ^ 40 } do
      raises(function() t:add_triangles(v, { 1, 2, bad }) end,
        "tree:add_triangles: indices: element 3 is not a vertex number (1..3")
    end
    assert.are.equal(0, t:stats().nodes)
    assert.are.equal(0, t:add_triangles({}, {}))
  end)

  it("add_heightfield checks its options", function()
    local ok = { nx = 2, nz = 2, heights = { 0, 0, 0, 0 } }
    local function with(k, v)
      local o = { nx = ok.nx, nz = ok.nz, heights = ok.heights }
      o[k] = v
      return o
    end
    raises(function() t:add_heightfield() end, "tree:add_heightfield: argument #1: table expected, got no value")
    raises(function() t:add_heightfield(3) end, "tree:add_heightfield: argument #1: table expected, got number")
    raises(function() t:add_heightfield(with("size", 1)) end, "add_heightfield: unknown option 'size'")
    raises(function() t:add_heightfield(with("cell", 0)) end, "add_heightfield: cell must be > 0")
    raises(function() t:add_heightfield(with("cell", -2)) end, "add_heightfield: cell must be > 0")
    raises(function() t:add_heightfield(with("cell", NAN)) end, "option 'cell': must be a finite number")
    raises(function() t:add_heightfield(with("cell", "x")) end, "option 'cell': number expected, got string")
    raises(function() t:add_heightfield(with("nx", 1)) end, "add_heightfield: nx and nz must be at least 2")
    raises(function() t:add_heightfield(with("nz", 0)) end, "add_heightfield: nx and nz must be at least 2")
    raises(function() t:add_heightfield(with("nx", 2.5)) end, "option 'nx': integer expected")
    raises(function() t:add_heightfield(with("heights", nil)) end, "add_heightfield: heights must be a table")
    raises(function() t:add_heightfield(with("heights", 0)) end, "add_heightfield: heights must be a table")
    raises(function() t:add_heightfield(with("heights", { 0, 0, 0 })) end, "add_heightfield: heights has 3 values, nx*nz = 4")
    raises(function() t:add_heightfield(with("heights", { 0, NAN, 0, 0 })) end, "add_heightfield: heights[2] is not a finite number")
    raises(function() t:add_heightfield(with("heights", { 0, 0, 0, INF })) end, "add_heightfield: heights[4] is not a finite number")
    raises(function() t:add_heightfield(with("heights", { 0, "h", 0, 0 })) end, "add_heightfield: heights[2] is not a finite number")
    raises(function() t:add_heightfield(with("origin", { 0, 0 })) end, "origin: point {x, y, z} expected, element 3 is not a number")
    raises(function() t:add_heightfield(with("origin", { 0, NAN, 0 })) end, "origin: coordinates must be finite numbers (element 2)")
    assert.are.equal(0, t:stats().nodes)
  end)

  -- tiles are {2, 3, 4}: valid indices 0..1, 0..2, 0..3
  local tile_methods = {
    { "encode_tile", function(i, j, k) return t:encode_tile(i, j, k) end },
    { "decode_tile", function(i, j, k) return t:decode_tile(i, j, k, "") end },
    { "clear_tile", function(i, j, k) return t:clear_tile(i, j, k) end },
    { "tile_salt", function(i, j, k) return t:tile_salt(i, j, k) end },
  }
  for _, m in ipairs(tile_methods) do
    local name, call = m[1], m[2]
    it(name .. " checks its tile indices", function()
      raises(function() call(2, 0, 0) end, ("tree:%s: argument #1: tile index out of range (0..1)"):format(name))
      raises(function() call(-1, 0, 0) end, ("tree:%s: argument #1: tile index out of range (0..1)"):format(name))
      raises(function() call(0, 3, 0) end, ("tree:%s: argument #2: tile index out of range (0..2)"):format(name))
      raises(function() call(0, 0, 4) end, ("tree:%s: argument #3: tile index out of range (0..3)"):format(name))
      raises(function() call(0, 0, -1) end, ("tree:%s: argument #3: tile index out of range (0..3)"):format(name))
      raises(function() call(2 ^ 53, 0, 0) end, ("tree:%s: argument #1: tile index out of range"):format(name))
      raises(function() call(nil, 0, 0) end, ("tree:%s: argument #1: number expected, got nil"):format(name))
      raises(function() call(0, 0.5, 0) end, ("tree:%s: argument #2: number has no integer representation"):format(name))
      raises(function() call(0, 0, NAN) end, ("tree:%s: argument #3"):format(name))
      raises(function() call(0, 0, {}) end, ("tree:%s: argument #3: number expected, got table"):format(name))
    end)
  end

  -- a bad field of a table argument must blame that argument's position, not the stack slot
  -- where the binding happened to fetch the field
  it("blames the right argument for a bad field of a table argument", function()
    raises(function() t:add_heightfield { nx = 2, nz = 2, heights = { 0, 0, 0, 0 }, origin = { 1, 2 } } end,
      "tree:add_heightfield: origin:")
    raises(function() t:neighbors { tile = { 0, 0 }, code = 3 } end, "tree:neighbors: cell.tile:")
  end)

  it("decode_tile wants a string blob", function()
    raises(function() t:decode_tile(0, 0, 0) end, "tree:decode_tile: argument #4: string expected, got no value")
    raises(function() t:decode_tile(0, 0, 0, {}) end, "tree:decode_tile: argument #4: string expected, got table")
  end)

  it("neighbors rejects anything but a current free cell", function()
    raises(function() t:neighbors() end, "tree:neighbors: argument #1: table expected, got no value")
    raises(function() t:neighbors(12) end, "tree:neighbors: argument #1: table expected, got number")
    raises(function() t:neighbors({}) end, "cell: table with 'tile' and 'code' expected")
    raises(function() t:neighbors({ code = 3 }) end, "cell: table with 'tile' and 'code' expected")
    raises(function() t:neighbors({ tile = { 0, 0 }, code = 3 }) end, "cell.tile: element 3 must be an integer")
    raises(function() t:neighbors({ tile = { 2, 0, 0 }, code = 3 }) end, "cell: tile out of range")
    raises(function() t:neighbors({ tile = { 0, 0, -1 }, code = 3 }) end, "cell: tile out of range")
    for _, code in ipairs { -1, 1.5, "x", 2 ^ 31, false } do
      raises(function() t:neighbors({ tile = { 0, 0, 0 }, code = code }) end, "cell: integer 'code' expected")
    end
    raises(function() t:neighbors({ tile = { 0, 0, 0 } }) end, "cell: integer 'code' expected")
    raises(function() t:neighbors({ tile = { 0, 0, 0 }, code = 15 }) end, "cell: code has a bad layer")
    raises(function() t:neighbors({ tile = { 0, 0, 0 }, code = 4 }) end, "cell: code has a bad layer")
    -- well formed, but not a cell of this (empty) tree: its free cells are whole tiles (layer 3)
    raises(function() t:neighbors({ tile = { 0, 0, 0 }, code = 0 }) end, "cell: not a free cell of this tree (stale or made up)")
    raises(function() t:neighbors({ tile = { 0, 0, 0 }, code = 1 }) end, "stale or made up")
    raises(function() t:neighbors({ tile = { 0, 0, 0 }, code = 3 + 16 }) end, "stale or made up")
    local _, cell = t:locate({ 1, 1, 1 })
    assert.are.equal(3, cell.code)
    assert.are.equal("table", type(t:neighbors(cell)))
  end)

  it("neighbors rejects a stale cell", function()
    local _, cell = t:locate({ 1, 1, 1 })
    t:add_box({ 0, 0, 0 }, { 1, 1, 1 })
    raises(function() t:neighbors(cell) end, "tree:neighbors: cell: not a free cell of this tree (stale or made up)")
    local _, blocked_cell = t:locate({ 5, 5, 5 })
    t:fill({ 5, 5, 5 })
    raises(function() t:neighbors(blocked_cell) end, "stale or made up")
  end)

  it("neighbors rejects a cell of another tree shape", function()
    local other = box_scene()
    local _, cell = other:locate({ 1, 1, 1 }) -- size 2 at {0,0,0}
    raises(function() t:neighbors(cell) end, "stale or made up")
  end)

  it("compact checks its load factor", function()
    raises(function() t:compact(0.05) end, "tree:compact: argument #1: load factor must be in (0.1, 0.9]")
    raises(function() t:compact(0.1) end, "load factor must be in (0.1, 0.9]")
    raises(function() t:compact(0.95) end, "load factor must be in (0.1, 0.9]")
    raises(function() t:compact(-0.5) end, "load factor must be in (0.1, 0.9]")
    raises(function() t:compact(NAN) end, "load factor must be in (0.1, 0.9]")
    raises(function() t:compact("dense") end, "tree:compact: argument #1: number expected, got string")
    assert.are.equal(t, t:compact())
    assert.are.equal(t, t:compact(0.9))
  end)

  it("file methods want a string path", function()
    raises(function() t:save() end, "tree:save: argument #1: string expected, got no value")
    raises(function() t:save({}) end, "tree:save: argument #1: string expected, got table")
    raises(function() t:export_obj() end, "tree:export_obj: argument #1: string expected, got no value")
    raises(function() t:add_obj() end, "tree:add_obj: argument #1: string expected, got no value")
    raises(function() tree.load() end, "octonav.tree.load: argument #1: string expected, got no value")
    raises(function() tree.load({}) end, "octonav.tree.load: argument #1: string expected, got table")
  end)

  it("export_obj checks its options", function()
    local path = tmpname(".obj")
    raises(function() t:export_obj(path, 5) end, "tree:export_obj: argument #2: table expected, got number")
    raises(function() t:export_obj(path, { which = "free" }) end, "export_obj: unknown option 'which'")
    raises(function() t:export_obj(path, { what = "solid" }) end, "export_obj: option 'what' must be \"blocked\" or \"free\"")
    raises(function() t:export_obj(path, { what = true }) end, "export_obj: option 'what' must be \"blocked\" or \"free\"")
    os.remove(path)
  end)

  it("from_voxmap checks its depth", function()
    raises(function() tree.from_voxmap("x.3dmap", 0) end, "octonav.tree.from_voxmap: argument #2: depth must be 1..9")
    raises(function() tree.from_voxmap("x.3dmap", 10) end, "depth must be 1..9")
    raises(function() tree.from_voxmap() end, "octonav.tree.from_voxmap: argument #1: string expected, got no value")
  end)

  it("methods called on something else than a tree raise", function()
    local locate, stats = t.locate, t.stats
    raises(function() locate({}, { 1, 1, 1 }) end, "tree:locate: self: octonav.tree expected, got table")
    raises(function() stats(5) end, "tree:stats: self: octonav.tree expected, got number")
    raises(function() stats() end, "octonav.tree expected, got no value")
    -- (a file's type name: its metatable's __name, "FILE*", on 5.3+; LuaJIT and 5.1 give files none)
    raises(function() t.params(io.stdout) end, "octonav.tree expected, got " .. (getmetatable(io.stdout).__name or "userdata"))
  end)

  it("leaves the tree untouched after all that misuse", function()
    for _, m in ipairs(point_args) do
      for _, bp in ipairs(bad_points) do
        pcall(m[4], bp[1])
      end
    end
    assert.are.equal(0, t:stats().nodes)
    assert.are.equal(0, t:stats().revision)
  end)
end)

describe("a closed tree", function()
  local calls = {
    add_box = function(t) return t:add_box({ 0, 0, 0 }, { 1, 1, 1 }) end,
    add_triangles = function(t) return t:add_triangles({ 0, 0, 0, 1, 0, 0, 0, 1, 0 }, { 1, 2, 3 }) end,
    add_obj = function(t) return t:add_obj("/nonexistent.obj") end,
    add_heightfield = function(t) return t:add_heightfield { nx = 2, nz = 2, heights = { 0, 0, 0, 0 } } end,
    fill = function(t) return t:fill({ 1, 1, 1 }) end,
    locate = function(t) return t:locate({ 1, 1, 1 }) end,
    raycast = function(t) return t:raycast({ 1, 1, 1 }, { 2, 2, 2 }) end,
    visible = function(t) return t:visible({ 1, 1, 1 }, { 2, 2, 2 }) end,
    neighbors = function(t) return t:neighbors({ tile = { 0, 0, 0 }, code = 4 }) end,
    stats = function(t) return t:stats() end,
    params = function(t) return t:params() end,
    save = function(t) return t:save("/nonexistent/x.octn") end,
    encode_tile = function(t) return t:encode_tile(0, 0, 0) end,
    decode_tile = function(t) return t:decode_tile(0, 0, 0, "") end,
    clear_tile = function(t) return t:clear_tile(0, 0, 0) end,
    tile_salt = function(t) return t:tile_salt(0, 0, 0) end,
    compact = function(t) return t:compact() end,
    export_obj = function(t) return t:export_obj("/nonexistent/x.obj") end,
  }

  it("raises 'closed' from every method", function()
    local t = small()
    t:close()
    for name, call in pairs(calls) do
      local ok, err = pcall(call, t)
      assert(not ok, name .. " did not raise on a closed tree")
      assert(tostring(err):find("attempt to use a closed octonav.tree", 1, true), name .. ": " .. tostring(err))
    end
  end)

  it("every method in the list exists on an open tree", function()
    local mt = getmetatable(small())
    for name in pairs(calls) do
      assert.are.equal("function", type(mt.__index[name]), name)
    end
    assert.are.equal("function", type(mt.__index.close))
  end)

  it("can be closed twice, and says so in tostring", function()
    local t = box_scene()
    t:close()
    t:close()
    assert.are.equal("octonav.tree (closed)", tostring(t))
  end)

  it54("is closed by a to-be-closed variable", { small = small, raises = raises }, [[
    local outer
    do
      local t <close> = small()
      outer = t
      assert.are.equal("free", (t:locate({ 1, 1, 1 })))
    end
    raises(function() outer:locate({ 1, 1, 1 }) end, "closed")
  ]])
end)

describe("tostring", function()
  it("mentions tiles, leaves, scale and nodes", function()
    local t = box_scene { tiles = { 2, 1, 3 }, scale = 0.5 }
    local s = tostring(t)
    assert.truthy(s:find("octonav.tree", 1, true), s)
    assert.truthy(s:find("2x1x3 tiles", 1, true), s)
    assert.truthy(s:find("16^3 leaves", 1, true), s)
    assert.truthy(s:find("scale 0.5", 1, true), s)
    assert.truthy(s:find(("%d nodes"):format(t:stats().nodes), 1, true), s)
    assert.truthy(s:find("0 nodes", 1, true) == nil, s)
  end)
end)

describe("locate", function()
  it("gives the exact free cells around one box [2,6]^3 in a 16^3 tile", function()
    local t = box_scene()
    local c = assert_free_cell(t, { 8, 8, 8 }, { 8, 8, 8 }, 8)
    assert.are.same({ 0, 0, 0 }, c.tile)
    assert.are.equal(8 * 2 ^ 22 + 8 * 2 ^ 13 + 8 * 2 ^ 4 + 3, c.code)
    assert_free_cell(t, { 15.999, 15.999, 15.999 }, { 8, 8, 8 }, 8)
    assert_free_cell(t, { 0, 0, 0 }, { 0, 0, 0 }, 2)
    assert_free_cell(t, { 1, 1, 1 }, { 0, 0, 0 }, 2)
    assert_free_cell(t, { 6, 6, 6 }, { 6, 6, 6 }, 2) -- the box is closed at 6 but has no volume beyond
    assert_free_cell(t, { 7.5, 2, 2 }, { 6, 2, 2 }, 2)
    assert_free_cell(t, { 3, 3, 7 }, { 2, 2, 6 }, 2)
    assert_free_cell(t, { 12, 1, 1 }, { 8, 0, 0 }, 8)
    for _, p in ipairs { { 2, 2, 2 }, { 3, 3, 3 }, { 5.999, 5.999, 5.999 }, { 2, 5.5, 4 } } do
      local what, extra = t:locate(p)
      assert.are.equal("blocked", what)
      assert.is_nil(extra)
    end
  end)

  it("returns nil, 'outside' off the map", function()
    local t = tree.new { tiles = { 2, 1, 3 }, depth = 4 } -- 32 x 16 x 48
    local outside = {
      { -1, 1, 1 }, { 1, -1, 1 }, { 1, 1, -1 }, { -1e-300, 1, 1 }, { -0.5, -0.5, -0.5 },
      { 32, 1, 1 }, { 1, 16, 1 }, { 1, 1, 48 }, -- exactly on the far boundary
      { 32.001, 1, 1 }, { 1e300, 1, 1 }, { -1e300, 1, 1 }, { 100, 100, 100 },
    }
    for _, p in ipairs(outside) do
      local a, b = t:locate(p)
      assert.is_nil(a)
      assert.are.equal("outside", b)
    end
    -- and just inside
    assert_free_cell(t, { 0, 0, 0 }, { 0, 0, 0 }, 16)
    assert_free_cell(t, { -0.0, 0, 0 }, { 0, 0, 0 }, 16)
    assert_free_cell(t, { 31.999, 15.999, 47.999 }, { 16, 0, 32 }, 16)
    local _, c = t:locate({ 31.5, 15.5, 47.5 })
    assert.are.same({ 1, 0, 2 }, c.tile)
  end)

  it("honours scale and origin", function()
    local t = tree.new { depth = 4, scale = 0.5, origin = { 100, 0, 0 } } -- world x 100..108, y and z 0..8
    t:add_box({ 101, 1, 1 }, { 102, 2, 2 }) -- nav [2,4]^3: leaves 2 and 3 on each axis
    assert.are.equal("blocked", (t:locate({ 101.25, 1.25, 1.25 })))
    assert.are.equal("blocked", (t:locate({ 101.75, 1.75, 1.75 })))
    assert.are.equal("blocked", (t:locate({ 101, 1, 1 })))
    assert_free_cell(t, { 100.75, 1.25, 1.25 }, { 100, 1, 1 }, 1)
    assert_free_cell(t, { 102, 1.5, 1.5 }, { 102, 0, 0 }, 2)
    assert_free_cell(t, { 102.1, 1.5, 1.5 }, { 102, 0, 0 }, 2)
    assert_free_cell(t, { 104, 4, 4 }, { 104, 4, 4 }, 4)
    assert_free_cell(t, { 107.99, 7.99, 7.99 }, { 104, 4, 4 }, 4)
    for _, p in ipairs { { 108, 1, 1 }, { 99.99, 1, 1 }, { 101, 8, 1 }, { 101, 1, -0.01 }, { 0, 0, 0 } } do
      assert.are.same({ nil, "outside" }, { t:locate(p) })
    end
  end)
end)

describe("geometry", function()
  it("counts the nodes of the box scene exactly", function()
    local t = box_scene()
    -- root, the [0,8)^3 node, its 8 children of size 4 (each with one blocked child of size 2)
    assert.are.equal(10, t:stats().nodes)
    assert.are.equal(10, blob_nodes(t:encode_tile(0, 0, 0)))
  end)

  it("a zero-thickness box blocks the leaves on both sides of its plane", function()
    local t = small()
    t:add_box({ 4, 0, 0 }, { 4, 16, 16 })
    assert.are.equal("blocked", (t:locate({ 3.5, 8, 8 })))
    assert.are.equal("blocked", (t:locate({ 4.5, 8, 8 })))
    assert.are.equal("free", (t:locate({ 2.5, 8, 8 })))
    assert.are.equal("free", (t:locate({ 5.5, 8, 8 })))
    -- a degenerate box (a point) blocks the 8 leaves around it
    local u = small()
    u:add_box({ 8, 8, 8 }, { 8, 8, 8 })
    for dx = -1, 0 do
      for dy = -1, 0 do
        for dz = -1, 0 do
          assert.are.equal("blocked", (u:locate({ 8.5 + dx, 8.5 + dy, 8.5 + dz })))
        end
      end
    end
    assert.are.equal("free", (u:locate({ 6.5, 8.5, 8.5 })))
    assert.are.equal("free", (u:locate({ 9.5, 9.5, 9.5 })))
  end)

  it("a flat box on a tile border blocks the leaves on both sides of it", function()
    -- two tiles of 4^3 along x: the plane x = 4 is their border
    local t = tree.new { tiles = { 2, 1, 1 }, depth = 2 }
    t:add_box({ 4, 1, 1 }, { 4, 2, 2 })
    assert.are.equal("blocked", (t:locate({ 4.5, 1.5, 1.5 })))
    assert.are.equal("blocked", (t:locate({ 3.5, 1.5, 1.5 })))
  end)

  it("a triangle touching a tile border blocks the leaf below the border", function()
    local t = tree.new { tiles = { 2, 1, 1 }, depth = 2 }
    t:add_triangles({ 4, 1, 1, 6, 1, 1, 6, 2, 2 }, { 1, 2, 3 })
    assert.are.equal("blocked", (t:locate({ 4.5, 1.5, 1.5 })))
    assert.are.equal("blocked", (t:locate({ 3.5, 1.5, 1.5 }))) -- its closed cube holds the vertex {4,1,1}
  end)

  it("geometry entirely outside the map changes nothing", function()
    local t = tree.new { tiles = { 2, 2, 2 }, depth = 3 }
    t:add_box({ -5, -5, -5 }, { -1, -1, -1 })
    t:add_box({ 17, 0, 0 }, { 20, 4, 4 })
    t:add_triangles({ -1, -1, -1, -2, -1, -1, -1, -2, -1 }, { 1, 2, 3 })
    assert.are.equal(0, t:stats().nodes)
    assert.are.equal(0, t:stats().revision)
    -- a box covering more than the whole map blocks everything, as solid tiles
    t:add_box({ -1, -1, -1 }, { 100, 100, 100 })
    assert.are.equal(0, t:stats().nodes)
    assert.are.equal("blocked", (t:locate({ 15.5, 15.5, 15.5 })))
    for _, b in ipairs(all_blobs(t)) do
      assert.are.equal(1, blob_flags(b))
    end
  end)

  it("inflates boxes by the radius", function()
    local t = small { radius = 0.5 }
    t:add_box({ 4, 4, 4 }, { 5, 5, 5 }) -- [3.5, 5.5]: leaves 3, 4, 5
    for _, x in ipairs { 3.5, 4.5, 5.5 } do
      assert.are.equal("blocked", (t:locate({ x, 4.5, 4.5 })))
    end
    assert.are.equal("free", (t:locate({ 2.5, 4.5, 4.5 })))
    assert.are.equal("free", (t:locate({ 6.5, 4.5, 4.5 })))
    assert.are.equal("free", (t:locate({ 4.5, 6.5, 4.5 })))
    -- radius is in world units: scale 2, radius 1 is half a leaf
    local u = small { scale = 2, radius = 1 }
    u:add_box({ 8, 8, 8 }, { 10, 10, 10 }) -- nav [4,5] -> [3.5,5.5]: world [6,12)
    assert.are.equal("blocked", (u:locate({ 6.5, 9, 9 })))
    assert.are.equal("blocked", (u:locate({ 11.9, 9, 9 })))
    assert.are.equal("free", (u:locate({ 5.9, 9, 9 })))
    assert.are.equal("free", (u:locate({ 12.1, 9, 9 })))
  end)

  it("blocks the leaves whose closed cube a triangle touches", function()
    local t = small()
    assert.are.equal(1, t:add_triangles({ 0, 0, 4, 8, 0, 4, 0, 8, 4 }, { 1, 2, 3 }))
    local function st(x, y, z) return (t:locate({ x + 0.5, y + 0.5, z + 0.5 })) end
    assert.are.equal("blocked", st(1, 1, 3))
    assert.are.equal("blocked", st(1, 1, 4))
    assert.are.equal("free", st(1, 1, 2))
    assert.are.equal("free", st(1, 1, 5))
    assert.are.equal("blocked", st(7, 1, 4)) -- touches the hypotenuse at (7, 1)
    assert.are.equal("blocked", st(6, 2, 3)) -- touches it at one corner (6, 2)
    assert.are.equal("free", st(7, 2, 4))
    assert.are.equal("blocked", st(8, 0, 4)) -- its closed cube holds the vertex (8, 0, 4)
    assert.are.equal("blocked", st(8, 0, 3))
    assert.are.equal("free", st(8, 1, 4))
    assert.are.equal("free", st(9, 0, 4))
  end)

  it("inflates triangles by the radius", function()
    local tri = { 0, 0, 4.25, 8, 0, 4.25, 0, 8, 4.25 }
    local t = small()
    t:add_triangles(tri, { 1, 2, 3 })
    assert.are.equal("free", (t:locate({ 1.5, 1.5, 3.5 })))
    assert.are.equal("blocked", (t:locate({ 1.5, 1.5, 4.5 })))
    local u = small { radius = 0.5 }
    u:add_triangles(tri, { 1, 2, 3 })
    assert.are.equal("blocked", (u:locate({ 1.5, 1.5, 3.5 })))
    assert.are.equal("blocked", (u:locate({ 1.5, 1.5, 4.5 })))
    assert.are.equal("free", (u:locate({ 1.5, 1.5, 5.5 })))
    assert.are.equal("free", (u:locate({ 1.5, 1.5, 2.5 })))
  end)

  it("fills a heightfield from below up to its surface", function()
    local t = small()
    assert.are.equal(t, t:add_heightfield { origin = { 0, 0, 0 }, cell = 4, nx = 3, nz = 3, heights = { 3, 3, 3, 3, 3, 3, 3, 3, 3 } })
    assert.are.equal("blocked", (t:locate({ 1.5, 0.5, 1.5 })))
    assert.are.equal("blocked", (t:locate({ 7.5, 2.5, 7.5 })))
    assert.are.equal("free", (t:locate({ 7.5, 3.5, 7.5 })))
    assert.are.equal("free", (t:locate({ 9.5, 0.5, 1.5 }))) -- beyond the footprint [0,8] x [0,8]
    assert.are.equal("free", (t:locate({ 1.5, 0.5, 9.5 })))
    local u = small()
    u:add_heightfield { origin = { 0, 5, 0 }, cell = 16, nx = 2, nz = 2, heights = { 0, 0, 0, 0 } }
    assert.are.equal("blocked", (u:locate({ 15.5, 4.5, 15.5 })))
    assert.are.equal("free", (u:locate({ 15.5, 5.5, 15.5 })))
  end)

  it("add_obj reads a mesh and reports its counts; a missing file is nil, reason", function()
    local path = tmpname(".obj")
    write_file(path, "v 0 0 4\nv 8 0 4\nv 0 8 4\nf 1 2 3\n")
    local t = small()
    local nv, nt = t:add_obj(path)
    assert.are.equal(3, nv)
    assert.are.equal(1, nt)
    assert.are.equal("blocked", (t:locate({ 1.5, 1.5, 4.5 })))
    os.remove(path)
    local a, err = t:add_obj(path)
    assert.is_nil(a)
    assert.are.equal("string", type(err))
    assert.truthy(err:find(path, 1, true), err)
  end)
end)

describe("raycast and visible", function()
  local function wall_scene()
    local t = small()
    t:add_box({ 4, 0, 0 }, { 5, 16, 16 })
    return t
  end

  it("stop at a wall with the exact parameter and point", function()
    local t = wall_scene()
    local th, p = t:raycast({ 0, 8.5, 8.5 }, { 10, 8.5, 8.5 })
    assert.are.equal(0.4, th)
    assert.are.same({ 4, 8.5, 8.5 }, p)
    assert.is_false(t:visible({ 0, 8.5, 8.5 }, { 10, 8.5, 8.5 }))
    th, p = t:raycast({ 10, 8.5, 8.5 }, { 0, 8.5, 8.5 })
    assert.are.equal(0.5, th)
    assert.are.same({ 5, 8.5, 8.5 }, p)
  end)

  it("read each tile's mask hierarchy, or the node table alone with los_masks(false): the same answers", function()
    local t = wall_scene()
    t:add_box({ 9, 3, 3 }, { 12, 7, 9 })
    local st = t:stats()
    assert.are.equal(0, st.los_bytes)
    assert.are.equal(0, st.los_tiles)
    local segs, answers = {}, {}
    local seed = 7
    local function r()
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed / 2147483648 * 16
    end
    for n = 1, 300 do
      segs[n] = { { r(), r(), r() }, { r(), r(), r() } }
      answers[n] = { t:raycast(segs[n][1], segs[n][2]) }
    end
    st = t:stats()
    assert.are.equal(1, st.los_tiles) -- built by the first line of sight
    assert.is_true(st.los_bytes > 0)
    assert.are.equal(st.los_bytes, t:los_prepare())
    assert.are.equal(t, t:los_masks(false))
    st = t:stats()
    assert.are.same({ 0, 0 }, { st.los_bytes, st.los_tiles })
    assert.are.same({ nil, "masks are off" }, { t:los_prepare() })
    local blocked = 0
    for n = 1, 300 do
      local got = { t:raycast(segs[n][1], segs[n][2]) }
      assert.are.same(answers[n], got)
      if got[1] then blocked = blocked + 1 end
    end
    assert.is_true(blocked > 50)
    assert.are.equal(0, t:stats().los_bytes)
    t:los_masks(true)
    assert.is_true(t:los_prepare() > 0)
    raises(function() t:los_masks("no") end, "tree:los_masks: argument #1: boolean expected, got string")
  end)

  it("search over each tile's cell adjacency, or the tree walk alone with adjacency(false): the same paths", function()
    -- two 16^3 tiles, a wall with a gap in the first: searches enter both tiles
    local t = tree.new { tiles = { 2, 1, 1 }, depth = 4 }
    t:add_box({ 6, 0, 0 }, { 7, 12, 16 })
    t:add_box({ 6, 12, 0 }, { 7, 14, 12 })
    t:add_box({ 6, 12, 14 }, { 7, 16, 16 })
    t:add_box({ 6, 14, 12 }, { 7, 16, 14 })
    local st = t:stats()
    assert.are.same({ 0, 0 }, { st.adjacency_tiles, st.adjacency_bytes })
    local q = octonav.query.new(t)
    local pairs_ = { { { 1, 1, 1 }, { 30, 2, 3 } }, { { 2, 8, 3 }, { 12, 1, 15 } }, { { 0.5, 15, 0.5 }, { 31, 0.5, 15 } } }
    local paths = {}
    for n, ab in ipairs(pairs_) do
      paths[n] = assert(q:find(ab[1], ab[2]))
      assert.is_true(#paths[n] > 2) -- round the wall, through the gap
    end
    st = t:stats()
    assert.is_true(st.adjacency_tiles >= 1) -- built by the first searches expanding cells there
    assert.is_true(st.adjacency_bytes > 0)
    local bytes = t:adjacency_prepare()
    assert.are.same({ 2, bytes }, { t:stats().adjacency_tiles, t:stats().adjacency_bytes })
    t:add_box({ 20, 0, 0 }, { 21, 1, 1 }) -- an edit drops the edited tile's adjacency only
    assert.are.equal(1, t:stats().adjacency_tiles)
    for n, ab in ipairs(pairs_) do paths[n] = assert(q:find(ab[1], ab[2])) end
    assert.are.equal(t, t:adjacency(false))
    st = t:stats()
    assert.are.same({ 0, 0 }, { st.adjacency_tiles, st.adjacency_bytes })
    assert.are.same({ nil, "adjacency is off" }, { t:adjacency_prepare() })
    for n, ab in ipairs(pairs_) do
      assert.are.same(paths[n], (q:find(ab[1], ab[2])))
    end
    assert.are.equal(0, t:stats().adjacency_tiles)
    t:adjacency(true)
    assert.is_true(t:adjacency_prepare() > 0)
    assert.are.equal(2, t:stats().adjacency_tiles)
    raises(function() t:adjacency("no") end, "tree:adjacency: argument #1: boolean expected, got string")
  end)

  it("a zero-thickness wall stops the ray one leaf early", function()
    local t = small()
    t:add_box({ 4, 0, 0 }, { 4, 16, 16 })
    local th, p = t:raycast({ 0, 8.5, 8.5 }, { 10, 8.5, 8.5 })
    assert.are.equal(0.3, th)
    assert.are.same({ 3, 8.5, 8.5 }, p)
  end)

  it("are clear in free space, up to a wall, and along its face", function()
    local t = wall_scene()
    assert.is_nil(t:raycast({ 0, 8.5, 8.5 }, { 3.5, 8.5, 8.5 }))
    assert.is_nil(t:raycast({ 0, 8.5, 8.5 }, { 4, 8.5, 8.5 })) -- ends on the face: t = 1 is ignored
    assert.is_nil(t:raycast({ 4, 0.5, 0.5 }, { 4, 15.5, 15.5 })) -- slides along the face x = 4
    assert.is_nil(t:raycast({ 5, 15.5, 0.5 }, { 5, 0.5, 15.5 })) -- and x = 5
    assert.is_nil(t:raycast({ 6, 6, 6 }, { 15, 1, 12 }))
    assert.is_true(t:visible({ 0, 8.5, 8.5 }, { 3.5, 8.5, 8.5 }))
    assert.is_true(t:visible({ 4, 0.5, 0.5 }, { 4, 15.5, 15.5 }))
    assert.is_true(t:visible({ 2, 2, 2 }, { 2, 2, 2 }))
  end)

  it("start blocked inside geometry or outside the map", function()
    local t = wall_scene()
    local th, p = t:raycast({ 4.5, 8, 8 }, { 0.5, 8, 8 })
    assert.are.equal(0, th)
    assert.are.same({ 4.5, 8, 8 }, p)
    assert.is_false(t:visible({ 4.5, 8, 8 }, { 4.5, 8, 8 }))
    th, p = t:raycast({ -1, 8.5, 8.5 }, { 3, 8.5, 8.5 })
    assert.are.equal(0, th)
    assert.are.same({ -1, 8.5, 8.5 }, p)
    assert.is_false(t:visible({ 20, 8, 8 }, { 10, 8, 8 }))
  end)

  it("stop where the segment leaves the map", function()
    local t = wall_scene()
    local a, b = { 8.5, 8.5, 8.5 }, { 20, 8.5, 8.5 }
    local th, p = t:raycast(a, b)
    assert.are.equal((16 - 8.5) / 11.5, th)
    assert.are.equal(a[1] + th * (b[1] - a[1]), p[1])
    th = t:raycast({ 8.5, 8.5, 8.5 }, { 8.5, 8.5, -3 })
    assert.are.equal((0 - 8.5) / (-3 - 8.5), th)
  end)

  it("work in world units", function()
    local t = tree.new { depth = 4, scale = 0.5, origin = { 100, 0, 0 } }
    t:add_box({ 101, 1, 1 }, { 102, 2, 2 })
    local th, p = t:raycast({ 100, 1.25, 1.25 }, { 108, 1.25, 1.25 })
    assert.are.equal(0.125, th)
    assert.are.same({ 101, 1.25, 1.25 }, p)
    assert.is_true(t:visible({ 100, 3, 3 }, { 108, 3, 3 }))
    assert.is_nil(t:raycast({ 100, 2, 1.25 }, { 108, 2, 1.25 })) -- along the box's top face
    assert.is_false(t:visible({ 100, 1.9, 1.25 }, { 108, 1.9, 1.25 }))
  end)
end)

describe("stats", function()
  local function scene()
    local t = tree.new { tiles = { 2, 2, 1 }, depth = 5 }
    for i = 0, 9 do
      t:add_box({ 3 * i + 0.5, 2 * i, i }, { 3 * i + 4.25, 2 * i + 7, i + 2.5 })
    end
    t:add_triangles({ 1, 1, 1, 60, 3, 30, 5, 60, 20 }, { 1, 2, 3 })
    return t
  end

  it("are zero-ish for an empty tree", function()
    local s = tree.new({ tiles = { 3, 1, 2 }, depth = 3 }):stats()
    assert.are.equal(6, s.tiles)
    assert.are.equal(6, s.tiles_loaded)
    assert.are.equal(0, s.nodes)
    assert.are.equal(0, s.bytes_per_node)
    assert.are.equal(0, s.load_factor)
    assert.are.equal(0, s.revision)
    assert.is_true(s.bytes > 0)
  end)

  it("are honest about nodes, bytes and load", function()
    local t = scene()
    local s = t:stats()
    local counted = 0
    for _, b in ipairs(all_blobs(t)) do counted = counted + blob_nodes(b) end
    assert.is_true(s.nodes > 0)
    assert.are.equal(counted, s.nodes)
    assert.are.equal(4, s.tiles)
    assert.are.equal(4, s.tiles_loaded)
    assert.is_true(s.slots >= s.nodes)
    assert.is_true(s.table_bytes >= s.slots * 5, "a slot holds a 4-byte key and a 1-byte value")
    assert.is_true(s.bytes >= s.table_bytes)
    assert.is_true(s.bytes >= s.nodes * 5)
    assert.are.equal(s.bytes / s.nodes, s.bytes_per_node)
    assert.are.equal(s.nodes / s.slots, s.load_factor)
    assert.is_true(s.load_factor > 0 and s.load_factor <= 0.9)
    assert.is_true(s.revision > 0)
  end)

  it("compact() packs the tables above 0.8 and changes nothing else", function()
    local t = scene()
    local before, blobs = t:stats(), all_blobs(t)
    assert.are.equal(t, t:compact())
    local s = t:stats()
    assert.are.equal(before.nodes, s.nodes)
    assert.is_true(s.load_factor > 0.8, "load factor " .. s.load_factor)
    assert.is_true(s.load_factor <= 0.9)
    assert.is_true(s.bytes <= before.bytes)
    assert.are.same(blobs, all_blobs(t))
    t:compact(0.5)
    s = t:stats()
    assert.is_true(s.load_factor <= 0.5 and s.load_factor > 0.3, "load factor " .. s.load_factor)
    assert.are.same(blobs, all_blobs(t))
    -- the tree still grows after compaction
    t:add_box({ 40, 40, 20 }, { 41.5, 41.5, 21.5 })
    assert.is_true(t:stats().nodes > s.nodes)
    assert.are.equal("blocked", (t:locate({ 40.5, 40.5, 20.5 })))
  end)

  -- table.h: compaction picks "the smallest capacity that holds count entries at the target load";
  -- a tree of a few nodes must not be left at a low load (6 nodes fit 7 slots at 0.88).
  it("compact() packs a tree of only a few nodes above 0.8 too", function()
    local t = small()
    t:add_box({ 0, 0, 0 }, { 1, 1, 1 }) -- two leaves in different layer-2 nodes: 6 nodes
    t:add_box({ 4, 0, 0 }, { 5, 1, 1 })
    assert.are.equal(6, t:stats().nodes)
    t:compact()
    local s = t:stats()
    assert.is_true(s.load_factor > 0.8, ("load factor %g (%d nodes in %d slots)"):format(s.load_factor, s.nodes, s.slots))
  end)

  it("count revisions and per-tile salts", function()
    local t = tree.new { tiles = { 2, 1, 1 }, depth = 3 }
    local r0, s0, s1 = t:stats().revision, t:tile_salt(0, 0, 0), t:tile_salt(1, 0, 0)
    t:add_box({ 1, 1, 1 }, { 2, 2, 2 })
    assert.is_true(t:stats().revision > r0)
    assert.are_not.equal(s0, t:tile_salt(0, 0, 0))
    assert.are.equal(s1, t:tile_salt(1, 0, 0))
    local r1, s0b = t:stats().revision, t:tile_salt(0, 0, 0)
    t:clear_tile(0, 0, 0)
    assert.is_true(t:stats().revision > r1)
    assert.are_not.equal(s0b, t:tile_salt(0, 0, 0))
    assert.are.equal(s1, t:tile_salt(1, 0, 0))
  end)
end)

describe("neighbors", function()
  local function by_face(list)
    local out = {}
    for _, c in ipairs(list) do
      assert.is_nil(out[c.face], "two neighbours on face " .. c.face)
      out[c.face] = c
    end
    return out
  end

  it("cross tile borders", function()
    local t = tree.new { tiles = { 2, 1, 1 }, depth = 4 }
    local _, c = t:locate({ 1, 1, 1 })
    local n = t:neighbors(c)
    assert.are.equal(1, #n)
    assert.are.equal("+x", n[1].face)
    assert.are.same({ 16, 0, 0 }, n[1].min)
    assert.are.equal(16, n[1].size)
    assert.are.same({ 1, 0, 0 }, n[1].tile)
    local back = t:neighbors(n[1])
    assert.are.equal(1, #back)
    assert.are.equal("-x", back[1].face)
    assert.are.equal(c.code, back[1].code)
    assert.are.same(c.tile, back[1].tile)
    assert.are.same({}, tree.new({ depth = 2 }):neighbors(select(2, tree.new({ depth = 2 }):locate({ 1, 1, 1 }))))
  end)

  it("are exact around the box scene", function()
    local t = box_scene()
    local _, big = t:locate({ 8, 8, 8 })
    local n = by_face(t:neighbors(big))
    assert.are.same({ "-x", "-y", "-z" }, (function()
      local f = {}
      for k in pairs(n) do f[#f + 1] = k end
      table.sort(f)
      return f
    end)())
    assert.are.same({ 0, 8, 8 }, n["-x"].min)
    assert.are.same({ 8, 0, 8 }, n["-y"].min)
    assert.are.same({ 8, 8, 0 }, n["-z"].min)
    for _, c in pairs(n) do assert.are.equal(8, c.size) end

    local _, corner = t:locate({ 1, 1, 1 })
    n = by_face(t:neighbors(corner))
    assert.are.same({ 2, 0, 0 }, n["+x"].min)
    assert.are.same({ 0, 2, 0 }, n["+y"].min)
    assert.are.same({ 0, 0, 2 }, n["+z"].min)
    assert.is_nil(n["-x"])
    for _, c in pairs(n) do assert.are.equal(2, c.size) end

    -- a big cell next to many small ones lists them all
    local _, side = t:locate({ 12, 4, 4 }) -- [8,16) x [0,8) x [0,8)
    assert.are.same({ 8, 0, 0 }, side.min)
    local minus_x = {}
    for _, c in ipairs(t:neighbors(side)) do
      if c.face == "-x" then minus_x[#minus_x + 1] = c end
    end
    -- the x in [4,8) half of [0,8)^3: 4 size-4 nodes each with a blocked size-2 child at x in [4,6),
    -- so their x in [6,8) halves are 4 free size-2 cells each
    assert.are.equal(16, #minus_x)
    for _, c in ipairs(minus_x) do
      assert.are.equal(2, c.size)
      assert.are.equal(6, c.min[1])
    end
  end)

  it("report world coordinates", function()
    local t = tree.new { tiles = { 1, 2, 1 }, depth = 3, scale = 2, origin = { -8, -8, -8 } }
    local _, c = t:locate({ 0, 0, 0 })
    local n = t:neighbors(c)
    assert.are.equal(1, #n)
    assert.are.equal("+y", n[1].face)
    assert.are.same({ -8, 8, -8 }, n[1].min)
    assert.are.equal(16, n[1].size)
  end)
end)

describe("fill", function()
  local function room()
    local t = small()
    t:add_box({ 2, 2, 2 }, { 3, 12, 12 })
    t:add_box({ 11, 2, 2 }, { 12, 12, 12 })
    t:add_box({ 2, 2, 2 }, { 12, 3, 12 })
    t:add_box({ 2, 11, 2 }, { 12, 12, 12 })
    t:add_box({ 2, 2, 2 }, { 12, 12, 3 })
    t:add_box({ 2, 2, 11 }, { 12, 12, 12 })
    return t
  end

  it("blocks exactly the free cells of the enclosed region", function()
    local t = room()
    local cells = {}
    local ncells = 0
    for x = 3, 10 do
      for y = 3, 10 do
        for z = 3, 10 do
          local what, c = t:locate({ x + 0.5, y + 0.5, z + 0.5 })
          assert.are.equal("free", what)
          if not cells[c.code] then
            cells[c.code] = true
            ncells = ncells + 1
          end
        end
      end
    end
    assert.are.equal(ncells, t:fill({ 6, 6, 6 }))
    for x = 3, 10 do
      for y = 3, 10 do
        for z = 3, 10 do
          assert.are.equal("blocked", (t:locate({ x + 0.5, y + 0.5, z + 0.5 })))
        end
      end
    end
    assert.are.equal("free", (t:locate({ 0.5, 0.5, 0.5 })))
    assert.are.equal("free", (t:locate({ 13.5, 13.5, 13.5 })))
    assert.are.equal("free", (t:locate({ 1.5, 7, 7 })))
    assert.are.same({ nil, "blocked" }, { t:fill({ 6, 6, 6 }) })
    assert.are.same({ nil, "outside" }, { t:fill({ -1, 6, 6 }) })
    assert.are.same({ nil, "outside" }, { t:fill({ 6, 6, 16 }) })
  end)

  it("floods across tiles and leaves solid tiles behind", function()
    local t = tree.new { tiles = { 2, 1, 1 }, depth = 3 }
    assert.are.equal(2, t:fill({ 1, 1, 1 }))
    assert.are.equal(0, t:stats().nodes)
    for _, b in ipairs(all_blobs(t)) do
      assert.are.equal(1, blob_flags(b))
      assert.are.equal(0, blob_nodes(b))
    end
    assert.are.equal("blocked", (t:locate({ 15, 7, 7 })))
  end)
end)

describe("tiles and files", function()
  it("encode_tile / decode_tile round-trip into another tree", function()
    local a = tree.new { tiles = { 2, 1, 1 }, depth = 4 }
    a:add_box({ 2, 2, 2 }, { 6, 6, 6 })
    a:add_box({ 17, 3, 3 }, { 30.5, 4, 9 })
    local b = tree.new { tiles = { 2, 1, 1 }, depth = 4 }
    assert.is_true(b:decode_tile(0, 0, 0, a:encode_tile(0, 0, 0)))
    assert.is_true(b:decode_tile(1, 0, 0, a:encode_tile(1, 0, 0)))
    assert.are.same(all_blobs(a), all_blobs(b))
    assert.are.equal(a:stats().nodes, b:stats().nodes)
    assert.are.equal("blocked", (b:locate({ 20, 3.5, 5 })))
    -- a tile can move: tile (0,0,0)'s contents into tile (1,0,0)
    assert.is_true(b:decode_tile(1, 0, 0, a:encode_tile(0, 0, 0)))
    assert.are.equal("blocked", (b:locate({ 19, 3, 3 })))
    assert.are.equal("free", (b:locate({ 25, 3.5, 5 })))
  end)

  it("encode_tile has the documented layout", function()
    local t = box_scene()
    local blob = t:encode_tile(0, 0, 0)
    assert.are.equal("ONTL", blob:sub(1, 4))
    local version, depth, flags, n = compat.unpack_bytes("<I2 I1 I1 I4", blob, 5)
    assert.are.equal(1, version)
    assert.are.equal(4, depth)
    assert.are.equal(0, flags)
    assert.are.equal(10, n)
    assert.are.equal(12 + 2 * n + 4, #blob)
    -- the root: child 0 stored, not blocked; then [0,8)^3: all 8 children stored
    assert.are.same({ 0x00, 0x01, 0x00, 0xFF }, { blob:byte(13, 16) })
    -- then each size-4 node, child index i, has its child (7 - i) blocked: the one inside [2,6)^3
    for i = 0, 7 do
      assert.are.same({ bits.shl(1, 7 - i), 0 }, { blob:byte(17 + 2 * i, 18 + 2 * i) })
    end
    local empty = small():encode_tile(0, 0, 0)
    assert.are.equal(16, #empty)
    assert.are.equal(0, blob_nodes(empty))
  end)

  it("decode_tile refuses bad blobs and keeps the tile", function()
    local t = box_scene()
    local good = t:encode_tile(0, 0, 0)
    local u = box_scene()
    u:add_box({ 10, 10, 10 }, { 11, 11, 11 })
    local before = u:encode_tile(0, 0, 0)
    local bad = {
      "",
      "ONTL",
      good:sub(1, -2),
      good .. "\0",
      "XNTL" .. good:sub(5),
      good:sub(1, 20) .. string.char(bits.bxor(good:byte(21), 0x40)) .. good:sub(22), -- CRC mismatch
      good:sub(1, -5) .. compat.pack("<I4", bits.bxor(compat.unpack_bytes("<I4", good, #good - 3), 1)),
    }
    for i, blob in ipairs(bad) do
      local ok, err = u:decode_tile(0, 0, 0, blob)
      assert.is_nil(ok, "bad blob " .. i)
      assert.are.equal("string", type(err))
      assert.truthy(err:find("^decode_tile: "), err)
    end
    local ok, err = u:decode_tile(0, 0, 0, "ONTL\2\0" .. good:sub(7))
    assert.is_nil(ok)
    assert.truthy(err:find("version", 1, true), err)
    -- a blob of another depth
    ok, err = u:decode_tile(0, 0, 0, tree.new({ depth = 3 }):encode_tile(0, 0, 0))
    assert.is_nil(ok)
    assert.truthy(err:find("corrupt", 1, true), err)
    assert.are.equal(before, u:encode_tile(0, 0, 0))
    assert.are.equal("blocked", (u:locate({ 10.5, 10.5, 10.5 })))
  end)

  it("decode_tile validates the node structure", function()
    -- depth-2 tiles: the root (layer 2) may store layer-1 children, whose children are leaves
    local function blob(flags, nodes)
      local body = "ONTL" .. compat.pack("<I2 I1 I1 I4", 1, 2, flags, math.floor(#nodes / 2)) .. string.char(compat.unpack(nodes))
      return body .. compat.pack("<I4", crc32(body))
    end
    local t = tree.new { depth = 2 }
    assert.is_true(t:decode_tile(0, 0, 0, blob(0, { 0x01, 0x00 })))
    assert.are.equal("blocked", (t:locate({ 1.5, 1.5, 1.5 })))
    assert_free_cell(t, { 2.5, 0.5, 0.5 }, { 2, 0, 0 }, 2)
    assert.is_true(t:decode_tile(0, 0, 0, blob(0, { 0x00, 0x80, 0x01, 0x00 })))
    assert.are.equal("blocked", (t:locate({ 2.5, 2.5, 2.5 })))
    assert_free_cell(t, { 3.5, 3.5, 3.5 }, { 3, 3, 3 }, 1)
    assert_free_cell(t, { 0.5, 0.5, 0.5 }, { 0, 0, 0 }, 2)
    assert.is_true(t:decode_tile(0, 0, 0, blob(1, {})))
    assert.are.equal("blocked", (t:locate({ 0.5, 0.5, 0.5 })))
    assert.is_true(t:decode_tile(0, 0, 0, blob(0, {})))
    assert_free_cell(t, { 0.5, 0.5, 0.5 }, { 0, 0, 0 }, 4)
    local good = t:encode_tile(0, 0, 0)
    local bad = {
      { 0, { 0xFF, 0x00 } },                   -- a fully blocked node stored
      { 0, { 0x00, 0x00 } },                   -- an empty node stored
      { 0, { 0x01, 0x01 } },                   -- a child both blocked and stored
      { 0, { 0x00, 0x01 } },                   -- a stored child missing
      { 0, { 0x01, 0x00, 0x01, 0x00 } },       -- a node too many
      { 0, { 0x00, 0x01, 0x01, 0x01 } },       -- a layer-1 node with stored (leaf) children
      { 1, { 0x01, 0x00 } },                   -- solid with nodes
      { 2, {} },                               -- unknown flag
    }
    for i, b in ipairs(bad) do
      local ok, err = t:decode_tile(0, 0, 0, blob(b[1], b[2]))
      assert.is_nil(ok, "bad blob " .. i)
      assert.are.equal("decode_tile: corrupt data", err)
    end
    assert.are.equal(good, t:encode_tile(0, 0, 0))
  end)

  it("a solid tile survives encode and decode", function()
    local t = tree.new { tiles = { 2, 1, 1 }, depth = 3 }
    t:add_box({ 0, 0, 0 }, { 2, 2, 2 })
    t:fill({ 12, 4, 4 })
    local u = tree.new { tiles = { 2, 1, 1 }, depth = 3 }
    assert.is_true(u:decode_tile(1, 0, 0, t:encode_tile(1, 0, 0)))
    assert.are.equal(1, blob_flags(u:encode_tile(1, 0, 0)))
    assert.are.equal("blocked", (u:locate({ 12, 4, 4 })))
    assert_free_cell(u, { 4, 4, 4 }, { 0, 0, 0 }, 8)
    assert.is_false(u:visible({ 4, 4, 4 }, { 12, 4, 4 }))
    assert.are.equal(0.5, (u:raycast({ 4, 4.5, 4.5 }, { 12, 4.5, 4.5 })))
  end)

  it("clear_tile frees one tile only", function()
    local t = tree.new { tiles = { 2, 1, 1 }, depth = 3 }
    t:add_box({ 1, 1, 1 }, { 15, 2, 2 })
    t:fill({ 12, 6, 6 }) -- the free space is connected: both tiles become wholly blocked
    assert.are.equal(t, t:clear_tile(0, 0, 0))
    assert.are.equal(0, blob_nodes(t:encode_tile(0, 0, 0)))
    assert.are.equal(0, blob_flags(t:encode_tile(0, 0, 0)))
    assert_free_cell(t, { 1.5, 1.5, 1.5 }, { 0, 0, 0 }, 8)
    assert.are.equal("blocked", (t:locate({ 12, 6, 6 })))
  end)

  it("save / load round-trips params and every tile", function()
    local t = tree.new { tiles = { 2, 1, 2 }, depth = 4, scale = 0.25, origin = { -3, 1.5, 7 }, radius = 0.125 }
    t:add_box({ -2, 2, 8 }, { 1, 3, 12 })
    t:add_triangles({ -3, 1.5, 7, 4, 5, 10, 0, 2, 14 }, { 1, 2, 3 })
    local path = tmpname(".octn")
    assert.is_true(t:save(path))
    local u, err = tree.load(path)
    assert.is_nil(err)
    assert.are.same(t:params(), u:params())
    assert.are.same(all_blobs(t), all_blobs(u))
    assert.are.equal(t:stats().nodes, u:stats().nodes)
    -- saving the loaded tree gives the same bytes
    local path2 = tmpname(".octn")
    assert.is_true(u:save(path2))
    assert.are.equal(read_file(path), read_file(path2))
    -- a damaged file is refused
    local bytes = read_file(path)
    write_file(path2, bytes:sub(1, #bytes - 10))
    local v, e = tree.load(path2)
    assert.is_nil(v)
    assert.truthy(e:find(path2, 1, true) and e:find("corrupt", 1, true), e)
    os.remove(path)
    os.remove(path2)
    v, e = tree.load(path)
    assert.is_nil(v)
    assert.are.equal(path .. ": cannot read: No such file or directory", e)
  end)

  it("save to an impossible path is nil, reason", function()
    local a, err = small():save("/nonexistent-dir/x.octn")
    assert.is_nil(a)
    assert.are.equal("/nonexistent-dir/x.octn: cannot write: No such file or directory", err)
  end)

  it("export_obj writes one box per blocked or free cube", function()
    local t = box_scene()
    local path = tmpname(".obj")
    assert.are.equal(8, t:export_obj(path, { form = "boxes" }))
    assert.are.equal(8, t:export_obj(path, { what = "blocked", form = "boxes" }))
    local s = read_file(path)
    local nv, nf = 0, 0
    for line in s:gmatch("[^\n]+") do
      if line:sub(1, 2) == "v " then nv = nv + 1 elseif line:sub(1, 2) == "f " then nf = nf + 1 end
    end
    assert.are.equal(64, nv)
    assert.are.equal(48, nf)
    assert.are.equal(63, t:export_obj(path, { what = "free", form = "boxes" }))
    assert.are.equal(1, small():export_obj(path, { what = "free", form = "boxes" }))
    assert.are.equal(0, small():export_obj(path, { form = "boxes" }))
    os.remove(path)
    local a, err = t:export_obj("/nonexistent-dir/x.obj")
    assert.is_nil(a)
    assert.are.equal("/nonexistent-dir/x.obj: cannot write: No such file or directory", err) -- the OS's reason
  end)
end)
