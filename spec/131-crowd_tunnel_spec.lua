-- spec/131-crowd_tunnel_spec.lua -- the tunnel's group without the way (issue 33, csrc/crowd/rules.c):
-- bench/crowd.lua's tunnel at full size (two groups of 4 crossing through a passage one agent wide in
-- its middle) at seeds where agents of the group heading -x arrived late, checked from outside the
-- crowd's code. "In time": within twice the frames of an unobstructed walk.
local scen = dofile("bench/crowd.lua")

local late = scen.late -- (the agents not in time, listed for a failure's message)

describe("octonav.crowd's tunnel", function()
  -- An agent of the group without the way that meets an oncoming agent with the way while in the
  -- passage backs out of it, and waits outside while that agent is still ahead. Before, it held still
  -- where it stood, in the tunnel's mouth, and the other group could not get out past it: at these
  -- seeds 7, 6, 6 and 7 of 8 in time (agents 4, 6 and 8 late, at up to 1.20 of twice the walk).
  for _, seed in ipairs { 1, 6, 12, 16 } do
    it("crosses both groups in time at seed " .. seed, function()
      local r = scen.run("tunnel", { n = 4, seed = seed, frames = 3000, until_arrived = true })
      local msg = scen.format(r) .. " late: " .. late(r)
      assert.are.equal(0, r.overlaps, msg)
      assert.are.equal(0, r.walls, msg)
      assert.are.equal(0, r.accel + r.turn + r.speed, msg)
      assert.are.equal(0, r.stuck_agents, msg)
      assert.are.equal(8, r.arrived, msg)
      assert.are.equal(8, r.in_time, msg)
    end)
  end
end)
