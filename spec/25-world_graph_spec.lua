-- spec/25-world_graph_spec.lua -- the world graph of issue 11 (the C tile graphs, octonav.core.route,
-- wired into the bake, the world and the planner) on small baked worlds: routes only through what
-- the start and the goal really reach, no region sealed inside closed terrain in a route, serial and
-- parallel bakes giving the same bytes, and a rebake's new graphs detected by a walking navigator.
-- Run: busted --lua=lua5.4 spec/25-world_graph_spec.lua
--
-- The closed room world: 2 x 1 x 2 tiles of 16 leaves (scale 1), box [0,32] x [0,16] x [0,32]. A wall
-- x in [8, 9] over the full height, z in [0, 24], cuts tile 0 (x, z < 16) in two: the start's room
-- (x < 8) leaves its tile only through its +z face (into tile 2, z >= 16), on the far side from the
-- goal in tile 1 (x >= 16, z < 16). A straight-line join would take the start to tile 0's +x face
-- (the blocks nearest the goal), which the room does not reach inside the tile.
-- The sealed pocket world: 2 x 1 x 1 tiles; a closed hollow box [12,20] x [2,10] x [2,10] (walls 1
-- thick) straddles the face between the tiles: its inside is free space on both tiles' shared face
-- that no free space outside reaches.
local LUA = os.getenv("OCTONAV_LUA") or "lua5.4" -- the Lua under test (tools/runtests.sh)
local octonav = require "octonav"
local files = dofile("spec/support/files.lua")

local has_bake, bake = pcall(require, "octonav.bake")
local has_world, world_mod = pcall(require, "octonav.world")

local function dist(a, b)
  local dx, dy, dz = a[1] - b[1], a[2] - b[2], a[3] - b[3]
  return math.sqrt(dx * dx + dy * dy + dz * dz)
end

local function room_config(dir, weights)
  return {
    range = { min = { 0, 0, 0 }, max = { 32, 16, 32 } }, depth = 4, scale = 1,
    geometry = { { box = { min = { 8, 0, 0 }, max = { 9, 16, 24 } } } },
    connect = { weights = weights },
    output = dir, progress = function() end,
  }
end

