--- octonav.doorway: where a door without a box opens through its hole's bounds, one rule for the bake
-- (octonav.bake.holes seals every face but these openings) and the world at run time
-- (world:set_door blocks it when the door closes). The opening is where a face of the bounds cuts the
-- doorway: the free leaves of that face's leaf layer(s), in the hole's tree, joined within the layer
-- to the leaf where the segment from the door's inside point to its outside point leaves the bounds.
--
--   doorway.grid(h) -> n              leaves of the hole's bounds along each axis ({nx, ny, nz})
--   doorway.layers(h, n, a) -> minl, maxl   the leaf layers just inside the min and max faces on axis a
--   doorway.flood(tree, h, n, d, visit)     calls visit(a, layer, j, k) once for each leaf of the
--                                           opening (a: the face's axis; j, k: the leaf along the
--                                           other two axes, a % 3 + 1 and (a + 1) % 3 + 1); nothing
--                                           when the segment does not leave the bounds
local M = {}

function M.grid(h)
  local n = {}
  for a = 1, 3 do n[a] = math.max(1, math.ceil((h.max[a] - h.min[a]) / h.scale - 1e-9)) end
  return n
end

-- The first, the last, and the one before the last when the max face cuts a leaf (the block beyond
-- the bounds takes that leaf).
function M.layers(h, n, a)
  local minl, maxl = { 0 }, { n[a] - 1 }
  if h.min[a] + n[a] * h.scale > h.max[a] + 1e-9 * h.scale and n[a] >= 2 then maxl[2] = n[a] - 2 end
  return minl, maxl
end

-- Where the segment from inside to outside first leaves the bounds: its fraction t, the axis and the
-- side ("min" or "max") of the face; nil when it does not leave them.
local function exit(h, I, O)
  local t, axis, side = math.huge, nil, nil
  for a = 1, 3 do
    local dv = O[a] - I[a]
    if dv > 0 and O[a] > h.max[a] then
      local u = (h.max[a] - I[a]) / dv
      if u < t then t, axis, side = u, a, "max" end
    elseif dv < 0 and O[a] < h.min[a] then
      local u = (h.min[a] - I[a]) / dv
      if u < t then t, axis, side = u, a, "min" end
    end
  end
  return t, axis, side
end

function M.flood(tree, h, n, d, visit)
  local s, o, I, O = h.scale, h.min, d.inside, d.outside
  local t, a, side = exit(h, I, O)
  if not a then return end
  local b, c = a % 3 + 1, (a + 1) % 3 + 1
  local function leaf(v, ax) return math.max(0, math.min(n[ax] - 1, math.floor((v - o[ax]) / s))) end
  local minl, maxl = M.layers(h, n, a)
  for _, la in ipairs(side == "min" and minl or maxl) do
    local p, seen = {}, {}
    p[a] = o[a] + (la + 0.5) * s
    -- a depth-first walk over the layer's leaves; stack entries j * 2^20 + k
    local stack = { leaf(I[b] + t * (O[b] - I[b]), b) * 1048576 + leaf(I[c] + t * (O[c] - I[c]), c) }
    local top = 1
    while top > 0 do
      local jk = stack[top]
      top = top - 1
      if not seen[jk] then
        seen[jk] = true
        local j, k = math.floor(jk / 1048576), jk % 1048576
        p[b], p[c] = o[b] + (j + 0.5) * s, o[c] + (k + 0.5) * s
        if tree:locate(p) == "free" then
          visit(a, la, j, k)
          if j + 1 < n[b] then top = top + 1; stack[top] = (j + 1) * 1048576 + k end
          if j > 0 then top = top + 1; stack[top] = (j - 1) * 1048576 + k end
          if k + 1 < n[c] then top = top + 1; stack[top] = j * 1048576 + k + 1 end
          if k > 0 then top = top + 1; stack[top] = j * 1048576 + k - 1 end
        end
      end
    end
  end
end

return M
