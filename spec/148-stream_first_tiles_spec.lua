-- spec/148-stream_first_tiles_spec.lua -- issue 31, goal 1 (streamed: every first move within 60 frames):
-- the tile a navigator stands in, waiting for its first move, is installed before the other tiles
-- the streamer has read, and the navigator moves at once while its goal's tile is still unloaded.
--   Before, the worker's queue put every locked or pinned tile first (a navigator locks its start's
--   and its goal's tiles; a game forces tiles) and the finished loads an update installed
--   (max_publish, 1 by default) were the locked ones in the order the worker handed them back, the
--   last read first: so a navigator's own tile could wait behind goals' and forced tiles. On the
--   seed's world streamed cold (100 navigators in ~50 tiles, one worker) the first moves are what the
--   start tiles' arrival allows: the last start tile is the last first move.
--   Now the line (csrc/stream/streamer_update.c, queue_key) is: tiles agents stand in, the most agents
--   first; then the other locked or pinned tiles; then the rest; each nearest an agent first; and an
--   update installs finished loads in that order whatever order the worker read them in.
-- Run: busted --lua=lua5.4 spec/148-stream_first_tiles_spec.lua
--
-- The world: spec/42's 3 x 1 x 3 tiles of 128 leaves (boxpack.bake_walled), streamed with padding 0
-- (a tile loads for an agent in it, a lock or a pin), one worker, max_publish 1. The budget's clock is
-- the spec's own (it never advances: frames are counted, not timed). The worker's reads are waited
-- for (stats: every queued load decoded) before the updates that install them, so what each update
-- installs does not depend on the machine's speed.
local octonav = require "octonav"
local navigator = require "octonav.navigator"
local world_mod = require "octonav.world"

local boxpack = dofile("spec/support/boxpack.lua")
local stream_wait = dofile("spec/support/stream_wait.lua")
local rng = dofile("spec/support/prng.lua").lcg

local pack

setup(function() pack = boxpack.bake_walled() end)
teardown(boxpack.cleanup)

-- Until the worker has decoded n tiles and reads nothing (10 s at most).
local function decoded(s, n) return stream_wait.decoded(s, n, 10) end

local function key(t) return ("%d,%d,%d"):format(t[1], t[2], t[3]) end

describe("a streamed navigator waiting for its first move", function()
  it("gets its own tile installed first, and moves while its goal's tile is unloaded", function()
    local world = assert(world_mod.load(pack))
    local start = boxpack.free_in(world.tree, rng(5), 0, 0) -- tile (0,0,0)
    -- (drawn until the lead point, 16 leaves toward the goal, lies in the start's tile too)
    local r = rng(9)
    while start[1] > 100 or start[3] > 100 do start = boxpack.free_in(world.tree, r, 0, 0) end
    local goal = { 330, 20, 330 } -- tile (2,0,2)
    local s = octonav.streamer.new(world, { workers = 1, load_padding = 0, unload_padding = 1, max_publish = 1 })
    local budget = navigator.budget { ms = 2, clock = function() return 0 end }
    -- a game's pinned tiles, far from every agent
    s:force_load({ 2, 0, 0 })
    s:force_load({ 2, 0, 1 })
    local nav = navigator.new(world, { budget = budget, streamer = s })
    nav:go(goal)
    local navs, pos, st, wp = { nav }, { { start[1], start[2], start[3] } }, {}, {}
    -- its first update adds its agent and locks the start's and the goal's tiles; it holds
    budget:update(navs, pos, st, wp)
    assert.are.equal("planning", st[1])
    -- the update queues the four; the worker reads them all before the next updates install them
    s:update()
    assert.are.equal(4, decoded(s, 4))
    local order, first_move = {}, nil
    for f = 1, 6 do
      local ch = s:update()
      for _, t in ipairs(ch.loaded) do order[#order + 1] = key(t) end
      budget:update(navs, pos, st, wp)
      if not first_move and st[1] == "moving" and wp[1] then
        first_move = f
        assert.is_false(s:is_loaded({ 2, 0, 2 }), "the goal's tile came before the first move")
      end
    end
    -- one tile an update: the navigator's own first (before: a pinned one, the last the worker read),
    -- then the pinned and locked ones by tile. (A tile the moving agent queues meanwhile, as (0,0,1),
    -- may follow them when the worker reads it within the six frames: the first four are the claim.)
    assert.is_true(#order >= 4, "installs: " .. table.concat(order, " "))
    assert.are.same({ "0,0,0", "2,0,0", "2,0,1", "2,0,2" }, { order[1], order[2], order[3], order[4] })
    assert.are.equal(1, first_move) -- (its lead move, the update its tile came in)
    nav:close()
    s:close()
  end)
end)
