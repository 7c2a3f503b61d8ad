-- spec/109-budget_gc_steps_spec.lua -- the budget's collector (option gc) in small pieces (issue 31,
-- goal 1): on Lua 5.4 each collectgarbage("step") the budget asks for is at most 1,000 units of the
-- collector's work (Lua's incremental step: (KB x 1024 / 16) x multiplier, plus (2^basic step / 16) x
-- multiplier done ahead), while each KB allocated is still paid at Lua's own pace (6,400 units a KB).
-- Before, a step was 12,800 units (1 KB at the default multiplier 100 with a 1 KB basic step): at a
-- cycle's end that swept up to 12,800 objects in one call, 2-8 ms of thread CPU on the seed's world
-- with 1,000 navigators (bench/frames.lua --gc --clock thread). The collector is a spy here: every call
-- the budget makes is recorded, its work computed by Lua 5.4's formula (lgc.c's incstep), none run.
-- release_gc hands back the multiplier it found (Lua's default 100 here) and Lua's basic step 2^13.
-- Run: busted --lua=lua5.4 spec/109-budget_gc_steps_spec.lua
local navigator = require "octonav.navigator"

local LUA54 = _VERSION == "Lua 5.4"

describe("a budget with gc on Lua 5.4", function()
  local real = collectgarbage
  local calls, params
  local heap -- KB, what collectgarbage("count") answers
  local function spy(opt, a, b, c)
    if opt == "count" then return heap end
    if opt == "isrunning" then return params.running end
    if opt == "stop" then
      params.running = false
      return 0
    end
    if opt == "restart" then
      params.running = true
      return 0
    end
    if opt == "setstepmul" then -- (release_gc puts back the multiplier it found)
      local was = params.mul
      params.mul = a
      return was
    end
    if opt == "incremental" then
      if b ~= nil and b ~= 0 then params.mul = b end
      if c ~= nil and c ~= 0 then params.size = c end
      return "incremental"
    end
    if opt == "step" then
      -- lgc.c (5.4): the multiplier is kept in fours, with 1 added (getgcparam(p) | 1); the work of a
      -- step of `a` KB is a x 1024 / 16 x mul, and it goes on until (2^size / 16) x mul ahead
      -- (no // << | here: the file must load on Lua 5.1 and LuaJIT, which skip the test)
      local mul = math.floor(params.mul / 4) * 4 + 1
      local work = math.floor(a * 1024 / 16) * mul + math.floor(2 ^ params.size / 16) * mul
      calls[#calls + 1] = work
      return false
    end
    return real(opt, a, b, c)
  end
  before_each(function()
    calls, params, heap = {}, { mul = 100, size = 13, running = true }, 1000
    _G.collectgarbage = spy
  end)
  after_each(function() _G.collectgarbage = real end)

  it("asks for the collector's work in steps of at most 1,000 units, 6,400 or more a KB allocated", function()
    if not LUA54 then
      pending("Lua 5.4's incremental parameters only (5.1-5.3 and LuaJIT step as before)")
      return
    end
    local b = navigator.budget { ms = 4, gc = true, clock = function() return 0 end }
    b:frame() -- (takes the collector: stopped, its parameters set)
    heap = heap + 10 -- 10 KB allocated in the frame
    b:frame()
    local total, most = 0, 0
    for _, w in ipairs(calls) do
      total = total + w
      if w > most then most = w end
    end
    assert.is_true(#calls > 0, "no step asked")
    assert.is_true(most <= 1000, "largest step " .. most .. " units")
    assert.is_true(total >= 10 * 6400, "work for 10 KB: " .. total .. " units")
    b:release_gc()
    assert.equal(100, params.mul)
    assert.equal(13, params.size)
    assert.is_true(params.running)
  end)
end)
