-- The world object (lua/octonav/world.lua) and the world commands (lua/octonav/cli.lua): docs/world.md.
local bake = require "octonav.bake"
local world = require "octonav.world"
local query = require("octonav").query
local cli = require "octonav.cli"

local files = dofile("spec/support/files.lua")

-- tmpdir(): a fresh name, not created; cleanup() removes them all with rm -rf (spec/support/files.lua)
local tmp = files.tracker(files.rm_rf)
local tmpdir, cleanup = tmp.dir, tmp.cleanup
local readfile, writefile = files.read, files.write

local function box(mn, mx) return { box = { min = mn, max = mx } } end

-- 2 x 1 x 1 tiles of 16 units (depth 4, scale 1) over a ground slab, with a cave in tile 0: walls 1
-- thick around the inside x, z in [5, 11], y in [3, 7], and a doorway in the +x wall
-- (x in [11, 12], y in [3, 6], z in [7, 9]). The hole's bounds [3, 13] x [1, 9] x [3, 13] hold the
-- cave and some space around it; its door's outside point is just beyond the doorway.
local function cave_config(dir, door)
  return {
    range = { min = { 0, 0, 0 }, max = { 32, 16, 16 } }, depth = 4, scale = 1,
    geometry = {
      box({ 0, 0, 0 }, { 32, 1, 16 }),                                       -- ground
      box({ 4, 2, 4 }, { 12, 3, 12 }), box({ 4, 7, 4 }, { 12, 8, 12 }),       -- floor, ceiling
      box({ 4, 3, 4 }, { 5, 7, 12 }), box({ 4, 3, 4 }, { 12, 7, 5 }), box({ 4, 3, 11 }, { 12, 7, 12 }),
      box({ 11, 3, 5 }, { 12, 7, 7 }), box({ 11, 3, 9 }, { 12, 7, 11 }), box({ 11, 6, 7 }, { 12, 7, 9 }),
    },
    holes = { { name = "cave", min = { 3, 1, 3 }, max = { 13, 9, 13 }, scale = 0.5, kind = "under_terrain",
      doors = { door or { inside = { 10, 4.5, 8 }, outside = { 12.75, 4.5, 8 },
        box = { min = { 11, 3, 7 }, max = { 12, 6, 9 } } } } } },
    output = dir,
  }
end

