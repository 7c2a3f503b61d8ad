-- Files: tile blobs (encode_tile / decode_tile) and whole-tree files (save / load).
-- Format (csrc/core/tilefile.c): little-endian, CRC-32 (zlib) over every byte before it.
--   tile blob: "ONTL" u16 version=1, u8 depth, u8 flags (bit0 solid), u32 n, n x (blockFlag, childrenFlag), u32 crc
--   tree file: "OCTN" u16 version=1, u8 depth, u8 0, u32 nx ny nz, f64 ox oy oz, f64 scale, f64 radius (60 bytes),
--              per tile in index order: u32 blob length + blob; u32 crc
local compat = require "octonav.compat" -- Lua 5.1 .. 5.4 (issue 34)
local bits = dofile("spec/support/bits.lua") -- integer operators on every Lua version (issue 34)
local octonav = require "octonav"
local Tree = octonav.tree

-- ---- helpers ------------------------------------------------------------------------------------

local files = dofile("spec/support/files.lua")

-- tmppath(): os.tmpname(); cleanup() removes each and its save's "<path>.tmp" (spec/support/files.lua)
local tmp = files.tracker(function(p)
  os.remove(p)
  os.remove(p .. ".tmp")
end)
local tmppath, cleanup = tmp.file, tmp.cleanup
local readfile, writefile = files.read, files.write

-- zlib's CRC-32, to craft blobs that pass the checksum and test the structure checks behind it
-- (spec/support/crc32.lua).
local crc32 = dofile("spec/support/crc32.lua")

-- A tile blob from its parts, with a correct CRC.
local function blob(depth, flags, nodes, opts)
  opts = opts or {}
  local body = {}
  for i, v in ipairs(nodes) do body[i] = string.char(v[1], v[2]) end
  local n = opts.n or #nodes
  local s = (opts.magic or "ONTL") .. compat.pack("<I2BBI4", opts.version or 1, depth, flags, n) .. table.concat(body)
  return s .. compat.pack("<I4", crc32(s))
end

