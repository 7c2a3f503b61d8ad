-- spec/support/workspy.lua -- counts the work a budgeted navigator really does, for the specs that
-- drive a work clock instead of the wall clock (spec/37, 41, 96, 102): wraps the binding's query and
-- tree methods and the planner's plan start; a step that finishes reports the expansions it really
-- did (fewer than it was allowed). install(on) with on = { step = function(did, n, status) end,
-- visible = function() end, plan = function() end } (each optional); uninstall() puts all back.
local octonav = require "octonav"
local planner = require "octonav.planner"

local M = {}
local qmethods, tmethods
do
  local tree = octonav.tree.new { depth = 1 }
  local probe = octonav.query.new(tree, { max_nodes = 16 })
  qmethods, tmethods = getmetatable(probe).__index, getmetatable(tree).__index
  probe:close()
end
M.qmethods, M.tmethods = qmethods, tmethods
local real = { step = qmethods.step, start = qmethods.start, result = qmethods.result,
  visible = tmethods.visible, start_named = planner.start_named }
M.real = real

function M.install(on)
  local done_by = setmetatable({}, { __mode = "k" })
  qmethods.start = function(q, ...)
    done_by[q] = 0
    return real.start(q, ...)
  end
  qmethods.step = function(q, n)
    local st = real.step(q, n)
    local did = n
    if st ~= "running" then
      local _, info = real.result(q)
      did = info.expansions - done_by[q]
    end
    assert(did >= 0 and did <= n, "a step did more than it was allowed")
    done_by[q] = done_by[q] + did
    if on.step then on.step(did, n, st) end
    return st
  end
  if on.visible then
    tmethods.visible = function(...)
      on.visible()
      return real.visible(...)
    end
  end
  if on.plan then
    planner.start_named = function(...)
      on.plan()
      return real.start_named(...)
    end
  end
end

function M.uninstall()
  qmethods.step, qmethods.start, tmethods.visible = real.step, real.start, real.visible
  planner.start_named = real.start_named
end

return M
