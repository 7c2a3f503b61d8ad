-- spec/166-stream_installs_spec.lua -- issue 31, goal 1 (streamed: no navigator waits more than 1 s of
-- frames for its first move): a streamer installs up to four finished tiles an update by default, so a
-- cold start's first moves follow the worker's pace, not one tile a frame.
--   Before, an update installed one finished tile at most (max_publish 1 by default). On the seed's
--   world streamed cold at 1,000 navigators (64 tiles, every one some navigator's start tile, one
--   worker) the tiles came in one a frame until frame 64 however fast the worker read them (quiet: all
--   64 read by frame ~25), and the last navigators moved at frame 63-66 (goal: 60). Now max_publish is
--   4 by default (csrc/lua/lua_streamer.c, DEFAULT_MAX_PUBLISH): an install is ~0.08 ms of the caller's
--   thread, one worker reads 2-3 such tiles a frame at 60 Hz.
-- Run: busted --lua=lua5.4 spec/166-stream_installs_spec.lua
--
-- The world: spec/42's 3 x 1 x 3 tiles of 128 leaves (boxpack.bake_walled), streamed with padding 0
-- (a tile loads for an agent in it, a lock or a pin), one worker, the other options the defaults. The
-- worker's reads are waited for (stats: every queued load decoded) before the updates that install
-- them, and the budget's clock is the spec's own (it never advances: frames are counted, not timed), so
-- what each update installs and when each navigator moves do not depend on the machine's speed.
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

local function keys(list)
  local out = {}
  for i, t in ipairs(list) do out[i] = key(t) end
  return out
end

-- The nine tiles of the 3 x 3 world, each with its own count of agents (9 in (0,0,0) .. 1 in (2,0,2)).
local TILES = { { 0, 0 }, { 1, 0 }, { 2, 0 }, { 0, 1 }, { 1, 1 }, { 2, 1 }, { 0, 2 }, { 1, 2 }, { 2, 2 } }

describe("a streamer's installs", function()
  it("are four finished tiles an update by default, the tiles with the most agents first", function()
    local s = assert(octonav.streamer.new(pack, { workers = 1, load_padding = 0, unload_padding = 1 }))
    for n, t in ipairs(TILES) do
      for a = 1, 10 - n do s:add_agent { t[1] * 128 + 20 + 8 * a, 50, t[2] * 128 + 64 } end
    end
    s:update() -- queues the nine
    assert.are.equal(9, decoded(s, 9))
    local got = {}
    for u = 1, 4 do got[u] = keys(s:update().loaded) end
    assert.are.same({
      { "0,0,0", "1,0,0", "2,0,0", "0,0,1" }, -- 9, 8, 7 and 6 agents
      { "1,0,1", "2,0,1", "0,0,2", "1,0,2" }, -- 5, 4, 3 and 2
      { "2,0,2" },
      {},
    }, got)
    assert.are.equal(9, s:stats().loaded)
    -- an explicit max_publish still bounds them (1: the default before)
    local s1 = assert(octonav.streamer.new(pack, { workers = 1, load_padding = 0, unload_padding = 1, max_publish = 1 }))
    s1:add_agent { 64, 50, 64 }
    s1:add_agent { 192, 50, 64 }
    s1:update()
    assert.are.equal(2, decoded(s1, 2))
    assert.are.equal(1, #s1:update().loaded)
    assert.are.equal(1, #s1:update().loaded)
    s1:close()
    s:close()
  end)

  it("let navigators waiting in eight tiles all take their first move within two frames", function()
    local world = assert(world_mod.load(pack))
    local goal = { 330, 20, 330 } -- tile (2,0,2): no agent stands there (a locked tile, after the eight)
    local navs, pos, st, wp = {}, {}, {}, {}
    local r = rng(7)
    -- The lead point 16 leaves from p toward the goal (navigator.lua's lead move under a budget).
    local function lead_point(p)
      local d = { goal[1] - p[1], goal[2] - p[2], goal[3] - p[3] }
      local l = math.sqrt(d[1] ^ 2 + d[2] ^ 2 + d[3] ^ 2)
      return { p[1] + d[1] * 16 / l, p[2] + d[2] * 16 / l, p[3] + d[3] * 16 / l }
    end
    for n = 1, 8 do -- a start in each of the other eight tiles, near its middle, its lead point in sight
      local t = TILES[n] -- (and in its own tile), drawn before the streamer unloads the tiles
      local p
      repeat
        p = boxpack.free_in(world.tree, r, t[1], t[2])
      until math.abs(p[1] - (t[1] * 128 + 64)) < 40 and math.abs(p[3] - (t[2] * 128 + 64)) < 40
        and world.tree:visible(p, lead_point(p))
      pos[n] = p
    end
    local s = octonav.streamer.new(world, { workers = 1, load_padding = 0, unload_padding = 1 })
    local budget = navigator.budget { ms = 2, clock = function() return 0 end }
    for n = 1, 8 do
      navs[n] = navigator.new(world, { budget = budget, streamer = s })
      navs[n]:go(goal)
    end
    -- their first update adds their agents and locks their start's and goal's tiles; they hold
    budget:update(navs, pos, st, wp)
    for n = 1, 8 do assert.are.equal("planning", st[n]) end
    s:update() -- queues the nine
    assert.are.equal(9, decoded(s, 9))
    local moved, order = {}, {}
    for f = 1, 10 do
      local ch = s:update()
      for _, t in ipairs(ch.loaded) do order[#order + 1] = key(t) end
      budget:update(navs, pos, st, wp)
      for n = 1, 8 do
        if not moved[n] and st[n] == "moving" and wp[n] then moved[n] = f end
      end
    end
    -- the eight start tiles in the first two updates (one agent each: by tile), the goal's last
    assert.are.same({ "0,0,0", "1,0,0", "2,0,0", "0,0,1", "1,0,1", "2,0,1", "0,0,2", "1,0,2", "2,0,2" }, order)
    -- each navigator moved (its lead move) the frame its own tile came in: before, one tile a frame,
    -- the last at frame 8
    assert.are.same({ 1, 1, 1, 1, 2, 2, 2, 2 }, moved)
    for n = 1, 8 do navs[n]:close() end
    s:close()
    world:close()
  end)
end)
