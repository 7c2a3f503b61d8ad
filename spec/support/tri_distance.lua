-- spec/support/tri_distance.lua: the Euclidean distance from a point to triangles, computed here and
-- nowhere else (spec/115's independent clearance check: no tree, no library code). Loaded with
-- dofile; returns { tri_dist(p, {a, b, c}), index(T, cell, reach) -> dist(p), read_obj(path) -> T }.
-- closest distance from p to triangle (a, b, c) (Ericson, Real-Time Collision Detection 5.1.5)
local function sub(u, v) return { u[1] - v[1], u[2] - v[2], u[3] - v[3] } end
local function dot(u, v) return u[1] * v[1] + u[2] * v[2] + u[3] * v[3] end
local function closest(p, a, b, c)
  local ab, ac, ap = sub(b, a), sub(c, a), sub(p, a)
  local d1, d2 = dot(ab, ap), dot(ac, ap)
  if d1 <= 0 and d2 <= 0 then return a end
  local bp = sub(p, b)
  local d3, d4 = dot(ab, bp), dot(ac, bp)
  if d3 >= 0 and d4 <= d3 then return b end
  local vc = d1 * d4 - d3 * d2
  if vc <= 0 and d1 >= 0 and d3 <= 0 then
    local v = d1 / (d1 - d3)
    return { a[1] + v * ab[1], a[2] + v * ab[2], a[3] + v * ab[3] }
  end
  local cp = sub(p, c)
  local d5, d6 = dot(ab, cp), dot(ac, cp)
  if d6 >= 0 and d5 <= d6 then return c end
  local vb = d5 * d2 - d1 * d6
  if vb <= 0 and d2 >= 0 and d6 <= 0 then
    local w = d2 / (d2 - d6)
    return { a[1] + w * ac[1], a[2] + w * ac[2], a[3] + w * ac[3] }
  end
  local va = d3 * d6 - d5 * d4
  if va <= 0 and (d4 - d3) >= 0 and (d5 - d6) >= 0 then
    local w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
    return { b[1] + w * (c[1] - b[1]), b[2] + w * (c[2] - b[2]), b[3] + w * (c[3] - b[3]) }
  end
  local denom = 1 / (va + vb + vc)
  local v, w = vb * denom, vc * denom
  return { a[1] + ab[1] * v + ac[1] * w, a[2] + ab[2] * v + ac[2] * w, a[3] + ab[3] * v + ac[3] * w }
end
local function tri_dist(p, t)
  local q = closest(p, t[1], t[2], t[3])
  local d = sub(p, q)
  return math.sqrt(dot(d, d))
end
-- triangles bucketed in cells of `cell` units, each into every cell its box grown by `reach` meets;
-- dist(p) -> the distance to the nearest triangle, or `reach` when none lies within it
local function index(T, cell, reach)
  local grid = {}
  local function key(i, j, k) return (i * 4096 + j) * 4096 + k end
  local f = math.floor
  for _, t in ipairs(T) do
    local lo, hi = {}, {}
    for a = 1, 3 do
      lo[a] = f((math.min(t[1][a], t[2][a], t[3][a]) - reach) / cell)
      hi[a] = f((math.max(t[1][a], t[2][a], t[3][a]) + reach) / cell)
    end
    for i = lo[1], hi[1] do for j = lo[2], hi[2] do for k = lo[3], hi[3] do
      local kk = key(i, j, k)
      local l = grid[kk]
      if not l then l = {}; grid[kk] = l end
      l[#l + 1] = t
    end end end
  end
  return function(p)
    local l = grid[key(f(p[1] / cell), f(p[2] / cell), f(p[3] / cell))]
    local best = reach
    for _, t in ipairs(l or {}) do
      local d = tri_dist(p, t)
      if d < best then best = d end
    end
    return best
  end
end
-- The triangles of an OBJ file (faces fanned), each { a, b, c } of points.
local function read_obj(path)
  local V, T = {}, {}
  for line in io.lines(path) do
    local x, y, z = line:match("^v%s+(%S+)%s+(%S+)%s+(%S+)")
    if x then
      V[#V + 1] = { tonumber(x), tonumber(y), tonumber(z) }
    elseif line:match("^f%s") then
      local idx = {}
      for tok in line:gmatch("%s(%S+)") do
        local n = tonumber(tok:match("^(%-?%d+)"))
        idx[#idx + 1] = n < 0 and #V + 1 + n or n
      end
      for n = 2, #idx - 1 do T[#T + 1] = { V[idx[1]], V[idx[n]], V[idx[n + 1]] } end
    end
  end
  return T
end
return { tri_dist = tri_dist, index = index, read_obj = read_obj }
