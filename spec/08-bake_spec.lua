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

-- route.info of tile (i, j, k)'s graph file
local function graph_info(dir, i, j, k)
  return assert(octonav.route.info(assert(pack.read_graph(dir, i, j, k))))
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
        { base_config { geometry = { { heightfield = { nx = 2, nz = 2, heights = { 1, 2, 0 / 0, 4 } } } } },
          "config.geometry[1].heightfield.heights: element 3 is not a finite number" },
        { base_config { geometry = { { heightfield = { nx = 2, nz = 2, heights = { 1, math.huge, 3, 4 } } } } },
          "config.geometry[1].heightfield.heights: element 2 is not a finite number" },
        { base_config { geometry = { { heightfield = { nx = 2, nz = 2, heights = { 1, 2, 3, -math.huge } } } } },
          "config.geometry[1].heightfield.heights: element 4 is not a finite number" },
        { base_config { geometry = { { heightfield = { nx = 2, nz = 2, heights = { "5", 2, 3, 4 } } } } },
          "config.geometry[1].heightfield.heights: element 1 is not a finite number" },
        { base_config { geometry = { { heightfield = { nx = 2, nz = 2, heights = { 1, 2, 3, true } } } } },
          "config.geometry[1].heightfield.heights: element 4 is not a finite number" },
        { base_config { geometry = { { triangles = { vertices = { 0, 0, 0, 1, 0 / 0, 0, 0, 1, 0 }, indices = { 1, 2, 3 } } } } },
          "config.geometry[1].triangles.vertices: element 5 is not a finite number" },
        { base_config { geometry = { { triangles = { vertices = { 0, 0, 0, 1, 0, 0, 0, "1", 0 }, indices = { 1, 2, 3 } } } } },
          "config.geometry[1].triangles.vertices: element 8 is not a finite number" },
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
        { base_config { connect = { bound = 9 } }, "config.connect.bound: integer 0..8 expected" },
        { base_config { connect = { bound = 1.5 } }, "config.connect.bound" },
        { base_config { connect = { stretch = 0.5 } }, "config.connect.stretch: finite number >= 1 expected" },
        { base_config { connect = { merge_distance = -1 } }, "config.connect.merge_distance: must be >= 0" },
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

    it("keeps a heightfield's highest point (tiles above it are skipped), with negative and integer heights", function()
      local c = bake.check(base_config { geometry = { { heightfield = { origin = { 0, 1.5, 0 }, nx = 2, nz = 3,
        heights = { -4, -2.25, -7, -3, -2.5, -9 } } } } })
      assert.are.equal(-0.75, c.geometry[1].heightfield.top)
      c = bake.check(base_config { geometry = { { heightfield = { nx = 2, nz = 2, heights = { 3, 7, 7.5, 2 } } } } })
      assert.are.equal(7.5, c.geometry[1].heightfield.top)
    end)

    it("fills in the documented defaults", function()
      local cfg = bake.check { range = { min = { 0, 0, 0 }, max = { 1, 1, 1 } }, output = "p" }
      assert.are.equal(1.0, cfg.scale)
      assert.are.equal(6, cfg.depth)
      assert.are.equal(0, cfg.radius)
      assert.are.same({ bound = 0, stretch = 1 }, cfg.connect)
      -- the version 1 options are accepted (the shared configs use them) and ignored
      cfg = bake.check { range = { min = { 0, 0, 0 }, max = { 1, 1, 1 } }, output = "p",
        connect = { merge_distance = 8, weights = "path" } }
      assert.are.same({ bound = 0, stretch = 1 }, cfg.connect)
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
      -- each tile's graph is that tile's graph in the whole tree, tagged with the tile blob's CRC-32
      for t = 0, g.count - 1 do
        local i, j, k = bake.tile_coords(g, t)
        local blob = full:encode_tile(i, j, k)
        assert.are.equal(octonav.route.build(full, i, j, k, { tag = pack.crc32(blob:sub(1, -5)) }),
          readfile(pack.graph_path(cfg.output, i, j, k)), ("graph %d,%d,%d"):format(i, j, k))
      end
      -- bake.tile alone writes the same files
      local one = dir .. "/one"
      local whole = cfg.output
      cfg.output = one
      assert(bake.tile(cfg, 1, 0, 1))
      assert.are.equal(pack.tile_file(1, 0, 1, full:encode_tile(1, 0, 1)), readfile(pack.tile_path(one, 1, 0, 1)))
      assert.are.equal(readfile(pack.graph_path(whole, 1, 0, 1)), readfile(pack.graph_path(one, 1, 0, 1)))
      assert.is_false(exists(pack.tile_path(one, 0, 0, 0)))
      assert.is_false(exists(pack.graph_path(one, 0, 0, 0)))
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

  describe("what is not a regular file", function()
    -- mkfifo through the shell; false where no child process can start
    local function mkfifo(path) return os.execute("mkfifo '" .. path .. "' 2>/dev/null") == true end

    it("a FIFO as an OBJ, a tile graph or a hole file is refused at once (core.read_file), never read", function()
      local dir = tmpdir()
      assert(pack.mkdir(dir))
      local obj = dir .. "/level.obj"
      if not mkfifo(obj) then pending("no shell to make a FIFO") return end
      local s, e = bake(base_config { output = dir .. "/p", geometry = { { obj = obj } } })
      assert.is_nil(s)
      assert.are.equal(obj .. ": cannot read: not a regular file (a FIFO)", e)
      -- a pack whose tile graph is a FIFO: world.load names it
      local cfg = wall_config(dir .. "/p", 2, 4, 2, 4)
      assert(bake(cfg))
      local g = pack.graph_path(cfg.output, 1, 0, 0)
      os.remove(g)
      assert.is_true(mkfifo(g))
      local w, werr = world.load(cfg.output)
      assert.is_nil(w)
      assert.are.equal(g .. ": not a regular file (a FIFO)", werr)
      -- the link step refuses it too, and a FIFO as a hole file
      local ok, lerr = bake.link(cfg)
      assert.is_nil(ok)
      has(lerr, g .. ": not a regular file (a FIFO)")
      os.remove(g)
      assert(bake(cfg))
      cfg.holes = { { name = "den", min = { 1, 1, 1 }, max = { 5, 5, 5 }, scale = 0.5,
        doors = { { inside = { 3, 3, 3 }, outside = { 6, 3, 3 } } } } }
      assert.is_true(mkfifo(pack.hole_path(cfg.output, "den")))
      ok, lerr = bake.link(cfg)
      assert.is_nil(ok)
      assert.are.equal(pack.hole_path(cfg.output, "den") .. ": missing (bake the hole: --hole den)", lerr)
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
      assert.is_false(exists(dir .. "/graph.txt"))
      assert.is_true(exists(dir .. "/tiles/0_0_0.tile"))
      assert.is_true(exists(dir .. "/tiles/1_0_0.tile"))
      assert.is_true(exists(dir .. "/tiles/0_0_0.graph"))
      assert.is_true(exists(dir .. "/tiles/1_0_0.graph"))
      assert.is_true(exists(dir .. "/holes/den.tree"))
      local mtext = readfile(dir .. "/manifest.txt")
      assert.matches("^octonav%-pack 2\nscale 1\ndepth 3\norigin 0 0 0\ntiles 2 1 1\nradius 0\n", mtext)
      assert.matches("\nhole den under_terrain 1 1 1 5 5 5 0.5 3 1 1 1 1 1 1\n", mtext)
      assert.matches("\ndoor den 1 3 3 3 6 3 3\ncrc32 %x%x%x%x%x%x%x%x\n$", mtext)
      local m = assert(pack.read_manifest(dir))
      assert.are.equal(mtext, pack.manifest_text(m))
      -- a door's box rides on its line (6 more numbers) and round-trips; a box upside down is refused
      m.holes[1].doors[1].box = { min = { 4, 2.5, 2 }, max = { 4.5, 4, 4 } }
      local boxed = pack.manifest_text(m)
      assert.matches("\ndoor den 1 3 3 3 6 3 3 4 2.5 2 4.5 4 4\n", boxed)
      local m2 = assert(pack.parse_manifest("m", boxed))
      assert.are.same(m.holes[1].doors[1].box, m2.holes[1].doors[1].box)
      assert.are.equal(boxed, pack.manifest_text(m2))
      m.holes[1].doors[1].box = { min = { 5, 2.5, 2 }, max = { 4.5, 4, 4 } }
      local _, berr = pack.parse_manifest("m", pack.manifest_text(m))
      assert.matches("^m:%d+: door box min must not be above max$", berr)
      -- the world holds exactly the tile files, and every tile's graph: the two tiles linked through
      -- the opening (one portal each side, one link)
      local w = assert(world.load(dir))
      assert.are.equal(readfile(dir .. "/tiles/1_0_0.tile"), pack.tile_file(1, 0, 0, w.tree:encode_tile(1, 0, 0)))
      assert.are.equal(1, #w.holes)
      local st = w.graph:stats()
      assert.are.equal(2, st.tiles)
      assert.are.equal(1, st.links)
      assert.is_true(w:graph_bytes() > 0)
      w:close()
    end)

    it("gives nil, 'PATH: reason' for missing or corrupt files", function()
      local function load_err() local w, e = world.load(dir); assert.is_nil(w); return e end
      local mtext = readfile(dir .. "/manifest.txt")
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
      -- a tile graph: flipped, truncated, missing, or left from another bake of its tile
      local g0, g1 = readfile(dir .. "/tiles/0_0_0.graph"), readfile(dir .. "/tiles/1_0_0.graph")
      writefile(dir .. "/tiles/1_0_0.graph", g1:sub(1, 20) .. string.char((g1:byte(21) + 1) % 256) .. g1:sub(22))
      assert.are.equal(dir .. "/tiles/1_0_0.graph: corrupt", load_err())
      writefile(dir .. "/tiles/1_0_0.graph", g1:sub(1, #g1 - 2))
      assert.are.equal(dir .. "/tiles/1_0_0.graph: corrupt", load_err())
      os.remove(dir .. "/tiles/1_0_0.graph")
      has(load_err(), dir .. "/tiles/1_0_0.graph: No such file or directory")
      writefile(dir .. "/tiles/1_0_0.graph", g0)
      assert.are.equal(dir .. "/tiles/1_0_0.graph: built from another version of its tile (bake the tile again)",
        load_err())
      writefile(dir .. "/tiles/1_0_0.graph", g1)
      -- a pack of version 1 (one graph.txt for the whole world)
      writefile(dir .. "/manifest.txt", reseal(mtext:gsub("octonav%-pack 2", "octonav-pack 1")))
      assert.are.equal(dir .. "/manifest.txt:1: a pack of version 1 (one graph.txt for the whole world); this build"
        .. " reads versions 2 and 3: bake it again", load_err())
      writefile(dir .. "/manifest.txt", mtext)
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
      assert.is_nil(_G.octonav_pwned)
    end)
  end)

  describe("link step", function()
    it("reads the tile graphs only: no tile file, no geometry; a missing graph or hole names its job", function()
      local dir = tmpdir()
      local cfg = wall_config(dir, 2, 4, 2, 4)
      assert(bake(cfg))
      local manifest = readfile(dir .. "/manifest.txt")
      os.remove(dir .. "/manifest.txt")
      -- the tile files gone and the geometry unreadable: the link step still writes the same manifest
      local t0, t1 = readfile(pack.tile_path(dir, 0, 0, 0)), readfile(pack.tile_path(dir, 1, 0, 0))
      os.remove(pack.tile_path(dir, 0, 0, 0))
      os.remove(pack.tile_path(dir, 1, 0, 0))
      cfg.geometry = { { obj = dir .. "/no such mesh.obj" } }
      local s = assert(bake.link(cfg))
      assert.are.equal(manifest, readfile(dir .. "/manifest.txt"))
      assert.are.equal(2, s.tiles)
      assert.is_true(s.portals >= 2 and s.graph_bytes > 0)
      writefile(pack.tile_path(dir, 0, 0, 0), t0)
      writefile(pack.tile_path(dir, 1, 0, 0), t1)
      os.remove(pack.graph_path(dir, 1, 0, 0))
      local ok, e = bake.link(cfg)
      assert.is_nil(ok)
      has(e, dir .. "/tiles/1_0_0.graph: ")
      has(e, "(bake the tile: --tile 1,0,0)")
      cfg.holes = { { name = "den", min = { 1, 1, 1 }, max = { 5, 5, 5 }, scale = 0.5,
        doors = { { inside = { 3, 3, 3 }, outside = { 6, 3, 3 } } } } }
      assert(bake.tile(wall_config(dir, 2, 4, 2, 4), 1, 0, 0))
      ok, e = bake.link(cfg)
      assert.is_nil(ok)
      assert.are.equal(dir .. "/holes/den.tree: missing (bake the hole: --hole den)", e)
    end)

    it("a closed wall leaves the tiles unlinked; an opening links them; a region sealed inside is its own component", function()
      local dir = tmpdir()
      local cfg = wall_config(dir, 2, 4, 2, 4)
      cfg.geometry = { box({ 7, 0, 0 }, { 9, 8, 8 }) }
      assert(bake(cfg))
      local w = assert(world.load(dir))
      assert.are.equal(0, w.graph:stats().links)
      assert.are.same({ nil, "unreachable" }, { w:plan({ 2, 4, 4 }, { 14, 4, 4 }) })
      w:close()
      -- a hollow box across the shared face x = 8: its inside touches the face on both sides (linked
      -- to itself across it), and no route from outside enters it
      cfg.geometry = hollow({ 5, 2, 2 }, { 11, 6, 6 })
      assert(bake(cfg))
      w = assert(world.load(dir))
      assert.is_true(graph_info(dir, 0, 0, 0).components >= 2)
      local r = assert(w:plan({ 2, 4, 4 }, { 14, 4, 4 }))
      for _, st in ipairs(r) do
        for _, p in ipairs { st.enter, st.exit } do
          assert.is_false(p[1] > 6 and p[1] < 10 and p[2] > 3 and p[2] < 5 and p[3] > 3 and p[3] < 5)
        end
      end
      assert.are.same({ nil, "unreachable" }, { w:plan({ 7.5, 4, 4 }, { 2, 4, 4 }) })
      assert.is_table(w:plan({ 7.5, 4, 4 }, { 8.5, 4, 4 }))
      w:close()
    end)

    it("connect.bound and connect.stretch reach the tile graphs", function()
      local dir = tmpdir()
      local cfg = wall_config(dir, 0, 8, 0, 8) -- no wall: whole faces free
      cfg.range.max = { 32, 16, 16 }
      cfg.depth = 4
      assert(bake(cfg))
      local coarse = graph_info(dir, 0, 0, 0)
      assert.are.equal(16, coarse.bound)
      cfg.connect = { bound = 4 }
      assert(bake(cfg))
      local fine = graph_info(dir, 0, 0, 0)
      assert.are.equal(4, fine.bound)
      assert.is_true(fine.portals > coarse.portals)
      cfg.connect = { bound = 4, stretch = 2 }
      assert(bake(cfg))
      assert.is_true(graph_info(dir, 0, 0, 0).edges < fine.edges)
    end)
  end)

  describe("rebake", function()
    it("rewrites only the tiles and graphs overlapping the region; the others stay byte-identical", function()
      local dir = tmpdir()
      local cfg = wall_config(dir, 2, 6, 2, 6, { weights = "path" })
      cfg.range.max = { 24, 8, 8 } -- 3 x 1 x 1 tiles
      assert(bake(cfg))
      local before, gbefore = {}, {}
      for i = 0, 2 do
        before[i] = readfile(pack.tile_path(dir, i, 0, 0))
        gbefore[i] = readfile(pack.graph_path(dir, i, 0, 0))
      end
      local w = assert(world.load(dir))
      local salt0 = w.tree:tile_salt(0, 0, 0)
      -- an edit inside tile 2 only
      table.insert(cfg.geometry, box({ 18, 0, 0 }, { 22, 3, 8 }))
      local s = assert(w:rebake({ min = { 18, 0, 0 }, max = { 22, 3, 8 } }, cfg))
      assert.are.same({ 2 }, s.rebaked)
      assert.are.equal(before[0], readfile(pack.tile_path(dir, 0, 0, 0)))
      assert.are.equal(before[1], readfile(pack.tile_path(dir, 1, 0, 0)))
      assert.are_not.equal(before[2], readfile(pack.tile_path(dir, 2, 0, 0)))
      assert.are.equal(gbefore[0], readfile(pack.graph_path(dir, 0, 0, 0)))
      assert.are.equal(gbefore[1], readfile(pack.graph_path(dir, 1, 0, 0)))
      assert.are_not.equal(gbefore[2], readfile(pack.graph_path(dir, 2, 0, 0)))
      -- the world graph holds the new graph of tile 2 (its id changed), the others' stay
      assert.are.equal(pack.blob_id(readfile(pack.graph_path(dir, 2, 0, 0))), w.graph_ids[2])
      assert.are.equal(pack.blob_id(gbefore[0]), w.graph_ids[0])
      assert.are_not.equal(pack.blob_id(gbefore[2]), w.graph_ids[2])
      -- the world was reloaded in place: same tree object, the edit is there, tile 0 untouched
      assert.are.equal("blocked", (w.tree:locate { 20, 1, 4 }))
      assert.are.equal(salt0, w.tree:tile_salt(0, 0, 0))
      -- and the pack equals a full bake of the edited config
      local dir2 = tmpdir()
      cfg.output = dir2
      assert(bake(cfg))
      assert.are.equal(readfile(dir2 .. "/manifest.txt"), readfile(dir .. "/manifest.txt"))
      for i = 0, 2 do
        assert.are.equal(readfile(pack.tile_path(dir2, i, 0, 0)), readfile(pack.tile_path(dir, i, 0, 0)))
        assert.are.equal(readfile(pack.graph_path(dir2, i, 0, 0)), readfile(pack.graph_path(dir, i, 0, 0)))
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
          print(("\n  %s: scale %g depth %d, %d tiles, %.2f s, %d bytes, %d portals, %d edges")
            :format(c[1], c[3], c[4], s.tiles, secs, s.bytes, s.portals, s.edges))
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
