-- spec/162-budget_gc_pause_spec.lua -- the budget's collector pause and pace (issue 31, goals 1 and 3): on
-- Lua 5.4 a budget with ms and option gc nil paces the collector to run a little in every frame (pause
-- navbudget.GC_AUTO_PAUSE, 100; step multiplier GC_AUTO_STEPMUL, 8), one with gc = true makes the pause
-- GC_PAUSE (120), and release_gc puts back what it found. At Lua's pause of 200 a cycle lets the heap
-- grow to twice what the last cycle left, and what the cycle then frees stays resident in the C
-- allocator: on the seed's world with 1,000 navigators 8.5-9.9 MB of free space, 3.6-4.7 MB at 120
-- (docs/benchmarks.md, session 28). Fails before the change: the pause stayed 176 after the first frame.
-- At pause 120 with Lua's multiplier (100) the collector idled, then swept a cycle's dead objects in a few
-- frames: 2.5-4.5 ms of sweep in one streamed frame of 1,000 navigators (session 32); the last test
-- counts what one frame sweeps (fails at session 31's pace: 366 KB against ~40).
-- Run: busted --lua=lua5.4 spec/162-budget_gc_pause_spec.lua
local navigator = require "octonav.navigator"
local navbudget = require "octonav.navbudget"

local LUA54 = _VERSION == "Lua 5.4"

local function pause() -- (reads it: setpause answers the one it replaces)
  local p = collectgarbage("setpause", 100)
  collectgarbage("setpause", p)
  return p
end
local function stepmul()
  local m = collectgarbage("setstepmul", 100)
  collectgarbage("setstepmul", m)
  return m
end

describe("a budget's collector pause on Lua 5.4", function()
  local found
  before_each(function()
    found = collectgarbage("setpause", 176) -- (a game's own setting, to be kept: Lua keeps it in fours)
    if LUA54 then collectgarbage("setstepmul", 152) end
  end)
  after_each(function()
    collectgarbage("setpause", found)
    if LUA54 then collectgarbage("incremental", 0, 100, 13) end -- (5.1 and LuaJIT have no "incremental")
    collectgarbage("restart")
  end)

  local function run(opts, expect_during, expect_mul)
    local b = navigator.budget(opts)
    assert.equal(176, pause())
    b:frame()
    b:frame()
    assert.equal(expect_during, pause())
    assert.equal(expect_mul or 152, stepmul())
    b:release_gc()
    assert.equal(176, pause())
    assert.equal(152, stepmul())
    b:release_gc() -- (twice: nothing more)
    assert.equal(176, pause())
    assert.equal(152, stepmul())
  end

  it("is GC_AUTO_PAUSE and GC_AUTO_STEPMUL while the default budget with ms drives it, the game's after release_gc",
    function()
    if not LUA54 then
      pending("Lua 5.4 only: on 5.1-5.3 and LuaJIT the budget leaves the collector's parameters")
      return
    end
    assert.equal(120, navbudget.GC_PAUSE)
    assert.equal(100, navbudget.GC_AUTO_PAUSE)
    assert.equal(8, navbudget.GC_AUTO_STEPMUL)
    run({ ms = 4 }, 100, 8)
  end)

  it("is GC_PAUSE with gc = true, and left alone with gc = false or without ms", function()
    if not LUA54 then
      pending("Lua 5.4 only")
      return
    end
    run({ ms = 4, gc = true }, 120, 12)
    run({ ms = 4, gc = false }, 176)
    run({}, 176)
  end)

  it("is left as the game set it when GC_AUTO_PAUSE, GC_AUTO_STEPMUL or GC_PAUSE is 0", function()
    if not LUA54 then
      pending("Lua 5.4 only")
      return
    end
    local was, was_auto, was_mul = navbudget.GC_PAUSE, navbudget.GC_AUTO_PAUSE, navbudget.GC_AUTO_STEPMUL
    navbudget.GC_PAUSE, navbudget.GC_AUTO_PAUSE, navbudget.GC_AUTO_STEPMUL = 0, 0, 0
    local ok, err = pcall(run, { ms = 4 }, 176)
    local ok2, err2 = pcall(run, { ms = 4, gc = true }, 176, 12)
    navbudget.GC_PAUSE, navbudget.GC_AUTO_PAUSE, navbudget.GC_AUTO_STEPMUL = was, was_auto, was_mul
    assert(ok, err)
    assert(ok2, err2)
  end)

  -- A frame's sweep, counted: 50,000 live tables, 16 new tables a frame (~1 KB) each dead 256 frames
  -- later, 2,000 frames or more (below); what a frame frees is the heap before it, plus what it allocated, less the heap
  -- after (collectgarbage("count")). Sweeping is the collector's dearest work (an object a unit): at a
  -- pace of 9 units a 16 bytes a 1 KB frame sweeps ~580 objects; at Lua's 100, ~6,400.
  local function most_freed_in_a_frame()
    local b = navigator.budget({ ms = 4 })
    local keep, ring, most = {}, {}, 0
    collectgarbage("collect")
    for i = 1, 50000 do keep[i] = {} end
    -- (2,000 frames, and more with a larger heap: a cycle starts once the frames allocated a fifth of it
    -- at pause 120, whatever earlier specs left live; ~0.9 KB a frame)
    local frames = 2000 + math.ceil(collectgarbage("count") * 0.6 / 0.875)
    for f = 1, frames do
      b:frame()
      local before = collectgarbage("count")
      for i = 1, 16 do ring[(f * 16 + i) % 4096 + 1] = {} end
      local freed = before + 16 * 56 / 1024 - collectgarbage("count")
      if freed > most then most = freed end
    end
    b:release_gc()
    assert.equal(50000, #keep)
    assert.equal(4096, #ring)
    return most
  end

  it("sweeps a little in every frame at the default pace, not a cycle's garbage in a few", function()
    if not LUA54 then
      pending("Lua 5.4 only")
      return
    end
    local most = most_freed_in_a_frame()
    assert(most < 64, ("%.1f KB freed in one frame (at most 64 expected)"):format(most))
    local was, was_mul = navbudget.GC_AUTO_PAUSE, navbudget.GC_AUTO_STEPMUL
    navbudget.GC_AUTO_PAUSE, navbudget.GC_AUTO_STEPMUL = 120, 0 -- (session 31's: Lua's multiplier, 100)
    local ok, old = pcall(most_freed_in_a_frame)
    navbudget.GC_AUTO_PAUSE, navbudget.GC_AUTO_STEPMUL = was, was_mul
    assert(ok, old)
    assert(old > 200, ("%.1f KB freed in one frame at the old pace (over 200 expected)"):format(old))
  end)
end)
