-- spec/108-crowd_radius_paths_spec.lua -- crowd paths searched for each agent's size (issue 33). The
-- crowd searched a point's path and pushed it out to the agent's radius; in the mixed-radii scenario
-- of bench/crowd.lua (12 agents of radii 0.5 to 4 swapping across a circle round a pillar) the pushed
-- paths of the large agents hugged the pillar and jammed: in 2,000 frames, at seed 8 8 of 12 arrived
-- (4 in time, 2 stuck), at seed 13 11 (5 in time, 3 stuck). Searched with the query's radius, every
-- agent arrives within twice its unobstructed walk.
local scen = dofile("bench/crowd.lua")

local function late(r)
  local s = {}
  for i = 1, r.agents do
    local f = r.arrive_frame[i]
    if not f or f > 2 * r.walk[i] then s[#s + 1] = ("%d: %s of %.0f"):format(i, tostring(f), 2 * r.walk[i]) end
  end
  return table.concat(s, ", ")
end

describe("octonav.crowd paths for each agent's radius", function()
  for _, seed in ipairs { 8, 13 } do
    it("mixed radii, seed " .. seed .. ": all 12 in time, none stuck", function()
      local r = scen.run("mixed", { n = 12, seed = seed, frames = 2000, until_arrived = true })
      local msg = scen.format(r) .. " late: " .. late(r)
      assert.are.equal(12, r.arrived, msg)
      assert.are.equal(12, r.in_time, msg)
      assert.are.equal(0, r.stuck_agents, msg)
      assert.are.equal(0, r.overlaps + r.walls + r.accel + r.turn + r.speed, msg)
    end)
  end
end)
