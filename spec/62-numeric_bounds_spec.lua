-- spec/62-numeric_bounds_spec.lua -- numbers that overflow a cast or hang a loop (issue 30, items 3, 4
-- and 8): each case is one the red team found, with the exact answer it must give now.
-- Run: busted --lua=lua5.4 spec/62-numeric_bounds_spec.lua (and under `make check`: ASan + UBSan with
-- float-cast-overflow)
local core = require "octonav.core"

local function raises(f, msg)
  local ok, err = pcall(f)
  assert.is_false(ok)
  assert.is_truthy(tostring(err):find(msg, 1, true), ("expected %q in %q"):format(msg, tostring(err)))
end

local function tree(opts)
  return core.tree.new(opts or { tiles = { 1, 1, 1 }, depth = 6 })
end

describe("numbers that overflow a cast (issue 30, item 3)", function()
  it("a heightfield of 1e-9 cells blocks the leaf it covers, and only it", function()
    local t = tree()
    assert.are.equal(t, t:add_heightfield { cell = 1e-9, nx = 2, nz = 2, heights = { 1, 1, 1, 1 } })
    assert.are.equal("blocked", t:locate { 0.5, 0.5, 0.5 })
    assert.are.equal("free", t:locate { 5.5, 0.5, 5.5 })
    assert.are.equal("free", t:locate { 0.5, 1.5, 0.5 })
  end)

  it("a heightfield far from the tree (3e9 leaves away) blocks nothing", function()
    local t = tree()
    t:add_heightfield { origin = { -3e9, 0, -3e9 }, cell = 1, nx = 2, nz = 2, heights = { 1, 1, 1, 1 } }
    assert.are.equal("free", t:locate { 0.5, 0.5, 0.5 })
    assert.are.equal(0, t:stats().nodes)
  end)

  it("a heightfield whose heights overflow in nav space is refused", function()
    local t = tree()
    raises(function()
      t:add_heightfield { origin = { 0, 1e308, 0 }, cell = 1, nx = 2, nz = 2, heights = { 1e308, 1, 1, 1 } }
    end, "add_heightfield: invalid argument")
    raises(function() t:add_heightfield { cell = 1e300, nx = 2, nz = 2, heights = { 1, 1, 1, 1 } } end,
      "add_heightfield: option 'cell' must be a finite number in [0, 1e+12]")
  end)

  it("tree.new bounds scale, origin, radius and depth before any cast", function()
    raises(function() tree { scale = 5e-324 } end, "octonav.tree.new: option 'scale' must be a finite number in [1e-06, 1e+06]")
    raises(function() tree { scale = 1e300 } end, "octonav.tree.new: option 'scale' must be a finite number in [1e-06, 1e+06]")
    raises(function() tree { origin = { 0, 1e308, 0 } } end, "octonav.tree.new: origin must be a finite number in [-1e+12, 1e+12]")
    raises(function() tree { radius = 1e300 } end, "octonav.tree.new: option 'radius' must be a finite number in [0, 1e+12]")
    raises(function() tree { depth = 2 ^ 32 + 5 } end, "octonav.tree.new: depth must be 1..9")
  end)

  it("route.build with a huge stretch keeps a spanning tree (as a large finite stretch does)", function()
    local t = tree { tiles = { 3, 3, 3 }, depth = 3 }
    t:add_box({ 9, 9, 9 }, { 15, 15, 10 })
    local function edges(st) return core.route.info(core.route.build(t, 1, 1, 1, { stretch = st })).edges end
    assert.are.equal(15, edges(1))
    assert.are.equal(5, edges(1e12))
    assert.are.equal(5, edges(1e308))
    assert.are.equal(core.route.build(t, 1, 1, 1, { stretch = 1e12 }), core.route.build(t, 1, 1, 1, { stretch = 1e308 }))
  end)
end)

