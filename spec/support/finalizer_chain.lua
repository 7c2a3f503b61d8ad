-- spec/support/finalizer_chain.lua -- garbage whose finalizer runs an action inside the call under test,
-- timed by Lua 5.4's generational collector (spec/61: a finalizer closes an object a binding call uses;
-- spec/175: one adds agents while a crowd copies them). Lua 5.4 only: the callers skip elsewhere.
--
-- Every finalizer of the chain plants the next one, so garbage with a finalizer is always pending;
-- once armed, the next one to run does the action (once, under pcall). In generational mode a minor
-- collection runs every pending finalizer at its end, and starts once the heap has grown by MINOR
-- percent since the last one: arm(action, margin) makes a collection now, then garbage up to `margin`
-- bytes short of the next one, so the call's first allocations past `margin` bytes run it.
local M = { MINOR = 1 }

local Chain = {}
Chain.__index = Chain

--- M.new() -> a chain: c.fired (the action ran), c.accepted (it returned without an error), c.err.
function M.new()
  local c = setmetatable({ armed = false, fired = false, accepted = nil, err = nil, action = nil }, Chain)
  c.mt = {
    __gc = function()
      if c.armed then
        c.armed = false
        c.fired = true
        c.accepted, c.err = pcall(c.action)
      end
      setmetatable({}, c.mt)
    end,
  }
  return c
end

--- c:start(): the generational collector and 400 pending finalizers (a spec's setup).
function Chain:start()
  collectgarbage("generational", M.MINOR, 100)
  for _ = 1, 400 do setmetatable({}, self.mt) end
end

--- c:stop(): disarmed, the collector back to Lua 5.4's incremental defaults (a spec's teardown).
function Chain:stop()
  self.armed = false
  collectgarbage("incremental", 200, 100, 13)
  collectgarbage("collect")
end

--- c:arm(action, margin): the next finalizer does action, run by an allocation `margin` bytes on.
function Chain:arm(action, margin)
  self.action, self.fired, self.accepted, self.err = action, false, nil, nil
  collectgarbage("step", 0)
  local t0 = collectgarbage("count") * 1024
  local threshold = t0 + math.floor(t0 / 100) * M.MINOR
  while collectgarbage("count") * 1024 < threshold - margin do
    local _ = {}
  end
  self.armed = true
end

--- c:disarm(...) -> ...: the call's results as they are, the chain disarmed before anything else
--- allocates.
function Chain:disarm(...)
  self.armed = false
  return ...
end

return M
