-- spec/105-stream_frames_spec.lua -- a streamed world at frame pace (issue 31): the streamer loads what
-- navigators wait for first and bounds its own work per update (csrc/stream/streamer_update.c,
-- lua/octonav/streamer.lua), and a navigator waiting in the streamer's queue is in line, not stuck
-- (navigator.lua's wait_timeout counts only updates without a delivery: s:delivered()).
-- Run: busted --lua=lua5.4 spec/105-stream_frames_spec.lua
--
-- The world: 8 x 1 x 8 tiles of 32 units (depth 5, scale 1) over a ground slab with pillars, baked
-- once. Every frame below waits until the worker has finished one more tile since the last frame (or
-- nothing is queued), then updates: the frames are paced by the worker, not the clock, so the counts
-- asserted do not depend on the machine's speed.
local octonav = require "octonav"
local core = require "octonav.core"
local streamer = require "octonav.streamer"

local dist = dofile("spec/support/geometry.lua").dist
local pp = dofile("spec/support/pillar_pack.lua")
local pack

-- One paced frame's wait: until the worker finished a tile more than `decoded` (the count when the
-- last frame began), or it has nothing left to read. Returns the new count.
local function pace(s, decoded)
  local t0 = core.clock()
  while core.clock() - t0 < 5 do
    local st = s.core:stats()
    if st.reading == 0 or st.decoded > decoded then return st.decoded end
  end
  return decoded
end

setup(function() pack = pp.bake() end)

teardown(function() pp.cleanup() end)