-- Every leaf of the tree (or of the given leaf boxes {x0,x1,y0,y1,z0,z1}, inclusive), by its centre:
-- "B" (blocked) or "F tile code" (the free cell holding it).
local function leaf_answers(t, regions)
  local p = t:params()
  local N, s, o = p.tile_leaves, p.scale, p.origin
  regions = regions or { { 0, p.tiles[1] * N - 1, 0, p.tiles[2] * N - 1, 0, p.tiles[3] * N - 1 } }
  local out = {}
  for _, r in ipairs(regions) do
    for z = r[5], r[6] do
      for y = r[3], r[4] do
        for x = r[1], r[2] do
          local st, c = t:locate { o[1] + (x + 0.5) * s, o[2] + (y + 0.5) * s, o[3] + (z + 0.5) * s }
          if st == "free" then
            out[#out + 1] = ("F %d,%d,%d %d"):format(c.tile[1], c.tile[2], c.tile[3], c.code)
          else
            out[#out + 1] = assert(st == "blocked" and "B", "locate inside the grid said " .. tostring(st))
          end
        end
      end
    end
  end
  return out
end

local function same_answers(a, b)
  assert.are.equal(#a, #b)
  for i = 1, #a do
    if a[i] ~= b[i] then
      error(("leaf %d differs: %s vs %s"):format(i, a[i], b[i]), 2)
    end
  end
end

local function each_tile(t, fn)
  local p = t:params()
  for k = 0, p.tiles[3] - 1 do
    for j = 0, p.tiles[2] - 1 do
      for i = 0, p.tiles[1] - 1 do fn(i, j, k) end
    end
  end
end

local function all_blobs(t)
  local out = {}
  each_tile(t, function(i, j, k) out[#out + 1] = t:encode_tile(i, j, k) end)
  return out
end

-- ---- scenes -------------------------------------------------------------------------------------

local scenes = {}

-- several tiles: a box across tile borders, a whole tile solid, triangles, a heightfield, empty tiles
scenes.multi = function()
  local t = Tree.new { tiles = { 3, 2, 2 }, depth = 4 }
  t:add_box({ 5, 5, 5 }, { 20, 9, 30 })
  t:add_box({ 32, 0, 0 }, { 48, 16, 16 })                     -- exactly tile (2,0,0): solid
  t:add_triangles({ 1, 20, 1, 30, 24, 3, 12, 31, 28 }, { 1, 2, 3 })
  t:add_heightfield { origin = { 16, 0, 16 }, cell = 2, nx = 9, nz = 9,
    heights = (function()
      local h = {}
      for k = 0, 8 do for i = 0, 8 do h[#h + 1] = 1 + ((i * 7 + k * 3) % 5) * 0.75 end end
      return h
    end)() }
  return t
end

-- non-default scale, origin and radius
scenes.scaled = function()
  local t = Tree.new { tiles = { 2, 1, 2 }, depth = 3, scale = 0.37, origin = { -1.25, 100.1, 3000 }, radius = 0.2 }
  t:add_box({ -0.5, 100.5, 3000.4 }, { 0.3, 101.2, 3001.9 })
  t:add_triangles({ 2.0, 101, 3000.2, 4.5, 102.5, 3003, 1, 100.3, 3005 }, { 1, 2, 3 })
  return t
end

-- nothing inserted
scenes.empty = function()
  return Tree.new { tiles = { 2, 2, 1 }, depth = 5 }
end

-- every tile solid
scenes.solid = function()
  local t = Tree.new { tiles = { 2, 1, 2 }, depth = 2 }
  t:add_box({ -1, -1, -1 }, { 100, 100, 100 })
  return t
end

-- depth 1: the root is layer 1, its children are leaves
scenes.depth1 = function()
  local t = Tree.new { tiles = { 2, 2, 2 }, depth = 1 }
  t:add_box({ 0, 0, 0 }, { 1, 1, 1 })
  t:add_box({ 2.5, 2.5, 0.5 }, { 2.6, 2.6, 0.6 })
  t:add_box({ 0, 2, 2 }, { 2, 4, 4 })                          -- tile (0,1,1) solid
  return t
end

-- depth 9, one tile, a few small things deep down
scenes.deep = function()
  local t = Tree.new { tiles = { 1, 1, 1 }, depth = 9 }
  t:add_box({ 100.5, 7, 300 }, { 101, 8.5, 300.2 })
  t:add_triangles({ 0, 0, 0, 511.9, 3, 0.1, 5, 511, 511 }, { 1, 2, 3 })
  -- 512^3 leaves are too many to probe one by one: probe around the geometry
  return t, { { 96, 105, 3, 12, 296, 304 }, { 0, 9, 0, 9, 0, 9 }, { 500, 511, 0, 6, 0, 4 }, { 0, 511, 0, 1, 0, 1 },
    { 0, 8, 500, 511, 500, 511 }, { 250, 262, 250, 262, 250, 262 } }
end

local scene_names = { "multi", "scaled", "empty", "solid", "depth1", "deep" }

-- ---- specs --------------------------------------------------------------------------------------

describe("tree files", function()
  after_each(cleanup)

  describe("save -> load -> save", function()
    for _, name in ipairs(scene_names) do
      it("is bit-exact for the '" .. name .. "' scene", function()
        local t, regions = scenes[name]()
        local p1, p2 = tmppath(), tmppath()
        assert.is_true(t:save(p1))
        local t2, err = Tree.load(p1)
        assert.is_not_nil(t2, err)
        assert.is_true(t2:save(p2))
        local a, b = readfile(p1), readfile(p2)
        assert.are.equal(#a, #b)
        assert.is_true(a == b, "second save differs from the first")
        -- and the loaded tree answers like the original
        same_answers(leaf_answers(t, regions), leaf_answers(t2, regions))
        assert.are.equal(t:stats().nodes, t2:stats().nodes)
      end)
    end

    it("does not depend on the order geometry was inserted in", function()
      local a = Tree.new { tiles = { 2, 1, 1 }, depth = 4 }
      local b = Tree.new { tiles = { 2, 1, 1 }, depth = 4 }
      local boxes = { { { 1, 1, 1 }, { 3, 9, 2 } }, { { 10, 2, 2 }, { 20, 3, 15 } }, { { 4.5, 4.5, 4.5 }, { 5, 5, 5 } } }
      for i = 1, #boxes do a:add_box(boxes[i][1], boxes[i][2]) end
      for i = #boxes, 1, -1 do b:add_box(boxes[i][1], boxes[i][2]) end
      local pa, pb = tmppath(), tmppath()
      assert.is_true(a:save(pa))
      assert.is_true(b:save(pb))
      assert.is_true(readfile(pa) == readfile(pb))
    end)

    it("keeps the parameters bit for bit", function()
      local t = Tree.new { tiles = { 3, 1, 2 }, depth = 6, scale = 0.1, origin = { -0.3, 1e9 + 0.7, 1 / 3 }, radius = 0.05 }
      local path = tmppath()
      assert.is_true(t:save(path))
      local t2 = assert(Tree.load(path))
      local a, b = t:params(), t2:params()
      assert.are.same(a, b)
      assert.are.equal(0.1, b.scale)
      assert.are.equal(1 / 3, b.origin[3])
      assert.are.equal(1e9 + 0.7, b.origin[2])
      assert.are.equal(0.05, b.radius)
      assert.are.equal(64, b.tile_leaves)
    end)

    it("keeps the radius: geometry added after a load is inflated the same way", function()
      local t = Tree.new { tiles = { 1, 1, 1 }, depth = 4, radius = 1 }
      local path = tmppath()
      assert.is_true(t:save(path))
      local t2 = assert(Tree.load(path))
      t:add_box({ 5, 5, 5 }, { 6, 6, 6 })
      t2:add_box({ 5, 5, 5 }, { 6, 6, 6 })
      assert.are.equal(t:encode_tile(0, 0, 0), t2:encode_tile(0, 0, 0))
      assert.are.equal("blocked", (t2:locate { 4.5, 4.5, 4.5 }))
    end)

    it("overwrites an existing file", function()
      local path = tmppath()
      writefile(path, "old contents")
      local t = scenes.multi()
      assert.is_true(t:save(path))
      local t2 = assert(Tree.load(path))
      same_answers(leaf_answers(t), leaf_answers(t2))
    end)
  end)

  describe("layout", function()
    for _, name in ipairs(scene_names) do
      it("has the documented header, tile records and sizes ('" .. name .. "')", function()
        local t = scenes[name]()
        local path = tmppath()
        assert.is_true(t:save(path))
        local s = readfile(path)
        local p = t:params()
        local magic, ver, depth, zero, nx, ny, nz, ox, oy, oz, scale, radius, pos =
          compat.unpack_bytes("<c4I2BBI4I4I4ddddd", s)
        assert.are.equal("OCTN", magic)
        assert.are.equal(1, ver)
        assert.are.equal(p.depth, depth)
        assert.are.equal(0, zero)
        assert.are.same(p.tiles, { nx, ny, nz })
        assert.are.same(p.origin, { ox, oy, oz })
        assert.are.equal(p.scale, scale)
        assert.are.equal(p.radius, radius)
        assert.are.equal(61, pos)                               -- a 60-byte header (radius included)
        -- tile records in index order (i fastest), each the same bytes encode_tile gives
        local nodes = 0
        each_tile(t, function(i, j, k)
          local len
          len, pos = compat.unpack_bytes("<I4", s, pos)
          local b = s:sub(pos, pos + len - 1)
          pos = pos + len
          assert.are.equal(t:encode_tile(i, j, k), b)
          local bm, bv, bd, bf, bn = compat.unpack_bytes("<c4I2BBI4", b)
          assert.are.equal("ONTL", bm)
          assert.are.equal(1, bv)
          assert.are.equal(p.depth, bd)
          assert.is_true(bf == 0 or bf == 1)
          assert.are.equal(12 + 2 * bn + 4, len)
          assert.are.equal(crc32(b:sub(1, -5)), (compat.unpack_bytes("<I4", b, len - 3)))
          nodes = nodes + bn
        end)
        assert.are.equal(#s - 3, pos)                           -- only the CRC is left
        assert.are.equal(crc32(s:sub(1, -5)), (compat.unpack_bytes("<I4", s, #s - 3)))
        -- every stored node is written once: the file holds exactly the tree's nodes
        assert.are.equal(t:stats().nodes, nodes)
        -- whole file = 60 + sum over tiles (4 + 12 + 2*nodes + 4) + 4
        local ntiles = p.tiles[1] * p.tiles[2] * p.tiles[3]
        assert.are.equal(60 + ntiles * (4 + 12 + 4) + 2 * nodes + 4, #s)
      end)
    end

    it("writes exactly 2 bytes more per stored node", function()
      local t = Tree.new { tiles = { 1, 1, 1 }, depth = 5 }
      local p1 = tmppath()
      assert.is_true(t:save(p1))
      local base = #readfile(p1)
      assert.are.equal(60 + 4 + 16 + 4, base)                  -- empty tree of one tile: 84 bytes
      for i = 1, 6 do
        t:add_box({ i * 3, i * 2, i }, { i * 3 + 0.5, i * 2 + 0.5, i + 0.5 })
        assert.is_true(t:save(p1))
        assert.are.equal(base + 2 * t:stats().nodes, #readfile(p1))
      end
    end)

    it("stores an empty tile as n = 0, a solid tile as flags = 1, n = 0", function()
      local t = Tree.new { tiles = { 2, 1, 1 }, depth = 3 }
      t:add_box({ 8, 0, 0 }, { 16, 8, 8 })
      assert.are.equal(blob(3, 0, {}), t:encode_tile(0, 0, 0))
      assert.are.equal(blob(3, 1, {}), t:encode_tile(1, 0, 0))
    end)

    it("writes nodes in pre-order, children in index order", function()
      -- depth 2: leaf (0,0,0) blocked -> root stores child 0 (layer 1) with bit 0 set
      local t = Tree.new { tiles = { 1, 1, 1 }, depth = 2 }
      t:add_box({ 0.25, 0.25, 0.25 }, { 0.5, 0.5, 0.5 })
      assert.are.equal(blob(2, 0, { { 0, 0x01 }, { 0x01, 0 } }), t:encode_tile(0, 0, 0))
      -- and leaf (3,3,3) too: root also stores child 7 (bits 7)
      t:add_box({ 3.25, 3.25, 3.25 }, { 3.5, 3.5, 3.5 })
      assert.are.equal(blob(2, 0, { { 0, 0x81 }, { 0x01, 0 }, { 0x80, 0 } }), t:encode_tile(0, 0, 0))
      -- a whole octant: flagged in the root, no child stored
      t:add_box({ 2, 0, 0 }, { 4, 2, 2 })
      assert.are.equal(blob(2, 0, { { 0x02, 0x81 }, { 0x01, 0 }, { 0x80, 0 } }), t:encode_tile(0, 0, 0))
    end)
  end)

  describe("load failures", function()
    it("returns nil and a message with the path for a missing file", function()
      local path = files.tmpname()
      local t, err = Tree.load(path)
      assert.is_nil(t)
      assert.are.equal("string", type(err))
      assert.is_truthy(err:find(path, 1, true), err)
    end)

    it("returns nil and a message with the path when save cannot write", function()
      local path = "/nonexistent-dir-octonav/sub/tree.octn"
      local ok, err = scenes.multi():save(path)
      assert.is_nil(ok)
      assert.is_truthy(err:find(path, 1, true), err)
    end)

    it("refuses an empty file and a directory", function()
      local path = tmppath()
      writefile(path, "")
      local t, err = Tree.load(path)
      assert.is_nil(t)
      assert.is_truthy(err:find(path, 1, true))
      t, err = Tree.load("/tmp")
      assert.is_nil(t)
      assert.are.equal("string", type(err))
    end)

    for _, name in ipairs { "depth1", "scaled" } do
      it("refuses every truncation of a small file ('" .. name .. "')", function()
        local src = tmppath()
        assert.is_true(scenes[name]():save(src))
        local s = readfile(src)
        assert.is_true(#s < 400)
        local path = tmppath()
        for len = 0, #s - 1 do
          writefile(path, s:sub(1, len))
          local t, err = Tree.load(path)
          assert.is_nil(t, "length " .. len .. " loaded")
          assert.are.equal("string", type(err))
          assert.is_truthy(err:find(path, 1, true), err)
        end
        writefile(path, s)
        assert.is_not_nil(Tree.load(path))
      end)
    end

    it("refuses a file with any byte changed", function()
      local src = tmppath()
      assert.is_true(scenes.depth1():save(src))
      local s = readfile(src)
      local path = tmppath()
      for i = 1, #s do
        for _, mask in ipairs { 0x01, 0x10, 0x80, 0xff } do
          local c = string.char(bits.bxor(s:byte(i), mask))
          writefile(path, s:sub(1, i - 1) .. c .. s:sub(i + 1))
          local t, err = Tree.load(path)
          assert.is_nil(t, ("byte %d ^ 0x%02x loaded"):format(i, mask))
          assert.are.equal("string", type(err))
        end
      end
    end)

    it("refuses trailing bytes", function()
      local src = tmppath()
      assert.is_true(scenes.depth1():save(src))
      local s = readfile(src)
      local path = tmppath()
      for _, extra in ipairs { "\0", "x", string.rep("\0", 24) } do
        writefile(path, s .. extra)
        assert.is_nil((Tree.load(path)))
      end
    end)

    it("refuses a version 2 file with a valid checksum (unsupported version)", function()
      local src = tmppath()
      assert.is_true(scenes.depth1():save(src))
      local s = readfile(src)
      local body = s:sub(1, 4) .. compat.pack("<I2", 2) .. s:sub(7, -5)
      local path = tmppath()
      writefile(path, body .. compat.pack("<I4", crc32(body)))
      local t, err = Tree.load(path)
      assert.is_nil(t)
      assert.is_truthy(err:find("version", 1, true), err)
    end)

    it("refuses structurally bad files whose checksums are right", function()
      local path = tmppath()
      local function file(hdr_fields, tiles)
        local s = "OCTN" .. compat.pack("<I2BBI4I4I4ddddd", compat.unpack(hdr_fields))
        for _, b in ipairs(tiles) do s = s .. compat.pack("<I4", #b) .. b end
        return s .. compat.pack("<I4", crc32(s))
      end
      local good = { 1, 2, 0, 1, 1, 1, 0, 0, 0, 1, 0 }
      writefile(path, file(good, { blob(2, 0, {}) }))
      assert.is_not_nil(Tree.load(path))                    -- the control: this one loads
      local bad = {
        { "reserved byte set", { 1, 2, 1, 1, 1, 1, 0, 0, 0, 1, 0 }, { blob(2, 0, {}) } },
        { "depth 0", { 1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0 }, { blob(0, 0, {}) } },
        { "depth 10", { 1, 10, 0, 1, 1, 1, 0, 0, 0, 1, 0 }, { blob(10, 0, {}) } },
        { "zero tiles", { 1, 2, 0, 0, 1, 1, 0, 0, 0, 1, 0 }, {} },
        { "scale 0", { 1, 2, 0, 1, 1, 1, 0, 0, 0, 0, 0 }, { blob(2, 0, {}) } },
        { "negative radius", { 1, 2, 0, 1, 1, 1, 0, 0, 0, 1, -1 }, { blob(2, 0, {}) } },
        { "NaN origin", { 1, 2, 0, 1, 1, 1, 0 / 0, 0, 0, 1, 0 }, { blob(2, 0, {}) } },
        { "infinite scale", { 1, 2, 0, 1, 1, 1, 0, 0, 0, math.huge, 0 }, { blob(2, 0, {}) } },
        { "too few tiles", { 1, 2, 0, 2, 1, 1, 0, 0, 0, 1, 0 }, { blob(2, 0, {}) } },
        { "too many tiles", { 1, 2, 0, 1, 1, 1, 0, 0, 0, 1, 0 }, { blob(2, 0, {}), blob(2, 0, {}) } },
        { "tile of another depth", { 1, 2, 0, 1, 1, 1, 0, 0, 0, 1, 0 }, { blob(3, 0, {}) } },
        { "huge tile count", { 1, 2, 0, 4096, 4096, 4096, 0, 0, 0, 1, 0 }, { blob(2, 0, {}) } },
      }
      for _, case in ipairs(bad) do
        writefile(path, file(case[2], case[3]))
        local t, err = Tree.load(path)
        assert.is_nil(t, case[1] .. " loaded")
        assert.are.equal("string", type(err), case[1])
      end
      -- a tile record whose length runs past the end
      local s = "OCTN" .. compat.pack("<I2BBI4I4I4ddddd", compat.unpack(good)) .. compat.pack("<I4", 1000) .. blob(2, 0, {})
      writefile(path, s .. compat.pack("<I4", crc32(s)))
      assert.is_nil((Tree.load(path)))
    end)
  end)
end)

describe("tile blobs", function()
  after_each(cleanup)

  for _, name in ipairs(scene_names) do
    it("encode -> decode into a fresh tree reproduces every leaf ('" .. name .. "')", function()
      local t, regions = scenes[name]()
      local p = t:params()
      local fresh = Tree.new { tiles = p.tiles, depth = p.depth, scale = p.scale, origin = p.origin, radius = p.radius }
      each_tile(t, function(i, j, k)
        local b = t:encode_tile(i, j, k)
        assert.are.equal(16 + 2 * math.floor((#b - 16) / 2), #b)
        assert.is_true(fresh:decode_tile(i, j, k, b))
      end)
      same_answers(leaf_answers(t, regions), leaf_answers(fresh, regions))
      assert.are.same(all_blobs(t), all_blobs(fresh))
      assert.are.equal(t:stats().nodes, fresh:stats().nodes)
    end)
  end

  it("a blob can be moved to another tile position", function()
    local t = Tree.new { tiles = { 2, 1, 1 }, depth = 3 }
    t:add_box({ 1, 2, 3 }, { 2.5, 3, 4 })
    local b = t:encode_tile(0, 0, 0)
    assert.is_true(t:decode_tile(1, 0, 0, b))
    for z = 0, 7 do
      for y = 0, 7 do
        for x = 0, 7 do
          local a = t:locate { x + 0.5, y + 0.5, z + 0.5 }
          local c = t:locate { x + 8.5, y + 0.5, z + 0.5 }
          assert.are.equal(a, c)
        end
      end
    end
    assert.are.equal(b, t:encode_tile(1, 0, 0))
  end)

  it("decode replaces the tile's contents (a blocked tile can be cleared by an empty blob)", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 3 }
    t:add_box({ 0, 0, 0 }, { 8, 8, 8 })
    assert.are.equal("blocked", (t:locate { 1, 1, 1 }))
    local salt = t:tile_salt(0, 0, 0)
    assert.is_true(t:decode_tile(0, 0, 0, blob(3, 0, {})))
    assert.are.equal("free", (t:locate { 1, 1, 1 }))
    assert.are_not.equal(salt, t:tile_salt(0, 0, 0))
  end)

  it("accepts hand-made valid blobs", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 2 }
    assert.is_true(t:decode_tile(0, 0, 0, blob(2, 0, { { 0x01, 0 } })))       -- octant 0 blocked
    assert.are.equal("blocked", (t:locate { 1.5, 1.5, 1.5 }))
    assert.are.equal("free", (t:locate { 2.5, 0.5, 0.5 }))
    assert.is_true(t:decode_tile(0, 0, 0, blob(2, 0, { { 0, 0x80 }, { 0x40, 0 } }))) -- leaf (2,3,3) of octant 7
    assert.are.equal("blocked", (t:locate { 2.5, 3.5, 3.5 }))
    assert.are.equal("free", (t:locate { 3.5, 3.5, 3.5 }))
    assert.are.equal("free", (t:locate { 0.5, 0.5, 0.5 }))
    assert.is_true(t:decode_tile(0, 0, 0, blob(2, 1, {})))                    -- solid
    assert.are.equal("blocked", (t:locate { 3.5, 3.5, 3.5 }))
  end)

  describe("refuses bad input and leaves the tile unchanged", function()
    local t, before, answers, salt
    before_each(function()
      t = Tree.new { tiles = { 2, 1, 1 }, depth = 3 }
      t:add_box({ 1, 1, 1 }, { 2.5, 3, 6 })
      t:add_box({ 9, 1, 1 }, { 10, 2, 2 })
      before = t:encode_tile(0, 0, 0)
      answers = leaf_answers(t)
      salt = t:tile_salt(0, 0, 0)
    end)
    local function refused(s, what)
      local ok, err = t:decode_tile(0, 0, 0, s)
      assert.is_nil(ok, what .. " was accepted")
      assert.are.equal("string", type(err), what)
      assert.are.equal(before, t:encode_tile(0, 0, 0), what)
      assert.are.equal(salt, t:tile_salt(0, 0, 0), what)
    end
    after_each(function()
      same_answers(answers, leaf_answers(t))
    end)

    it("empty and garbage strings", function()
      refused("", "empty string")
      refused("ONTL", "bare magic")
      refused("OCTN" .. string.rep("\0", 20), "a tree file magic")
      refused(string.rep("\0", 64), "zeros")
      refused(string.rep("\255", 64), "0xff bytes")
      local rnd = {}
      math.randomseed(7)
      for n = 1, 200 do
        for i = 1, n % 40 + 1 do rnd[i] = string.char(math.random(0, 255)) end
        refused(table.concat(rnd, "", 1, n % 40 + 1), "random bytes " .. n)
      end
      for n = 1, 50 do
        for i = 1, n do rnd[i] = string.char(math.random(0, 255)) end
        refused("ONTL\1\0\3\0" .. table.concat(rnd, "", 1, n), "random after a good header " .. n)
      end
    end)

    it("every truncation of a good blob", function()
      local good = Tree.new { tiles = { 1, 1, 1 }, depth = 3 }
      good:add_box({ 4, 4, 4 }, { 5, 5, 5.5 })
      good:add_box({ 0, 0, 0 }, { 0.5, 2, 2 })
      local s = good:encode_tile(0, 0, 0)
      assert.is_true(#s > 16)
      for len = 0, #s - 1 do refused(s:sub(1, len), "length " .. len) end
      refused(s .. "\0", "one byte more")
    end)

    it("every byte of a good blob changed", function()
      local good = Tree.new { tiles = { 1, 1, 1 }, depth = 3 }
      good:add_box({ 4, 4, 4 }, { 5, 5, 5.5 })
      local s = good:encode_tile(0, 0, 0)
      for i = 1, #s do
        for _, mask in ipairs { 0x01, 0x04, 0x80, 0xff } do
          refused(s:sub(1, i - 1) .. string.char(bits.bxor(s:byte(i), mask)) .. s:sub(i + 1), ("byte %d ^ %d"):format(i, mask))
        end
      end
    end)

    it("a blob from a tree of another depth", function()
      for _, d in ipairs { 1, 2, 4, 9 } do
        local other = Tree.new { tiles = { 1, 1, 1 }, depth = d }
        refused(other:encode_tile(0, 0, 0), "empty depth " .. d)
        other:add_box({ 0.2, 0.2, 0.2 }, { 0.7, 0.7, 0.7 })
        refused(other:encode_tile(0, 0, 0), "depth " .. d)
        other:add_box({ -1, -1, -1 }, { 1000, 1000, 1000 })
        refused(other:encode_tile(0, 0, 0), "solid depth " .. d)
      end
    end)

    it("structural errors behind a correct checksum", function()
      refused(blob(3, 0, {}, { version = 2 }), "version 2")
      refused(blob(3, 0, {}, { version = 0 }), "version 0")
      refused(blob(3, 0, {}, { magic = "ONTX" }), "magic")
      refused(blob(3, 2, {}), "unknown flag")
      refused(blob(3, 1, { { 0x01, 0 } }), "solid with nodes")
      refused(blob(3, 0, { { 0, 0 } }), "a stored node with nothing in it")
      refused(blob(3, 0, { { 0xff, 0 } }), "a stored node wholly blocked")
      refused(blob(3, 0, { { 0x01, 0x01 } }), "child both blocked and stored")
      refused(blob(3, 0, { { 0, 0x02 } }), "stored child missing")
      refused(blob(3, 0, { { 0x01, 0 }, { 0x01, 0 } }), "trailing node")
      refused(blob(3, 0, { { 0, 0x01 }, { 0, 0x01 }, { 0, 0x01 }, { 0x01, 0 } }), "a node below layer 1")
      refused(blob(3, 0, { { 0x01, 0 } }, { n = 2 }), "n larger than the nodes given")
      refused(blob(3, 0, { { 0x01, 0 }, { 0x01, 0 } }, { n = 1 }), "n smaller than the nodes given")
      refused(blob(3, 0, {}, { n = 0xffffffff }), "n huge")
      -- a full valid structure (root + 8 children) followed by one node more
      local ten = { { 0, 0xff } }
      for _ = 1, 9 do ten[#ten + 1] = { 0x01, 0 } end
      refused(blob(3, 0, ten), "ten nodes")
      -- depth 1: the root is the only node there can be
      local d1 = Tree.new { tiles = { 1, 1, 1 }, depth = 1 }
      assert.is_true(d1:decode_tile(0, 0, 0, blob(1, 0, { { 0x01, 0 } })))
      assert.is_nil((d1:decode_tile(0, 0, 0, blob(1, 0, { { 0, 0x01 }, { 0x01, 0 } }))))
    end)

    it("raises (not returns) for a tile index out of range or a non-string", function()
      assert.has_error(function() t:decode_tile(2, 0, 0, before) end)
      assert.has_error(function() t:decode_tile(-1, 0, 0, before) end)
      assert.has_error(function() t:decode_tile(0, 0, 0, {}) end)
      assert.has_error(function() t:encode_tile(0, 1, 0) end)
    end)
  end)
end)
