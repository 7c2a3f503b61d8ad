-- spec/98-crowd_arrivals_spec.lua -- the crowd's arrivals and deadlocks (issue 33): scenarios of
-- bench/crowd.lua at full size, checked from outside the crowd's code; an agent arrives "in time"
-- within twice the frames of an unobstructed walk (the search's path at top speed, plus reaching it),
-- and "stuck" is an agent not arrived that moved less than a leaf over 300 frames.
local scen = dofile("bench/crowd.lua")

local late = scen.late -- (the agents not in time, listed for a failure's message)

local function rules(r, msg)
  assert.are.equal(0, r.overlaps, msg)
  assert.are.equal(0, r.walls, msg)
  assert.are.equal(0, r.accel + r.turn + r.speed, msg)
  assert.are.equal(0, r.stuck_agents, msg)
end

describe("octonav.crowd arrivals", function()
  it("swaps 100 agents on a sphere to their antipodes in time, none stuck (the centre jam turns)", function()
    local r = scen.run("sphere", { n = 100, R = 20, frames = 1200, until_arrived = true })
    local msg = scen.format(r) .. " late: " .. late(r)
    rules(r, msg)
    assert.are.equal(100, r.arrived, msg)
    assert.is_true(r.in_time >= 98, msg)
  end)

  it("crosses two groups through a one-agent-wide tunnel: one group has the way, none stuck", function()
    local r = scen.run("tunnel", { n = 4, frames = 1500, until_arrived = true })
    local msg = scen.format(r) .. " late: " .. late(r)
    rules(r, msg)
    assert.are.equal(8, r.arrived, msg)
    -- 8 of 8 in time since the paths are searched for each agent's radius (7 before: the last at 2.06
    -- walks); over seeds 1-20 (bench/crowd.lua --seeds 1-20 tunnel) 149 of 160 since the hold in
    -- passages (133 before; spec/123), 156 since backing out of them and the wedge rule (spec/131;
    -- backing out alone left this layout 5 of 8 in time, one agent stuck): issue 33's 98 % not met
    assert.are.equal(8, r.in_time, msg)
  end)
end)
