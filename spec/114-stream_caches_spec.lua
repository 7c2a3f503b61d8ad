-- spec/114-stream_caches_spec.lua -- a streamed world's per-tile caches come from the streamer's workers
-- (issue 31, goal 1: "every per-tile cache built on the streamer's workers or sliced"), and an update's
-- installs and unloads are bounded by time as well as by count (streamer option publish_ms).
-- Run: busted --lua=lua5.4 spec/114-stream_caches_spec.lua
--
-- A worker that decodes a tile also builds its line-of-sight masks and its cell adjacency (the pure
-- on_celladj_build: csrc/stream/streamer_worker.c); update() gives them to the tile it installs, so a
-- search or a line of sight on the caller's thread never builds one (streamer stats masks_built and
-- adjacency_built count them; the tree's adjacency_tiles / los_tiles say what the tiles hold).
local octonav = require "octonav"
local bake = require "octonav.bake"
local world = require "octonav.world"
local streamer = require "octonav.streamer"
local core = require "octonav.core"
local files = dofile("spec/support/files.lua")

local tmp = files.tracker(files.rm_rf)

-- 4 x 1 x 4 tiles of 16^3 leaves: a floor, a wall with a gap, pillars
local pack
local function baked()
  local dir = tmp.dir()
  local geometry = { { box = { min = { 0, 0, 0 }, max = { 64, 1, 64 } } },
    { box = { min = { 22, 1, 0 }, max = { 26, 14, 50 } } } }
  for i = 0, 6 do
    geometry[#geometry + 1] = { box = { min = { 4 + 9 * i, 1, 20 + i }, max = { 6 + 9 * i, 9, 23 + i } } }
  end
  assert(bake({ range = { min = { 0, 0, 0 }, max = { 64, 16, 64 } }, depth = 4, scale = 1,
    geometry = geometry, output = dir, progress = function() end }))
  return dir
end

local function path_text(p)
  local t = {}
  for i = 1, #p do t[i] = ("%.9g,%.9g,%.9g"):format(p[i][1], p[i][2], p[i][3]) end
  return table.concat(t, " ")
end

local function load_all(s)
  for i = 0, 15 do s:force_load(i) end
  return s:update(true)
end

describe("a streamed world's caches", function()
  setup(function() pack = baked() end)
  teardown(tmp.cleanup)

  for _, workers in ipairs { 1, 0 } do
    it(("come with each tile, built beside its decode (workers = %d): the caller builds none"):format(workers),
      function()
        local whole = assert(world.load(pack)) -- (world.load builds every tile's adjacency itself)
        local ws = whole.tree:stats()
        assert.are.equal(16, ws.adjacency_tiles)
        local s = assert(streamer.new(pack, { load_padding = 0, unload_padding = 1, workers = workers }))
        local tree = s.world.tree
        local ch = load_all(s)
        assert.are.equal(16, #ch.loaded)
        local st, ts = s:stats(), tree:stats()
        assert.are.equal(16, st.adjacency_built)
        assert.are.equal(16, st.masks_built)
        assert.are.equal(16, ts.adjacency_tiles)
        assert.are.equal(16, ts.los_tiles)
        -- the same adjacencies as the full load's, byte for byte
        assert.are.equal(ws.adjacency_bytes, ts.adjacency_bytes)
        -- searches and lines of sight on the caller's thread read them: nothing more is built
        local a, b = { 2, 4, 4 }, { 60, 4, 62 }
        local p1, i1 = octonav.query.new(tree):find(a, b)
        assert.is_truthy(p1, i1 and i1.reason)
        assert.is_true(tree:visible({ 2, 4, 2 }, { 62, 4, 2 }) ~= nil)
        local after = tree:stats()
        assert.are.same({ 16, ts.adjacency_bytes, 16, ts.los_bytes },
          { after.adjacency_tiles, after.adjacency_bytes, after.los_tiles, after.los_bytes })
        -- and give the tree walk's paths
        local p0 = assert(octonav.query.new(whole.tree):find(a, b))
        assert.are.equal(path_text(p0), path_text(p1))
        whole.tree:adjacency(false)
        assert.are.equal(path_text(p0), path_text(assert(octonav.query.new(whole.tree):find(a, b))))
        -- an edit drops its tile's (a search then walks the tree or builds one itself, as before)
        tree:add_box({ 40, 2, 40 }, { 41, 3, 41 })
        assert.are.equal(15, tree:stats().adjacency_tiles)
        -- adjacencies off: the tiles loaded from then on come without
        for i = 0, 15 do s:force_unload(i) end
        s:update(true)
        tree:adjacency(false)
        load_all(s)
        assert.are.same({ 16, 0, 32 }, { s:stats().adjacency_built, tree:stats().adjacency_tiles, s:stats().masks_built })
        s:close()
        whole:close()
      end)
  end

  it("trim_on_free: a boolean (false: with workers the allocator's trims are the workers'; test_stream_trim.c)",
    function()
      local ok, err = pcall(streamer.new, pack, { load_padding = 0, unload_padding = 1, trim_on_free = 1 })
      assert.is_false(ok)
      assert.matches("option 'trim_on_free': boolean expected, got number", err, 1, true)
      local s = assert(streamer.new(pack, { load_padding = 0, unload_padding = 1, workers = 1, trim_on_free = true }))
      s:add_agent { 32, 4, 32 }
      assert.is_true(s:update(true) ~= nil)
      assert.are.equal(4, s:stats().loaded) -- (the 4 tiles touching the agent's point, padding 0)
      s:close()
    end)

  it("an update's installs and unloads stop at publish_ms of the caller's time (the first always done)", function()
    assert.has_error(function() streamer.new(pack, { load_padding = 0, unload_padding = 1, publish_ms = -1 }) end,
      "octonav.streamer.new: publish_ms must be >= 0")
    for _, bad in ipairs { 0 / 0, math.huge } do
      assert.has_error(function() streamer.new(pack, { load_padding = 0, unload_padding = 1, publish_ms = bad }) end)
    end
    -- no count limits, a time bound no install fits in: one install an update, the rest deferred
    local s = assert(streamer.new(pack, { load_padding = 100, unload_padding = 200, workers = 1, max_publish = 0,
      max_unloads = 0, publish_ms = 1e-9 }))
    s.world.tree:los_masks(false) -- (cheaper decodes: the bound is about the caller's side)
    local id = s:add_agent { 32, 4, 32 }
    assert.are.equal(0, #s:update().loaded) -- queues the 16 tiles
    local t0 = core.clock()
    while s.core:stats().reading > 0 and core.clock() - t0 < 20 do end -- every tile read, none installed
    assert.are.equal(0, s.core:stats().reading)
    local counts = {}
    for u = 1, 16 do
      local ch = s:update()
      counts[u] = #ch.loaded .. "/" .. #ch.unloaded
      assert.are.equal(16 - u, s:stats().deferred)
    end
    assert.are.same({ "1/0", "1/0", "1/0", "1/0", "1/0", "1/0", "1/0", "1/0", "1/0", "1/0", "1/0", "1/0", "1/0",
      "1/0", "1/0", "1/0" }, counts)
    assert.are.equal(16, s:stats().loaded)
    -- the agent leaves: 16 tiles to unload, one an update
    s:move_agent(id, { 1000, 4, 1000 })
    for u = 1, 16 do
      local ch = s:update()
      counts[u] = #ch.loaded .. "/" .. #ch.unloaded
      assert.are.equal(16 - u, s:stats().loaded)
      assert.are.equal(16 - u, s:stats().deferred)
    end
    assert.are.same({ "0/1", "0/1", "0/1", "0/1", "0/1", "0/1", "0/1", "0/1", "0/1", "0/1", "0/1", "0/1", "0/1",
      "0/1", "0/1", "0/1" }, counts)
    -- update(true) does it all
    s:move_agent(id, { 32, 4, 32 })
    assert.are.equal(16, #s:update(true).loaded)
    s:close()
    -- publish_ms 0 (the default): no time bound, one update installs everything read
    s = assert(streamer.new(pack, { load_padding = 0, unload_padding = 1, workers = 1, max_publish = 0 }))
    s.world.tree:los_masks(false)
    for i = 0, 15 do s:force_load(i) end
    assert.are.equal(0, #s:update().loaded) -- queues the 16 tiles
    t0 = core.clock()
    while s.core:stats().reading > 0 and core.clock() - t0 < 20 do end
    assert.are.equal(16, #s:update().loaded)
    assert.are.equal(0, s:stats().deferred)
    s:close()
  end)
end)
