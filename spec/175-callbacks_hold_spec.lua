-- spec/175-callbacks_hold_spec.lua -- session 31's audit (h31hard) of the code of sessions 29-30 for the
-- standard "callbacks, metamethods and finalizers can never break the C state that called them; bad
-- input never crashes, hangs or corrupts". Each hole found has its test here:
--   1. c:states() and c:ids() (csrc/lua/lua_crowd.c) counted the agents, allocated their buffer, then
--      copied the agents again: a finalizer run by that allocation that added agents made the copy
--      report more than the buffer held, and the call read past its buffer (ASan: heap-buffer-overflow;
--      without it, garbage numbers in the answer). Now the copy is made again into a buffer as large
--      as the crowd is, until it fits: the answer is the crowd as it is when copied.
--   2. A budget's clock function that returns no number (nil, a string) raised from the library's
--      files ("attempt to perform arithmetic on a nil value (local 'start')"), naming neither the
--      budget nor its option; one that returns inf or nan had its navigators planning for ever (inf:
--      every ask refused) or read nan deadlines. Now each reading is checked: an error naming the
--      option and what the function returned.
--   3. A crowd on two threads whose next grid is built behind the frame on a pool thread (crowd.c
--      build_behind, workers.c on_workers_behind): closed, collected, emptied of its agents, or read
--      (tostring, stats) while the build is in flight. No hole (these pass on main): kept as tests of
--      the lifetime rules (run under ASan and TSan).
-- Run: busted --lua=lua5.4 spec/175-callbacks_hold_spec.lua (and under ASan: tools/runtests.sh build/san)
local octonav = require "octonav"
local navigator = require "octonav.navigator"

local hw = dofile("spec/support/handworld.lua")

