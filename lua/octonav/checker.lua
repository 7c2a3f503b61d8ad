--- octonav.checker: an independent line-of-sight checker in pure Lua, over any voxel map with a
-- `blocked(x, y, z)` method (outside counts as blocked). It implements the rule of csrc/core/raycast.h
-- without any C: the benchmark validates every path segment and every turn with it against the
-- map's own voxel list, and spec/02 compares the C walks against it. Only reading a map file uses the
-- core (core.read_file, which refuses a FIFO or a device at once instead of blocking on it).
local core = require "octonav.core"

local M = {}

--- The largest .3dmap voxel_map reads (the benchmark's largest is 2.6 MB): a bigger file is refused unread.
M.MAX_MAP_FILE = 256 * 1048576
---------------------------------------------------------------------------------------------------
-- The line-of-sight rule of csrc/core/raycast.h over the dense reference, written from the rule.
-- Per axis: the voxel index and the next plane crossing t = (k - a) / d. At an event (the smallest
-- t, all axes tying exactly with it cross together) the voxels around the crossing point are the
-- product over axes of {before, after} (crossing axes), {v} or {v-1, v} (the others: two when the
-- segment lies on a lattice plane of that axis). The free ones around the point just before must
-- reach, through free voxels of that set sharing faces, a free one just after. Events at t >= 1 are
-- ignored. Returns true, or false and the t of the failing event (0 when the start is blocked).


function M.visible(map, a, b)
  local d = { b[1] - a[1], b[2] - a[2], b[3] - a[3] }
  local v, step, vals, tnext = {}, {}, {}, {}
  for j = 1, 3 do
    if d[j] > 0 then
      step[j] = 1
      v[j] = math.floor(a[j])
      tnext[j] = ((v[j] + 1) - a[j]) / d[j]
      vals[j] = 1
    elseif d[j] < 0 then
      step[j] = -1
      v[j] = math.ceil(a[j]) - 1
      tnext[j] = (v[j] - a[j]) / d[j]
      vals[j] = 1
    else
      step[j] = 0
      local f = math.floor(a[j])
      if f == a[j] then
        v[j], vals[j] = f - 1, 2 -- on a lattice plane: voxels f-1 and f
      else
        v[j], vals[j] = f, 1
      end
      tnext[j] = math.huge
    end
  end

  -- start: the open interval just after t = 0
  local any = false
  for dx = 0, vals[1] - 1 do
    for dy = 0, vals[2] - 1 do
      for dz = 0, vals[3] - 1 do
        if not map:blocked(v[1] + dx, v[2] + dy, v[3] + dz) then any = true end
      end
    end
  end
  if not any then return false, 0 end

  while true do
    local t = math.min(tnext[1], tnext[2], tnext[3])
    if not (t < 1) then return true end
    -- choices per axis: list of {coordinate, side} with side "b" (before), "a" (after) or "-"
    local choice = {}
    for j = 1, 3 do
      if tnext[j] == t then
        choice[j] = { { v[j], "b" }, { v[j] + step[j], "a" } }
      elseif vals[j] == 2 then
        choice[j] = { { v[j], "-" }, { v[j] + 1, "-" } }
      else
        choice[j] = { { v[j], "-" } }
      end
    end
    -- the voxels around the point, as (i1, i2, i3) choice indices
    local nodes = {}
    for i1 = 1, #choice[1] do
      for i2 = 1, #choice[2] do
        for i3 = 1, #choice[3] do
          local c = { choice[1][i1], choice[2][i2], choice[3][i3] }
          local before, after = true, true
          for j = 1, 3 do
            if c[j][2] == "b" then after = false elseif c[j][2] == "a" then before = false end
          end
          nodes[#nodes + 1] = {
            idx = { i1, i2, i3 },
            free = not map:blocked(c[1][1], c[2][1], c[3][1]),
            before = before,
            after = after,
          }
        end
      end
    end
    -- breadth-first from the free "before" voxels through face-sharing free voxels
    local seen, queue, ok = {}, {}, false
    for n, node in ipairs(nodes) do
      if node.free and node.before then
        seen[n] = true
        queue[#queue + 1] = n
      end
    end
    local head = 1
    while head <= #queue and not ok do
      local cur = nodes[queue[head]]
      head = head + 1
      if cur.after then ok = true end
      for m, other in ipairs(nodes) do
        if not seen[m] and other.free then
          local diff = 0
          for j = 1, 3 do
            if cur.idx[j] ~= other.idx[j] then diff = diff + 1 end
          end
          if diff == 1 then
            seen[m] = true
            queue[#queue + 1] = m
          end
        end
      end
    end
    if not ok then return false, t end
    for j = 1, 3 do
      if tnext[j] == t then
        v[j] = v[j] + step[j]
        tnext[j] = ((step[j] > 0 and v[j] + 1 or v[j]) - a[j]) / d[j]
      end
    end
  end
end


--- A voxel map read straight from a Moving AI .3dmap file (no octree): blocked(x, y, z).
function M.voxel_map(path)
  local text, err = core.read_file(path, M.MAX_MAP_FILE)
  if not text then return nil, err end
  local W, H, D = text:match("^[^\n]*"):match("^voxel%s+(%d+)%s+(%d+)%s+(%d+)")
  if not W then return nil, path .. ":1: bad header" end
  W, H, D = tonumber(W), tonumber(H), tonumber(D)
  local set = {}
  for line in text:gmatch("[^\n]+") do
    local x, y, z = line:match("^%s*(%d+)%s+(%d+)%s+(%d+)")
    if x then set[tonumber(x) + W * (tonumber(y) + H * tonumber(z))] = true end
  end
  local map = { W = W, H = H, D = D }
  function map.blocked(_, x, y, z)
    if x < 0 or y < 0 or z < 0 or x >= W or y >= H or z >= D then return true end
    return set[x + W * (y + H * z)] == true
  end
  return map
end

--- The rule at a waypoint x where a path turns from a -> x to x -> b: the free voxels around x on the
-- side a comes from must reach, through free voxels around x sharing faces, a free voxel on the side b
-- leaves to (as at a crossing inside one segment). Around x: per axis {v} when x is inside voxel v's
-- slab, {f - 1, f} when it lies on the plane f; on such an axis the side is that of the direction in
-- (out), both when the direction runs along the plane. Without it a path could turn exactly on an
-- edge where two blocked voxels meet and slip through the zero-width gap between them.
function M.turn(map, a, x, b)
  local cand = {}
  for j = 1, 3 do
    local f = math.floor(x[j])
    cand[j] = f == x[j] and { f - 1, f } or { f }
  end
  -- is voxel index c of axis j on the side of x that direction dir (from x) points to?
  local function on_side(j, c, dir)
    local f = math.floor(x[j])
    if f ~= x[j] or dir == 0 then return true end
    if dir > 0 then return c == f end
    return c == f - 1
  end
  local nodes = {}
  for _, vx in ipairs(cand[1]) do
    for _, vy in ipairs(cand[2]) do
      for _, vz in ipairs(cand[3]) do
        local v, before, after = { vx, vy, vz }, true, true
        for j = 1, 3 do
          if not on_side(j, v[j], a[j] - x[j]) then before = false end -- the side a lies on
          if not on_side(j, v[j], b[j] - x[j]) then after = false end -- the side b lies on
        end
        nodes[#nodes + 1] = { v = v, free = not map:blocked(vx, vy, vz), before = before, after = after }
      end
    end
  end
  local seen, queue, head = {}, {}, 1
  for i, n in ipairs(nodes) do
    if n.free and n.before then seen[i] = true; queue[#queue + 1] = i end
  end
  while head <= #queue do
    local cur = nodes[queue[head]]
    head = head + 1
    if cur.after then return true end
    for i, o in ipairs(nodes) do
      if not seen[i] and o.free then
        local d = 0
        for j = 1, 3 do if o.v[j] ~= cur.v[j] then d = d + 1 end end
        if d == 1 then seen[i] = true; queue[#queue + 1] = i end
      end
    end
  end
  return false
end

--- Check a path (array of points): every segment by M.visible and every turn by M.turn. Returns true,
-- or false, the index of the first bad piece and what it is: "segment" (i = from point i to point
-- i + 1) or "turn" (at point i).
function M.path(map, path)
  for i = 1, #path - 1 do
    if not M.visible(map, path[i], path[i + 1]) then return false, i, "segment" end
    if i >= 2 and not M.turn(map, path[i - 1], path[i], path[i + 1]) then return false, i, "turn" end
  end
  return true
end

return M
