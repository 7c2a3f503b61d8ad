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
    raises(function() tree { depth = (1 << 32) | 5 } end, "octonav.tree.new: depth must be 1..9")
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
