-- spec/119-stream_quiet_spec.lua -- a frame's streamer:update() with nothing to report allocates nothing
-- (issue 31, goal 1: a step of Lua's collector lands in the call that allocates; a game calls
-- streamer:update() before its navigators' budget starts its clock, so a step there overran frames:
-- 6 of the 8 updates over 1 ms on the seed's world).
-- Run: busted --lua=lua5.4 spec/119-stream_quiet_spec.lua
--
-- Counted with the collector stopped: collectgarbage("count") only grows then, by what was allocated.
-- Before, each quiet update made its changes table and lists, the core's event tables, the evs and
-- failed lists, the dropped lists, a door log, a stale list, and with paths registered a tree:stats()
-- table for the revisions: 1,741 bytes an update with one agent and no path, 2,556 with a path.
local bake = require "octonav.bake"
local streamer = require "octonav.streamer"
local files = dofile("spec/support/files.lua")

local tmp = files.tracker(files.rm_rf)

-- 4 x 1 x 4 tiles of 16^3 leaves: a floor and a wall with a gap
local pack
local function baked()
  local dir = tmp.dir()
  assert(bake({ range = { min = { 0, 0, 0 }, max = { 64, 16, 64 } }, depth = 4, scale = 1,
    geometry = { { box = { min = { 0, 0, 0 }, max = { 64, 1, 64 } } },
      { box = { min = { 22, 1, 0 }, max = { 26, 14, 50 } } } },
    output = dir, progress = function() end }))
  return dir
end

-- Bytes the calls of fn allocate (the collector stopped meanwhile, restarted by the test's end however
-- it ends; on LuaJIT its compiler off and its traces flushed: a trace compiled before, still run with the
-- compiler off, allocates when it exits (what it had sunk): 0.5-95 KB in 5 of 9 runs without the flush).
-- Called inside a test.
local function allocated(fn)
  local jit_ = rawget(_G, "jit")
  finally(function()
    collectgarbage("restart")
    if jit_ then jit_.on() end
  end)
  if jit_ then jit_.off(); jit_.flush() end
  collectgarbage()
  collectgarbage("stop")
  local k0 = collectgarbage("count")
  fn()
  local k1 = collectgarbage("count")
  collectgarbage("restart")
  return math.floor((k1 - k0) * 1024 + 0.5)
end

local function empty_lists(ch)
  for _, k in ipairs { "loaded", "unloaded", "failed", "holes_loaded", "holes_unloaded", "holes_failed", "stale",
    "doors" } do
    assert.are.same({}, ch[k], k)
  end
end

describe("streamer:update() with nothing to report", function()
  setup(function() pack = baked() end)
  teardown(tmp.cleanup)

  for _, workers in ipairs { 1, 0 } do
    it(("allocates nothing and answers the same empty changes (workers = %d, paths registered)"):format(workers),
      function()
        local s = assert(streamer.new(pack, { load_padding = 8, unload_padding = 16, workers = workers }))
        local a = s:add_agent { 8, 4, 8 }
        local b = s:add_agent { 40, 4, 40 }
        assert.are.equal(8, #s:update(true).loaded) -- 4 tiles around each agent
        -- a registered path bound to the tree's revisions (a navigator's route is one: navlocks.lua)
        s:set_path(a, { revision_bound = true, is_valid = function() return true end })
        s:set_path(b, { revision_bound = true, is_valid = function() return true end })
        s:update() -- (the paths are asked once after they are registered)
        local first
        local bytes = allocated(function()
          for _ = 1, 100 do
            local ch = s:update()
            first = first or ch
            assert(ch == first) -- (no luassert call in here: it allocates)
          end
        end)
        assert.are.equal(0, bytes)
        empty_lists(first)
        -- an update with something to report answers a new table; the quiet ones the same again
        s:move_agent(b, { 8, 4, 40 })
        local ch = s:update(true)
        assert.are.same({ { 0, 0, 3 }, { 0, 0, 2 } }, ch.loaded)
        assert.are.same({ { 2, 0, 3 }, { 3, 0, 2 }, { 2, 0, 1 }, { 2, 0, 2 } }, ch.unloaded)
        assert.are_not.equal(first, ch)
        empty_lists(first)
        assert.are.equal(first, s:update())
        empty_lists(first)
        -- a caller that wrote into the quiet table gets a new one from the next update
        first.loaded[1] = { 0, 0, 0 }
        local q2 = s:update()
        assert.are_not.equal(first, q2)
        empty_lists(q2)
        assert.are.equal(q2, s:update())
        assert.are.same({ { 0, 0, 0 } }, first.loaded)
        -- what force_unload dropped is listed by the next update, as before
        s:force_unload { 0, 0, 0 }
        assert.are.same({ { 0, 0, 0 } }, s:update().unloaded)
        s:close()
      end)
  end

  it("s:is_loaded, s:state, s:lock and s:unlock by tile index allocate nothing", function()
    -- (a navigator waiting for a tile asks is_loaded and state every update: each made an {i, j, k})
    local s = assert(streamer.new(pack, { load_padding = 8, unload_padding = 16, workers = 1 }))
    s:add_agent { 8, 4, 8 }
    s:update(true)
    local loaded, state
    local bytes = allocated(function()
      for _ = 1, 100 do
        loaded, state = s:is_loaded(1), s:state(1)
        s:lock(15)
        s:unlock(15)
      end
    end)
    assert.are.equal(0, bytes)
    assert.are.same({ true, "loaded" }, { loaded, state }) -- tile 1 = {1, 0, 0}, 8 from the agent
    assert.are.same({ false, "unloaded" }, { s:is_loaded(15), s:state(15) })
    assert.is_true(s:is_loaded { 1, 0, 0 })
    s:close()
  end)

  it("a path registered asks that path at the next update, not every registered one", function()
    -- (a navigator registers its route at each new goal: with 100 navigators an update asked all 100
    -- paths whenever one of them had a new goal, 0.4-0.5 ms on the seed's world)
    local s = assert(streamer.new(pack, { load_padding = 8, unload_padding = 16, workers = 1 }))
    local asked = {}
    local function path(n)
      return { revision_bound = true, is_valid = function()
        asked[n] = (asked[n] or 0) + 1
        return true
      end }
    end
    local ids = {}
    for n = 1, 4 do ids[n] = s:add_agent { 8, 4, 8 } end
    s:update(true)
    for n = 1, 3 do s:set_path(ids[n], path(n)) end
    s:update()
    assert.are.same({ 1, 1, 1 }, asked)
    s:update()
    assert.are.same({ 1, 1, 1 }, asked)
    s:set_path(ids[4], path(4))
    s:update()
    assert.are.same({ 1, 1, 1, 1 }, asked) -- (before: { 2, 2, 2, 1 })
    s:set_path(ids[2], path(2))
    s:update()
    assert.are.same({ 1, 2, 1, 1 }, asked)
    -- a change of the tree: all of them
    s:force_unload { 0, 0, 0 }
    s:update()
    assert.are.same({ 2, 3, 2, 2 }, asked)
    s:close()
  end)

  it("the core streamer's update answers the table given for no events", function()
    local s = assert(streamer.new(pack, { load_padding = 8, unload_padding = 16, workers = 1 }))
    s:add_agent { 8, 4, 8 }
    s:update(true)
    local none = {}
    assert.are.equal(none, s.core:update(false, none))
    s:force_load { 3, 0, 3 }
    local ev = s.core:update(true, none)
    assert.are_not.equal(none, ev)
    assert.are.same({ { 3, 0, 3 } }, ev.loaded)
    assert.has_error(function() s.core:update(false, 1) end,
      "streamer:update: argument #2: table expected, got number")
    s:close()
  end)
end)
