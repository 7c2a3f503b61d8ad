-- The bake (lua/octonav/bake.lua) and the pack files (lua/octonav/pack.lua): docs/world.md.
local octonav = require "octonav"
local bake = require "octonav.bake"
local pack = require "octonav.pack"
local world = require "octonav.world"

-- ---- helpers ------------------------------------------------------------------------------------

local files = dofile("spec/support/files.lua")

-- tmpdir(): a fresh name, not created; cleanup() removes them all with rm -rf (spec/support/files.lua)
local tmp = files.tracker(files.rm_rf)
local tmpdir, cleanup = tmp.dir, tmp.cleanup
local readfile, writefile, exists = files.read, files.write, files.exists

-- text with a fresh last line "crc32 XXXXXXXX" (to test what lies behind the checksum)
local function reseal(text)
  local body = text:match("^(.-)crc32 %x+\n$")
  return body .. ("crc32 %08x\n"):format(pack.crc32(body))
end

local function box(mn, mx) return { box = { min = mn, max = mx } } end

-- a hollow box of walls 1 thick: outer [mn, mx]; `open_top` leaves the ceiling out
local function hollow(mn, mx, open_top)
  local g = {
    box(mn, { mx[1], mn[2] + 1, mx[3] }),                                   -- floor
    box(mn, { mn[1] + 1, mx[2], mx[3] }),                                   -- -x
    box({ mx[1] - 1, mn[2], mn[3] }, mx),                                   -- +x
    box(mn, { mx[1], mx[2], mn[3] + 1 }),                                   -- -z
    box({ mn[1], mn[2], mx[3] - 1 }, mx),                                   -- +z
  }
  if not open_top then g[#g + 1] = box({ mn[1], mx[2] - 1, mn[3] }, mx) end
  return g
end

local function err_of(fn, ...)
  local ok, e = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return tostring(e)
end

local function has(haystack, needle)
  assert(tostring(haystack):find(needle, 1, true), ("%q does not contain %q"):format(tostring(haystack), needle))
end

local function base_config(extra)
  local c = { range = { min = { 0, 0, 0 }, max = { 16, 8, 8 } }, depth = 3, output = "/nonexistent/pack" }
  for k, v in pairs(extra or {}) do c[k] = v end
  return c
end

-- 2 x 1 x 1 tiles of 8^3 leaves, a wall on the shared face x = 8 (one leaf thick on each side) with
-- an opening y in [y0, y1], z in [z0, z1]
local function wall_config(dir, y0, y1, z0, z1, connect)
  return {
    range = { min = { 0, 0, 0 }, max = { 16, 8, 8 } }, depth = 3, scale = 1,
    geometry = {
      box({ 7, 0, 0 }, { 9, y0, 8 }), box({ 7, y1, 0 }, { 9, 8, 8 }),
      box({ 7, y0, 0 }, { 9, y1, z0 }), box({ 7, y0, z1 }, { 9, y1, 8 }),
    },
    connect = connect,
    output = dir,
  }
end

local function graph_of(dir)
  local m = assert(pack.read_manifest(dir))
  return assert(pack.read_graph(dir, m))
end

describe("octonav.bake", function()
  after_each(cleanup)

  describe("config", function()
    it("raises for misuse, naming the field", function()
      local cases = {
        { nil, "config: table expected" },
        { { output = "x" }, "config.range: required" },
        { base_config { foo = 1 }, "config: unknown key 'foo'" },
        { base_config { depth = 0 }, "config.depth: integer 1..9 expected" },
        { base_config { depth = 2.5 }, "config.depth" },
        { base_config { scale = -1 }, "config.scale: must be > 0" },
        { base_config { radius = 0 / 0 }, "config.radius: finite number expected" },
        { base_config { range = { min = { 0, 0, 0 }, max = { 1, -1, 1 } } }, "config.range.max: must not be below min" },
        { base_config { range = { min = { 0, 0 }, max = { 1, 1, 1 } } }, "config.range.min: point {x, y, z}" },
        { base_config { geometry = { { box = { min = { 0, 0, 0 }, max = { 1, 1, 1 } }, obj = "a.obj" } } },
          "config.geometry[1]: has both" },
        { base_config { geometry = { { mesh = "a.obj" } } }, "config.geometry[1]: unknown key 'mesh'" },
        { base_config { geometry = { {} } }, "config.geometry[1]: empty entry" },
        { base_config { geometry = { { triangles = { vertices = { 0, 0, 0, 1, 0, 0, 0, 1, 0 }, indices = { 1, 2, 4 } } } } },
          "config.geometry[1].triangles.indices: element 3 is not a vertex number (1..3)" },
        { base_config { geometry = { { heightfield = { nx = 2, nz = 2, heights = { 1, 2, 3 } } } } },
          "config.geometry[1].heightfield.heights: has 3 values, nx*nz = 4" },
        { base_config { geometry = { { fn = "not a function" } } }, "config.geometry[1].fn: function expected" },
        { base_config { holes = { { name = "a b", min = { 0, 0, 0 }, max = { 1, 1, 1 }, scale = 1, doors = {} } } },
          "config.holes[1].name" },
        { base_config { holes = { { name = "c", min = { 0, 0, 0 }, max = { 2, 2, 2 }, scale = 1, kind = "deep",
          doors = { { inside = { 1, 1, 1 }, outside = { 3, 1, 1 } } } } } }, "config.holes[1].kind" },
        { base_config { holes = { { name = "c", min = { 0, 0, 0 }, max = { 2, 2, 2 }, scale = 1,
          doors = { { inside = { 5, 1, 1 }, outside = { 3, 1, 1 } } } } } },
          "config.holes[1].doors[1].inside: must lie inside the hole's bounds" },
        { base_config { holes = { { name = "c", min = { 0, 0, 0 }, max = { 2, 2, 2 }, scale = 1,
          doors = { { inside = { 1, 1, 1 }, outside = { 3, 1, 1 }, handle = true } } } } },
          "config.holes[1].doors[1]: unknown key 'handle'" },
        { base_config { holes = { { name = "c", min = { 0, 0, 0 }, max = { 2, 2, 2 }, scale = 1,
          doors = { { inside = { 1, 1, 1 }, outside = { 300, 1, 1 } } } } } },
          "config.holes[1].doors[1].outside: must lie inside the world's tile grid" },
        { base_config { holes = {
          { name = "c", min = { 0, 0, 0 }, max = { 2, 2, 2 }, scale = 1, doors = { { inside = { 1, 1, 1 }, outside = { 3, 1, 1 } } } },
          { name = "c", min = { 0, 0, 0 }, max = { 2, 2, 2 }, scale = 1, doors = { { inside = { 1, 1, 1 }, outside = { 3, 1, 1 } } } },
        } }, "config.holes[2].name: duplicate hole name 'c'" },
        { base_config { connect = { weights = "fast" } }, "config.connect.weights" },
        { base_config { connect = { merge = 3 } }, "config.connect: unknown key 'merge'" },
        { base_config { output = false }, "config.output: required" },
        { base_config { progress = 3 }, "config.progress" },
      }
      for _, c in ipairs(cases) do
        has(err_of(bake.check, c[1]), c[2])
      end
      -- the public entry points check first, before touching any file
      has(err_of(bake, { output = "x" }), "config.range")
      has(err_of(bake.tile, base_config(), 2, 0, 0), "tile index 2 out of range")
    end)

    it("fills in the documented defaults", function()
      local cfg = bake.check { range = { min = { 0, 0, 0 }, max = { 1, 1, 1 } }, output = "p" }
      assert.are.equal(1.0, cfg.scale)
      assert.are.equal(6, cfg.depth)
      assert.are.equal(0, cfg.radius)
      assert.are.same({ merge_distance = 4, weights = "straight" }, cfg.connect)
      assert.are.same({}, cfg.geometry)
      assert.are.same({}, cfg.holes)
    end)
  end)

  describe("tile grid", function()
    it("grows the range to whole cubic tiles keeping the top face, min x and min z", function()
      -- T = 2^5 * 0.5 = 16; extents 100, 45, 17 -> 7, 3, 2 tiles
      local g = bake.grid { range = { min = { -10, -5, 3 }, max = { 90, 40, 20 } }, scale = 0.5, depth = 5, output = "p" }
      assert.are.equal(16, g.tile_size)
      assert.are.same({ 7, 3, 2 }, g.tiles)
      assert.are.same({ -10, 40 - 3 * 16, 3 }, g.origin)
      assert.are.equal(42, g.count)
      -- exact multiples and empty extents
      g = bake.grid { range = { min = { 0, 0, 0 }, max = { 32, 0, 64 } }, depth = 4, output = "p" }
      assert.are.same({ 2, 1, 4 }, g.tiles)
      assert.are.same({ 0, -16, 0 }, g.origin)
      -- tile_of / tile_bounds on that grid
      assert.are.equal(0, bake.tile_of(g, { 0, -16, 0 }))
      assert.are.equal(1 + 2 * 3, bake.tile_of(g, { 20, -1, 60 }))
      assert.are.equal(1 + 2 * 3, bake.tile_of(g, { 32, 0, 64 })) -- the max faces belong to the last tiles
      assert.is_nil(bake.tile_of(g, { -0.1, -1, 1 }))
      local mn, mx = bake.tile_bounds(g, 1 + 2 * 3)
      assert.are.same({ 16, -16, 48 }, mn)
      assert.are.same({ 32, 0, 64 }, mx)
    end)
  end)

  describe("tiles", function()
    it("bakes each tile on its own into the same blob as one tree over the whole grid", function()
      local dir = tmpdir()
      assert(pack.mkdir(dir))
      -- an OBJ with CRLF, v//vn references, a quad and a negative index
      local obj = dir .. "/mesh.obj"
      writefile(obj, table.concat({
        "# test", "v 1.5 0.5 1.5", "v 22.5 3.5 2.5", "v 2.5 13.25 14.5", "v 20.5 12.5 13.5", "vn 0 1 0",
        "f 1//1 2//1 4//1 3//1", "f -4 -3 -2", "",
      }, "\r\n"))
      local heights = {}
      for k = 0, 8 do
        for i = 0, 12 do heights[#heights + 1] = 1 + ((i * 7 + k * 3) % 5) * 0.25 end
      end
      local hf = { origin = { 1, 0, 1 }, cell = 1.5, nx = 13, nz = 9, heights = heights }
      local tri = { vertices = { 3, 9, 3, 21, 10.5, 5, 12, 15.75, 14 }, indices = { 1, 2, 3 } }
      local cfg = {
        range = { min = { 0, 0, 0 }, max = { 24, 16, 16 } }, scale = 0.5, depth = 4, radius = 0.25,
        geometry = {
          box({ 6, 2, 2 }, { 10, 9, 3 }),       -- across x = 8 and y = 8
          box({ 7.5, 0, 7.5 }, { 8, 16, 8.5 }), -- on the tile borders
          { obj = obj },
          { triangles = tri },
          { heightfield = hf },
          { fn = function(emit) emit.box({ 15, 7, 7 }, { 17, 9, 9 }) end },
        },
        output = dir .. "/pack",
      }
      local s = assert(bake(cfg))
      local g = bake.grid(cfg)
      assert.are.same({ 3, 2, 2 }, g.tiles)
      assert.are.equal(12, s.tiles)
      local full = octonav.tree.new { tiles = g.tiles, depth = 4, scale = 0.5, origin = g.origin, radius = 0.25 }
      full:add_box({ 6, 2, 2 }, { 10, 9, 3 })
      full:add_box({ 7.5, 0, 7.5 }, { 8, 16, 8.5 })
      assert(full:add_obj(obj))
      full:add_triangles(tri.vertices, tri.indices)
      full:add_heightfield(hf)
      full:add_box({ 15, 7, 7 }, { 17, 9, 9 })
      local nonempty = 0
      for k = 0, 1 do
        for j = 0, 1 do
          for i = 0, 2 do
            local blob = assert(pack.read_tile(cfg.output, i, j, k))
            assert.are.equal(pack.tile_file(i, j, k, blob), readfile(pack.tile_path(cfg.output, i, j, k)))
            assert.are.equal(full:encode_tile(i, j, k), blob, ("tile %d,%d,%d"):format(i, j, k))
            if #blob > 16 then nonempty = nonempty + 1 end
          end
        end
      end
      assert.is_true(nonempty >= 8)
      -- bake.tile alone writes the same file
      local one = dir .. "/one"
      cfg.output = one
      assert(bake.tile(cfg, 1, 0, 1))
      assert.are.equal(pack.tile_file(1, 0, 1, full:encode_tile(1, 0, 1)), readfile(pack.tile_path(one, 1, 0, 1)))
      assert.is_false(exists(pack.tile_path(one, 0, 0, 0)))
      full:close()
    end)

    it("reports obj errors as nil, 'path:line: reason'", function()
      local dir = tmpdir()
      assert(pack.mkdir(dir))
      writefile(dir .. "/bad.obj", "v 0 0 0\nv 1 0 0\nf 1 2 3\n")
      local s, e = bake(base_config { output = dir .. "/p", geometry = { { obj = dir .. "/bad.obj" } } })
      assert.is_nil(s)
      has(e, dir .. "/bad.obj:3: bad vertex index 3 (2 vertices)")
      s, e = bake(base_config { output = dir .. "/p", geometry = { { obj = dir .. "/missing.obj" } } })
      assert.is_nil(s)
      has(e, dir .. "/missing.obj: cannot read")
    end)
  end)

  describe("pack files", function()
    local dir, cfg
    before_each(function()
      dir = tmpdir()
      cfg = wall_config(dir, 2, 4, 2, 4)
      cfg.holes = { { name = "den", min = { 1, 1, 1 }, max = { 5, 5, 5 }, scale = 0.5,
        doors = { { inside = { 3, 3, 3 }, outside = { 6, 3, 3 } } } } }
      table.insert(cfg.geometry, 1, box({ 2, 2, 2 }, { 4, 2.5, 4 }))
      assert(bake(cfg))
    end)

    it("writes every file, and they round-trip", function()
      assert.is_true(exists(dir .. "/manifest.txt"))
      assert.is_true(exists(dir .. "/graph.txt"))
      assert.is_true(exists(dir .. "/tiles/0_0_0.tile"))
      assert.is_true(exists(dir .. "/tiles/1_0_0.tile"))
      assert.is_true(exists(dir .. "/holes/den.tree"))
      local mtext = readfile(dir .. "/manifest.txt")
      assert.matches("^octonav%-pack 1\nscale 1\ndepth 3\norigin 0 0 0\ntiles 2 1 1\nradius 0\n", mtext)
      assert.matches("\nhole den under_terrain 1 1 1 5 5 5 0.5 3 1 1 1 1 1 1\n", mtext)
      assert.matches("\ndoor den 1 3 3 3 6 3 3\ncrc32 %x%x%x%x%x%x%x%x\n$", mtext)
      local m = assert(pack.read_manifest(dir))
      assert.are.equal(mtext, pack.manifest_text(m))
      local gtext = readfile(dir .. "/graph.txt")
      local g = assert(pack.read_graph(dir, m))
      assert.are.equal(gtext, pack.graph_text(g))
      -- the world holds exactly the tile files
      local w = assert(world.load(dir))
      assert.are.equal(readfile(dir .. "/tiles/1_0_0.tile"), pack.tile_file(1, 0, 0, w.tree:encode_tile(1, 0, 0)))
      assert.are.equal(1, #w.holes)
      w:close()
    end)

    it("gives nil, 'PATH: reason' for missing or corrupt files", function()
      local function load_err() local w, e = world.load(dir); assert.is_nil(w); return e end
      local mtext = readfile(dir .. "/manifest.txt")
      local gtext = readfile(dir .. "/graph.txt")
      -- one flipped byte
      writefile(dir .. "/manifest.txt", mtext:gsub("scale 1", "scale 2"))
      has(load_err(), dir .. "/manifest.txt: checksum mismatch")
      -- truncated
      writefile(dir .. "/manifest.txt", mtext:sub(1, 40))
      has(load_err(), dir .. "/manifest.txt: missing or malformed last line")
      -- malformed lines behind a good checksum
      writefile(dir .. "/manifest.txt", reseal(mtext:gsub("depth 3", "depth three")))
      has(load_err(), dir .. "/manifest.txt:3: field 1 of 'depth': bad integer 'three'")
      writefile(dir .. "/manifest.txt", reseal(mtext:gsub("tiles 2 1 1", "tiles 2 1")))
      has(load_err(), dir .. "/manifest.txt:5: expected 3 fields after 'tiles', got 2")
      writefile(dir .. "/manifest.txt", reseal(mtext:gsub("radius 0\n", "")))
      has(load_err(), dir .. "/manifest.txt: missing 'radius' line")
      writefile(dir .. "/manifest.txt", reseal(mtext:gsub("door den 1", "door lair 1")))
      has(load_err(), dir .. "/manifest.txt:8: door of an unknown hole 'lair'")
      writefile(dir .. "/manifest.txt", reseal(mtext:gsub("origin 0 0 0", "origin 0 0 0x10")))
      has(load_err(), dir .. "/manifest.txt:4: field 3 of 'origin': bad number '0x10'")
      os.remove(dir .. "/manifest.txt")
      has(load_err(), dir .. "/manifest.txt: No such file or directory")
      writefile(dir .. "/manifest.txt", mtext)
      -- graph
      writefile(dir .. "/graph.txt", gtext:gsub("link", "lInk", 1))
      has(load_err(), dir .. "/graph.txt: checksum mismatch")
      writefile(dir .. "/graph.txt", reseal(gtext:gsub("\nlink (%d+) (%d+)", "\nlink %1 999", 1)))
      assert.matches(dir:gsub("%p", "%%%0") .. "/graph%.txt:%d+: link between unknown blocks", load_err())
      writefile(dir .. "/graph.txt", reseal(gtext:gsub("block 1 0 1", "block 1 7 1", 1)))
      has(load_err(), dir .. "/graph.txt:1: tile index out of range")
      writefile(dir .. "/graph.txt", "")
      has(load_err(), dir .. "/graph.txt: empty file")
      writefile(dir .. "/graph.txt", gtext)
      -- a tile
      local tile = readfile(dir .. "/tiles/1_0_0.tile")
      writefile(dir .. "/tiles/1_0_0.tile", tile:sub(1, 10) .. string.char((tile:byte(11) + 1) % 256) .. tile:sub(12))
      has(load_err(), dir .. "/tiles/1_0_0.tile: ")
      writefile(dir .. "/tiles/1_0_0.tile", tile:sub(1, #tile - 3))
      has(load_err(), dir .. "/tiles/1_0_0.tile: ")
      os.remove(dir .. "/tiles/1_0_0.tile")
      has(load_err(), dir .. "/tiles/1_0_0.tile: No such file or directory")
      writefile(dir .. "/tiles/1_0_0.tile", tile)
      -- a hole tree
      local tree = readfile(dir .. "/holes/den.tree")
      writefile(dir .. "/holes/den.tree", tree:sub(1, 30))
      has(load_err(), dir .. "/holes/den.tree: ")
      writefile(dir .. "/holes/den.tree", tree)
      local w = assert(world.load(dir))
      w:close()
    end)

    it("never runs pack content: a line of Lua code is a parse error", function()
      local mtext = readfile(dir .. "/manifest.txt")
      _G.octonav_pwned = nil
      writefile(dir .. "/manifest.txt", reseal(mtext:gsub("radius 0\n", "radius 0\n_G.octonav_pwned=true\n")))
      local w, e = world.load(dir)
      assert.is_nil(w)
      has(e, dir .. "/manifest.txt:7: unknown line '_G.octonav_pwned=true'")
      writefile(dir .. "/manifest.txt", reseal(mtext:gsub("scale 1", "scale (function() _G.octonav_pwned = true return 1 end)()")))
      w, e = world.load(dir)
      assert.is_nil(w)
      has(e, dir .. "/manifest.txt:2: expected 1 fields after 'scale'")
      writefile(dir .. "/manifest.txt", reseal(mtext:gsub("scale 1", "scale os.exit(3)")))
      w, e = world.load(dir)
      assert.is_nil(w)
      has(e, dir .. "/manifest.txt:2: field 1 of 'scale': bad number 'os.exit(3)'")
      writefile(dir .. "/manifest.txt", mtext)
      local gtext = readfile(dir .. "/graph.txt")
      writefile(dir .. "/graph.txt", reseal("return os.exit(3)\n" .. gtext:match("^(.-)crc32") .. "crc32 0\n"))
      w, e = world.load(dir)
      assert.is_nil(w)
      has(e, dir .. "/graph.txt:1: unknown line 'return'")
      assert.is_nil(_G.octonav_pwned)
    end)
  end)

  describe("link step", function()
    it("culls free regions not reachable from the top: a closed box leaves no connect points inside", function()
      local dir = tmpdir()
      -- a hollow box across the shared face x = 8; inside it x in (6, 10), y in (3, 5), z in (3, 5)
      local cfg = {
        range = { min = { 0, 0, 0 }, max = { 16, 8, 8 } }, depth = 3, geometry = hollow({ 5, 2, 2 }, { 11, 6, 6 }),
        output = dir,
      }
      assert(bake(cfg))
      local function inside_box(p) return p[1] > 6 and p[1] < 10 and p[2] > 3 and p[2] < 5 and p[3] > 3 and p[3] < 5 end
      local g = graph_of(dir)
      local total, within = 0, 0
      for _, b in ipairs(g.blocks) do
        for _, p in ipairs(b.points) do
          total = total + 1
          if inside_box(p.inside) then within = within + 1 end
        end
      end
      assert.is_true(total > 0)
      assert.are.equal(0, within)
      -- the same box open at the top: its inside is reachable and gets points
      cfg.geometry = hollow({ 5, 2, 2 }, { 11, 6, 6 }, true)
      assert(bake(cfg))
      g = graph_of(dir)
      within = 0
      for _, b in ipairs(g.blocks) do
        for _, p in ipairs(b.points) do
          if inside_box(p.inside) then within = within + 1 end
        end
      end
      assert.is_true(within > 0)
    end)

    it("makes exactly the expected regions, blocks and links through a wall with one opening", function()
      local dir = tmpdir()
      -- opening 2 x 2 leaves: one free cell of size 2 on each side of the face
      assert(bake(wall_config(dir, 2, 4, 2, 4)))
      local g = graph_of(dir)
      assert.are.same({
        { id = 1, tile = 0, face = 1, center = { 7.5, 3, 3 }, points = { { inside = { 7.5, 3, 3 }, outside = { 8.5, 3, 3 } } } },
        { id = 2, tile = 1, face = 0, center = { 8.5, 3, 3 }, points = { { inside = { 8.5, 3, 3 }, outside = { 7.5, 3, 3 } } } },
      }, g.blocks)
      assert.are.same({ { a = 1, b = 2, cost = 1 }, { a = 2, b = 1, cost = 1 } }, g.links)
      assert.are.same({}, g.weights)
      -- opening 4 x 4 leaves: four cells of size 2 in one region; merge_distance 2.5 makes two blocks
      -- (the corner opposite the first point is 2*sqrt(2) away), 4 makes one
      assert(bake(wall_config(dir, 2, 6, 2, 6, { merge_distance = 2.5 })))
      g = graph_of(dir)
      assert.are.equal(4, #g.blocks)
      local per = {}
      for _, b in ipairs(g.blocks) do per[#per + 1] = #b.points end
      assert.are.same({ 3, 1, 3, 1 }, per)
      for _, b in ipairs(g.blocks) do
        for _, p in ipairs(b.points) do
          assert.are.equal(b.tile == 0 and 7.5 or 8.5, p.inside[1])
          assert.is_true(p.inside[2] >= 2 and p.inside[2] <= 6 and p.inside[3] >= 2 and p.inside[3] <= 6)
        end
      end
      -- each block leads into the blocks across the face that hold its points' mirrors
      assert.are.same({ { a = 1, b = 3, cost = 1 }, { a = 2, b = 4, cost = 1 }, { a = 3, b = 1, cost = 1 },
        { a = 4, b = 2, cost = 1 } }, g.links)
      assert.are.equal(2, #g.weights)
      assert(bake(wall_config(dir, 2, 6, 2, 6)))
      g = graph_of(dir)
      assert.are.equal(2, #g.blocks)
      assert.are.equal(4, #g.blocks[1].points)
    end)

    it("weights = 'path' measures paths inside the tile and leaves out pairs without one", function()
      local dir = tmpdir()
      -- tile 0 (x < 8) has two openings in its +x wall (one per row of a y-split), and a floor
      -- wall splitting it at y = 4 so the two blocks cannot reach each other inside tile 0
      local cfg = wall_config(dir, 1, 7, 1, 7, { weights = "path", merge_distance = 1 })
      cfg.geometry = {
        box({ 7, 0, 0 }, { 9, 8, 1 }), box({ 7, 0, 7 }, { 9, 8, 8 }), box({ 7, 0, 0 }, { 9, 1, 8 }),
        box({ 7, 7, 0 }, { 9, 8, 8 }), box({ 7, 3, 0 }, { 9, 5, 8 }), -- wall with openings y 1..3 and 5..7
        box({ 0, 3.5, 0 }, { 7, 4.5, 8 }),                            -- floor splitting tile 0
      }
      assert(bake(cfg))
      local w = assert(world.load(dir))
      local low, high = {}, {}
      for _, id in ipairs(w.tile_blocks[0]) do
        local b = w.blocks[id]
        if b.center[2] < 4 then low[#low + 1] = id else high[#high + 1] = id end
      end
      assert.is_true(#low > 0 and #high > 0)
      for _, a in ipairs(low) do
        for _, b in ipairs(high) do assert.is_nil(w.weights[0][a] and w.weights[0][a][b]) end
        for _, b in ipairs(low) do
          if a ~= b then
            local d = w.weights[0][a][b]
            assert.is_number(d)
            local ca, cb = w.blocks[a].center, w.blocks[b].center
            local straight = math.sqrt((ca[1] - cb[1]) ^ 2 + (ca[2] - cb[2]) ^ 2 + (ca[3] - cb[3]) ^ 2)
            assert.is_true(d >= straight - 1e-9)
          end
        end
      end
      -- in tile 1 nothing splits: every pair has a weight
      local n1 = #w.tile_blocks[1]
      local pairs1 = 0
      for _, row in pairs(w.weights[1]) do for _ in pairs(row) do pairs1 = pairs1 + 1 end end
      assert.are.equal(n1 * (n1 - 1), pairs1)
      w:close()
    end)
  end)

  describe("rebake", function()
    it("rewrites only the tiles overlapping the region; the others stay byte-identical", function()
      local dir = tmpdir()
      local cfg = wall_config(dir, 2, 6, 2, 6, { weights = "path" })
      cfg.range.max = { 24, 8, 8 } -- 3 x 1 x 1 tiles
      assert(bake(cfg))
      local before = {}
      for i = 0, 2 do before[i] = readfile(pack.tile_path(dir, i, 0, 0)) end
      local w = assert(world.load(dir))
      local salt0 = w.tree:tile_salt(0, 0, 0)
      -- an edit inside tile 2 only
      table.insert(cfg.geometry, box({ 18, 0, 0 }, { 22, 3, 8 }))
      local s = assert(w:rebake({ min = { 18, 0, 0 }, max = { 22, 3, 8 } }, cfg))
      assert.are.same({ 2 }, s.rebaked)
      assert.are.equal(before[0], readfile(pack.tile_path(dir, 0, 0, 0)))
      assert.are.equal(before[1], readfile(pack.tile_path(dir, 1, 0, 0)))
      assert.are_not.equal(before[2], readfile(pack.tile_path(dir, 2, 0, 0)))
      -- the world was reloaded in place: same tree object, the edit is there, tile 0 untouched
      assert.are.equal("blocked", (w.tree:locate { 20, 1, 4 }))
      assert.are.equal(salt0, w.tree:tile_salt(0, 0, 0))
      -- and the pack equals a full bake of the edited config
      local graph = readfile(dir .. "/graph.txt")
      local dir2 = tmpdir()
      cfg.output = dir2
      assert(bake(cfg))
      assert.are.equal(readfile(dir2 .. "/graph.txt"), graph)
      assert.are.equal(readfile(dir2 .. "/manifest.txt"), readfile(dir .. "/manifest.txt"))
      for i = 0, 2 do
        assert.are.equal(readfile(pack.tile_path(dir2, i, 0, 0)), readfile(pack.tile_path(dir, i, 0, 0)))
      end
      -- a config for another grid is misuse
      cfg.depth = 4
      has(err_of(w.rebake, w, { min = { 0, 0, 0 }, max = { 1, 1, 1 } }, cfg), "differs from the pack's")
      w:close()
    end)
  end)

  describe("progress", function()
    it("calls the progress callback with done, total and what", function()
      local dir = tmpdir()
      local cfg = wall_config(dir, 2, 4, 2, 4)
      local calls = {}
      cfg.progress = function(done, total, what) calls[#calls + 1] = { done, total, what } end
      assert(bake(cfg))
      assert.are.equal(4, #calls)                 -- 2 tiles, then 2 graph steps
      assert.are.same({ 1, 4, "tile 0,0,0" }, calls[1])
      assert.are.same({ 4, 4, "graph tile 1" }, calls[4])
    end)
  end)

  describe("meshes (opt-in: ../shared/data/meshes)", function()
    local meshes = "../shared/data/meshes"
    local present = exists(meshes .. "/dungeon.obj") and exists(meshes .. "/house.obj")
    local cases = {
      { "dungeon.obj", { min = { -25.1, -0.1, -90.1 }, max = { 49.4, 40.2, 9 } }, 0.5, 6 },
      { "house.obj", { min = { -11, -0.1, -9 }, max = { 8.8, 13.9, 8.6 } }, 0.125, 6 },
    }
    for _, c in ipairs(cases) do
      if present then
        it("bakes " .. c[1], function()
          local dir = tmpdir()
          local t0 = octonav.core.clock()
          local s = assert(bake { range = c[2], scale = c[3], depth = c[4], geometry = { { obj = meshes .. "/" .. c[1] } },
            output = dir })
          local secs = octonav.core.clock() - t0
          print(("\n  %s: scale %g depth %d, %d tiles, %.2f s, %d nodes, %d bytes, %d points in %d blocks, %d links")
            :format(c[1], c[3], c[4], s.tiles, secs, s.nodes, s.bytes, s.points, s.blocks, s.links))
          local w = assert(world.load(dir))
          assert.is_true(w.tree:stats().nodes > 1000)
          w:close()
        end)
      else
        pending(c[1] .. ": ../shared/data/meshes is absent")
      end
    end
  end)
end)
