-- spec/26-tilegrid_spec.lua -- octonav.tilegrid (tile-grid arithmetic) and octonav.util (shared checks)
local tilegrid = require "octonav.tilegrid"
local util = require "octonav.util"

describe("octonav.tilegrid", function()
  -- depth 3, scale 0.5: tiles of 4 units; the range 10 x 5 x 4 needs 3 x 2 x 1 tiles
  local g = assert(tilegrid.from_range({ 1, 0, 2 }, { 11, 5, 6 }, 3, 0.5, 0.25))

  it("covers a range with whole tiles, keeping its top face and its min x and z", function()
    assert.are.same({ 3, 2, 1 }, g.tiles)
    assert.are.equal(4, g.tile_size)
    assert.are.equal(8, g.leaves)
    assert.are.equal(6, g.count)
    assert.are.same({ 1, 5 - 2 * 4, 2 }, g.origin)
    assert.are.equal(0.25, g.radius)
  end)

  it("refuses a range needing more than 4096 tiles on an axis", function()
    local bad, err = tilegrid.from_range({ 0, 0, 0 }, { 4097, 1, 1 }, 1, 0.5, 0)
    assert.is_nil(bad)
    assert.are.equal("too many tiles along one axis (at most 4096)", err)
    assert.is_table(tilegrid.from_range({ 0, 0, 0 }, { 4096, 1, 1 }, 1, 0.5, 0))
  end)

  it("numbers tiles i + nx*(j + ny*k) and back", function()
    assert.are.equal(1 + 3 * 1, tilegrid.index(g, 1, 1, 0))
    for t = 0, g.count - 1 do
      local i, j, k = tilegrid.coords(g, t)
      assert.are.equal(t, tilegrid.index(g, i, j, k))
      assert.are.same({ i, j, k }, tilegrid.ijk(g, t))
    end
  end)

  it("gives each tile's bounds", function()
    local mn, mx = tilegrid.bounds(g, tilegrid.index(g, 2, 1, 0))
    assert.are.same({ 9, 1, 2 }, mn)
    assert.are.same({ 13, 5, 6 }, mx)
    assert.are.same({ 5, -3, 2 }, tilegrid.min(g, 1, 0, 0))
  end)

  it("finds the tile of a point; the grid's max faces count, outside is nil", function()
    assert.are.equal(0, tilegrid.tile_of(g, { 1, -3, 2 }))
    assert.are.equal(tilegrid.index(g, 1, 0, 0), tilegrid.tile_of(g, { 5, -3, 2 })) -- on a shared face: the upper tile
    assert.are.equal(5, tilegrid.tile_of(g, { 13, 5, 6 }))
    assert.is_nil(tilegrid.tile_of(g, { 0.999, 0, 3 }))
    assert.is_nil(tilegrid.tile_of(g, { 2, 5.001, 3 }))
    assert.is_nil(tilegrid.tile_of(g, { 2, 0 / 0, 3 }))
  end)

  it("lists the tiles a box overlaps, closed or strict at tile borders", function()
    assert.are.same({ 0, 1 }, tilegrid.in_box(g, { 2, -2, 3 }, { 5, -1, 4 }, false))
    assert.are.same({ 0 }, tilegrid.in_box(g, { 2, -2, 3 }, { 5, -1, 4 }, true))
    assert.are.same({ 0, 1, 2, 3, 4, 5 }, tilegrid.in_box(g, { -100, -100, -100 }, { 100, 100, 100 }, false))
    assert.are.same({}, tilegrid.in_box(g, { 20, 0, 3 }, { 30, 1, 4 }, false))
  end)

  it("registers a hole with the tiles it overlaps and those of its doors' outside points", function()
    local hole = { min = { 2, -2, 3 }, max = { 5, -1, 4 }, doors = { { outside = { 12, 4, 5 } } } }
    assert.are.same({ 0, 5 }, tilegrid.hole_tiles(g, hole))
  end)

  it("is what octonav.bake exposes under its own names (with its arguments checked there)", function()
    local bake = require "octonav.bake"
    for _, p in ipairs { { 2, -2, 3 }, { 12, 4, 5 }, { 0.5, -1.5, 2.5 }, { -1, 0, 0 } } do
      assert.are.equal(tilegrid.tile_of(g, p), bake.tile_of(g, p))
    end
    for t = 0, 5 do assert.are.same({ tilegrid.coords(g, t) }, { bake.tile_coords(g, t) }) end
    assert.are.same(tilegrid.in_box(g, { 1, -2, 2 }, { 12, 4, 6 }), bake.tiles_in_box(g, { 1, -2, 2 }, { 12, 4, 6 }))
    local hole = { min = { 2, -2, 3 }, max = { 5, -1, 4 }, doors = { { outside = { 12, 4, 5 } } } }
    assert.are.same(tilegrid.hole_tiles(g, hole), bake.hole_tiles(g, hole))
    assert.has_error(function() bake.tile_of({}, { 1, 2, 3 }) end,
      "octonav.bake.tile_of: g: a tile grid (octonav.bake.grid) expected, got table")
    local cg = bake.grid { range = { min = { 1, 0, 2 }, max = { 11, 5, 6 } }, scale = 0.5, depth = 3, radius = 0.25,
      output = "unused" }
    assert.are.same(g, cg)
  end)
end)

describe("octonav.util", function()
  it("tells finite numbers and points", function()
    assert.is_true(util.finite(0))
    assert.is_true(util.finite(-1e308))
    for _, v in ipairs { 1 / 0, -1 / 0, 0 / 0, "1", true } do assert.is_false(util.finite(v)) end
    assert.is_false(util.finite(nil))
    assert.is_true(util.is_point { 1, 2, 3 })
    assert.is_false(util.is_point { 1, 2 })
    assert.is_false(util.is_point { 1, 2, 0 / 0 })
    assert.is_false(util.is_point(5))
  end)

  it("tells counts: integers >= min, integral floats below 2^53", function()
    assert.is_true(util.is_count(3, 1))
    assert.is_true(util.is_count(3.0, 1))
    assert.is_true(util.is_count(require("octonav.compat").maxinteger, 0))
    assert.is_false(util.is_count(0, 1))
    assert.is_false(util.is_count(2.5, 1))
    assert.is_false(util.is_count(2 ^ 53, 1))
    assert.is_false(util.is_count(1 / 0, 1))
    assert.is_false(util.is_count("3", 1))
  end)

  it("measures distances and copies points", function()
    assert.are.equal(13, util.dist({ 1, 2, 3 }, { 4, 6, 15 }))
    local p = { 1, 2, 3, 4 }
    local c = util.copy(p)
    assert.are.same({ 1, 2, 3 }, c)
    assert.are_not.equal(p, c)
    assert.is_true(util.same3({ 1, 2, 3 }, { 1, 2, 3, 9 }))
    assert.is_false(util.same3({ 1, 2, 3 }, { 1, 2, 4 }))
  end)

  it("gives a file's size, nil when it cannot be read", function()
    local path = os.tmpname()
    local f = assert(io.open(path, "wb"))
    f:write(("x"):rep(1234))
    f:close()
    assert.are.equal(1234, util.file_size(path))
    os.remove(path)
    assert.is_nil(util.file_size(path))
  end)
end)
