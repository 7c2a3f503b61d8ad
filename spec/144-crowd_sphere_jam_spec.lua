-- spec/144-crowd_sphere_jam_spec.lua -- the sphere's centre jam (issue 33): 100 agents on a sphere of
-- radius 20 swapping to their antipodes (bench/crowd.lua's sphere at full size) all meet in its
-- centre, and keep right turns them about it as one. Since ORCA reads the nearest 8 neighbours
-- (session 23) that vortex formed too slowly at some seeds: at seed 5 one agent stood in the centre
-- 305 frames (moved less than a leaf: "stuck", issue 33 allows 300), 89 of 100 in time; at seed 12 one
-- stood 324 frames, 89 in time. rules.c's keep right turns an agent harder (45 degrees, not 27) once it
-- made no progress for 10 frames in open space: every agent in time, none stuck.
-- Checked from outside the crowd's code (bench/crowd.lua's checker) every frame.
local scen = dofile("bench/crowd.lua")

local function sphere(seed)
  local r = scen.run("sphere", { n = 100, R = 20, seed = seed, frames = 1200, until_arrived = true })
  local msg = scen.format(r) .. " late: " .. scen.late(r)
  assert.are.equal(0, r.overlaps, msg)
  assert.are.equal(0, r.walls, msg)
  assert.are.equal(0, r.accel + r.turn + r.speed, msg)
  return r, msg
end

describe("octonav.crowd sphere jam", function()
  for _, seed in ipairs { 5, 12 } do
    it(("swaps the sphere at seed %d: none stuck, every agent in time"):format(seed), function()
      local r, msg = sphere(seed)
      assert.are.equal(0, r.stuck_agents, msg)
      assert.are.equal(0, r.stuck_frames, msg)
      assert.are.equal(100, r.arrived, msg)
      assert.are.equal(100, r.in_time, msg)
    end)
  end
end)
