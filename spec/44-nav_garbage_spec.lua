-- spec/44-nav_garbage_spec.lua -- what a crowd's plans and updates leave to Lua's collector (issue 11:
-- frames where the collector ran took 4-8 ms with 100 navigators): a plan's legs are read from the C
-- result without a table per crossing (job:legs; the route's tables are made when nav:route() asks),
-- and an update walking a known path makes no garbage at all. Counted with the collector stopped
-- (collectgarbage("count"): bytes, deterministic).
-- Run: busted --lua=lua5.4 spec/44-nav_garbage_spec.lua
local planner = require "octonav.planner"
local navigator = require "octonav.navigator"

local hw = dofile("spec/support/handworld.lua")

local garbage = dofile("spec/support/garbage.lua").bytes

local function plan_legs(w, a, b)
  local job = planner.start(w, a, b)
  local st = job:step(1048576)
  while st == "running" do st = job:step(1048576) end
  assert.are.equal("found", st)
  return job:legs()
end

describe("a crowd's garbage", function()
  -- LuaJIT's compiler keeps its traces in the heap collectgarbage("count") measures: off while these
  -- count the library's own garbage (issue 34)
  local jit = rawget(_G, "jit")
  setup(function() if jit then jit.off() jit.flush() end end)
  teardown(function() if jit then jit.on() end end)

  it("a plan's legs make no table per crossing: the C result is read flat", function()
    local w = hw.make_world { tiles = 8 }
    local a = { 2.5, 8.5, 8.5 }
    local far = {}
    for _, k in ipairs { 2, 7 } do
      local b = { 16 * k + 8.5, 8.5, 8.5 }
      plan_legs(w, a, b) -- (the world's C planner made, strings interned)
      local bytes, legs, tiles = garbage(function() return plan_legs(w, a, b) end)
      -- one leg from a to b through k + 1 tiles: the route's, whose crossings are the tile faces
      assert.are.equal(1, #legs)
      assert.are.same(a, legs[1].enter)
      assert.are.same(b, legs[1].exit)
      assert.are.equal(0, legs[1].tile)
      assert.are.equal(k + 1, #tiles)
      for i = 1, k + 1 do assert.are.equal(i - 1, tiles[i]) end
      local route = planner.plan(w, a, b)
      assert.are.equal(k + 1, #route)
      for i = 1, k + 1 do assert.are.equal(route[i].tile, tiles[i]) end
      far[k] = bytes
    end
    -- 5 more crossings: their 7 numbers each in the flat result (16 bytes a number) and their tiles in
    -- the tiles list, no table (a route step and its points take ~500 bytes)
    local per = (far[7] - far[2]) / 5
    assert.is_true(per > 0 and per <= 160, ("%.1f bytes a crossing"):format(per))
  end)

  it("an update walking a path it knows makes no garbage; nav:route() is the planner's route", function()
    local w = hw.make_world { tiles = 4 }
    local a, b = { 2.5, 8.5, 8.5 }, { 56.5, 8.5, 8.5 } -- (off the leaf faces: no nudge)
    local nav = navigator.new(w)
    nav:go(b)
    local pos, st, wp = { a[1], a[2], a[3] }, nil, nil
    local function step()
      st, wp = nav:update(pos)
      if st == "moving" then
        local d = hw.dist(pos, wp)
        local t = d > 0 and math.min(1, 0.25 / d) or 0
        for k = 1, 3 do pos[k] = pos[k] + (wp[k] - pos[k]) * t end
      end
    end
    for _ = 1, 50 do step() end -- planned, every leg searched
    assert.are.equal("moving", st)
    local bytes = garbage(function()
      for _ = 1, 40 do step() end
    end)
    assert.are.equal("moving", st) -- (0.25 a frame: still on its way)
    assert.are.equal(0, bytes)
    assert.are.same(planner.plan(w, a, b), nav:route())
    assert.are.equal(nav:route(), nav:route()) -- made once
    nav:close()
  end)
end)
