-- spec/support/tunnel.lua: bench/crowd.lua's tunnel at full size (two groups of 4 crossing through a
-- passage one agent wide in its middle) run at one seed until every agent arrived (3,000 frames at
-- most), checked from outside the crowd's code: no overlap, no wall entry, no limit exceeded, no agent
-- stuck, all 8 arrived within twice the frames of an unobstructed walk (specs 131 and 140).
-- Loaded with dofile("spec/support/tunnel.lua"); returns crossed_in_time(seed), which asserts (luassert)
-- and lists the late agents in a failure's message.
local assert = require "luassert"
local scen = dofile("bench/crowd.lua")

return function(seed)
  local r = scen.run("tunnel", { n = 4, seed = seed, frames = 3000, until_arrived = true })
  local msg = scen.format(r) .. " late: " .. scen.late(r)
  assert.are.equal(0, r.overlaps, msg)
  assert.are.equal(0, r.walls, msg)
  assert.are.equal(0, r.accel + r.turn + r.speed, msg)
  assert.are.equal(0, r.stuck_agents, msg)
  assert.are.equal(8, r.arrived, msg)
  assert.are.equal(8, r.in_time, msg)
end