describe("numbers that hang (issue 30, item 4)", function()
  local world = require "octonav.world"
  local pack = require "octonav.pack"
  local files = dofile("spec/support/files.lua")
  local baked = dofile("spec/support/bakedworld.lua")
  local tmp = files.tracker(files.rm_rf)
  local dir, original -- spec/10's world (a cave [4, 12] x [2, 10] x [4, 12] with two doors), baked once
  setup(function()
    dir = tmp.dir()
    assert(baked.call_bake(baked.config(dir)))
    original = files.read(pack.manifest_path(dir))
  end)
  teardown(function() tmp.cleanup() end)

  -- the pack with its manifest changed by edit (sealed again), loaded (opts): world.load's answer
  local function load_edited(edit, opts)
    local m = assert(pack.parse_manifest("manifest", original))
    edit(m)
    files.write(pack.manifest_path(dir), pack.manifest_text(m))
    return world.load(dir, opts)
  end

  it("a sealed manifest with a far origin, a tiny or denormal scale is refused at load, naming the line", function()
    local cases = {
      { function(m) m.origin = { 1e308, 0, 0 } end, ":4: origin must be within +-1e+12" },
      { function(m) m.origin = { 0, 0, -2e12 } end, ":4: origin must be within +-1e+12" },
      { function(m) m.scale = 1e-300 end, ":2: scale must be in [1e-06, 1e+06]" },
      { function(m) m.scale = 5e-324 end, ":2: scale must be in [1e-06, 1e+06]" },
      { function(m) m.scale = 1e300 end, ":2: scale must be in [1e-06, 1e+06]" },
      { function(m) m.radius = 1e300 end, ":6: radius must be at most 1e+12" },
      { function(m) m.holes[1].scale = 4e-320 end, ":7: hole scale must be in [1e-06, 1e+06]" },
      { function(m) m.holes[1].origin = { 0, -1e308, 0 } end, ":7: hole origin must be within +-1e+12" },
      { function(m) m.holes[1].min = { -1e300, 1, 2 } end, ":7: hole bounds must be within +-1e+12" },
      { function(m) m.holes[1].doors[2].outside = { 7, 1e300, 4 } end, ":9: door points must be within +-1e+12" },
    }
    for _, c in ipairs(cases) do
      local w, err = load_edited(c[1])
      assert.is_nil(w)
      assert.are.equal(pack.manifest_path(dir) .. c[2], err)
    end
  end)

  it("the pack as baked validates ok", function()
    local w = assert(load_edited(function() end))
    local r = w:validate()
    assert.is_true(r.ok)
    assert.are.same({}, r.world)
    w:close()
  end)

  -- validate locates every world leaf a hole's free boxes cover: with 1e-6 leaves the cave's 6-unit
  -- box spans 6e6 leaves an axis (2e20 in all: validate never returned); now clamped to the world's
  local function tiny_leaves(origin, tiles, depth)
    return function(m) m.scale, m.origin, m.tiles, m.depth = 1e-6, origin, tiles, depth end
  end

  it("validate with world leaves of 1e-6 returns: the cave lies beyond the world's leaves", function()
    local w = assert(load_edited(tiny_leaves({ 0, 0, 0 }, { 2, 1, 1 }, 3), { tiles = false }))
    local r = w:validate()
    assert.are.same({}, r.world)
    w:close()
  end)

  it("validate over a cave covering 3.9e9 world leaves reports it unchecked instead of scanning", function()
    local w = assert(load_edited(tiny_leaves({ 4.999, 2.9999, 4.999 }, { 8, 1, 8 }, 9), { tiles = false }))
    local r = w:validate()
    assert.is_false(r.ok)
    assert.are.same({ { hole = 1, name = "cave", error = "hole covers more than 16777216 world leaves: not checked" } },
      r.world)
    w:close()
  end)

  -- item 8: pack content never makes a call raise
  local function many_doors(n)
    return function(m)
      local d = m.holes[1].doors[1]
      for j = 1, n do m.holes[1].doors[j] = { inside = d.inside, outside = d.outside } end
    end
  end

  it("a hole with 4097 doors is refused at load (world:plan raised from start_multi)", function()
    local w, err = load_edited(many_doors(4097))
    assert.is_nil(w)
    assert.are.equal(pack.manifest_path(dir) .. ":4104: hole 'cave' has more than 4096 doors", err)
  end)

  it("a hole with 4096 doors loads and plans out of the cave", function()
    local w = assert(load_edited(many_doors(4096)))
    assert.are.equal(4096, #w.holes[1].doors)
    local route, cost = w:plan({ 8, 6, 8 }, { 24, 8, 8 })
    assert.is_table(route, cost)
    assert.are.equal("hole", route[1].kind)
    w:close()
  end)
end)

describe("the bake refuses the grids the loader refuses (issue 30, item 8)", function()
  local bake = require "octonav.bake"
  local function check(over)
    local c = { range = { min = { 0, 0, 0 }, max = { 16, 8, 8 } }, depth = 3, output = "unused" }
    for k, v in pairs(over) do c[k] = v end
    local ok, err = pcall(bake.check, c)
    assert.is_false(ok)
    return err
  end
  local function hole(scale, ndoors, box)
    local doors = {}
    for j = 1, ndoors do doors[j] = { inside = { 1, 1, 1 }, outside = { 9, 1, 1 }, box = box } end
    return { { name = "h", min = { 0, 0, 0 }, max = { 8, 8, 8 }, scale = scale, doors = doors } }
  end

  it("refuses 2^21 tiles (each axis within 4096: it started 4.2 M steps)", function()
    assert.are.equal("octonav.bake: config.range: 4096 x 4096 x 8 tiles, more than 1048576",
      check { range = { min = { 0, 0, 0 }, max = { 4096 * 8, 4096 * 8, 64 } } })
  end)

  it("refuses scales and coordinates out of the loader's bounds", function()
    assert.are.equal("octonav.bake: config.range: scale must be in [1e-06, 1e+06]", check { scale = 1e-300 })
    assert.are.equal("octonav.bake: config.range: origin must be within +-1e+12",
      check { range = { min = { 1e308, 0, 0 }, max = { 1e308, 8, 8 } } })
    assert.are.equal("octonav.bake: config.holes[1]: its tree's grid: scale must be in [1e-06, 1e+06]",
      check { holes = hole(1e-300, 1) })
    assert.are.equal("octonav.bake: config.holes[1]: its tree's grid: 1563 x 1563 x 1563 tiles, more than 1048576",
      check { holes = hole(1e-5, 1) })
    assert.are.equal("octonav.bake: config.holes[1].doors: at most 4096 doors", check { holes = hole(1, 4097) })
    assert.are.equal("octonav.bake: config.holes[1].doors[1].box: must lie within +-1e+12",
      check { holes = hole(1, 1, { min = { 0, 0, 0 }, max = { 2e12, 1, 1 } }) })
  end)
end)
