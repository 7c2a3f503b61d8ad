-- spec/support/walker.lua: a navigator walked the way a game moves its agent, for the specs that
-- measure walks (spec/36, spec/115): each frame at most `step` toward the waypoint, onto it exactly.
-- walk(nav, a, b, opts) with opts = { step = 0.25, frames = 20000, clearance = nil }: goes to b from a,
-- closes the navigator and returns the last status, the length walked, the least clearance(p) over the
-- walked points sampled four times a step (nil without opts.clearance) and the last waypoint.
local geometry = dofile("spec/support/geometry.lua")
local dist = geometry.dist

local function walk(nav, a, b, opts)
  opts = opts or {}
  local step, clearance = opts.step or 0.25, opts.clearance
  nav:go(b)
  local pos, len, status, wp = { a[1], a[2], a[3] }, 0, nil, nil
  local least = clearance and clearance(a) or nil
  for _ = 1, opts.frames or 20000 do
    status, wp = nav:update(pos)
    if status == "arrived" or status == "failed" then break end
    if status == "moving" then
      local d = dist(pos, wp)
      local t = d > 0 and math.min(1, step / d) or 0
      local np = { pos[1] + (wp[1] - pos[1]) * t, pos[2] + (wp[2] - pos[2]) * t, pos[3] + (wp[3] - pos[3]) * t }
      if clearance then
        for s = 1, 4 do
          local u = s / 4
          least = math.min(least, clearance { pos[1] + (np[1] - pos[1]) * u, pos[2] + (np[2] - pos[2]) * u,
            pos[3] + (np[3] - pos[3]) * u })
        end
      end
      len = len + dist(pos, np)
      pos = np
    end
  end
  nav:close()
  return status, len, least, wp
end

return { walk = walk }
