-- spec/support/slotworld.lua -- the slot world of spec/115 (world_radius, onetree): a wall at z 14-18 with a
-- gap 3 wide (x 4-7) and an opening 10 wide (x 20-30); S and G on either side. config(dir, agents,
-- one_tree) is its bake config; clearance(p) the distance from p to the nearest box (0 inside one),
-- computed here from the boxes (no tree, no clearance code of the library).
local M = {}
M.S, M.G = { 6, 8, 4 }, { 6, 8, 28 }
M.BOXES = {
  { min = { -8, -8, 14 }, max = { 4, 24, 18 } },
  { min = { 7, -8, 14 }, max = { 20, 24, 18 } },
  { min = { 30, -8, 14 }, max = { 40, 24, 18 } },
}

function M.config(dir, agents, one_tree)
  local geometry = {}
  for n, b in ipairs(M.BOXES) do geometry[n] = { box = b } end
  return { range = { min = { 0, 0, 0 }, max = { 32, 16, 32 } }, depth = 3, scale = 1, agents = agents,
    geometry = geometry, output = dir, progress = function() end, one_tree = one_tree }
end

function M.clearance(p)
  local best = math.huge
  for _, b in ipairs(M.BOXES) do
    local s = 0
    for a = 1, 3 do
      local d = math.max(b.min[a] - p[a], 0, p[a] - b.max[a])
      s = s + d * d
    end
    best = math.min(best, math.sqrt(s))
  end
  return best
end

return M
