-- spec/133-navgroup_park_spec.lua -- issue 31, goal 1: budget:update's first pass over the navigators
-- costs Lua for the navigators that need it this frame, not for every navigator.
-- On the seed's world at 1,000 navigators ms 4 about 900 of them wait for a planner each frame (two
-- plan at once: navigator_plan.MAX_PLANNING) and the first pass's Lua visited every one of them (its
-- answer, the first-move rule, 3b's candidates): 1.8-2.6 ms of the 4 ms frame before any plan or
-- result got time. Now such a navigator is parked in the group's C walk (navgroup.lua's park,
-- csrc/lua/lua_walk.c's w:park): the C call writes its answer and reports the one waiting longest,
-- and Lua visits it again only when it is served (a plan may start in its world, the first-move
-- rule, a go / cancel / close).
--   1. With no plan starting (plans = 0) every navigator waits: after the first frames the pass
--      visits none of them in Lua (budget:stats().group.visited 0, parked n) and the Lua VM
--      instructions of a frame's budget:update do not grow with the navigators (1,000 against 10).
--      Before, visited was not counted, and a frame at 1,000 navigators ran about 100 times the
--      instructions of one at 10.
--   2. Parking changes no answer: a crowd taking lead moves on spec/125's world and waiting to start
--      its plans answers frame for frame the same with navgroup.PARK off (the navigators visited in
--      Lua as before) and on.
-- Run: busted --lua=lua5.4 spec/133-navgroup_park_spec.lua
local navigator = require "octonav.navigator"
local navgroup = require "octonav.navgroup"

local boxpack = dofile("spec/support/boxpack.lua")
local rng = dofile("spec/support/prng.lua").lcg
local world_mod = require "octonav.world"

local pack

setup(function() pack = boxpack.bake_walled() end)
teardown(boxpack.cleanup)

local free_point = boxpack.free_point

-- The Lua VM instructions (in hundreds) run by f(): a count hook (LuaJIT: the compiler off, so that
-- every instruction is counted).
local function vm_hundreds(f)
  local jit = rawget(_G, "jit")
  if jit then
    jit.off()
    jit.flush()
  end
  local c = 0
  debug.sethook(function() c = c + 1 end, "", 100)
  f()
  debug.sethook()
  if jit then jit.on() end
  return c
end

describe("budget:update's first pass", function()
  it("visits in Lua no navigator that only waits to start a plan", function()
    local world = assert(world_mod.load(pack))
    local tree = world.tree
    local per = {}
    for _, n in ipairs { 10, 1000 } do
      local r = rng(7)
      local budget = navigator.budget { ms = 4, clock = function() return 0 end, plans = 0 }
      local navs, pos = {}, {}
      for k = 1, n do
        pos[k] = free_point(tree, r)
        navs[k] = navigator.new(world, { budget = budget, lead_distance = 0 })
        navs[k]:go(free_point(tree, r))
      end
      local st, wp = {}, {}
      for _ = 1, 3 do budget:update(navs, pos, st, wp) end
      local g = budget:stats().group
      assert.are.equal(0, g.visited)
      assert.are.equal(n, g.parked)
      assert.are.equal(0, g.held)
      for k = 1, n do
        assert.are.equal("planning", st[k])
        assert.is_nil(wp[k])
      end
      per[n] = vm_hundreds(function()
        for _ = 1, 10 do budget:update(navs, pos, st, wp) end
      end)
      assert.are.equal(0, budget:stats().group.visited)
      -- a parked navigator given a new goal, or closed, is handed back (and its slot freed)
      navs[1]:go(free_point(tree, r))
      assert.is_nil(navs[1].walk_slot)
      navs[2]:close()
      assert.are.equal(n - 2, budget:stats().group.parked)
      for k = 3, n do navs[k]:close() end
      navs[1]:close()
    end
    world:close()
    -- (10 frames: a frame at 1,000 navigators ran about 100 times one at 10 before)
    assert.is_true(per[1000] <= 2 * per[10] + 10, ("%d00 instructions at 1,000 navigators, %d00 at 10")
      :format(per[1000], per[10]))
  end)
end)

describe("parked navigators", function()
  local park
  before_each(function() park = navgroup.PARK end)
  after_each(function() navgroup.PARK = park end)

  -- n navigators under a budget that starts no plan (plans = 0: no planner's work, whose joins and
  -- steps are cut by the C clock, so that two runs answer alike), flying `speed` leaves a frame: each
  -- takes its lead moves toward its goal (navigator.lua's lead_distance), then waits to start its
  -- plan (parked), the first-move rule serving the one waiting longest each frame; every 7th frame
  -- one navigator is given a new goal (handed back, then parked again). Returns every frame's
  -- answers, the lead moves seen and the most navigators parked in a frame.
  local function crowd(n, frames, speed)
    local world = assert(world_mod.load(pack))
    local tree = world.tree
    local r = rng(5)
    local budget = navigator.budget { ms = 4, clock = function() return 0 end, plans = 0 }
    local navs, pos = {}, {}
    for k = 1, n do
      pos[k] = free_point(tree, r)
      navs[k] = navigator.new(world, { budget = budget })
      navs[k]:go(free_point(tree, r))
    end
    local st, wp = {}, {}
    local log, moves, parked = {}, 0, 0
    for f = 1, frames do
      budget:update(navs, pos, st, wp)
      local g = budget:stats().group
      if g.parked > parked then parked = g.parked end
      for k = 1, n do
        local s, w = st[k], wp[k]
        if type(w) == "table" then
          log[#log + 1] = ("%d %d %s %.17g %.17g %.17g"):format(f, k, s, w[1], w[2], w[3])
        else
          log[#log + 1] = ("%d %d %s %s"):format(f, k, s, tostring(w))
        end
        if s == "moving" and type(w) == "table" then
          moves = moves + 1
          local p = pos[k]
          local dx, dy, dz = w[1] - p[1], w[2] - p[2], w[3] - p[3]
          local d = math.sqrt(dx * dx + dy * dy + dz * dz)
          local t = d > speed and speed / d or 1
          p[1], p[2], p[3] = p[1] + dx * t, p[2] + dy * t, p[3] + dz * t
        end
      end
      if f % 7 == 0 then navs[f % n + 1]:go(free_point(tree, r)) end
    end
    for k = 1, n do navs[k]:close() end
    world:close()
    return log, moves, parked
  end

  it("answer as the navigators visited in Lua do, frame for frame", function()
    navgroup.PARK = false
    local log0, moves0, parked0 = crowd(60, 150, 4)
    navgroup.PARK = true
    local log1, moves1, parked1 = crowd(60, 150, 4)
    assert.are.equal(0, parked0)
    assert.is_true(parked1 >= 50, parked1 .. " parked")
    assert.is_true(moves1 >= 100, moves1 .. " lead moves")
    assert.are.equal(moves0, moves1)
    assert.are.equal(#log0, #log1)
    for i = 1, #log0 do
      if log0[i] ~= log1[i] then assert.are.equal(log0[i], log1[i], "answer " .. i) end
    end
  end)
end)
