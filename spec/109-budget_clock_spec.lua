-- spec/109-budget_clock_spec.lua -- the frame budget's `clock` option (issue 31, goal 1): "wall" (the
-- default, octonav.core.clock), "thread" (octonav.core.thread_clock: the calling thread's CPU time, so
-- that on a machine shared with other processes a frame's time is not spent while the game's thread
-- waits for a core), or a function; anything else raises naming the option.
--   1. With "thread" a frame's time is the thread's CPU time: a frame whose thread waited 100 ms (for
--      a child process: no CPU of its own) with ms = 20 still grants work; with "wall" it refuses.
--   2. With "thread" the C calls that stop at a deadline on the monotonic clock (q:step_until,
--      q:result_step) still run to it: budget:c_deadline() is the wall clock now plus the thread's
--      time left, and a navigator's search steps through q:step_until with that deadline.
-- Run: busted --lua=lua5.4 spec/109-budget_clock_spec.lua
local octonav = require "octonav"
local core = require "octonav.core"
local navigator = require "octonav.navigator"

local hw = dofile("spec/support/handworld.lua")

local function wait_off_cpu(seconds)
  -- the thread blocks in waitpid while a child sleeps: wall time passes, the thread's CPU time hardly
  local ok = os.execute(("sleep %g"):format(seconds))
  assert(ok == true or ok == 0, "os.execute sleep failed")
end

describe("budget option clock", function()
  it("accepts \"wall\", \"thread\" and a function, and reads the clock named", function()
    assert.equal(core.clock, navigator.budget({ ms = 2 }).clock)
    assert.equal(core.clock, navigator.budget({ ms = 2, clock = "wall" }).clock)
    assert.equal(core.thread_clock, navigator.budget({ ms = 2, clock = "thread" }).clock)
    local function f() return 0 end
    assert.equal(f, navigator.budget({ ms = 2, clock = f }).clock)
  end)

  it("rejects any other value, naming the option and the values it takes", function()
    local msg = "octonav.navigator.budget: option 'clock' must be \"wall\", \"thread\" or a function"
    for _, v in ipairs({ "cpu", "Thread", 5, true, {} }) do
      local ok, err = pcall(navigator.budget, { ms = 2, clock = v })
      assert.is_false(ok)
      assert.equal(msg, err)
    end
  end)

  it("\"thread\": a frame's time is not spent while the thread waits off the CPU; \"wall\": it is", function()
    local who_t, who_w = {}, {}
    local bt = navigator.budget { ms = 20, clock = "thread" }
    local bw = navigator.budget { ms = 20, clock = "wall" }
    bt:frame()
    bw:frame()
    wait_off_cpu(0.1)
    assert.equal(10, bt:take("expansions", who_t, 10))
    assert.equal(0, bw:take("expansions", who_w, 10))
    assert.equal(0, bt:stats().cut)
    assert.equal(1, bw:stats().cut)
  end)

  it("c_deadline: the wall clock's deadline with \"wall\", the wall clock now plus the thread's time left with \"thread\"", function()
    local bw = navigator.budget { ms = 20 }
    assert.is_nil(bw:c_deadline())
    bw:frame()
    assert.equal(bw.deadline, bw:c_deadline())
    local bt = navigator.budget { ms = 20, clock = "thread" }
    bt:frame()
    wait_off_cpu(0.1)
    local w0 = core.clock()
    local d = bt:c_deadline()
    local left = bt.deadline - core.thread_clock()
    assert.is_true(left > 0.010, "thread time left " .. left)
    -- (the two clocks read a few microseconds apart)
    assert.is_true(d >= w0 + left - 0.002 and d <= core.clock() + left + 0.002,
      ("c_deadline %.6f, wall %.6f, left %.6f"):format(d, w0, left))
  end)

  it("\"thread\": a navigator's search steps run in C to the wall deadline c_deadline gives", function()
    local w = hw.make_world { tiles = 2 }
    local q = octonav.query.new(w.tree, { max_nodes = 16 })
    local qm = getmetatable(q).__index
    q:close()
    local real = qm.step_until
    local calls, bad = 0, 0
    qm.step_until = function(self, n, deadline)
      calls = calls + 1
      -- a deadline on the monotonic clock's scale: after now, within the frame's ms of it
      local now = core.clock()
      if not (deadline > now - 0.05 and deadline <= now + 0.05) then bad = bad + 1 end
      return real(self, n, deadline)
    end
    local ok, err = pcall(function()
      local budget = navigator.budget { ms = 50, clock = "thread" }
      -- lead_distance = 0: no lead move. Under a budget with `ms` a navigator whose plan is not done at
      -- its first update heads for a lead point ("moving" before any search); the plan's joins are cut
      -- by the machine's clock (navigator_plan.lua join_limit: SLICE_MS), so whether the plan ended in
      -- the first frame depended on the machine's speed (an ASan build under load: not, and "moving"
      -- came from the lead move with no search stepped). Without it, "moving" is the searched path.
      local nav = navigator.new(w, { budget = budget, lead_distance = 0 })
      nav:go({ 28, 9, 9 })
      local st
      for _ = 1, 200 do
        budget:frame()
        st = nav:update({ 2, 8, 2 })
        if st == "moving" then break end
      end
      nav:close()
      assert.equal("moving", st)
    end)
    qm.step_until = real
    assert(ok, err)
    assert.is_true(calls >= 1, "q:step_until calls: " .. calls)
    assert.equal(0, bad)
  end)
end)
