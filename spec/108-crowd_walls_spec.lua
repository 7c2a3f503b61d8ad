-- spec/108-crowd_walls_spec.lua -- no crowd agent enters a wall where the turn limit lets it brake
-- only along its heading (issue 33). The door scenario of bench/crowd.lua (40 agents of radius 0.5
-- through a 4 x 4 door) at seeds 3 and 8 had agents pressed against the wall beside the door 0.006 and
-- 0.007 leaf into it (more than 1 % of their radius) for 2 and 3 frames: the safe step's braking rule
-- let an agent approach a wall as fast as braking along the wall's normal allowed, while within its
-- turn limit it brakes along its heading. Checked from outside the crowd's code (bench/crowd.lua reads
-- the blocked leaves with tree:locate_status).
local scen = dofile("bench/crowd.lua")

local function entries(r)
  local s = {}
  for _, w in ipairs(r.wall_log) do
    s[#s + 1] = ("frame %d agent %d %.4f deep"):format(w.frame, w.agent, w.depth)
  end
  return table.concat(s, ", ")
end

describe("octonav.crowd walls under the turn limit", function()
  for _, seed in ipairs { 3, 8 } do
    it("door seed " .. seed .. ": 40 agents, no frame with an agent inside a wall", function()
      local r = scen.run("door", { n = 40, seed = seed, frames = 3000, until_arrived = true })
      local msg = scen.format(r) .. " entries: " .. entries(r)
      assert.are.equal(40, r.arrived, msg)
      assert.are.equal(0, r.walls, msg)
      -- not even within the checker's 1 % tolerance: the rule keeps the gap >= 0
      assert.is_true(r.worst_wall < 1e-6, msg .. (" worst %.6f"):format(r.worst_wall))
      assert.are.equal(0, r.overlaps, msg)
      assert.are.equal(0, r.accel + r.turn + r.speed, msg)
    end)
  end
end)
