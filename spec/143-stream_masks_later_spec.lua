-- spec/143-stream_masks_later_spec.lua -- issue 31, goal 1 (first move, streamed, cold): a streamer's
-- worker with more loads queued behind a tile hands the tile over after its decode alone and builds its
-- line-of-sight masks after the loads (csrc/stream/streamer_worker.c, streamer_update.c).
--   Before, the worker built every tile's masks beside its decode: on the seed's 512^3 tiles about
--   three quarters of a tile's worker time (decode ~6 ms, masks ~12 ms, thread CPU), so on a cold start
--   (about 50 of the 64 tiles queued at once for 100 navigators' starts) the last navigator's own tile
--   came in 600 frames after the first (seed 23: first-move wait max 597 frames, 89 goals over 60).
--   Now tiles come in 3-4 times sooner; their masks follow once nothing is queued, and until then no
--   line of sight builds them on its own thread (it reads the node table: the same answers).
-- Run: busted --lua=lua5.4 spec/143-stream_masks_later_spec.lua
--
-- The world: spec/105's 8 x 1 x 8 tiles of 32 units (depth 5) over a ground slab with pillars. Tiles are
-- installed only by s:update(), and the worker takes a queued tile only when the update that queued it
-- has returned: so which tiles had loads behind them is known, and the counts asserted do not depend
-- on the machine's speed.
local core = require "octonav.core"
local streamer = require "octonav.streamer"

local pp = dofile("spec/support/pillar_pack.lua")
local stream_wait = dofile("spec/support/stream_wait.lua")
local pack

-- Until the worker has decoded n tiles and reads nothing (5 s at most).
local function decoded(s, n) return stream_wait.decoded(s, n, 5) end

-- Lines of sight over the four tiles (0..1, 0, 0..1): 200 segments of an LCG, each tree:raycast's answer.
local function sights(tree)
  local seed, out = 11, {}
  local function r(m)
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed / 2147483648 * m
  end
  for n = 1, 200 do
    local a, b = { r(64), 1 + r(20), r(64) }, { r(64), 1 + r(20), r(64) }
    out[n] = { tree:raycast(a, b) }
  end
  return out
end

setup(function() pack = pp.bake() end)

teardown(function() pp.cleanup() end)

describe("a streamer's worker going idle after work", function()
  it("gives the allocator's free pages back (glibc: stats.trims), at most once a second", function()
    local s = assert(streamer.new(pack, { load_padding = 1, unload_padding = 2, workers = 1, max_publish = 0 }))
    assert.are.same({ 0, 0 }, { s:stats().trims, s:stats().trim_seconds })
    for i = 0, 3 do s:force_load { i, 0, 0 } end
    s:update(true)
    local t0 = core.clock()
    while s:stats().trims == 0 and core.clock() - t0 < 5 do end
    local st = s:stats()
    local glibc = io.open("/proc/self/maps") ~= nil -- (Linux: glibc here; elsewhere no trim is made)
    if glibc then
      -- (one when idle between the loads and their masks, the next a second later at the earliest)
      assert.is_true(st.trims >= 1 and st.trims <= 1 + (core.clock() - t0), "trims " .. st.trims)
      assert.is_true(st.trim_seconds > 0)
      -- no work since: no trim more (after the one the worker may owe the loads' masks, a second on)
      local t1 = core.clock()
      while core.clock() - t1 < 1.2 do end
      local n = s:stats().trims
      t1 = core.clock()
      while core.clock() - t1 < 1.2 do end
      assert.are.equal(n, s:stats().trims)
    end
    s:close()
  end)
end)

describe("a streamed tile with loads queued behind it", function()
  local TILES = { { 0, 0, 0 }, { 1, 0, 0 }, { 0, 0, 1 }, { 1, 0, 1 } }

  it("is installed before its masks: the last one queued has them, the others get them after the loads", function()
    local s = assert(streamer.new(pack, { load_padding = 1, unload_padding = 2, workers = 1, max_publish = 0 }))
    local tree = s.world.tree
    for _, t in ipairs(TILES) do s:force_load(t) end
    s:update() -- queues the four; the worker starts once it returns
    assert.are.equal(4, decoded(s, 4))
    local ch = s:update() -- installs the four (max_publish 0: no limit)
    assert.are.equal(4, #ch.loaded)
    for _, t in ipairs(TILES) do assert.is_true(s:is_loaded(t)) end
    -- three were decoded with loads behind them: their masks are a worker's job now
    assert.are.equal(1, tree:stats().los_tiles)
    assert.are.equal(1, s:stats().masks_built)
    -- meanwhile a line of sight reads their node tables and builds no masks on this thread
    local before = sights(tree)
    assert.are.equal(1, tree:stats().los_tiles)
    s:update(true) -- waits for the masks too
    local st = tree:stats()
    assert.are.equal(4, st.los_tiles)
    assert.are.equal(4, s:stats().masks_built)
    assert.are.same(before, sights(tree)) -- the masks give the same answers
    s:close()
  end)

  it("a tile alone in the queue comes with its masks, as before", function()
    local s = assert(streamer.new(pack, { load_padding = 1, unload_padding = 2, workers = 1, max_publish = 0 }))
    s:force_load { 3, 0, 3 }
    s:update()
    assert.are.equal(1, decoded(s, 1))
    assert.are.equal(1, #s:update().loaded)
    assert.are.equal(1, s.world.tree:stats().los_tiles)
    s:close()
  end)

  it("masks built for a tile that changed before they came are dropped, not given to its new contents", function()
    local s = assert(streamer.new(pack, { load_padding = 1, unload_padding = 2, workers = 1, max_publish = 0 }))
    local tree = s.world.tree
    for _, t in ipairs(TILES) do s:force_load(t) end
    s:update()
    assert.are.equal(4, decoded(s, 4))
    assert.are.equal(4, #s:update().loaded)
    -- a wall across tile (0,0,0) before its masks come: a line of sight through it is blocked
    local a, b = { 2, 12, 16 }, { 30, 12, 16 }
    assert.is_true(tree:visible(a, b))
    tree:add_box({ 15, 2, 0 }, { 17, 31, 31 })
    s:update(true) -- (no line of sight read the tile since the change: nothing built its masks)
    assert.is_false(tree:visible(a, b)) -- (masks of the tile as read would let it through)
    tree:los_prepare()
    assert.is_false(tree:visible(a, b))
    assert.are.equal(4, tree:stats().los_tiles)
    s:close()
  end)
end)
