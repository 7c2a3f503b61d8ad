-- spec/21-obstacles_spec.lua -- temporary obstacles (csrc/core/obstacles.c, lua_obstacles.c):
-- tree:add_obstacle / remove_obstacle / obstacles. Removing gives back the same saved bytes, bit for
-- bit, whatever the order; obstacles across tile borders and overlapping one another; salts, prepared
-- graphs, running searches and returned paths see every change.
-- Run: busted --lua=lua5.4 spec/21-obstacles_spec.lua
local octonav = require "octonav"

local function tmpname()
  local p = os.tmpname()
  os.remove(p)
  return p .. ".ontree"
end

-- The saved bytes of a tree (the whole file: every tile's encoding and the header).
local function bytes(t)
  local p = tmpname()
  assert(t:save(p))
  local f = assert(io.open(p, "rb"))
  local s = f:read("*a")
  f:close()
  os.remove(p)
  return s
end

local function tiles_bytes(t)
  local out = {}
  for k = 0, 1 do
    for i = 0, 2 do out[#out + 1] = t:encode_tile(i, 0, k) end
  end
  return out
end

-- A 3 x 1 x 2 world of 16^3-leaf tiles with some walls, half a unit a leaf.
local function world(radius)
  local t = octonav.tree.new { depth = 4, tiles = { 3, 1, 2 }, scale = 0.5, radius = radius or 0 }
  t:add_box({ 3, 0, 0 }, { 3.5, 6, 12 })
  t:add_box({ 10, 0, 5 }, { 20, 2, 6 })
  t:add_box({ 15.5, 3, 7.75 }, { 17, 5, 9 })
  return t
end

local OBSTACLES = {
  { min = { 6, 0, 6 }, max = { 10, 3, 10 } },       -- across the x = 8 and z = 8 tile borders
  { min = { 7.25, 1, 2 }, max = { 9, 8, 7 } },      -- overlapping the first, across x = 8
  { min = { 15, 2.5, 7 }, max = { 16.75, 4, 8.5 } }, -- overlapping a wall, across x = 16 and z = 8
}

local PERMS = { { 1, 2, 3 }, { 1, 3, 2 }, { 2, 1, 3 }, { 2, 3, 1 }, { 3, 1, 2 }, { 3, 2, 1 } }

describe("temporary obstacles", function()
  for _, radius in ipairs { 0, 0.3 } do
    it("added then removed in any order: the same bytes, bit for bit (radius " .. radius .. ")", function()
      for _, perm in ipairs(PERMS) do
        local t = world(radius)
        t:prepare()
        local before, tiles0 = bytes(t), tiles_bytes(t)
        local ids = {}
        for k, box in ipairs(OBSTACLES) do
          ids[k] = assert(t:add_obstacle(box))
          assert.equal(k, ids[k])
        end
        assert.are_not.equal(before, bytes(t))
        assert.equal(6, t:stats().tiles_prepared) -- prepared again where they changed
        for step, k in ipairs(perm) do
          assert.is_true(t:remove_obstacle(ids[k]))
          -- the same as a world with only the obstacles left, added in their order
          local want = world(radius)
          for j, box in ipairs(OBSTACLES) do
            local left = true
            for m = 1, step do left = left and perm[m] ~= j end
            if left then want:add_obstacle(box) end
          end
          assert.equal(bytes(want), bytes(t))
        end
        assert.equal(before, bytes(t))
        assert.same(tiles0, tiles_bytes(t))
        assert.same({}, t:obstacles())
        assert.equal(6, t:stats().tiles_prepared)
      end
    end)
  end

  it("blocks its box; obstacles() lists them in order; unknown ids answer nil, reason", function()
    local t = world()
    assert.equal("free", t:locate { 8, 1.5, 8 })
    local a = t:add_obstacle(OBSTACLES[1])
    local b = t:add_obstacle(OBSTACLES[3])
    assert.equal("blocked", t:locate { 8, 1.5, 8 })
    assert.same({ { id = a, min = { 6, 0, 6 }, max = { 10, 3, 10 } }, { id = b, min = { 15, 2.5, 7 }, max = { 16.75, 4, 8.5 } } },
      t:obstacles())
    assert.is_true(t:remove_obstacle(a))
    assert.equal("free", t:locate { 8, 1.5, 8 })
    local ok, err = t:remove_obstacle(a)
    assert.is_nil(ok)
    assert.equal("no obstacle 1 in place", err)
    assert.equal(3, t:add_obstacle(OBSTACLES[1])) -- ids are not reused
  end)

  it("salts move, running searches fail as changed, returned paths turn invalid", function()
    local t = world()
    local q = octonav.query.new(t)
    local a, b = { 1, 1, 1 }, { 22, 1, 14 }
    local path = assert(q:find(a, b))
    assert.is_true(path:is_valid())
    local s0 = t:tile_salt(1, 0, 0)
    local id = t:add_obstacle(OBSTACLES[1])
    assert.is_true(t:tile_salt(1, 0, 0) ~= s0)
    assert.is_false(path:is_valid())
    local p2 = assert(q:find(a, b))
    assert.equal("running", q:start(a, b, { direct = false }))
    assert.equal("running", q:step(1))
    t:remove_obstacle(id)
    assert.equal("failed", q:step(100))
    local _, info = q:result()
    assert.equal("tree_changed", info.reason)
    assert.is_false(p2:is_valid())
  end)

  it("bad arguments raise errors naming them", function()
    local t = world()
    local function msg(f)
      local ok, err = pcall(f)
      assert.is_false(ok)
      return (tostring(err):gsub("^[^:]*:%d+: ", ""))
    end
    assert.equal("tree:add_obstacle: argument #1: table expected, got no value", msg(function() t:add_obstacle() end))
    assert.equal("tree:add_obstacle: unknown option 'size'",
      msg(function() t:add_obstacle { min = { 0, 0, 0 }, max = { 1, 1, 1 }, size = 2 } end))
    assert.equal("tree:add_obstacle: max: point {x, y, z} expected, got nil",
      msg(function() t:add_obstacle { min = { 0, 0, 0 } } end))
    assert.equal("tree:add_obstacle: argument #1: min must not exceed max on any axis",
      msg(function() t:add_obstacle { min = { 2, 0, 0 }, max = { 1, 1, 1 } } end))
    assert.equal("tree:remove_obstacle: argument #1: number expected, got string",
      msg(function() t:remove_obstacle("x") end))
    local ok, err = t:remove_obstacle(0)
    assert.is_nil(ok)
    assert.equal("no obstacle 0 in place", err)
    assert.same({}, t:obstacles())
  end)
end)

-- The C streamer (octonav.core.streamer) keeps the tree's obstacles across unload and load: a tile it
-- installs gets the obstacles registered on the tree that overlap it, and removing one gives back the
-- freshly loaded tile's bytes.
describe("temporary obstacles under the C streamer", function()
  local files = dofile("spec/support/files.lua")
  local core = octonav.core
  local dir
  local PARAMS = { depth = 3, tiles = { 3, 1, 1 }, scale = 1 }

  -- 3 x 1 x 1 tiles of 8^3 leaves on disk: a wall across the middle tile with one gap, at z 0..2
  local function baked()
    local t = octonav.tree.new(PARAMS)
    t:add_box({ 11, 0, 2 }, { 13, 8, 8 })
    return t
  end

  setup(function()
    dir = files.tmpdir()
    assert(core.mkdir(dir .. "/tiles"))
    local t = baked()
    for i = 0, 2 do
      files.write(("%s/tiles/%d_0_0.tile"):format(dir, i), require("octonav.pack").tile_file(i, 0, 0, t:encode_tile(i, 0, 0)))
    end
    t:close()
  end)
  teardown(function() files.rm_rf(dir) end)

  local GAP = { min = { 10, 0, 0 }, max = { 14, 8, 2 } } -- closes the wall's gap
  local A, B = { 2.5, 4.5, 6.5 }, { 21.5, 4.5, 6.5 }

  -- the same search on an in-memory tree holding the baked tiles and the boxes given as obstacles
  local function reference(boxes, prepare)
    local t = baked()
    for _, b in ipairs(boxes) do t:add_obstacle(b) end
    if prepare then t:prepare() end
    local p, info = octonav.query.new(t):find(A, B)
    return t, p, info
  end

  for _, workers in ipairs { 0, 2 } do
    for _, prepare in ipairs { false, true } do
      local what = ("workers %d, prepare %s"):format(workers, tostring(prepare))

      it("an obstacle still blocks after its tile is streamed out and in (" .. what .. ")", function()
        local tree = octonav.tree.new(PARAMS)
        local s = core.streamer.new(tree, dir, { load_padding = 0, unload_padding = 1, workers = workers,
          prepare = prepare })
        for i = 0, 2 do s:force_load { i, 0, 0 } end
        s:update(true)
        local loaded = tree:encode_tile(1, 0, 0)
        local q = octonav.query.new(tree)
        local open = assert(q:find(A, B)) -- through the gap
        local id = assert(tree:add_obstacle(GAP))
        local blocked = tree:encode_tile(1, 0, 0)
        local _, info = q:find(A, B)
        assert.equal("unreachable", info.reason)
        -- out and in again
        s:force_unload { 1, 0, 0 }
        s:update(true)
        assert.is_false(s:is_loaded { 1, 0, 0 })
        s:force_load { 1, 0, 0 }
        s:update(true)
        assert.is_true(s:is_loaded { 1, 0, 0 })
        assert.equal(blocked, tree:encode_tile(1, 0, 0))
        _, info = q:find(A, B)
        assert.equal("unreachable", info.reason)
        if prepare then -- prepared again with the obstacle in, as tree:prepare would
          local ref = reference({ GAP }, true)
          assert.same(ref:boxes(1, 0, 0), tree:boxes(1, 0, 0))
          assert.equal(3, tree:stats().tiles_prepared)
          ref:close()
        end
        -- removing it gives back the loaded tile's bytes, and the path through the gap
        assert.is_true(tree:remove_obstacle(id))
        assert.equal(loaded, tree:encode_tile(1, 0, 0))
        local again, info2 = assert(q:find(A, B))
        assert.same(open, again)
        local _, _, rinfo = reference({}, prepare)
        assert.equal(rinfo.length, info2.length)
        q:close()
        s:close()
        tree:close()
      end)

      it("an obstacle added while its tile is out applies when the tile comes in (" .. what .. ")", function()
        local tree = octonav.tree.new(PARAMS)
        local s = core.streamer.new(tree, dir, { load_padding = 0, unload_padding = 1, workers = workers,
          prepare = prepare })
        s:force_load { 0, 0, 0 }
        s:force_load { 2, 0, 0 }
        s:update(true)
        -- a second obstacle over the start's tile makes the path reroute (no wall there)
        local SIDE = { min = { 3, 0, 4 }, max = { 5, 8, 8 } }
        local id1 = assert(tree:add_obstacle(GAP))
        local id2 = assert(tree:add_obstacle(SIDE))
        s:force_load { 1, 0, 0 }
        s:update(true)
        local ref, _, rinfo = reference({ GAP, SIDE }, prepare)
        for i = 0, 2 do assert.equal(ref:encode_tile(i, 0, 0), tree:encode_tile(i, 0, 0)) end
        local q = octonav.query.new(tree)
        local _, info = q:find(A, B)
        assert.equal("unreachable", info.reason)
        assert.equal("unreachable", rinfo.reason)
        -- the gap opens: the path reroutes round SIDE exactly as on the reference
        assert.is_true(tree:remove_obstacle(id1))
        ref:close()
        local ref2, rp2, rinfo2 = reference({ SIDE }, prepare)
        for i = 0, 2 do assert.equal(ref2:encode_tile(i, 0, 0), tree:encode_tile(i, 0, 0)) end
        local p2, info2 = assert(q:find(A, B))
        assert.same(rp2, p2)
        assert.equal(rinfo2.length, info2.length)
        assert.is_true(tree:remove_obstacle(id2))
        local base = baked()
        for i = 0, 2 do assert.equal(base:encode_tile(i, 0, 0), tree:encode_tile(i, 0, 0)) end
        base:close()
        ref2:close()
        q:close()
        s:close()
        tree:close()
      end)
    end
  end
end)
