-- Watertight holes (issue 12): the sealing from the whole boundary of a hole's bounds
-- (lua/octonav/bake/holes.lua) and what world:validate reports about pockets, leaks and door boxes
-- (lua/octonav/world.lua, docs/world.md "Holes").
local bake = require "octonav.bake"
local world = require "octonav.world"
local cli = require "octonav.cli"

local files = dofile("spec/support/files.lua")
local tmp = files.tracker(files.rm_rf)

local function box(mn, mx) return { box = { min = mn, max = mx } } end

-- One tile of 16 units (depth 4, scale 1) over a ground slab, with a cave: walls 1 thick around the
-- inside x, z in [5, 11], y in [3, 7], a doorway in the +x wall (x in [11, 12], y in [3, 6],
-- z in [7, 9]) closed by the door's box. The hole's bounds [3, 12.5] x [1, 9] x [3, 13] are loose:
-- they hold air around the cave, and the door's outside point (12.75) lies beyond them, so no fill
-- from it reaches that air. opts: window = true cuts a second opening in the -x wall (z in [7, 9],
-- y in [3, 6]) that no door closes; closet = true builds a closed room inside the cave
-- (inside x, z in [6, 8], y in [3, 7]); door = a replacement door; max_x = the bounds' max x.
local function config(dir, opts)
  opts = opts or {}
  local g = {
    box({ 0, 0, 0 }, { 16, 1, 16 }),                                        -- ground
    box({ 4, 2, 4 }, { 12, 3, 12 }), box({ 4, 7, 4 }, { 12, 8, 12 }),        -- floor, ceiling
    box({ 4, 3, 4 }, { 12, 7, 5 }), box({ 4, 3, 11 }, { 12, 7, 12 }),        -- -z, +z walls
    box({ 11, 3, 5 }, { 12, 7, 7 }), box({ 11, 3, 9 }, { 12, 7, 11 }), box({ 11, 6, 7 }, { 12, 7, 9 }), -- +x
  }
  if opts.window then
    g[#g + 1] = box({ 4, 3, 5 }, { 5, 7, 7 })
    g[#g + 1] = box({ 4, 3, 9 }, { 5, 7, 11 })
    g[#g + 1] = box({ 4, 6, 7 }, { 5, 7, 9 })
  else
    g[#g + 1] = box({ 4, 3, 4 }, { 5, 7, 12 })
  end
  if opts.closet then
    g[#g + 1] = box({ 5, 3, 5 }, { 6, 7, 9 })
    g[#g + 1] = box({ 8, 3, 5 }, { 9, 7, 9 })
    g[#g + 1] = box({ 6, 3, 5 }, { 8, 7, 6 })
    g[#g + 1] = box({ 6, 3, 8 }, { 8, 7, 9 })
  end
  return {
    range = { min = { 0, 0, 0 }, max = { 16, 16, 16 } }, depth = 4, scale = 1,
    geometry = g,
    holes = { { name = "cave", min = { 3, 1, 3 }, max = { opts.max_x or 12.5, 9, 13 }, scale = 0.5, kind = "under_terrain",
      doors = { opts.door or { inside = { 10, 4.5, 8 }, outside = { 12.75, 4.5, 8 },
        box = { min = { 11, 3, 7 }, max = { 12, 6, 9 } } } } } },
    output = dir,
  }
end

local function baked(opts)
  local d = tmp.dir()
  assert(bake(config(d, opts)))
  return assert(world.load(d))
end

describe("watertight holes", function()
  after_each(tmp.cleanup)

  it("loose bounds: the air around the cave that no door reaches is not in the hole", function()
    local w = baked()
    assert.are.same({ "cave", 1 }, { w:in_hole { 8, 5, 8 } })
    assert.are.same({ "cave", 1 }, { w:in_hole { 10, 4.5, 8 } })
    assert.is_nil(w:in_hole { 3.5, 5, 8 })    -- beside the -x wall, inside the bounds
    assert.is_nil(w:in_hole { 8, 8.5, 8 })    -- above the ceiling
    assert.is_nil(w:in_hole { 8, 5, 3.25 })   -- beyond the -z wall
    assert.is_nil(w:in_hole { 12.25, 4.5, 8 }) -- between the door's box and the bounds' face
    assert.is_nil(w:in_hole { 11.5, 4, 8 })   -- the door's box
    local r = w:validate()
    assert.is_true(r.ok)
    assert.are.same({}, r.pockets)
    assert.are.same({}, r.leaks)
    assert.are.same({}, r.unclosed)
    w:close()
  end)

  it("a closed room inside the cave is a pocket, named with a point inside it", function()
    local w = baked { closet = true }
    assert.is_nil(w:in_hole { 3.5, 5, 8 })
    local r = w:validate()
    assert.is_false(r.ok)
    assert.are.same({}, r.leaks)
    assert.are.equal(1, #r.pockets)
    local p = r.pockets[1]
    assert.are.equal("cave", p.name)
    assert.are.equal(1, p.hole)
    assert.is_true(p.position[1] > 6 and p.position[1] < 8, "x " .. p.position[1])
    assert.is_true(p.position[2] > 3 and p.position[2] < 7, "y " .. p.position[2])
    assert.is_true(p.position[3] > 6 and p.position[3] < 8, "z " .. p.position[3])
    assert.are.equal("free", (w.holes[1].tree:locate(p.position)))
    assert.is_true(r.doors[1].ok) -- the door itself is fine
    w:close()
  end)

  it("a window no door closes is a leak: validate names the door, the cave is sealed", function()
    local w = baked { window = true }
    assert.is_nil(w:in_hole { 8, 5, 8 })
    local r = w:validate()
    assert.is_false(r.ok)
    assert.are.same({ { hole = 1, name = "cave", door = 1, position = { 10, 4.5, 8 } } }, r.leaks)
    assert.are.same({}, r.unclosed)
    assert.is_false(r.doors[1].inside_free)
    w:close()
  end)

  it("a door box off its opening is reported unclosed (and the cave leaks through the doorway)", function()
    local off = { min = { 6, 3, 6 }, max = { 7, 4, 7 } }
    local w = baked { door = { inside = { 10, 4.5, 8 }, outside = { 12.75, 4.5, 8 }, box = off } }
    assert.is_nil(w:in_hole { 8, 5, 8 })
    -- the manifest carries the door's box (octonav.pack): the loaded world has the config's box
    assert.are.same(off, w:door_box(1, 1))
    local r = w:validate()
    assert.is_false(r.ok)
    assert.are.same({ { hole = 1, name = "cave", door = 1, box = off } }, r.unclosed)
    assert.are.same({ { hole = 1, name = "cave", door = 1, position = { 10, 4.5, 8 } } }, r.leaks)
    w:door_box(1, 1, { min = { 11, 3, 7 }, max = { 12, 6, 9 } })
    assert.are.same({}, w:validate().unclosed)
    w:close()
  end)

  it("a door without a box: its doorway cut by the bounds' face is its opening, never sealed", function()
    local w = baked { door = { inside = { 10, 4.5, 8 }, outside = { 12.75, 4.5, 8 } }, max_x = 11.5 }
    assert.are.same({ "cave", 1 }, { w:in_hole { 8, 5, 8 } })
    assert.are.same({ "cave", 1 }, { w:in_hole { 11.25, 4.5, 8 } }) -- the doorway's cut
    assert.is_nil(w:in_hole { 3.5, 5, 8 })
    assert.is_nil(w:in_hole { 11.25, 4.5, 3.25 })                -- the same face beside the cave
    local r = w:validate()
    assert.is_true(r.ok)
    w:close()
  end)

  it("a door without a box whose doorway no face cuts, with outside air around it, leaks", function()
    local w = baked { door = { inside = { 10, 4.5, 8 }, outside = { 12.75, 4.5, 8 } } }
    assert.is_nil(w:in_hole { 8, 5, 8 })
    assert.are.same({ { hole = 1, name = "cave", door = 1, position = { 10, 4.5, 8 } } }, w:validate().leaks)
    w:close()
  end)

  it("bin/octonav validate prints each leak and pocket with its position, exit code 1", function()
    local function validate(opts)
      local d = tmp.dir()
      assert(bake(config(d, opts)))
      local o = {}
      cli.stdout = { write = function(_, ...) for _, x in ipairs { ... } do o[#o + 1] = x end end }
      local ok, code = pcall(cli.main, "validate", { d })
      cli.stdout = io.stdout
      assert(ok, code)
      return code, table.concat(o)
    end
    local code, o = validate { window = true }
    assert.are.equal(1, code)
    assert.matches("\nhole cave door 1: LEAK: the sealing reached its inside point %(10, 4%.5, 8%)\n", o)
    assert.matches("1 holes, 1 doors: NOT OK\n$", o)
    code, o = validate { closet = true }
    assert.are.equal(1, code)
    assert.matches("\nhole cave: POCKET at %([%d.]+, [%d.]+, [%d.]+%) %(reached from no door%)\n", o)
    assert.is_nil(o:find("LEAK", 1, true))
    code, o = validate()
    assert.are.equal(0, code)
    assert.matches("1 holes, 1 doors: ok\n$", o)
  end)

  it("the dungeon world of ../shared: validate and the loose tower's outside air", function()
    local cfgfile = "/work/shared/data/worlds/dungeon.lua"
    local f = io.open(cfgfile)
    if not f then
      pending("no " .. cfgfile)
      return
    end
    f:close()
    local cfg = dofile(cfgfile)
    for _, g in ipairs(cfg.geometry) do
      if g.obj then g.obj = "/work/shared/data/worlds/" .. g.obj end
    end
    cfg.output = tmp.dir()
    assert(bake(cfg))
    local w = assert(world.load(cfg.output))
    assert.is_nil(w:in_hole { 31, 25, -9.5 })
    local r = w:validate()
    local lines = {}
    for _, x in ipairs(r.leaks) do lines[#lines + 1] = ("leak %s door %d"):format(x.name, x.door) end
    for _, x in ipairs(r.pockets) do
      lines[#lines + 1] = ("pocket %s %g,%g,%g"):format(x.name, x.position[1], x.position[2], x.position[3])
    end
    for _, x in ipairs(r.unclosed) do lines[#lines + 1] = ("unclosed %s door %d"):format(x.name, x.door) end
    print("\n  dungeon validate: ok " .. tostring(r.ok) .. "; " .. table.concat(lines, "; "))
    w:close()
  end)
end)