describe("octonav.world", function()
  local dir, w
  setup(function()
    dir = files.tmpname()
    assert(bake(cave_config(dir)))
    w = assert(world.load(dir))
  end)
  teardown(function()
    if w then w:close() end
    files.rm_rf(dir)
  end)
  after_each(cleanup)

  it("loads the fields of docs/world.md", function()
    assert.are.equal(1, w.scale)
    assert.are.equal(4, w.depth)
    assert.are.equal(0, w.radius)
    assert.are.same({ 0, 0, 0 }, w.origin)
    assert.are.same({ 2, 1, 1 }, w.tiles)
    assert.are.equal(16, w.tile_size)
    assert.are.equal("octonav.tree", tostring(w.tree):match("^octonav%.tree"))
    assert.are.equal(1, #w.holes)
    local h = w.holes[1]
    assert.are.equal("cave", h.name)
    assert.are.equal("under_terrain", h.kind)
    assert.are.same({ 3, 1, 3 }, h.min)
    assert.are.same({ 13, 9, 13 }, h.max)
    assert.are.equal(0.5, h.scale)
    assert.are.same({ 0 }, h.tiles)
    assert.are.same({ { inside = { 10, 4.5, 8 }, outside = { 12.75, 4.5, 8 }, open = true,
      box = { min = { 11, 3, 7 }, max = { 12, 6, 9 } } } }, h.doors) -- the door's box from the manifest
    assert.are.equal(1, w.hole_index.cave)
    -- the world graph: both tiles' graphs, linked across x = 16 (the world's wall has a window),
    -- each added from its file (graph_ids: the file's identity)
    local st = w.graph:stats()
    assert.are.equal(2, st.tiles)
    assert.is_true(st.links >= 1 and st.portals >= 2)
    for t = 0, 1 do
      local i, j, k = require("octonav.tilegrid").coords(w.grid, t)
      assert.is_true(w.graph:has_tile(i, j, k))
      local pack = require "octonav.pack"
      assert.are.equal(pack.blob_id(assert(pack.read_graph(w.dir, i, j, k))), w.graph_ids[t])
    end
    assert.are.equal(st.bytes, w:graph_bytes())
  end)

  it("maps points to tiles and between world and nav space (the seed's formulas)", function()
    assert.are.equal(0, w:tile_of { 1, 1, 1 })
    assert.are.equal(1, w:tile_of { 20, 15, 15 })
    assert.is_nil(w:tile_of { 33, 1, 1 })
    local mn, mx = w:tile_bounds(1)
    assert.are.same({ 16, 0, 0 }, mn)
    assert.are.same({ 32, 16, 16 }, mx)
    assert.are.same({ 3, 4, 5 }, w:to_nav { 3, 4, 5 })
    -- the hole's nav space: origin at its min corner, its own scale
    assert.are.same({ 2, 2, 4 }, w:to_nav({ 4, 2, 5 }, "cave"))
    assert.are.same({ 4, 2, 5 }, w:to_world({ 2, 2, 4 }, 1))
    local p = { 7.25, 3.5, 12.125 }
    assert.are.same(p, w:to_world(w:to_nav(p, "cave"), "cave"))
    assert.has_error(function() w:to_nav({ 1, 2 }) end)
    assert.has_error(function() w:to_nav({ 1, 2, 3 }, "den") end)
    assert.has_error(function() w:tile_bounds(2) end)
  end)

  it("in_hole: inside the cave, not outside its bounds, not in its sealed outside region", function()
    assert.are.equal("cave", (w:in_hole { 8, 5, 8 }))
    assert.are.equal("cave", (w:in_hole { 10, 4.5, 8 }))
    local _, i = w:in_hole { 6, 4, 6 }
    assert.are.equal(1, i)
    assert.is_nil(w:in_hole { 20, 5, 8 })       -- outside the bounds
    assert.is_nil(w:in_hole { 12.75, 4.5, 8 })  -- the door's outside point
    assert.is_nil(w:in_hole { 3.5, 5, 8 })      -- inside the bounds, outside the cave: sealed
    assert.is_nil(w:in_hole { 8, 8.5, 8 })      -- above the ceiling
    assert.is_nil(w:in_hole { 11.5, 4, 8 })     -- the doorway
    assert.is_nil(w:in_hole { 4.5, 5, 8 })      -- in a wall
  end)

  it("validate: ok on a good cave", function()
    local r = w:validate()
    assert.is_true(r.ok)
    assert.are.same({ { hole = 1, name = "cave", door = 1, outside_blocked = true, inside_free = true, connected = true,
      outside_free = true, ok = true } }, r.doors)
  end)

  it("validate: not ok when a door's outside point is inside the cave", function()
    local d = tmpdir()
    assert(bake(cave_config(d, { inside = { 10, 4.5, 8 }, outside = { 7, 4.5, 8 },
      box = { min = { 11, 3, 7 }, max = { 12, 6, 9 } } })))
    local bad = assert(world.load(d))
    local r = bad:validate()
    assert.is_false(r.ok)
    assert.is_false(r.doors[1].ok)
    assert.is_false(r.doors[1].inside_free)    -- the sealing flooded the cave
    assert.is_true(r.doors[1].outside_blocked)  -- blocked, but by the flood itself
    bad:close()
  end)

  it("validate: not ok when the doorway is left open (the sealing leaks into the cave)", function()
    local d = tmpdir()
    assert(bake(cave_config(d, { inside = { 10, 4.5, 8 }, outside = { 12.75, 4.5, 8 } })))
    local bad = assert(world.load(d))
    local r = bad:validate()
    assert.is_false(r.ok)
    assert.is_true(r.doors[1].outside_blocked)
    assert.is_false(r.doors[1].inside_free)
    assert.is_nil(bad:in_hole { 8, 5, 8 })
    bad:close()
  end)

  it("set_door toggles a door by hole name or index", function()
    assert.is_true(w.holes[1].doors[1].open)
    w:set_door("cave", 1, false)
    assert.is_false(w.holes[1].doors[1].open)
    w:set_door(1, 1, true)
    assert.is_true(w.holes[1].doors[1].open)
    assert.has_error(function() w:set_door("den", 1, false) end, "world:set_door: hole: unknown hole den")
    assert.has_error(function() w:set_door("cave", 2, false) end)
    assert.has_error(function() w:set_door("cave", 1, "no") end, "world:set_door: open: boolean expected, got string")
  end)

  it("plan delegates to octonav.planner", function()
    local seen
    local saved = package.loaded["octonav.planner"]
    package.loaded["octonav.planner"] = {
      plan_named = function(fname, wo, a, b) seen = { wo, a, b, fname } return "route" end }
    local r = w:plan({ 1, 2, 3 }, { 4, 5, 6 })
    package.loaded["octonav.planner"] = saved
    assert.are.equal("route", r)
    assert.are.equal(w, seen[1])
    assert.are.same({ 1, 2, 3 }, seen[2])
    assert.are.same({ 4, 5, 6 }, seen[3])
    assert.are.equal("world:plan", seen[4]) -- its errors name world:plan
  end)

  it("the world tree's searches read cell adjacencies unless load turns them off (the same paths)", function()
    local a, b = { 1, 4, 14 }, { 30, 3, 2 }
    local w2 = assert(world.load(dir, { adjacency = false }))
    local p0 = assert(query.new(w2.tree):find(a, b))
    assert.is_true(#p0 > 2)
    assert.are.same({ 0, 0 }, { w2.tree:stats().adjacency_tiles, w2.tree:stats().adjacency_bytes })
    local p1 = assert(query.new(w.tree):find(a, b))
    assert.are.same(p0, p1)
    assert.is_true(w.tree:stats().adjacency_tiles >= 1)
    w2:close()
    assert.has_error(function() world.load(dir, { adjacency = 1 }) end,
      "octonav.world.load: option 'adjacency' must be a boolean")
  end)

  it("load gives nil, err for a missing pack", function()
    local x, e = world.load("/nonexistent/pack")
    assert.is_nil(x)
    assert.are.equal("/nonexistent/pack/manifest.txt: No such file or directory", e)
    assert.has_error(function() world.load(3) end, "octonav.world.load: dir must be a non-empty string")
  end)

  describe("command line", function()
    local function run(cmd, args)
      local o, e = {}, {}
      cli.stdout = { write = function(_, ...) for _, s in ipairs { ... } do o[#o + 1] = s end end }
      cli.stderr = { write = function(_, ...) for _, s in ipairs { ... } do e[#e + 1] = s end end }
      local ok, code = pcall(cli.main, cmd, args)
      cli.stdout, cli.stderr = io.stdout, io.stderr
      assert(ok, code)
      return code, table.concat(o), table.concat(e)
    end

    it("bake (whole, per tile, link), info and validate", function()
      local d = tmpdir()
      assert(require("octonav.core").mkdir(d))
      -- a config file: relative paths are relative to its directory
      writefile(d .. "/wall.obj", "v 7 0 0\nv 9 0 0\nv 9 8 0\nv 7 8 0\nf 1 2 3 4\n")
      writefile(d .. "/level.lua", [[
        return {
          range = { min = { 0, 0, 0 }, max = { 32, 16, 16 } }, depth = 4,
          geometry = { { obj = "wall.obj" }, { box = { min = { 0, 0, 0 }, max = { 32, 1, 16 } } } },
          holes = { { name = "den", min = { 20, 1, 2 }, max = { 26, 6, 8 }, scale = 0.5,
                      doors = { { inside = { 23, 3, 5 }, outside = { 25.5, 3, 5 } } } } },
          output = "pack",
        }]])
      local code, o = run("bake", { d .. "/level.lua" })
      assert.are.equal(0, code)
      assert.matches("baked .*/pack: 2 tiles, tile graphs %d+ bytes %(%d+ portals, %d+ edges%), 1 holes", o)
      local names = { "manifest.txt", "tiles/0_0_0.tile", "tiles/1_0_0.tile", "tiles/0_0_0.graph",
        "tiles/1_0_0.graph", "holes/den.tree" }
      local whole = {}
      for _, n in ipairs(names) do whole[n] = readfile(d .. "/pack/" .. n) end
      -- the same in parallel-style steps: each tile, the hole, then the link step
      files.rm_rf(d .. "/pack")
      assert.are.equal(0, (run("bake", { d .. "/level.lua", "--tile", "0,0,0" })))
      assert.are.equal(0, (run("bake", { d .. "/level.lua", "--tile", "1,0,0" })))
      code, o = run("bake", { d .. "/level.lua", "--link" })
      assert.are.equal(1, code, o) -- the hole is not baked yet
      assert.are.equal(0, (run("bake", { d .. "/level.lua", "--hole", "den" })))
      code, o = run("bake", { d .. "/level.lua", "--link" })
      assert.are.equal(0, code, o)
      for _, n in ipairs(names) do assert.are.equal(whole[n], readfile(d .. "/pack/" .. n), n) end
      code, o = run("info", { d .. "/pack" })
      assert.are.equal(0, code)
      assert.matches("tiles +2 x 1 x 1 = 2", o)
      assert.matches("holes +1, doors 1", o)
      assert.matches("graph +2 tile graphs, %d+ portals, %d+ edges, %d+ links, %d+ bytes in memory", o)
      -- the den has no walls: the sealing fills it all, so validate reports it and fails
      code, o = run("validate", { d .. "/pack" })
      assert.are.equal(1, code)
      assert.matches("hole den door 1: .* inside free NO", o)
      assert.matches("NOT OK\n$", o)
      -- errors
      local e, _
      code, _, e = run("bake", { d .. "/level.lua", "--tile", "5,0,0" })
      assert.are.equal(1, code)
      assert.matches("tile index 5 out of range", e)
      code, _, e = run("info", { d .. "/nowhere" })
      assert.are.equal(1, code)
      assert.are.equal("octonav: info: " .. d .. "/nowhere: no such pack directory\n", e)
      assert.are.equal(2, (run("info", {})))
      assert.are.equal(2, (run("frobnicate", {})))
      assert.are.equal(2, (run("bake", { d .. "/level.lua", "--fast" })))
    end)

    it("--help, CMD --help and --version go to stdout with exit code 0", function()
      local code, o, e = run("--help", {})
      assert.are.equal(0, code)
      assert.are.equal("", e)
      assert.matches("^usage: octonav COMMAND", o)
      for _, c in ipairs { "bake", "info", "path", "validate", "bench", "bench-tree", "bench-all" } do
        assert.matches("\n  octonav " .. c:gsub("%-", "%%-") .. " ", o)
        local ccode, co, ce = run(c, { "--help" })
        assert.are.equal(0, ccode)
        assert.are.equal("", ce)
        assert.matches("^usage: octonav " .. c:gsub("%-", "%%-") .. " ", co)
      end
      -- --help wins over the other arguments (nothing runs)
      assert.are.equal(0, (run("info", { "/nonexistent/pack", "--help" })))
      code, o, e = run("--version", {})
      assert.are.equal(0, code)
      assert.are.equal("", e)
      assert.are.equal("octonav " .. require("octonav.core").version .. "\n", o)
    end)

    it("an unknown command is named before the usage (exit code 2)", function()
      local _
      local code, o, e = run("frobnicate", {})
      assert.are.equal(2, code)
      assert.are.equal("", o)
      assert.matches("^octonav: unknown command 'frobnicate'\nusage: octonav COMMAND", e)
      code, _, e = run(nil, {})
      assert.are.equal(2, code)
      assert.matches("^octonav: a command expected\nusage:", e)
    end)

    it("bench: bad flag values and missing files are one-line errors", function()
      local _
      local code, o, e = run("bench", { "--limit", "abc", "x.3dmap" })
      assert.are.equal(2, code)
      assert.are.equal("", o)
      assert.matches("^octonav: bench: %-%-limit: an integer >= 1 expected, got 'abc'\nusage: octonav bench ", e)
      code, _, e = run("bench", { "x.3dmap", "--repeat", "0" })
      assert.are.equal(2, code)
      assert.matches("^octonav: bench: %-%-repeat: an integer >= 1 expected, got '0'\n", e)
      code, _, e = run("bench", { "x.3dmap", "--preset", "fastest" })
      assert.are.equal(2, code)
      assert.matches("^octonav: bench: unknown preset 'fastest'", e)
      code, o, e = run("bench", { "/nonexistent.3dmap" })
      assert.are.equal(1, code)
      assert.are.equal("", o)
      assert.are.equal("octonav: bench: /nonexistent.3dmap: No such file or directory\n", e)
      -- a corrupt map: the benchmark's own error, one line
      local d = tmpdir()
      assert(require("octonav.core").mkdir(d))
      writefile(d .. "/bad.3dmap", "voxel 4 4 4\n1 2\n")
      writefile(d .. "/bad.3dmap.3dscen", "version 1\n")
      code, o, e = run("bench", { d .. "/bad.3dmap" })
      assert.are.equal(1, code)
      assert.are.equal("", o)
      assert.are.equal("octonav: bench: " .. d .. "/bad.3dmap:2: malformed line (expected \"x y z\")\n", e)
    end)

    it("path: a blocked end prints the reason and the nearest free point (exit code 1)", function()
      local _
      local code, o, e = run("path", { dir, "20", "5", "8", "20", "0.5", "8" })
      assert.are.equal(1, code)
      assert.are.equal("", o)
      local x, y, z = e:match("^octonav: path: no route from %(20, 5, 8%) to %(20, 0%.5, 8%): goal_blocked; "
        .. "nearest free point %(([^,]+), ([^,]+), ([^)]+)%)\n$")
      assert.is_not_nil(x, e)
      local p = { tonumber(x), tonumber(y), tonumber(z) }
      -- free in the world, within a leaf and a half of the blocked goal (the ground's top face is at y = 1)
      assert.are.equal("free", (w.tree:locate(p)))
      assert.is_true(math.abs(p[2] - 0.5) <= 1.5 and math.abs(p[1] - 20) <= 1.5 and math.abs(p[3] - 8) <= 1.5)
      code, _, e = run("path", { dir, "20", "0.5", "8", "20", "5", "8" })
      assert.are.equal(1, code)
      assert.matches("^octonav: path: no route [^\n]*: start_blocked; nearest free point %(", e)
      -- outside the world: the reason alone
      code, _, e = run("path", { dir, "20", "5", "8", "99", "5", "8" })
      assert.are.equal(1, code)
      assert.are.equal("octonav: path: no route from (20, 5, 8) to (99, 5, 8): goal_outside\n", e)
    end)

    it("info on a manifest with more tiles than a tree holds: an error, no traceback", function()
      local pack = require "octonav.pack"
      local d = tmpdir()
      assert(require("octonav.core").mkdir(d))
      writefile(d .. "/manifest.txt", pack.manifest_text { scale = 1, depth = 1, origin = { 0, 0, 0 },
        tiles = { 4096, 4096, 4096 }, radius = 0, holes = {} })
      local code, o, e = run("info", { d })
      assert.are.equal(1, code)
      assert.are.equal("", o)
      assert.matches("^octonav: [^\n]*manifest%.txt:%d+: 4096 x 4096 x 4096 tiles, more than %d+\n$", e)
      local x, why = world.load(d, { tiles = false })
      assert.is_nil(x)
      assert.matches("4096 x 4096 x 4096 tiles, more than", why)
    end)

    it("validate exits 0 on a good cave", function()
      local code, o = run("validate", { dir })
      assert.are.equal(0, code)
      assert.matches("1 holes, 1 doors: ok\n$", o)
    end)

    it("path prints the route and the path and writes an OBJ polyline", function()
      local ok = pcall(require, "octonav.planner")
      package.loaded["octonav.planner"] = nil
      if not ok then
        pending("octonav.planner is not there yet")
        return
      end
      local d = tmpdir()
      local objpath = d .. ".obj"
      tmp.add(objpath)
      local code, o = run("path", { dir, "20", "5", "8", "8", "5", "8", "--obj", objpath })
      assert.are.equal(0, code, o)
      assert.matches("route: %d+ steps", o)
      assert.matches("path: %d+ points, length", o)
      local obj = readfile(objpath)
      assert.matches("\nv [^\n]+\n", obj)
      assert.matches("\nl %d+ %d+", obj)
      os.remove(objpath)
    end)
  end)
end)
