-- spec/53-navbudget_tail_spec.lua -- a budget with a frame time holds back the tail it learns (how long
-- after the deadline its last frames' last asks came: the navigators updated after the work stopped),
-- so that frames end near `ms`; and refuses a search step whose result (q:result, not sliced) would not
-- fit, never two frames in a row; with option gc, runs Lua's collector itself at each frame's start,
-- inside the frame's time (lua/octonav/navbudget.lua). The clock is the budget's `clock` option, driven
-- here (no timing); the collector's work is checked by the heap's size.
-- Run: busted --lua=lua5.4 spec/53-navbudget_tail_spec.lua
local navigator = require "octonav.navigator"
local navbudget = require "octonav.navbudget"

local now = 0
local function clock() return now end

-- grants(b, at): does an ask of one expansion at time `at` get it?
local function grants(b, at)
  now = at
  local who = {}
  local g = b:take("expansions", who, 1)
  b:give("expansions", who, 1 - g, false)
  return g == 1
end

local it54 = dofile("spec/support/close54.lua")(it, pending, _ENV) -- <close> tests run on Lua 5.4 only

describe("a budget with a frame time", function()
  it("holds back the tail it learnt: the median of the last 9 frames' samples", function()
    local b = navigator.budget { ms = 4, clock = clock }
    now = 0
    b:frame() -- nothing learnt: the deadline is ms away
    assert.is_nil(b:stats().tail)
    assert.is_true(grants(b, 0.0039999))
    assert.is_false(grants(b, 0.0042)) -- the last ask, 0.2 ms past the deadline
    now = 1
    b:frame() -- the tail: 0.2 ms (one sample)
    assert.near(0.0002, b:stats().tail, 1e-12)
    assert.is_true(grants(b, 1.0037999))
    assert.is_false(grants(b, 1.0038001))
    now = 1.0138 -- 10 ms past the deadline (a thread switched out): samples 0.2, 10 ms: the lower one
    b:take("checks", {}, 1)
    now = 2
    b:frame()
    assert.near(0.0002, b:stats().tail, 1e-12)
    assert.is_false(grants(b, 2.0038001))
    assert.is_true(grants(b, 2.0037999)) -- (the frame's last ask, before its deadline: no sample)
    now = 3
    b:frame()
    assert.near(0.0002, b:stats().tail, 1e-12)
    -- samples 0.3, 0.4, 0.4 ms (median of 0.2, 10, 0.3, 0.4, 0.4: 0.4), then 5 of 0.1 ms: the tenth
    -- sample takes the first's place (9 kept)
    local samples = { 0.0003, 0.0004, 0.0004, 0.0001, 0.0001, 0.0001, 0.0001, 0.0001 }
    local want = { 0.0003, 0.0003, 0.0004, 0.0003, 0.0003, 0.0002, 0.0002, 0.0001 }
    for f, v in ipairs(samples) do
      local due = b.deadline
      now = due + v
      b:take("checks", {}, 1)
      now = 3 + f
      b:frame()
      assert.near(want[f], b:stats().tail, 1e-12)
    end
    -- the tail is held back from the next deadline
    assert.near(11 + 0.004 - 0.0001, b.deadline, 1e-12)
    assert.equal(9, navbudget.TAIL_SAMPLES)
  end)

  it("holds back at most a quarter of the frame's time", function()
    local b = navigator.budget { ms = 2, clock = clock }
    now = 0
    b:frame()
    assert.is_false(grants(b, 0.05)) -- 48 ms past: counted as 0.5 ms (a quarter of 2 ms)
    now = 1
    b:frame()
    assert.near(0.0005, b:stats().tail, 1e-12)
    for f = 2, 40 do -- each frame's last ask far past its deadline: the tail stays at the cap
      now = f + 0.5
      b:take("checks", {}, 1)
      now = f + 1
      b:frame()
    end
    assert.near(0.0005, b:stats().tail, 1e-12)
    assert.is_true(grants(b, 41.0014999))
    assert.is_false(grants(b, 41.0015001))
    assert.is_nil(navigator.budget({ ms = 2, clock = clock }):stats().tail)
    assert.is_nil(navigator.budget():stats().tail)
  end)

  it("refuses a step whose result would not fit, but not two frames in a row", function()
    local b = navigator.budget { ms = 2, clock = clock }
    local A = {}
    now = 0
    b:frame()
    assert.equal(1, b:take("results", A, 1)) -- nothing learnt yet
    b:spent("results", 1, 0.0005)
    b:give("results", A, 1, false)
    now = 0.0014 -- 1.4 + 0.5 < 2 ms
    assert.equal(1, b:take("results", A, 1))
    b:give("results", A, 1, false)
    now = 0.0016 -- 1.6 + 0.5 > 2 ms: refused, other work still fits
    assert.equal(0, b:take("results", A, 1))
    assert.equal(1, b:take("expansions", A, 1))
    assert.equal(1, b:stats().cut)
    now = 1
    b:frame() -- the frame after one that held a step back: none is held back
    now = 1.0016
    assert.equal(1, b:take("results", A, 1))
    b:give("results", A, 1, false)
    now = 2
    b:frame()
    now = 2.0016
    assert.equal(0, b:take("results", A, 1))
    -- (plans are held back on their own count: a result held back does not spend a plan's frame)
    b:spent("plans", 1, 0.0005)
    assert.equal(0, b:take("plans", A, 1))
    assert.equal(2, b:stats().cut)
  end)
end)

-- gc_running(want): the automatic collector is running (true) or stopped (false); Lua 5.1 cannot tell
-- (no collectgarbage("isrunning"): the budget takes it as running, docs/lua-versions.md), so there the
-- check is left out and the rest of each test runs as on other versions (issue 34)
local can_tell = pcall(collectgarbage, "isrunning")
local function gc_running(want)
  if can_tell then assert.equal(want, collectgarbage("isrunning")) end
end

describe("a budget that runs the collector (option gc)", function()
  after_each(function() collectgarbage("restart") end)

  it("stops the automatic collector and does its work at each frame, for what was allocated", function()
    collectgarbage()
    local b = navigator.budget { gc = true }
    gc_running(true)
    b:frame()
    gc_running(false)
    -- garbage made between frames: without the collector's steps the heap would grow by all of it
    -- (~62 KB a frame); the budget's steps keep it within a few cycles' worth. A cycle starts once the
    -- heap has grown by the collector's pause (as the automatic one), so the garbage is made 8 times
    -- the live heap's size (at least 40 frames), whatever the process holds.
    local h0 = collectgarbage("count")
    local frames = math.max(40, math.ceil(8 * h0 / 62.5))
    local made = 0
    for _ = 1, frames do
      for _ = 1, 1000 do
        local t = { 1, 2, 3, 4 } -- (~64 bytes each)
        made = made + #t - 3
      end
      b:frame()
    end
    assert.equal(frames * 1000, made)
    local grown = collectgarbage("count") - h0
    assert.is_true(grown < 0.5 * frames * 1000 * 64 / 1024, ("grew %.0f KB in %d frames"):format(grown, frames))
    gc_running(false)
    b:release_gc()
    gc_running(true)
    b:frame() -- (released: frames leave the collector alone)
    gc_running(true)
  end)

  it54("gives the collector back by <close>", { navigator = navigator }, [[
    collectgarbage("restart")
    do
      local c <close> = navigator.budget { gc = true }
      c:frame()
      assert.is_false(collectgarbage("isrunning"))
    end
    assert.is_true(collectgarbage("isrunning")) -- (released at the block's end)
  ]])

  it("gives the collector back as it found it, and follows a full collection", function()
    collectgarbage("stop") -- the game's own choice: the budget must leave it stopped
    local b = navigator.budget { gc = true }
    b:frame()
    b:release_gc()
    gc_running(false)
    collectgarbage("restart")
    do
      local c = navigator.budget { gc = true }
      c:frame()
      gc_running(false)
      c:release_gc()
    end
    gc_running(true) -- (released)
    -- a full collection between frames lowers the heap mark the budget counts from
    local d = navigator.budget { gc = true }
    d:frame()
    do
      local junk = {}
      for i = 1, 20000 do junk[i] = { i } end
      d:frame()
      assert.equal(20000, #junk)
    end
    collectgarbage("collect")
    d:frame()
    assert.is_true(d.gc_heap <= collectgarbage("count") + 1, ("mark %.0f KB"):format(d.gc_heap))
    d:release_gc()
  end)

  it("counts the collector's step in the frame's time; checks the option", function()
    now = 0
    local b = navigator.budget { ms = 2, gc = true, clock = clock }
    local collect, collected = b.collect, 0
    b.collect = function(self) -- (a step of 1 ms on the spec's clock)
      collected = collected + 1
      now = now + 0.001
      return collect(self)
    end
    b:frame()
    assert.equal(1, collected)
    assert.is_true(grants(b, 0.0019999)) -- the deadline counts from before the step: 1 ms left
    assert.is_false(grants(b, 0.002))
    b:release_gc()
    now = 1
    b:frame()
    assert.equal(1, collected)
    assert.is_true(grants(b, 1.0019))
    assert.has_error(function() navigator.budget { gc = 1 } end,
      "octonav.navigator.budget: option 'gc' must be a boolean")
    local c = navigator.budget()
    c:frame()
    gc_running(true) -- (off by default)
  end)
end)
