-- spec/10-planner_spec.lua -- octonav.planner: the Cell-level route over the C world graph (tile
-- portal graphs, octonav.core.route) with holes and doors as endpoint sets, on worlds built by hand
-- as plain tables (docs/world.md) with real octonav trees and a world graph built from them, and end
-- to end on a baked world.
-- Run: busted --lua=lua5.4 spec/10-planner_spec.lua
--
-- The hand world (scale 1, origin 0, tiles of 16 leaves): N tiles along x; between tiles k-1 and k a
-- wall x in [16k-1, 16k+1] with one opening y, z in [6, 10] (the tiles' portals there are linked).
-- Hole 1
-- "cave" (tile 0, box [4,12]x[2,10]x[4,12], scale 0.5): a sealed room [5,11]x[3,9]x[5,11] with a
-- pillar, door 1 on its -x side and door 2 on its +x side. Hole 2 "den" (tile 1, box
-- [20,28]x[2,10]x[4,12]): a sealed room with one door on its -x side. The world tree blocks both
-- hole boxes (the holes are reached only through their doors).
local planner = require "octonav.planner"

local hw = dofile("spec/support/handworld.lua")
local dist, make_world = hw.dist, hw.make_world
---------------------------------------------------------------------------------------------------
-- Route checks.

local function cell_of(w, p)
  local name = w:in_hole(p)
  if name then return "hole", w.hole_index[name] end
  return "tile", w:tile_of(p)
end

-- Every step's enter and exit lie in its cell; consecutive tile steps join at a crossing point on
-- their shared face (strictly inside the face's free opening: a point just either side is free), a
-- tile and a hole at a door; the route starts at a and ends at b.
local function expect_route(w, route, a, b)
  assert.is_table(route)
  assert.same(a, route[1].enter)
  assert.same(b, route[#route].exit)
  assert.is_nil(route[#route].via)
  for i, s in ipairs(route) do
    assert.truthy(s.kind == "tile" or s.kind == "hole")
    local id = s.kind == "tile" and s.tile or s.hole
    assert.is_number(id)
    if s.kind == "hole" then
      for _, p in ipairs { s.enter, s.exit } do
        local kind, cid = cell_of(w, p)
        assert.equal("hole", kind)
        assert.equal(s.hole, cid)
      end
    end
    local nx = route[i + 1]
    if nx then
      if s.via_kind == "portal" then
        assert.equal("tile", nx.kind)
        assert.equal(s.to_tile, nx.tile)
        assert.same(s.exit, nx.enter)
        -- on the face between the two tiles: a hair either side lies in each tile, and is free
        local axis
        for k = 1, 3 do
          if s.exit[k] % w.tile_size == 0 and s.exit[k] > 0 then axis = k end
        end
        assert.is_number(axis, "the crossing is not on a tile face")
        local lo, hi = { s.exit[1], s.exit[2], s.exit[3] }, { s.exit[1], s.exit[2], s.exit[3] }
        lo[axis], hi[axis] = lo[axis] - 0.01, hi[axis] + 0.01
        local mine, theirs = lo, hi
        if w:tile_of(lo) ~= s.tile then mine, theirs = hi, lo end
        assert.equal(s.tile, w:tile_of(mine))
        assert.equal(nx.tile, w:tile_of(theirs))
      else
        assert.equal("door", s.via_kind)
        local door = w.holes[s.via_hole].doors[s.via]
        if s.kind == "hole" then
          assert.equal(s.hole, s.via_hole)
          assert.same(door.inside, s.exit)
          assert.same(door.outside, nx.enter)
        else
          assert.equal("hole", nx.kind)
          assert.equal(nx.hole, s.via_hole)
          assert.same(door.outside, s.exit)
          assert.same(door.inside, nx.enter)
        end
      end
    end
  end
end

local function kinds(route)
  local out = {}
  for _, s in ipairs(route) do out[#out + 1] = s.kind .. ":" .. (s.kind == "tile" and s.tile or s.hole) end
  return table.concat(out, " ")
end

---------------------------------------------------------------------------------------------------

describe("octonav.planner.plan", function()
  local w = make_world()
  local t0, t1 = { 2, 8, 2 }, { 30, 12, 14 }
  local cave, den = { 6, 6, 8 }, { 24, 6, 8 }

  it("the hand world is what the spec thinks it is", function()
    assert.equal("cave", w:in_hole(cave))
    assert.equal("den", w:in_hole(den))
    assert.is_nil(w:in_hole(t0))
    assert.is_nil(w:in_hole { 8, 6, 8 }) -- the cave's pillar
    assert.equal(0, w:tile_of(t0))
    assert.equal(1, w:tile_of(t1))
    assert.equal("blocked", (w.tree:locate(cave)))
    for _, h in ipairs(w.holes) do
      for _, d in ipairs(h.doors) do
        assert.equal("free", (h.tree:locate(d.inside)))
        assert.equal("free", (w.tree:locate(d.outside)))
      end
    end
  end)

  describe("reasons", function()
    it("start_outside / goal_outside", function()
      assert.same({ nil, "start_outside" }, { planner.plan(w, { -5, 8, 8 }, t1) })
      assert.same({ nil, "start_outside" }, { planner.plan(w, { 5, 20, 8 }, t1) })
      assert.same({ nil, "goal_outside" }, { planner.plan(w, t0, { 40, 8, 8 }) })
      assert.same({ nil, "goal_outside" }, { planner.plan(w, cave, { 8, 8, -1 }) })
    end)

    it("start_blocked / goal_blocked", function()
      assert.same({ nil, "start_blocked" }, { planner.plan(w, { 16, 1, 1 }, t1) })
      assert.same({ nil, "goal_blocked" }, { planner.plan(w, t0, { 16, 1, 1 }) })
      -- the cave's pillar: not in the hole (blocked there), and blocked in the world tree
      assert.same({ nil, "goal_blocked" }, { planner.plan(w, t1, { 8, 6, 8 }) })
    end)

    it("unreachable: a wall with no opening", function()
      local sealed = make_world { closed_wall = 1 }
      assert.same({ nil, "unreachable" }, { planner.plan(sealed, t0, t1) })
      assert.same({ nil, "unreachable" }, { planner.plan(sealed, cave, t1) })
      assert.same({ nil, "unreachable" }, { planner.plan(sealed, cave, den) })
    end)

    it("unreachable: a middle tile cut in two by a wall", function()
      local w3 = make_world { tiles = 3, sealed_tile = 1 }
      assert.same({ nil, "unreachable" }, { planner.plan(w3, t0, { 46, 8, 8 }) })
      assert.same({ nil, "unreachable" }, { planner.plan(w3, { 46, 8, 8 }, cave) })
      -- the middle tile itself is still reachable from both sides
      assert.is_table(planner.plan(w3, t0, { 18, 12, 14 }))
      assert.is_table(planner.plan(w3, { 46, 8, 8 }, { 30, 12, 14 }))
    end)

    it("unreachable: a hole whose door leads nowhere", function()
      local w2 = make_world { sealed_den = true }
      assert.same({ nil, "unreachable" }, { planner.plan(w2, t0, den) })
      assert.same({ nil, "unreachable" }, { planner.plan(w2, den, t0) })
    end)

    it("door_closed: only a closed door would help", function()
      local w2 = make_world()
      w2:set_door(1, 1, false)
      w2:set_door(1, 2, false)
      assert.same({ nil, "door_closed" }, { planner.plan(w2, t1, cave) })
      assert.same({ nil, "door_closed" }, { planner.plan(w2, cave, t1) })
      assert.same({ nil, "door_closed" }, { planner.plan(w2, cave, den) })
      -- inside the closed cave, moving about still works (one cell)
      assert.equal(1, #planner.plan(w2, cave, { 10, 6, 8 }))
      -- a sealed wall and closed doors: unreachable wins (opening the doors would not help)
      local w3 = make_world { closed_wall = 1 }
      w3:set_door(1, 1, false)
      w3:set_door(1, 2, false)
      assert.same({ nil, "unreachable" }, { planner.plan(w3, t1, cave) })
      assert.same({ nil, "door_closed" }, { planner.plan(w3, t0, cave) })
    end)

    it("door_closed is found by a sliced search too: the all-open probe runs over the steps' budgets", function()
      local w2 = make_world()
      w2:set_door(1, 1, false)
      w2:set_door(1, 2, false)
      for _, ends in ipairs { { t1, cave }, { cave, t1 } } do
        local job = planner.start(w2, ends[1], ends[2], w2.graph:planner())
        local steps, st, reason = 0, "running", nil
        while st == "running" do
          st, reason = job:step(1)
          steps = steps + 1
        end
        assert.same({ nil, "door_closed" }, { st, reason })
        assert.is_true(steps > 2, "the probe ran over " .. steps .. " steps of 1 portal") -- not inside start
        assert.same({ nil, "door_closed" }, { job:step(1) }) -- stays answered
        assert.same({ nil, "door_closed" }, { job:result() })
      end
      local w3 = make_world { closed_wall = 1 }
      w3:set_door(1, 1, false)
      w3:set_door(1, 2, false)
      local job = planner.start(w3, t1, cave, w3.graph:planner())
      local st, reason = job:step(1)
      while st == "running" do st, reason = job:step(1) end
      assert.same({ nil, "unreachable" }, { st, reason })
    end)
  end)

  describe("routes", function()
    it("same cell: one step (tile and hole)", function()
      local r = planner.plan(w, t0, { 12, 13, 14 })
      assert.same({ { kind = "tile", tile = 0, enter = t0, exit = { 12, 13, 14 } } }, r)
      r = planner.plan(w, cave, { 10, 6, 8 })
      assert.same({ { kind = "hole", hole = 1, enter = cave, exit = { 10, 6, 8 } } }, r)
    end)

    it("outside -> outside across a tile face", function()
      local r = planner.plan(w, t0, t1)
      expect_route(w, r, t0, t1)
      assert.equal("tile:0 tile:1", kinds(r))
      assert.equal("portal", r[1].via_kind)
      -- through the wall's opening, on the face x = 16
      assert.equal(16, r[1].exit[1])
      assert.is_true(r[1].exit[2] >= 6 and r[1].exit[2] <= 10 and r[1].exit[3] >= 6 and r[1].exit[3] <= 10)
    end)

    it("outside -> hole: through the nearer door", function()
      local r = planner.plan(w, t1, cave)
      expect_route(w, r, t1, cave)
      assert.equal("tile:1 tile:0 hole:1", kinds(r))
      assert.equal(2, r[2].via) -- door 2, on the cave's +x side, faces the wall opening
      assert.equal(1, r[2].via_hole)
    end)

    it("hole -> outside", function()
      local r = planner.plan(w, cave, t1)
      expect_route(w, r, cave, t1)
      assert.equal("hole:1 tile:0 tile:1", kinds(r))
      assert.equal("door", r[1].via_kind)
      assert.equal(2, r[1].via)
      -- to the tile around the hole: out through the nearer door, then straight on
      r = planner.plan(w, cave, { 2, 8, 14 })
      expect_route(w, r, cave, { 2, 8, 14 })
      assert.equal("hole:1 tile:0", kinds(r))
      assert.equal(1, r[1].via)
    end)

    it("hole -> outside -> hole", function()
      local r = planner.plan(w, cave, den)
      expect_route(w, r, cave, den)
      assert.equal("hole:1 tile:0 tile:1 hole:2", kinds(r))
      r = planner.plan(w, den, cave)
      expect_route(w, r, den, cave)
      assert.equal("hole:2 tile:1 tile:0 hole:1", kinds(r))
    end)

    it("a start tile with the goal hole's door: straight to the door", function()
      local r = planner.plan(w, { 2, 8, 14 }, cave)
      expect_route(w, r, { 2, 8, 14 }, cave)
      assert.equal("tile:0 hole:1", kinds(r))
      assert.equal(1, r[1].via) -- door 1 is on the start's side
    end)

    it("hole -> hole through one tile: door to door", function()
      local wn = make_world { nook = true }
      local nook = { 3, 13, 14 }
      assert.equal("nook", wn:in_hole(nook))
      local r = planner.plan(wn, cave, nook)
      expect_route(wn, r, cave, nook)
      assert.equal("hole:1 tile:0 hole:3", kinds(r))
      assert.equal(1, r[1].via) -- the cave's door 1 is the nearer
      assert.same({ 3.5, 6, 8 }, r[2].enter)
      assert.same({ 3, 13, 11.5 }, r[2].exit)
      r = planner.plan(wn, nook, den)
      expect_route(wn, r, nook, den)
      assert.equal("hole:3 tile:0 tile:1 hole:2", kinds(r))
    end)

    it("a closed door reroutes through the other door", function()
      local w2 = make_world()
      w2:set_door(1, 2, false)
      local r = planner.plan(w2, t1, cave)
      expect_route(w2, r, t1, cave)
      assert.equal("tile:1 tile:0 hole:1", kinds(r))
      assert.equal(1, r[2].via)
      r = planner.plan(w2, cave, den)
      expect_route(w2, r, cave, den)
      assert.equal(1, r[1].via)
      w2:set_door(1, 2, true)
      assert.equal(2, planner.plan(w2, t1, cave)[2].via)
      -- a door whose open flag is absent counts as open
      w2.holes[1].doors[2].open = nil
      assert.equal(2, planner.plan(w2, t1, cave)[2].via)
    end)

    it("three tiles: through the middle tile", function()
      local w3 = make_world { tiles = 3 }
      local g = { 46, 8, 8 }
      local r = planner.plan(w3, t0, g)
      expect_route(w3, r, t0, g)
      assert.equal("tile:0 tile:1 tile:2", kinds(r))
      assert.same({ 1, 2 }, { r[1].to_tile, r[2].to_tile })
      r = planner.plan(w3, g, cave)
      expect_route(w3, r, g, cave)
      assert.equal("tile:2 tile:1 tile:0 hole:1", kinds(r))
      r = planner.plan(w3, den, g)
      expect_route(w3, r, den, g)
      assert.equal("hole:2 tile:1 tile:2", kinds(r))
    end)

    it("returns the Cell-level cost", function()
      local r, cost = planner.plan(w, t0, t1)
      assert.is_table(r)
      assert.is_number(cost)
      assert.is_true(cost >= dist(t0, t1))
    end)
  end)

  it("raises on misuse", function()
    assert.has_error(function() planner.plan(nil, t0, t1) end)
    assert.has_error(function() planner.plan({}, t0, t1) end)
    assert.has_error(function() planner.plan(w, { 1, 2 }, t1) end)
    assert.has_error(function() planner.plan(w, t0, "here") end)
    assert.has_error(function() planner.plan(w, t0, { 1, 0 / 0, 1 }) end)
  end)
end)

---------------------------------------------------------------------------------------------------
-- End to end: bake a small world with octonav.bake and load it with octonav.world (skipped while
-- those modules do not exist).

-- The baked world, and whether octonav.bake / octonav.world are there (spec/support/bakedworld.lua)
local bw = dofile("spec/support/bakedworld.lua")
local has_bake, has_world = bw.has_bake, bw.has_world
-- tmpdir(): a fresh empty directory; rm_rf(dir) (spec/support/files.lua)
local files = dofile("spec/support/files.lua")
local tmpdir = files.tmpdir

describe("octonav.planner end to end", function()
  if not (has_bake and has_world) then
    pending("octonav.bake / octonav.world are not there yet")
    return
  end

  local dir, world
  setup(function()
    dir = tmpdir()
    world = bw.bake_and_load(dir)
  end)

  teardown(function()
    if dir then files.rm_rf(dir) end
  end)

  it("plans the four kinds of route on a baked world", function()
    local t0, t1, cave = { 2, 8, 2 }, { 30, 12, 14 }, { 7, 6, 8 }
    assert.equal("cave", world:in_hole(cave))
    local r = assert(planner.plan(world, t0, t1))
    assert.equal("tile:0 tile:1", kinds(r))
    r = assert(planner.plan(world, t1, cave))
    assert.equal("hole", r[#r].kind)
    r = assert(planner.plan(world, cave, t1))
    assert.equal("hole", r[1].kind)
    assert.equal("tile", r[#r].kind)
    local r2 = assert(world:plan(cave, t1))
    assert.equal(#r, #r2)
  end)

  it("reports reasons on a baked world", function()
    assert.same({ nil, "start_outside" }, { planner.plan(world, { -5, 8, 8 }, { 30, 12, 14 }) })
    assert.same({ nil, "goal_blocked" }, { planner.plan(world, { 2, 8, 2 }, { 16, 1, 1 }) })
    world:set_door(1, 1, false)
    world:set_door(1, 2, false)
    assert.same({ nil, "door_closed" }, { planner.plan(world, { 30, 12, 14 }, { 7, 6, 8 }) })
    world:set_door(1, 1, true)
    world:set_door(1, 2, true)
  end)
end)
