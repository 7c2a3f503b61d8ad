-- spec/108-crowd_radius_paths_spec.lua -- crowd paths searched for each agent's size (issue 33). The
-- crowd searched a point's path and pushed it out to the agent's radius; in the mixed-radii scenario
-- of bench/crowd.lua (12 agents of radii 0.5 to 4 swapping across a circle round a pillar) the pushed
-- paths of the large agents hugged the pillar and jammed: in 2,000 frames, at seed 8 8 of 12 arrived
-- (4 in time, 2 stuck), at seed 13 11 (5 in time, 3 stuck). Searched with the query's radius, every
-- agent arrives within twice its unobstructed walk.
local octonav = require "octonav"
local scen = dofile("bench/crowd.lua")

local late = scen.late -- (the agents not in time, listed for a failure's message)

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

  -- where no way keeps ceil(radius) leaves from blocked space, the crowd searches as a point
  local function run(tree, radius, from, to)
    local crowd = octonav.crowd.new(tree, { max_agents = 1 })
    local a = crowd:add { pos = from, radius = radius }
    crowd:set_goal(a, to[1], to[2], to[3])
    local st
    for _ = 1, 900 do
      crowd:update(1 / 30)
      st = crowd:agent(a).state
      if st ~= "moving" and st ~= "planning" then break end
    end
    local t = crowd:agent(a)
    crowd:close()
    return st, t
  end

  it("a goal nearer a wall than ceil(radius) leaves: the point's search, arrived", function()
    local tree = octonav.tree.new { depth = 5 }
    tree:add_box({ 14, 0, 0 }, { 16, 24, 32 })
    local q = octonav.query.new(tree)
    local p, info = q:find({ 4, 4, 16 }, { 17.6, 4, 16 }, { radius = 1.5 })
    assert.is_nil(p)
    assert.are.equal("goal_blocked", info.reason)
    local st, t = run(tree, 1.5, { 4, 4, 16 }, { 17.6, 4, 16 })
    assert.are.equal("arrived", st)
    assert.is_true(math.abs(t.pos[1] - 17.6) < 1.5 and t.pos[1] >= 16 + 1.5 - 0.015, tostring(t.pos[1]))
    q:close()
  end)

  it("a hole narrower than its rounded-up radius: the point's search, through it", function()
    local tree = octonav.tree.new { depth = 5 }
    tree:add_box({ 14, 0, 0 }, { 16, 14, 32 })
    tree:add_box({ 14, 17, 0 }, { 16, 32, 32 })
    tree:add_box({ 14, 14, 0 }, { 16, 17, 14 })
    tree:add_box({ 14, 14, 17 }, { 16, 17, 32 }) -- a hole of 3 x 3 leaves; radius 1.2 rounds up to 2
    local q = octonav.query.new(tree)
    local p, info = q:find({ 6, 15.5, 15.5 }, { 26, 15.5, 15.5 }, { radius = 1.2 })
    assert.is_nil(p)
    assert.are.equal("unreachable", info.reason)
    local st, t = run(tree, 1.2, { 6, 15.5, 15.5 }, { 26, 15.5, 15.5 })
    assert.are.equal("arrived", st)
    assert.is_true(t.pos[1] > 24, tostring(t.pos[1]))
    q:close()
  end)
end)
