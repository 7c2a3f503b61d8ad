-- spec/162-budget_gc_pause_spec.lua -- the budget's collector pause (issue 31, goal 3): on Lua 5.4 a
-- budget that drives the collector (option gc nil with ms, or gc = true) makes its pause
-- navbudget.GC_PAUSE (120) and release_gc puts back the pause it found. At Lua's pause of 200 a cycle
-- lets the heap grow to twice what the last cycle left, and what the cycle then frees stays resident in
-- the C allocator: on the seed's world with 1,000 navigators 8.5-9.9 MB of free space, 3.6-4.7 MB at 120
-- (docs/benchmarks.md, session 28). Fails before the change: the pause stayed 176 after the first frame.
-- Run: busted --lua=lua5.4 spec/162-budget_gc_pause_spec.lua
local navigator = require "octonav.navigator"
local navbudget = require "octonav.navbudget"

local LUA54 = _VERSION == "Lua 5.4"

local function pause() -- (reads it: setpause answers the one it replaces)
  local p = collectgarbage("setpause", 100)
  collectgarbage("setpause", p)
  return p
end

describe("a budget's collector pause on Lua 5.4", function()
  local found
  before_each(function()
    found = collectgarbage("setpause", 176) -- (a game's own setting, to be kept: Lua keeps it in fours)
  end)
  after_each(function()
    collectgarbage("setpause", found)
    if LUA54 then collectgarbage("incremental", 0, 100, 13) end -- (5.1 and LuaJIT have no "incremental")
    collectgarbage("restart")
  end)

  local function run(opts, expect_during)
    local b = navigator.budget(opts)
    assert.equal(176, pause())
    b:frame()
    b:frame()
    assert.equal(expect_during, pause())
    b:release_gc()
    assert.equal(176, pause())
    b:release_gc() -- (twice: nothing more)
    assert.equal(176, pause())
  end

  it("is GC_PAUSE while the default budget with ms drives the collector, the game's after release_gc", function()
    if not LUA54 then
      pending("Lua 5.4 only: on 5.1-5.3 and LuaJIT the budget leaves the collector's parameters")
      return
    end
    assert.equal(120, navbudget.GC_PAUSE)
    run({ ms = 4 }, 120)
  end)

  it("is GC_PAUSE with gc = true, and left alone with gc = false or without ms", function()
    if not LUA54 then
      pending("Lua 5.4 only")
      return
    end
    run({ ms = 4, gc = true }, 120)
    run({ ms = 4, gc = false }, 176)
    run({}, 176)
  end)

  it("is left as the game set it when GC_PAUSE is 0", function()
    if not LUA54 then
      pending("Lua 5.4 only")
      return
    end
    local was = navbudget.GC_PAUSE
    navbudget.GC_PAUSE = 0
    local ok, err = pcall(run, { ms = 4 }, 176)
    navbudget.GC_PAUSE = was
    assert(ok, err)
  end)
end)
