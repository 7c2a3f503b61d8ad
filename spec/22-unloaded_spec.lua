-- spec/22-unloaded_spec.lua -- unloaded is not blocked: on a tree whose tiles stream in, a point in a
-- tile not loaded locates as "unloaded" with its tile, a search with its start or goal there fails
-- with reason "unloaded" and the tile (not start_blocked / goal_blocked), a search that must cross an
-- unloaded tile answers "loading" with that tile, and once loaded every answer is the fully loaded
-- tree's, to the bit.
-- Run: busted --lua=lua5.4 spec/22-unloaded_spec.lua
--
-- The scene: 2 x 1 x 2 tiles of 8 leaves (scale 1, origin 0), a wall x in [7, 9], z in [0, 8] over the
-- whole height closing the border of tiles (0,0,0) and (1,0,0): from A in the first to B in the
-- second the way runs round the wall's end, through tiles (0,0,1) and (1,0,1).
local octonav = require "octonav"
local core = octonav.core
local pack = require "octonav.pack"
local files = dofile("spec/support/files.lua")

local PARAMS = { tiles = { 2, 1, 2 }, depth = 3, scale = 1, origin = { 0, 0, 0 } }
local A, B, WALL = { 3.5, 4.5, 4.5 }, { 12.5, 4.5, 4.5 }, { 7.5, 4.5, 4.5 }

local function scene()
  local t = octonav.tree.new(PARAMS)
  t:add_box({ 7, 0, 0 }, { 9, 8, 8 })
  return t
end

describe("unloaded tiles", function()
  local dir, ref, tree, s, q, rq
  local tiles = { { 0, 0, 0 }, { 1, 0, 0 }, { 0, 0, 1 }, { 1, 0, 1 } }

  setup(function()
    dir = files.tmpdir()
    ref = scene()
    assert(core.mkdir(dir .. "/tiles"))
    for _, ijk in ipairs(tiles) do
      local i, j, k = ijk[1], ijk[2], ijk[3]
      files.write(("%s/tiles/%d_%d_%d.tile"):format(dir, i, j, k), pack.tile_file(i, j, k, ref:encode_tile(i, j, k)))
    end
    tree = octonav.tree.new(PARAMS)
    s = core.streamer.new(tree, dir, { load_padding = 1, unload_padding = 2, workers = 0 }) -- every tile unloaded
    q, rq = octonav.query.new(tree), octonav.query.new(ref)
  end)
  teardown(function()
    q:close()
    rq:close()
    s:close()
    tree:close()
    ref:close()
    files.rm_rf(dir)
  end)

  -- load exactly the tiles listed (the others unloaded)
  local function only(list)
    for _, ijk in ipairs(tiles) do s:force_unload(ijk) end
    for _, ijk in ipairs(list) do s:force_load(ijk) end
    s:update(true)
    for _, ijk in ipairs(tiles) do
      local want = false
      for _, l in ipairs(list) do
        if l[1] == ijk[1] and l[2] == ijk[2] and l[3] == ijk[3] then want = true end
      end
      assert.equal(want, s:is_loaded(ijk))
    end
  end

  it("locate: 'unloaded' and the tile; blocked and free where loaded, as on the loaded tree", function()
    only {}
    assert.same({ "unloaded", { 0, 0, 0 } }, { tree:locate(A) })
    assert.same({ "unloaded", { 1, 0, 0 } }, { tree:locate(B) })
    assert.same({ "unloaded", { 0, 0, 0 } }, { tree:locate(WALL) }) -- blocked there, but not known yet
    assert.same({ nil, "outside" }, { tree:locate { -1, 4, 4 } })
    only { { 0, 0, 0 } }
    assert.equal("blocked", (tree:locate(WALL)))
    assert.same({ ref:locate(A) }, { tree:locate(A) })
    assert.equal("free", (tree:locate(A)))
    assert.same({ "unloaded", { 1, 0, 0 } }, { tree:locate(B) })
  end)

  it("find: an end in an unloaded tile fails 'unloaded' with the tile", function()
    only { { 0, 0, 0 }, { 0, 0, 1 }, { 1, 0, 1 } }
    local path, info = q:find(A, B)
    assert.is_nil(path)
    assert.equal("failed", info.status)
    assert.equal("unloaded", info.reason)
    assert.same({ 1, 0, 0 }, info.tile)
    assert.is_nil(info.nearest)
    path, info = q:find(B, A) -- the start's tile
    assert.is_nil(path)
    assert.equal("unloaded", info.reason)
    assert.same({ 1, 0, 0 }, info.tile)
    -- a blocked end in a loaded tile is still blocked
    path, info = q:find(WALL, A)
    assert.is_nil(path)
    assert.equal("start_blocked", info.reason)
    assert.is_nil(info.tile)
  end)

  it("start / result: the same answer from a sliced search", function()
    only { { 1, 0, 0 } }
    assert.equal("failed", q:start(A, B))
    local path, info = q:result()
    assert.is_nil(path)
    assert.same({ "failed", "unloaded", { 0, 0, 0 } }, { info.status, info.reason, info.tile })
    assert.equal("failed", q:start(B, A)) -- the goal's tile
    path, info = q:result()
    assert.is_nil(path)
    assert.same({ "failed", "unloaded", { 0, 0, 0 } }, { info.status, info.reason, info.tile })
  end)

  it("a search that must cross an unloaded tile answers 'loading' with it, and goes on once it is in", function()
    only { { 0, 0, 0 }, { 1, 0, 0 }, { 1, 0, 1 } }
    local path, info = q:find(A, B)
    assert.is_nil(path)
    assert.same({ "failed", "loading", { 0, 0, 1 } }, { info.status, info.reason, info.tile })
    assert.equal("running", q:start(A, B))
    assert.same({ "loading", { 0, 0, 1 } }, { q:step(1000) })
    s:force_load { 0, 0, 1 }
    s:update(true)
    assert.equal("found", q:step(1000))
    local p1, i1 = q:result()
    local p2, i2 = rq:find(A, B)
    assert.same(p2, p1)
    assert.equal(i2.length, i1.length)
  end)

  it("every tile loaded: the answers of the tree that never streamed", function()
    only(tiles)
    for _, p in ipairs { A, B, WALL, { 8.5, 4.5, 12.5 }, { 0, 0, 0 }, { 15.99, 7.99, 15.99 } } do
      assert.same({ ref:locate(p) }, { tree:locate(p) })
    end
    local p1, i1 = q:find(A, B)
    local p2, i2 = rq:find(A, B)
    assert.is_table(p1)
    assert.same(p2, p1)
    assert.equal(i2.length, i1.length)
    assert.equal(i2.expansions, i1.expansions)
    assert.is_true(i1.length >= 2 + 2 * math.sqrt(2 * 3.5 * 3.5) - 1e-9) -- round the wall's end
  end)
end)
