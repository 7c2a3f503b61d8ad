-- spec/support/geometry.lua: small point helpers of the specs (points are arrays {x, y, z}).
-- Loaded with dofile("spec/support/geometry.lua"); returns { dist, step_toward, least_along, formatter,
-- fmt }.
local sqrt = math.sqrt

-- Euclidean distance of two points.
local function dist(p, q)
  local dx, dy, dz = p[1] - q[1], p[2] - q[2], p[3] - q[3]
  return sqrt(dx * dx + dy * dy + dz * dz)
end

-- A simulated agent's move of one frame (spec/11, spec/12): a new point `speed` from pos toward wp,
-- or a copy of wp when it is that close.
local function step_toward(pos, wp, speed)
  local d = dist(pos, wp)
  if d <= speed then return { wp[1], wp[2], wp[3] } end
  local f = speed / d
  return { pos[1] + (wp[1] - pos[1]) * f, pos[2] + (wp[2] - pos[2]) * f, pos[3] + (wp[3] - pos[3]) * f }
end

-- least_along(path, per_leaf, f): the least f(p) over points p sampled along every leg of the path,
-- per_leaf a leaf of its length (at least once a leg, both ends included): a path's clearance when f is a
-- point's distance to blocked space (spec/99 to voxels, spec/173 to boxes and the border).
local function least_along(path, per_leaf, f)
  local least = math.huge
  for i = 1, #path - 1 do
    local a, b = path[i], path[i + 1]
    local steps = math.max(1, math.ceil(dist(a, b) * per_leaf))
    for s = 0, steps do
      local t = s / steps
      local v = f({ a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2]), a[3] + t * (b[3] - a[3]) })
      if v < least then least = v end
    end
  end
  return least
end

-- formatter(digits): a function p -> "(x, y, z)" with each coordinate as %.<digits>g.
local function formatter(digits)
  local pattern = ("(%%.%dg, %%.%dg, %%.%dg)"):format(digits, digits, digits)
  return function(p) return pattern:format(p[1], p[2], p[3]) end
end

-- fmt: every bit of the coordinates, "(%.17g, %.17g, %.17g)".
return { dist = dist, step_toward = step_toward, least_along = least_along, formatter = formatter,
  fmt = formatter(17) }
