-- spec/108-crowd_room_spec.lua -- an arrived agent makes room for one whose goal it covers (issue 33).
-- Two goals closer than two radii: the first agent to arrive held where it stopped, and the other could
-- never come within its arrive distance of its own goal (door seed 18 of bench/crowd.lua: 39 of 40
-- arrived in 10,000 frames, one held 0.46 leaf off by an arrived one).
local octonav = require "octonav"
local scen = dofile("bench/crowd.lua")

local function dist(p, q) return math.sqrt((p[1] - q[1]) ^ 2 + (p[2] - q[2]) ^ 2 + (p[3] - q[3]) ^ 2) end

describe("octonav.crowd making room", function()
  it("an arrived agent steps off the goal of another, which then arrives", function()
    local tree = octonav.tree.new { depth = 5 }
    local crowd = octonav.crowd.new(tree, { max_agents = 2 })
    local a = crowd:add { pos = { 4, 16, 16 }, radius = 0.5 }
    local b = crowd:add { pos = { 4, 16, 26 }, radius = 0.5 }
    local gb = { 16.3, 16, 16.2 }
    crowd:set_goal(a, 16, 16, 16)       -- 0.36 from b's goal: a arrives first and would cover it
    crowd:set_goal(b, gb[1], gb[2], gb[3])
    local arrived_b
    for f = 1, 600 do
      crowd:update(1 / 30)
      if not arrived_b and crowd:agent(b).state == "arrived" then arrived_b = f end
    end
    local A, B = crowd:agent(a), crowd:agent(b)
    assert.are.equal("arrived", A.state)
    assert.are.equal("arrived", B.state)
    assert.is_true(arrived_b < 300, tostring(arrived_b))
    assert.is_true(dist(B.pos, gb) <= B.arrive_dist, tostring(dist(B.pos, gb)))
    -- a stepped aside to clear b's goal of both radii (plus a twentieth of a leaf), and no further
    local off = dist(A.pos, gb)
    assert.is_true(off >= 1.0 and off < 1.2, tostring(off))
    assert.is_true(dist(A.pos, B.pos) >= 1.0 - 0.01 * 0.5, tostring(dist(A.pos, B.pos)))
    crowd:close()
  end)

  it("door seed 18: all 40 agents arrive (two goals 0.46 leaf apart), none stuck", function()
    local r = scen.run("door", { n = 40, seed = 18, frames = 3000, until_arrived = true })
    local msg = scen.format(r)
    assert.are.equal(40, r.arrived, msg)
    assert.are.equal(0, r.stuck_agents, msg)
    assert.are.equal(0, r.overlaps + r.walls, msg)
  end)
end)