-- ---- 1. a finalizer run by c:states' / c:ids' allocation -----------------------------------------
-- (Lua 5.4's generational collector times the finalizer as spec/61 does: spec/support/finalizer_chain.lua)
local chain = dofile("spec/support/finalizer_chain.lua").new()

-- A crowd of 40 agents on a 32^3 tree (a lattice 3 leaves apart), each sent somewhere; the action
-- adds 60 more (another lattice).
local function crowd40()
  local tree = octonav.tree.new { depth = 5 }
  local c = octonav.crowd.new(tree, { max_agents = 200 })
  for i = 0, 39 do
    local p = { 2.5 + (i % 8) * 3, 2.5 + math.floor(i / 8) * 3, 4 }
    local id = assert(c:add { pos = p, radius = 0.5 })
    c:set_path(id, { { p[1], p[2], 20 } })
  end
  for _ = 1, 3 do c:update(1 / 30) end
  local function add60()
    for i = 0, 59 do assert(c:add { pos = { 2.5 + (i % 10) * 3, 2.5 + math.floor(i / 10) * 3, 28 }, radius = 0.5 }) end
  end
  return c, tree, add60
end

local function gen_describe(name, f)
  if _VERSION ~= "Lua 5.4" then
    describe(name, function()
      pending("Lua 5.4 only: " .. _VERSION .. " has no generational collector (the finalizer's timing here)")
    end)
    return
  end
  describe(name, f)
end

gen_describe("a finalizer that adds agents while c:states or c:ids copies them", function()
  setup(function() chain:start() end)
  teardown(function() chain:stop() end)

  for _, call in ipairs({ "states", "ids" }) do
    it(("c:%s answers the crowd as it is when copied, never past its buffer"):format(call), function()
      local ran, grown = 0, 0
      for _, margin in ipairs({ 64, 256, 1024, 4096 }) do
        local c, tree, add60 = crowd40()
        chain:arm(add60, margin)
        local t, n = c[call](c)
        chain:disarm()
        if chain.fired then
          ran = ran + 1
          assert.is_true(chain.accepted, tostring(chain.err))
          -- the answer: the crowd when copied, the 40 agents (the finalizer ran after the copy, as
          -- its table was made) or the 100 (it ran before: in the allocation of the copy's buffer),
          -- as c:ids and c:position read them after the call (the 60 added take the slots after)
          assert.are.equal(100, #c)
          assert.is_true(n == 40 or n == 100, "n " .. n)
          if n == 100 then grown = grown + 1 end
          local ids = c:ids()
          for k = n + 1, 100 do ids[k] = nil end
          if call == "ids" then
            assert.are.same(ids, t)
          else
            assert.are.equal(6 * n, #t)
            for k, id in ipairs(ids) do
              local x, y, z = c:position(id)
              assert.are.same({ x, y, z }, { t[6 * k - 5], t[6 * k - 4], t[6 * k - 3] }, "agent " .. k)
              local vx, vy, vz = c:velocity(id)
              assert.are.same({ vx, vy, vz }, { t[6 * k - 2], t[6 * k - 1], t[6 * k] }, "agent " .. k)
            end
          end
        end
        c:close()
        tree:close()
      end
      -- (the finalizer ran inside the call before the copy at least once: else this tested nothing)
      assert.is_true(grown >= 1, ("the finalizer ran inside c:%s %d times, before the copy %d"):format(call, ran, grown))
    end)
  end
end)

-- ---- 2. a budget's clock function that returns no finite number -----------------------------------
describe("a budget's clock function", function()
  local function frames(clock)
    local w = hw.make_world { tiles = 2 }
    local b = navigator.budget { ms = 4, clock = clock }
    local nav = navigator.new(w, { budget = b })
    nav:go({ 28, 9, 9 })
    local navs, pos, st, wp = { nav }, { { 2, 8, 2 } }, {}, {}
    for _ = 1, 20 do b:update(navs, pos, st, wp) end
    nav:close()
    return st[1]
  end

  it("that returns nil, a string, nan or inf raises naming the option and what it returned", function()
    local cases = {
      { function() return nil end, "nil" },
      { function() return "1" end, "a string" },
      { function() return 0 / 0 end, "nan" },
      { function() return math.huge end, "inf" },
      { function() return -math.huge end, "-inf" },
    }
    for _, case in ipairs(cases) do
      local ok, err = pcall(frames, case[1])
      assert.is_false(ok, case[2])
      -- (raised at the caller's line, as the library's errors are: util.raise)
      local msg = "octonav.navigator.budget: option 'clock': the function returned " .. case[2]
        .. " (a finite number expected)"
      assert.are.equal(msg, tostring(err):sub(-#msg))
      assert.is_nil(tostring(err):find("navbudget.lua", 1, true))
    end
  end)

  it("that returns finite numbers is read as before (a clock of the spec's own: the same every run)", function()
    local t = 0
    assert.are.equal("moving", frames(function() return 0 end))
    assert.are.equal("moving", frames(function() t = t + 1e-4; return t end))
  end)

  it("is read checked by the collector's steps too (option gc)", function()
    local calls = 0
    local b = navigator.budget { ms = 4, gc = true, clock = function()
      calls = calls + 1
      if calls > 3 then return "late" end
      return 0
    end }
    local ok, err
    for _ = 1, 5 do
      for _ = 1, 2000 do local _ = {} end -- (garbage for the budget's collector step)
      ok, err = pcall(b.frame, b)
      if not ok then break end
    end
    assert.is_false(ok)
    local msg = "octonav.navigator.budget: option 'clock': the function returned a string (a finite number expected)"
    assert.are.equal(msg, tostring(err):sub(-#msg))
  end)
end)

-- ---- 3. a crowd whose next grid is built behind the frame ------------------------------------------
-- 600 agents on two threads (the build behind the frame starts at 512 slots: crowd.c CROWD_LIGHT_MIN),
-- on a 128^3 tree, a lattice 4 leaves apart, each sent 30 leaves on and a little up.
local function lattice(threads)
  local tree = octonav.tree.new { depth = 7 }
  local c = octonav.crowd.new(tree, { max_agents = 700, threads = threads })
  local ids = {}
  for i = 0, 599 do
    local a = { 8 + (i % 10) * 4, 8 + (math.floor(i / 10) % 10) * 4, 8 + math.floor(i / 100) * 4 }
    ids[i + 1] = assert(c:add { pos = a, radius = 0.5 })
    c:set_path(ids[i + 1], { { a[1] + 30, a[2] + 6, a[3] + 2 } })
  end
  return c, tree, ids
end

local function states_string(c)
  local t, n = c:states()
  local parts = {}
  for k = 1, 6 * n do parts[k] = ("%.17g"):format(t[k]) end
  return table.concat(parts, " ")
end

describe("a crowd whose next grid is built behind the frame on a pool thread", function()
  it("closes, and lets its tree close, with the build in flight", function()
    for round = 1, 5 do
      local c, tree = lattice(2)
      for _ = 1, round do assert.is_true(c:update(1 / 30)) end
      c:close() -- (the build posted by the last update: in flight or not begun)
      assert.has_error(function() c:update(1 / 30) end)
      tree:close()
    end
  end)

  it("is collected with the build in flight, and its tree closes after", function()
    local tree
    do
      local c
      c, tree = lattice(2)
      c:update(1 / 30)
      c:update(1 / 30)
    end
    collectgarbage()
    collectgarbage()
    tree:close() -- (refused while a crowd holds the tree: the collected crowd released it)
  end)

  it("answers as on one thread when its agents are all removed, read and added again between frames", function()
    local function run(threads)
      local c, tree, ids = lattice(threads)
      local log = {}
      for f = 1, 12 do
        assert.is_true(c:update(1 / 30))
        if f == 4 then
          -- all removed while the grid is built behind (tostring and stats wait for it)
          assert.matches("600 agents", tostring(c))
          for _, id in ipairs(ids) do c:remove(id) end
          assert.are.equal(0, c:stats().agents)
        elseif f == 6 then
          for i = 0, 599 do
            local a = { 10 + (i % 10) * 4, 8 + (math.floor(i / 10) % 10) * 4, 60 + math.floor(i / 100) * 4 }
            ids[i + 1] = assert(c:add { pos = a, radius = 0.5 })
            c:set_path(ids[i + 1], { { a[1] + 20, a[2] + 4, a[3] - 2 } })
          end
        elseif f == 8 then
          for k = 1, 600, 3 do c:set_goal(ids[k]) end -- (setters between frames: stop a third)
        end
        log[f] = states_string(c)
      end
      c:close()
      tree:close()
      return log
    end
    local one, two = run(1), run(2)
    for f = 1, 12 do assert.are.equal(one[f], two[f], "frame " .. f) end
    assert.are.equal("", one[5]) -- (emptied)
    assert.are.not_equal(one[7], one[12]) -- (moving again)
  end)
end)
