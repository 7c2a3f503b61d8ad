-- spec/126-frame_gc_step_spec.lua -- the worst frames (issue 31, goal 1): a budget with `ms` makes Lua
-- 5.4's automatic collector step in small pieces. The worst frames of 1,000 navigators with ms = 4 on the
-- seed's world (bench/frames.lua --trace, thread CPU: 7.7-17.5 ms in a 4 ms frame) were the automatic
-- collector's steps, not the navigators' work (with the collector stopped: worst 4.41 ms, 0 frames over
-- 4.5): Lua's default basic step (8 KB, ~51,700 units of work) swept up to ~51,700 objects wherever an
-- allocation landed (inside a navigator's Lua or a C call that pushes a table), and glibc then
-- consolidated the fast bins they went to on the next malloc of 1 KB or more (2.6-5 ms inside
-- tree:los_step or planner:step). The budget (option gc left nil, with ms) sets the basic step to 1 KB
-- at its first frame: the same pace and pause, steps 8 times smaller.
-- No time is measured here: the largest step is read from the heap's size, the KB one step freed
-- while the collector sweeps a known garbage of empty tables (each allocation may run one step).
-- Run: busted --lua=lua5.4 spec/126-frame_gc_step_spec.lua
local navigator = require "octonav.navigator"
local hw = dofile("spec/support/handworld.lua")

local LUA54 = _VERSION == "Lua 5.4"

-- garbage(n): n empty tables, in tables of 100 (no single object of more than 2 KB), dropped
local function garbage(n)
  local junk = {}
  for i = 1, n / 100 do
    local t = {}
    for j = 1, 100 do t[j] = {} end
    junk[i] = t
  end
  return #junk
end

-- largest_step(n): n empty tables made garbage, then small tables allocated one at a time (each
-- allocation may run one step of the automatic collector) through more than a whole cycle; the
-- largest fall of collectgarbage("count") between two allocations: the KB one step freed. (The next
-- cycle starts once the heap has grown by its live size, and marks the live heap before it sweeps: in
-- the whole suite, with busted holding other specs' worlds, 300,000 allocations reached no sweep and
-- every step "freed" 0 KB; so the allocations are 2.5 times the live heap's bytes in 56-byte tables, at
-- the least 300,000.)
local function largest_step(n)
  collectgarbage()
  collectgarbage() -- (twice: what had a finalizer is freed in the cycle after it ran)
  collectgarbage("restart")
  local allocs = math.max(300000, math.floor(collectgarbage("count") * 1024 / 56 * 2.5))
  garbage(n)
  local ring = {}
  local most, last = 0, collectgarbage("count")
  for i = 1, allocs do
    ring[i % 64 + 1] = {}
    local now = collectgarbage("count")
    if last - now > most then most = last - now end
    last = now
  end
  return most, #ring
end

-- a budget with ms that has had its frames: 4 navigators of the 2-tile hand world, 5 group updates,
-- a work-unit clock (no time read)
local function run_frames(opts)
  local w = hw.make_world { tiles = 2 }
  local now = 0
  opts.clock = function()
    now = now + 1e-5
    return now
  end
  local b = navigator.budget(opts)
  local navs, pos, st, wp = {}, {}, {}, {}
  local pts = { { 2, 8, 2 }, { 30, 6, 2 }, { 6, 6, 8 }, { 24, 6, 8 } }
  for i = 1, 4 do
    navs[i] = navigator.new(w, { budget = b })
    navs[i]:go(pts[5 - i])
    pos[i] = pts[i]
  end
  for _ = 1, 5 do b:update(navs, pos, st, wp) end
  for i = 1, 4 do navs[i]:close() end
  return b
end

-- the mode the collector was in (the lua5.4 interpreter starts it generational), put back after each test
local MODE0 = LUA54 and collectgarbage("incremental", 0, 0, 13)
if MODE0 == "generational" then collectgarbage("generational") end

describe("a budget with ms and Lua's automatic collector", function()
  after_each(function()
    if LUA54 then
      collectgarbage("incremental", 0, 100, 13) -- (Lua 5.4's default multiplier and basic step)
      if MODE0 == "generational" then collectgarbage("generational") end
    end
    collectgarbage("restart")
  end)

  it("makes each incremental step free at most ~1/8 of what Lua's 8 KB step freed", function()
    if not LUA54 then
      pending("Lua 5.4's incremental parameters only (5.1 and LuaJIT: the collector as it is)")
      return
    end
    collectgarbage("incremental", 0, 100, 13) -- (Lua's multiplier and basic step: an unreleased budget may have left others)
    -- Lua's 8 KB basic step: one step sweeps ~51,700 objects (2.8 MB of the 60,000 empty tables)
    local before = largest_step(60000)
    assert.is_true(before > 2000, ("Lua's 8 KB step freed at most %.0f KB"):format(before))
    local b = run_frames { ms = 2 }
    local after = largest_step(60000)
    -- a 1 KB basic step: ~6,500 objects, ~360 KB of empty tables
    assert.is_true(after < 600, ("largest step with the budget: %.0f KB (Lua's own: %.0f KB)"):format(after, before))
    b:release_gc() -- Lua's 8 KB step back
    local again = largest_step(60000)
    assert.is_true(again > 2000, ("after release_gc the largest step freed %.0f KB"):format(again))
  end)

  it("takes a generational collector (whole major collections) to small incremental steps, and gives it back",
    function()
      if not LUA54 then
        pending("Lua 5.4's generational mode only")
        return
      end
      collectgarbage("generational")
      -- (a major collection frees the whole garbage at once: 8.7 MB alone in a process; in a bigger
      -- heap the minor ones free it first, so this is not asserted)
      local gen = largest_step(60000)
      local b = run_frames { ms = 2 }
      local after = largest_step(60000)
      assert.is_true(after < 600, ("largest step with the budget: %.0f KB (generational: %.0f KB)"):format(after, gen))
      b:release_gc()
      assert.equal("generational", collectgarbage("incremental")) -- (the mode it was in before this call)
    end)

  it("leaves the collector as it is with gc = false, and without ms", function()
    if not LUA54 then
      pending("Lua 5.4's incremental parameters only")
      return
    end
    collectgarbage("incremental", 0, 100, 13) -- (Lua's multiplier and basic step: an unreleased budget may have left others)
    run_frames { ms = 2, gc = false }
    local off = largest_step(60000)
    assert.is_true(off > 2000, ("gc = false: the largest step freed %.0f KB"):format(off))
    run_frames {}
    local noms = largest_step(60000)
    assert.is_true(noms > 2000, ("no ms: the largest step freed %.0f KB"):format(noms))
    collectgarbage("generational")
    run_frames { ms = 2, gc = false }
    assert.equal("generational", collectgarbage("incremental"))
  end)
end)