describe("a streamed world at frame pace", function()
  it("a navigator whose tiles are all queued behind the rest of the world arrives", function()
    -- one worker; a far agent wants the whole world (load_padding 400), queued before the navigator
    -- asks: with the queue taken in order its tiles would come last, 60 updates away, 20 times its
    -- wait_timeout of 3 updates
    -- (one install an update, the default before session 29: spec/166 holds the default of four)
    local s = assert(streamer.new(pack, { load_padding = 400, unload_padding = 800, workers = 1, max_publish = 1 }))
    local world = s.world
    s:add_agent { 4, 20, 4 }
    s:update()
    assert.is_true(s.core:stats().queued >= 60)
    local nav = octonav.navigator.new(world, { streamer = s, wait_timeout = 3 })
    local pos, goal = { 230, 20, 240 }, { 180, 20, 250 }
    nav:go(goal)
    local status, second
    local decoded, installed, frames, waited, first_move = 0, 0, 0, 0, nil
    for _ = 1, 2000 do
      decoded = pace(s, decoded)
      local ch = s:update()
      assert.is_true(#ch.loaded <= 1) -- max_publish 1
      installed = installed + #ch.loaded + #ch.failed
      frames = frames + 1
      status, second = nav:update(pos)
      if nav:stats().waiting then waited = waited + 1 end
      if status == "arrived" or status == "failed" then break end
      if status == "moving" then
        first_move = first_move or frames
        local d = dist(pos, second)
        local f = d <= 2 and 1 or 2 / d
        for k = 1, 3 do pos[k] = pos[k] + (second[k] - pos[k]) * f end
      end
    end
    assert.are.equal("arrived", status, tostring(second) .. " " .. tostring(nav))
    assert.is_true(waited >= 1) -- it did wait for its tiles
    -- its start's and goal's tiles came first: it moved long before the world's 64 tiles were in
    assert.is_true(first_move <= 12, "first move at frame " .. tostring(first_move))
    nav:close()
    s:close()
  end)

  it("no update installs more than max_publish or unloads more than max_unloads; update(true) does it all", function()
    assert.has_error(function() streamer.new(pack, { load_padding = 1, unload_padding = 2, max_publish = -1 }) end,
      "octonav.streamer.new: max_publish must be >= 0")
    assert.has_error(function() streamer.new(pack, { load_padding = 1, unload_padding = 2, max_unloads = 1.5 }) end)
    local s = assert(streamer.new(pack, { load_padding = 48, unload_padding = 60, workers = 1, max_publish = 2,
      max_unloads = 3 }))
    local id = s:add_agent { 128, 20, 128 } -- tiles 2..5 x 2..5 within 48 (corners 45 away): 16 tiles
    local decoded, installed, most, delivered = 0, 0, 0, 0
    for _ = 1, 200 do
      decoded = pace(s, decoded)
      local ch = s:update()
      most = math.max(most, #ch.loaded)
      installed = installed + #ch.loaded
      delivered = delivered + #ch.loaded + #ch.failed
      assert.are.equal(delivered, s:delivered())
      if installed == 16 then break end
    end
    assert.are.equal(16, installed)
    assert.is_true(most >= 1 and most <= 2, "most " .. most)
    assert.are.equal(16, s:stats().loaded)
    -- the agent leaves: 16 tiles to unload, 3 an update at most
    s:move_agent(id, { 1000, 20, 1000 })
    local unloaded, updates = 0, 0
    while unloaded < 16 and updates < 20 do
      local ch = s:update()
      assert.is_true(#ch.unloaded <= 3)
      unloaded, updates = unloaded + #ch.unloaded, updates + 1
      assert.are.equal(16 - unloaded, s:stats().loaded)
      assert.are.equal(16 - unloaded, s:stats().deferred)
    end
    assert.are.equal(16, unloaded)
    assert.are.equal(6, updates) -- 3 + 3 + 3 + 3 + 3 + 1
    -- back: update(true) installs all 16 at once
    s:move_agent(id, { 128, 20, 128 })
    assert.are.equal(16, #s:update(true).loaded)
    s:close()
  end)

  it("a queued tile no agent wants any more is dropped unread; a locked one is kept", function()
    local s = assert(streamer.new(pack, { load_padding = 400, unload_padding = 800, workers = 1 }))
    local id = s:add_agent { 4, 20, 4 }
    s:lock { 7, 0, 7 }
    s:update() -- all 64 queued
    s:move_agent(id, { -5000, 20, -5000 })
    s:update(true)
    local st = s:stats()
    -- what the worker had not taken when the agent left was dropped unread (how many it took first
    -- depends on the machine: tests/stream/test_stream_queue.c holds the worker to count them exactly)
    assert.are.equal(64, st.cancelled + st.decoded)
    assert.is_true(s:is_loaded { 7, 0, 7 })
    assert.are.equal(1, st.loaded) -- what was read and is not locked went at once (update(true))
    s:close()
  end)

  it("update asks a registered path is_valid only when its tree or a door could have changed it", function()
    local s = assert(streamer.new(pack, { load_padding = 8, unload_padding = 16, workers = 1 }))
    local id = s:add_agent { 40, 20, 40 }
    local other = s:add_agent { 200, 20, 200 }
    s:update(true)
    -- a navigator's registered route (revision_bound, navlocks.lua) and a path of another kind
    local asked, valid = { bound = 0, free = 0 }, true
    local function path(kind, b)
      return { revision_bound = b, is_valid = function()
        asked[kind] = asked[kind] + 1
        return valid
      end }
    end
    s:set_path(id, path("bound", true))
    s:set_path(other, path("free", nil))
    s:update() -- a path was registered: both asked
    assert.are.same({ bound = 1, free = 1 }, asked)
    for _ = 1, 5 do assert.are.same({}, s:update().stale) end
    -- nothing changed: the bound one is not asked again, the other every update
    assert.are.same({ bound = 1, free = 6 }, asked)
    -- a change of the tree between updates (no streamer event): asked once
    local ob = s.world.tree:add_obstacle { min = { 30, 4, 30 }, max = { 34, 8, 34 } }
    valid = false
    local st = s:update().stale
    assert.are.same({ bound = 2, free = 7 }, asked)
    assert.are.same({ id, other }, st)
    s.world.tree:remove_obstacle(ob)
    valid = true
    -- reported once: not asked again until a new path is set
    s:update()
    assert.are.same({ bound = 2, free = 7 }, asked)
    s:set_path(id, path("bound", true))
    s:update()
    assert.are.same({ bound = 3, free = 7 }, asked)
    -- a tile unloaded (an event): asked
    s:move_agent(other, { 120, 20, 120 })
    s:set_path(other, nil)
    s:update(true)
    assert.are.equal(4, asked.bound)
    s:close()
  end)
end)
