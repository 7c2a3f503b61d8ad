-- spec/61-binding_finalizers_spec.lua -- issue 30, item 2: a finalizer (__gc of plain garbage) that
-- closes an object while a binding call uses it (csrc/lua/lua_util.h, "THE RULE", (b)): the collection
-- step of any allocation inside the call (a result table, a buffer) runs pending finalizers. Generated:
-- every binding function of spec/support/binding_calls.lua x every object it uses, with garbage whose
-- __gc closes that object pending while the call runs, run by the collection that the call's first
-- allocations past 64, 256, 1024, 4096 or 16384 bytes start (sync below; a fresh fixture each). When
-- the armed finalizer ran inside the call, the call must answer exactly as it does without the
-- finalizer (the close was deferred to the end of the call, or came after the object's last use), or,
-- when the close came before the call took the object, raise as on a closed object; and the object
-- must read as closed afterwards whenever the close was accepted. Before the fix, 10 of the 24 calls
-- that build results read freed memory or a NULL object (ASan). Run under ASan (tools/runtests.sh,
-- SANITIZE=1, build/san).
local compat = require "octonav.compat" -- Lua 5.1 .. 5.4 (issue 34)
-- Lua 5.4 only: the timing below is the generational collector's (collectgarbage("generational"), 5.4's),
-- and the garbage is tables with __gc (5.2+); elsewhere reported as skipped with the reason.
if _VERSION ~= "Lua 5.4" then
  describe("binding: a pending finalizer that closes an object during the call (generated)", function()
    pending("Lua 5.4 only: " .. _VERSION .. " has no generational collector (the finalizers' timing here)")
  end)
  return
end
local calls = dofile("spec/support/binding_calls.lua")

-- The finalizer chain (spec/support/finalizer_chain.lua): while armed, the next finalizer to run closes
-- the target once and records whether the close was accepted.
local chain = dofile("spec/support/finalizer_chain.lua").new()
local MARGINS = { 64, 256, 1024, 4096, 16384 }

-- the closed-object errors a call may raise when the close came before it took the object
local CLOSED = { "attempt to use a closed ", "its tree was closed", "its world graph was closed" }
local function closed_error(s)
  for _, m in ipairs(CLOSED) do
    if s:find(m, 1, true) then return true end
  end
  return false
end

local cases, fired_cases, deferred, before = 0, 0, 0, 0
local no_alloc, fired_in = {}, {}
-- the calls issue 30 found reading freed memory or a NULL object this way (item 2)
local ISSUE = { "q:find", "q:result", "ps:update", "s:update", "q:visited", "q:corridor", "t:areas", "t:boxes",
                "t:face_cells", "t:random_free" }

describe("binding: a pending finalizer that closes an object during the call (generated)", function()
  setup(function() chain:start() end)
  teardown(function() chain:stop() end)

  for _, c in ipairs(calls.calls) do
    for _, obj in ipairs(c.uses) do
      cases = cases + #MARGINS
      it(("%s, a finalizer closes %s"):format(c.name, obj), function()
        -- the reference: the call on a fresh fixture, no finalizer armed
        local ref = calls.fixture()
        local ref_args = c.args(ref)
        for _, k in ipairs(c.uses) do local _ = ref[k] end
        local n = #ref_args
        local want = calls.outcome(pcall(c.run, ref, compat.unpack(ref_args, 1, n)))
        calls.close_all(ref)
        local ran = 0
        for _, margin in ipairs(MARGINS) do
          local o = calls.fixture()
          local args = c.args(o)
          for _, k in ipairs(c.uses) do local _ = o[k] end
          local target = o[obj]
          chain:arm(function() target:close() end, margin)
          local got = calls.outcome(chain:disarm(pcall(c.run, o, compat.unpack(args, 1, n))))
          if chain.fired then
            ran = ran + 1
            if got == want then
              deferred = deferred + 1
            else
              assert.is_true(closed_error(got), ("%d bytes in: neither the answer without the finalizer (%s) nor a closed"
                .. " object's error: %s"):format(margin, want, got))
              before = before + 1
            end
            if chain.accepted then assert.matches("(closed)", tostring(target), 1, true) end
          end
          calls.close_all(o)
        end
        fired_cases = fired_cases + ran
        if ran > 0 then fired_in[c.name] = true end
        if ran == 0 then no_alloc[#no_alloc + 1] = c.name .. "/" .. obj end
      end)
    end
  end

  it("ran a finalizer inside most calls", function()
    print(("\n61-binding_finalizers: %d cases (call x object x allocation offset), a finalizer ran inside the call"
      .. " in %d (the same answer as without it: %d; a closed object's error: %d); calls that made no"
      .. " collection step: %s"):format(cases, fired_cases, deferred, before, table.concat(no_alloc, ", ")))
    assert.is_true(fired_cases >= 80, fired_cases .. " of " .. cases)
    for _, name in ipairs(ISSUE) do assert.is_true(fired_in[name], name .. " never ran a finalizer") end
  end)
end)
