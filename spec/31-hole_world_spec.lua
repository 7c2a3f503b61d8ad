-- The world tree around a hole (issue 12): with world.load(dir, { block_holes = true }) a hole's
-- sealed inside (the free space of its tree) is blocked in the world tree (world:block_hole_inside, temporary obstacles; lua/octonav/world.lua,
-- docs/world.md "The world tree around a hole"), so a world-tree search cannot enter the cave and a
-- world path between two outside points never passes through it; only the navigator goes in, by a
-- door. validate's `world` entry lists what the world tree offers inside the hole. World:
-- spec/support/bakedworld.lua (the hole "cave", a shell from 4 to 12, doorways on -x and +x at
-- y in [5, 7], z in [7, 9]).
local core = require "octonav.core"
local navigator = require "octonav.navigator"
local streamer = require "octonav.streamer"
local world_mod = require "octonav.world"
local files = dofile("spec/support/files.lua")
local baked = dofile("spec/support/bakedworld.lua")

local INSIDE = { 8, 6, 8 }
local WEST, EAST = { 2, 6, 8 }, { 14, 6, 8 } -- outside the cave, on its door axis

local function dist(a, b) return math.sqrt((a[1] - b[1]) ^ 2 + (a[2] - b[2]) ^ 2 + (a[3] - b[3]) ^ 2) end

-- The points of a path inside the hole (every corner and every 0.05 along each leg).
local function points_inside(w, path)
  local hits = {}
  for n = 1, #path do
    local a, b = path[n], path[n + 1] or path[n]
    local steps = math.max(1, math.ceil(dist(a, b) / 0.05))
    for s = 0, steps do
      local f = s / steps
      local p = { a[1] + (b[1] - a[1]) * f, a[2] + (b[2] - a[2]) * f, a[3] + (b[3] - a[3]) * f }
      if w:in_hole(p) then hits[#hits + 1] = p end
    end
  end
  return hits
end

describe("the world tree around a hole", function()
  local dir, w
  setup(function()
    dir = files.tmpname()
    baked.bake_and_load(dir):close()
    w = assert(world_mod.load(dir)) -- block_holes is on by default
  end)
  teardown(function()
    if w then w:close() end
    files.rm_rf(dir)
  end)

  it("blocks the cave's inside in the world tree: validate's world entry is empty", function()
    local h = w.holes[1]
    assert.is_true(#h.inside_obstacles > 0)
    assert.equal(0, h.inside_skipped)
    assert.equal("blocked", w.tree:locate(INSIDE))
    local r = w:validate()
    assert.is_true(r.ok)
    assert.same({}, r.world)
    for _, d in ipairs(r.doors) do assert.is_true(d.outside_free) end -- the doors stay reachable
  end)

  it("a world-tree search from outside cannot reach the inside; the navigator goes in by a door", function()
    local q = core.query.new(w.tree)
    local path, info = q:find(WEST, INSIDE)
    assert.is_nil(path)
    assert.equal("goal_blocked", info.reason)
    local nav = navigator.new(w)
    nav:go(INSIDE)
    local pos, status = { WEST[1], WEST[2], WEST[3] }, nil
    local trail = { pos }
    for _ = 1, 2000 do
      local wp
      status, wp = nav:update(pos)
      if status == "arrived" or status == "failed" then break end
      if status == "moving" then
        local d = dist(pos, wp)
        local f = d <= 0.5 and 1 or 0.5 / d
        pos = { pos[1] + (wp[1] - pos[1]) * f, pos[2] + (wp[2] - pos[2]) * f, pos[3] + (wp[3] - pos[3]) * f }
        trail[#trail + 1] = pos
      end
    end
    nav:close()
    assert.equal("arrived", status)
    -- it entered through the -x doorway (x in [4, 5], y in [5, 7], z in [7, 9])
    local through = false
    for n = 2, #trail do
      local a, b = trail[n - 1], trail[n]
      if a[1] <= 4.5 and b[1] > 4.5 then
        through = b[2] >= 5 and b[2] <= 7 and b[3] >= 7 and b[3] <= 9
      end
    end
    assert.is_true(through)
  end)

  it("a world path between two outside points never passes inside the cave", function()
    local q = core.query.new(w.tree)
    for _, pair in ipairs { { WEST, EAST }, { { 3.5, 6, 8 }, { 12.5, 6, 8 } }, { { 2, 1, 2 }, { 14, 11, 14 } } } do
      local path, info = q:find(pair[1], pair[2])
      assert.is_truthy(path, info.reason)
      assert.same({}, points_inside(w, path))
    end
  end)

  it("unblocked, the world tree offers the cave: validate names it and a straight path goes through", function()
    w:unblock_hole_inside("cave")
    local r = w:validate()
    w:block_hole_inside("cave")
    w.holes[1].inside_blocked_off = nil
    assert.is_false(r.ok)
    assert.is_true(#r.world > 0)
    for _, e in ipairs(r.world) do
      assert.equal("cave", e.name)
      assert.equal("cave", (w:in_hole(e.position)))
      assert.equal(1, e.hole)
    end
    assert.same({}, w:validate().world)
    -- with the inside free again (checked on a second load), a world path from WEST to EAST goes through
    local w2 = assert(world_mod.load(dir, { block_holes = true }))
    w2:unblock_hole_inside(1)
    local q = core.query.new(w2.tree)
    local path = assert(q:find(WEST, EAST))
    assert.is_true(#points_inside(w2, path) > 0)
    local q1 = core.query.new(w2.tree)
    local p1, i1 = q1:find(WEST, INSIDE)
    assert.is_truthy(p1, i1.reason)
    -- loaded with block_holes = false: nothing blocked; validate lists the cells, ok stays true
    local w3 = assert(world_mod.load(dir, { block_holes = false }))
    assert.equal("free", (w3.tree:locate(INSIDE)))
    assert.same({}, w3.tree:obstacles())
    local r3 = w3:validate()
    assert.is_true(r3.ok)
    assert.is_true(#r3.world > 0)
  end)

  it("streamed: the inside is blocked in the world tiles as they load", function()
    local sw = assert(world_mod.load(dir, { tiles = false, block_holes = true }))
    local s = assert(streamer.new(sw, { load_padding = 2, unload_padding = 4, workers = 0 }))
    assert.equal("unloaded", (sw.tree:locate(INSIDE)))
    s:add_agent(WEST)
    s:update(true)
    assert.is_true(s:is_loaded(0))
    assert.equal("free", sw.tree:locate(WEST))
    assert.equal("blocked", sw.tree:locate(INSIDE))
    assert.same({}, sw:validate().world)
    s:close()
  end)
end)
