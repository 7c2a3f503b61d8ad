-- spec/131-crowd_tunnel_spec.lua -- the tunnel's group without the way (issue 33, csrc/crowd/rules.c):
-- bench/crowd.lua's tunnel at full size (two groups of 4 crossing through a passage one agent wide in
-- its middle) at seeds where agents of the group heading -x arrived late, checked from outside the
-- crowd's code. "In time": within twice the frames of an unobstructed walk.
local crossed_in_time = dofile("spec/support/tunnel.lua") -- (run, checked, the late agents listed)

describe("octonav.crowd's tunnel", function()
  -- An agent of the group without the way that meets an oncoming agent with the way while in the
  -- passage backs out of it, and waits outside while that agent is still ahead. Before, it held still
  -- where it stood, in the tunnel's mouth, and the other group could not get out past it: at these
  -- seeds 7, 6, 6 and 7 of 8 in time (agents 4, 6 and 8 late, at up to 1.20 of twice the walk).
  for _, seed in ipairs { 1, 6, 12, 16 } do
    it("crosses both groups in time at seed " .. seed, function()
      crossed_in_time(seed)
    end)
  end
end)