local function pocket_config(dir)
  local g = {}
  local function box(a, b) g[#g + 1] = { box = { min = a, max = b } } end
  box({ 12, 2, 2 }, { 20, 3, 10 }); box({ 12, 9, 2 }, { 20, 10, 10 })
  box({ 12, 2, 2 }, { 20, 10, 3 }); box({ 12, 2, 9 }, { 20, 10, 10 })
  box({ 12, 2, 2 }, { 13, 10, 10 }); box({ 19, 2, 2 }, { 20, 10, 10 })
  return {
    range = { min = { 0, 0, 0 }, max = { 32, 16, 16 } }, depth = 4, scale = 1,
    geometry = g, output = dir, progress = function() end,
  }
end

-- Walks a navigator from a to b (moving `speed` toward each waypoint); returns status, walked length.
local function walk(world, a, b, speed)
  local nav = octonav.navigator.new(world)
  nav:go(b)
  local pos, len, status, wp = { a[1], a[2], a[3] }, 0, nil, nil
  for _ = 1, 20000 do
    status, wp = nav:update(pos)
    if status == "arrived" or status == "failed" then break end
    if status == "moving" then
      local d = dist(pos, wp)
      local t = d > 0 and math.min(1, speed / d) or 0
      local np = { pos[1] + (wp[1] - pos[1]) * t, pos[2] + (wp[2] - pos[2]) * t, pos[3] + (wp[3] - pos[3]) * t }
      len = len + dist(pos, np)
      pos = np
    end
  end
  nav:close()
  return status, len, wp
end

describe("world graph", function()
  if not (has_bake and has_world) then
    pending("octonav.bake / octonav.world are not there")
    return
  end

  -- the start joins the portals a local search in its tile reaches: the room's only exit; the
  -- version 1 option `weights` is accepted and makes no difference
  for _, weights in ipairs { "path", "straight" } do
    it("a start in a closed room leaves through the room's only exit (" .. weights .. " weights)", function()
      local dir = files.tmpdir()
      assert(bake.run(room_config(dir, weights)))
      local w = assert(world_mod.load(dir))
      local a, b = { 4, 8, 4 }, { 24, 8, 4 }
      local far = w:tile_of { 4, 8, 20 }
      assert.equal(0, w:tile_of(a))
      assert.equal(1, w:tile_of(b))
      local route = assert(w:plan(a, b))
      -- the route leaves the start's tile through the room's exit (its +z face, into the tile
      -- beyond), never through the +x face nearest the goal, and goes round the wall's end (z > 24)
      assert.is_true(#route >= 3)
      assert.equal(0, route[1].tile)
      assert.equal(far, route[2].tile)
      assert.equal(16, route[1].exit[3])
      assert.is_true(route[1].exit[1] <= 8)
      local round = false
      for i = 1, #route - 1 do
        assert.is_false(route[i].tile == 0 and route[i + 1].tile == 1 and route[i].enter[1] < 8,
          "a step from the room straight into tile 1")
        round = round or route[i].tile == far
      end
      assert.is_true(round)
      -- the first step's exit is reachable from the start without leaving the start's room (the
      -- crossing may lie on the wall's face: the leaf beside it on the room's side)
      local q = octonav.query.new(w.tree)
      local ex = route[1].exit
      local p, info = q:find(a, { math.min(ex[1], 7.5), ex[2], 15.5 })
      assert.truthy(p, "first exit unreachable")
      assert.is_true(info.length <= dist(a, route[1].exit) * 1.5 + 1)
      local _, seam = q:find(a, b)
      q:close()
      local status, len = walk(w, a, b, 0.5)
      assert.equal("arrived", status)
      assert.is_true(len <= 1.3 * seam.length, ("walked %.2f, seamless %.2f"):format(len, seam.length))
      w:close()
      files.rm_rf(dir)
    end)
  end

  it("a region sealed inside closed terrain is never in a route", function()
    local dir = files.tmpdir()
    assert(bake.run(pocket_config(dir)))
    local w = assert(world_mod.load(dir))
    local inside = { 16, 6, 6 }
    assert.equal("free", (w.tree:locate(inside)))
    local function in_pocket(p)
      return p[1] > 12 and p[1] < 20 and p[2] > 2 and p[2] < 10 and p[3] > 2 and p[3] < 10
    end
    -- pairs whose straight line crosses the pocket
    local crossing = { { { 4, 6, 6 }, { 28, 6, 6 } }, { { 4, 12, 6 }, { 28, 4, 12 } },
      { { 14, 13, 1 }, { 18, 1, 14 } } }
    for _, ab in ipairs(crossing) do
      local route = assert(w:plan(ab[1], ab[2]))
      for _, s in ipairs(route) do
        assert.is_false(in_pocket(s.enter), "a step enters the pocket")
        assert.is_false(in_pocket(s.exit), "a step leaves from the pocket")
      end
    end
    -- from inside the pocket nothing outside is reachable; both pocket points are in tile 0 and 1
    local r, why = w:plan(inside, { 4, 6, 6 })
    assert.is_nil(r)
    assert.equal("unreachable", why)
    r, why = w:plan({ 14, 6, 6 }, { 18, 6, 6 })
    if r then -- inside to inside across the tile face: only through the pocket itself
      for _, s in ipairs(r) do
        assert.is_true(in_pocket(s.enter) and in_pocket(s.exit))
      end
    else
      assert.equal("unreachable", why)
    end
    w:close()
    files.rm_rf(dir)
  end)

  it("a navigator replans when the graph of a tile on its route is replaced (a rebake), not when it is re-added unchanged",
    function()
    local dir, dir2 = files.tmpdir(), files.tmpdir()
    local cfg = room_config(dir)
    assert(bake.run(cfg))
    local cfg2 = room_config(dir2)
    cfg2.connect = { bound = 4 } -- the same tiles, other portals: other graph files
    assert(bake.run(cfg2))
    local w = assert(world_mod.load(dir))
    local a, b = { 4, 8, 4 }, { 24, 8, 4 }
    local nav = octonav.navigator.new(w)
    nav:go(b)
    local pos = { a[1], a[2], a[3] }
    local function frames(n)
      local status, wp
      for _ = 1, n do
        status, wp = nav:update(pos)
        if status ~= "moving" then break end
        local d = dist(pos, wp)
        local t = d > 0 and math.min(1, 0.5 / d) or 0
        pos = { pos[1] + (wp[1] - pos[1]) * t, pos[2] + (wp[2] - pos[2]) * t, pos[3] + (wp[3] - pos[3]) * t }
      end
      return status
    end
    assert.equal("moving", frames(5))
    local route = nav:route()
    local goal_tile = route[#route].tile
    assert.equal(1, goal_tile)
    -- the same graph file added again: same identity, no replan
    local id = w.graph_ids[goal_tile]
    assert(w:add_graph(goal_tile))
    assert.equal(id, w.graph_ids[goal_tile])
    frames(1)
    assert.equal(0, nav:stats().replans)
    -- another graph for that tile (a rebake with other portal bounds): the navigator plans again
    files.write(dir .. "/tiles/1_0_0.graph", files.read(dir2 .. "/tiles/1_0_0.graph"))
    assert(w:add_graph(goal_tile))
    assert.are_not.equal(id, w.graph_ids[goal_tile])
    -- the identity is the file's (pack.blob_id), held by the C world graph; read-only; pairs lists
    -- the tiles that hold a graph
    local pack = require "octonav.pack"
    assert.equal(pack.blob_id(files.read(dir .. "/tiles/1_0_0.graph")), w.graph_ids[goal_tile])
    assert.equal(w.graph:tile_id(1, 0, 0), w.graph_ids[goal_tile])
    assert.has_error(function() w.graph_ids[goal_tile] = 7 end, "world.graph_ids is read-only (the world graph's)")
    -- world:graph_tiles() lists them on every Lua; pairs(w.graph_ids) too where __pairs exists (5.2+)
    local listed, held, paired = {}, {}, {}
    for t, v in w:graph_tiles() do listed[#listed + 1] = t .. "=" .. v end
    for t, v in pairs(w.graph_ids) do paired[#paired + 1] = t .. "=" .. v end
    for t = 0, w.grid.count - 1 do
      local i, j, k = require("octonav.tilegrid").coords(w.grid, t)
      if w.graph:has_tile(i, j, k) then held[#held + 1] = t .. "=" .. w.graph:tile_id(i, j, k) end
    end
    assert.is_true(#held >= 2)
    assert.same(held, listed)
    if _VERSION ~= "Lua 5.1" then assert.same(held, paired) else assert.same({}, paired) end
    assert.is_nil(w.graph_ids[-1])
    assert.is_nil(w.graph_ids[w.grid.count])
    frames(1)
    assert.equal(1, nav:stats().replans)
    for _ = 1, 4000 do
      local st = frames(1)
      if st == "arrived" or st == "failed" then break end
    end
    assert.equal("arrived", (nav:status()))
    assert.equal(1, nav:stats().replans)
    nav:close()
    -- a rebake that changes a tile on the route: the tile's graph id changes, the tile's salt too
    local salt = w.tree:tile_salt(1, 0, 0)
    table.insert(cfg.geometry, { box = { min = { 20, 0, 8 }, max = { 22, 16, 10 } } })
    local s = assert(w:rebake({ min = { 20, 0, 8 }, max = { 22, 16, 10 } }, cfg))
    assert.same({ 1 }, s.rebaked)
    assert.are_not.equal(salt, w.tree:tile_salt(1, 0, 0))
    assert.are_not.equal(id, w.graph_ids[1])
    assert.equal("blocked", (w.tree:locate { 21, 8, 9 }))
    w:close()
    files.rm_rf(dir)
    files.rm_rf(dir2)
  end)

  it("bake.job: job n of m bakes the tiles t % m == n; bad n, m raise", function()
    local dir = files.tmpdir()
    local cfg = room_config(dir, "path")
    assert.same({ 2, nil }, { (select(1, bake.job(cfg, 1, 2))), nil })
    assert.is_true(files.exists(dir .. "/tiles/1_0_0.tile") and files.exists(dir .. "/tiles/1_0_1.tile"))
    assert.is_false(files.exists(dir .. "/tiles/0_0_0.tile") or files.exists(dir .. "/tiles/0_0_1.tile"))
    for _, nm in ipairs { { 2, 2 }, { -1, 2 }, { 0, 0 }, { 0.5, 2 } } do
      assert.has_error(function() bake.job(cfg, nm[1], nm[2]) end,
        "octonav.bake.job: n, m: integers with 0 <= n < m expected")
    end
    files.rm_rf(dir)
  end)

  it("tile jobs in any order, in separate processes two at a time, give the serial bake's bytes", function()
    local d1, d2 = files.tmpdir(), files.tmpdir()
    assert(bake.run(room_config(d1, "path")))
    -- the config as a file, for bin/octonav bake CONFIG --tile I,J,K jobs under xargs -P2
    local cfgfile = files.tmpname(".lua")
    files.write(cfgfile, ([[return { range = { min = { 0, 0, 0 }, max = { 32, 16, 32 } }, depth = 4, scale = 1,
      geometry = { { box = { min = { 8, 0, 0 }, max = { 9, 16, 24 } } } }, connect = { weights = "path" },
      output = %q }]]):format(d2))
    local list = files.tmpname()
    files.write(list, "1,0,1\n0,0,1\n1,0,0\n0,0,0\n")
    assert.is_true(os.execute(("xargs -P2 -I{} " .. LUA .. " bin/octonav bake %s --tile {} < %s > /dev/null")
      :format(cfgfile, list)))
    assert.is_true(os.execute((LUA .. " bin/octonav bake %s --link > /dev/null"):format(cfgfile)))
    -- the same as two jobs of a batch array (--job N/2), into a third directory
    local d3 = files.tmpdir()
    files.write(cfgfile, files.read(cfgfile):gsub(("%q"):format(d2):gsub("%p", "%%%0"), ("%q"):format(d3)))
    assert.is_true(os.execute(("printf '0/2\\n1/2\\n' | xargs -P2 -I{} " .. LUA .. " bin/octonav bake %s --job {} > /dev/null")
      :format(cfgfile)))
    assert.is_true(os.execute((LUA .. " bin/octonav bake %s --link > /dev/null"):format(cfgfile)))
    local p = io.popen(("cd %s && find . -type f | sort"):format(d1))
    local names = {}
    for line in p:lines() do names[#names + 1] = line end
    p:close()
    assert.is_true(#names >= 6)
    for _, n in ipairs(names) do
      assert.equal(files.read(d1 .. "/" .. n), files.read(d2 .. "/" .. n), n .. " differs (--tile jobs)")
      assert.equal(files.read(d1 .. "/" .. n), files.read(d3 .. "/" .. n), n .. " differs (--job jobs)")
    end
    p = io.popen(("cd %s && find . -type f | sort"):format(d2))
    local n2 = 0
    for _ in p:lines() do n2 = n2 + 1 end
    p:close()
    assert.equal(#names, n2)
    os.remove(cfgfile)
    os.remove(list)
    files.rm_rf(d1)
    files.rm_rf(d2)
    files.rm_rf(d3)
  end)
end)
