--- octonav demo: bake a built-in scene, query it, save and reload it, and show what happened.
-- Run from the source tree with `make demo` (or: lua5.4 examples/demo.lua after `make`).
-- No data from outside the project is used.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("OCTONAV_BUILD") or "build") .. "/?.so;" .. package.cpath

local octonav = require "octonav"

local function fmt_point(p) return ("(%.1f, %.1f, %.1f)"):format(p[1], p[2], p[3]) end

--- The scene: 2 x 1 x 2 tiles of 64^3 leaves, 0.5 world units per leaf (64 x 32 x 64 units),
-- rolling terrain, a wall with a window, a floating hollow bunker (sealed with fill), and pillars.
local tree = octonav.tree.new {
  tiles = { 2, 1, 2 }, depth = 6, scale = 0.5, origin = { -32, 0, -32 }, radius = 0,
}

-- terrain: a heightfield of 65 x 65 samples, one every world unit
local heights, nx, nz = {}, 65, 65
for k = 0, nz - 1 do
  for i = 0, nx - 1 do
    heights[#heights + 1] = 2 + 1.5 * math.sin(i / 7) * math.cos(k / 9)
  end
end
tree:add_heightfield { origin = { -32, 0, -32 }, cell = 1, nx = nx, nz = nz, heights = heights }

-- a wall across the world at x = 0 with a window at z in [-4, 4], y in [8, 14]
tree:add_box({ -1, 0, -32 }, { 1, 24, -4 })
tree:add_box({ -1, 0, 4 }, { 1, 24, 32 })
tree:add_box({ -1, 0, -4 }, { 1, 8, 4 })
tree:add_box({ -1, 14, -4 }, { 1, 24, 4 })

-- pillars
for _, p in ipairs { { -20, -20 }, { -12, 18 }, { 14, -16 }, { 22, 10 } } do
  tree:add_box({ p[1] - 1.5, 0, p[2] - 1.5 }, { p[1] + 1.5, 20, p[2] + 1.5 })
end

-- a floating bunker: a closed box mesh (12 triangles); its interior is sealed with fill
local function box_mesh(mn, mx)
  local v = {}
  for c = 0, 7 do
    v[#v + 1] = (c % 2 == 0) and mn[1] or mx[1]
    v[#v + 1] = (math.floor(c / 2) % 2 == 0) and mn[2] or mx[2]
    v[#v + 1] = (math.floor(c / 4) % 2 == 0) and mn[3] or mx[3]
  end
  local quads = { { 1, 3, 7, 5 }, { 2, 6, 8, 4 }, { 1, 5, 6, 2 }, { 3, 4, 8, 7 }, { 1, 2, 4, 3 }, { 5, 7, 8, 6 } }
  local idx = {}
  for _, q in ipairs(quads) do
    for _, t in ipairs { { q[1], q[2], q[3] }, { q[1], q[3], q[4] } } do
      idx[#idx + 1], idx[#idx + 2], idx[#idx + 3] = t[1], t[2], t[3]
    end
  end
  return v, idx
end
local v, idx = box_mesh({ 10, 18, 10 }, { 18, 24, 18 })
tree:add_triangles(v, idx)
local sealed = tree:fill { 14, 21, 14 }
tree:compact()

print("== octonav demo ==")
print(tostring(tree))
local st = tree:stats()
print(("nodes %d, %d bytes resident (%.2f bytes/node, table load %.2f); bunker interior sealed in %d cells")
  :format(st.nodes, st.bytes, st.bytes_per_node, st.load_factor, sealed))

print("\n-- locate --")
for _, p in ipairs { { -20, 16, 0 }, { -20, 1, 0 }, { 0, 10, 0 }, { 14, 21, 14 }, { 40, 0, 0 } } do
  local what, cell = tree:locate(p)
  if what == "free" then
    print(("%-22s free cell of %.1f units at %s (tile %d,%d,%d)"):format(fmt_point(p), cell.size,
      fmt_point(cell.min), cell.tile[1], cell.tile[2], cell.tile[3]))
  else
    print(("%-22s %s"):format(fmt_point(p), what or cell))
  end
end

print("\n-- line of sight --")
local rays = {
  { "over the terrain, through the window", { -20, 11, 0 }, { 20, 11, 0 } },
  { "into the wall", { -20, 18, 10 }, { 20, 18, 10 } },
  { "down into the hills", { -25, 20, -25 }, { -25, 0.5, -25 } },
  { "past a pillar's edge", { -30, 10, -18.5 }, { -10, 10, -18.5 } },
}
for _, r in ipairs(rays) do
  local t, hit = tree:raycast(r[2], r[3])
  if t then
    print(("%-38s blocked at t = %.4f, %s"):format(r[1], t, fmt_point(hit)))
  else
    print(("%-38s clear"):format(r[1]))
  end
end

print("\n-- paths --")
-- from the west of the wall to the east of it: through the window, or over the wall's top
local q = octonav.query.new(tree)
local from, to = { -24, 11, -24 }, { 24, 11, 24 }
local shown
for _, preset in ipairs { { "default", nil }, { "seed", octonav.presets.seed }, { "astar", octonav.presets.astar } } do
  local p, info = q:find(from, to, preset[2])
  print(("%-8s length %6.2f  straight %6.2f  %4d expansions  %3d cells  %3d waypoints"):format(preset[1],
    info.length, math.sqrt((to[1] - from[1]) ^ 2 + (to[2] - from[2]) ^ 2 + (to[3] - from[3]) ^ 2),
    info.expansions, info.cells, #p))
  shown = shown or p
end
local pts = {}
for _, p in ipairs(shown) do pts[#pts + 1] = fmt_point(p) end
print("default waypoints: " .. table.concat(pts, " "))
-- the same search sliced, as a game runs it: at most 40 expansions a frame
local status, frames = q:start(from, to), 0
while status == "running" do
  frames = frames + 1
  status = q:step(40)
end
local sp, sinfo = q:result()
print(("sliced, 40 expansions a frame: %s after %d frames, %d waypoints, length %.2f"):format(status, frames, #sp,
  sinfo.length))
-- the prepared graph: each tile's free space merged into boxes, which searches then run over
local nboxes = tree:prepare()
local bp, binfo = q:find(from, to, octonav.presets.boxes)
print(("prepared: %d boxes (%.1f KB beside the tree); boxes preset: length %.2f, %d expansions, %d boxes, "
  .. "%d waypoints (graph %s)")
  :format(nboxes, tree:stats().box_bytes / 1024, binfo.length, binfo.expansions, binfo.cells, #bp, binfo.graph))
-- failures are results, with a reason
for _, case in ipairs { { "into the sealed bunker", { 14, 21, 14 } }, { "off the map", { 40, 10, 0 } } } do
  local p, info = q:find(from, case[2])
  print(("%-24s %s: %s%s"):format(case[1], tostring(p), info.reason,
    info.nearest and (", nearest free point " .. fmt_point(info.nearest)) or ""))
end

-- a top view of the slice y = 10: '#' blocked, '.' free, 'o' the default path seen from above
local on_path = {}
for i = 1, #shown - 1 do
  local a, b = shown[i], shown[i + 1]
  local n = math.ceil(math.sqrt((b[1] - a[1]) ^ 2 + (b[3] - a[3]) ^ 2) * 2) + 1
  for k = 0, n do
    local x, z = a[1] + (b[1] - a[1]) * k / n, a[3] + (b[3] - a[3]) * k / n
    on_path[(math.floor((x + 32) + 0.5)) .. "," .. (math.floor((z + 32) / 2))] = true
  end
end
print("\n-- slice at y = 10 (x right, z down; one char = 2 units), 'o' the default path from above --")
for z = -31, 31, 2 do
  local row = {}
  for x = -31, 31, 1 do
    local mark = on_path[(x + 32) .. "," .. math.floor((z + 31) / 2)]
    row[#row + 1] = mark and "o" or (tree:locate { x, 10, z } == "free") and "." or "#"
  end
  print(table.concat(row))
end

print("\n-- save and reload --")
local path = os.tmpname()
assert(tree:save(path))
local f = assert(io.open(path, "rb"))
local bytes = f:read("*a")
f:close()
local again = assert(octonav.tree.load(path))
assert(again:save(path))
f = assert(io.open(path, "rb"))
local bytes2 = f:read("*a")
f:close()
os.remove(path)
print(("file %d bytes (%.2f bytes/node); reloaded: %s; second save identical: %s"):format(#bytes,
  #bytes / st.nodes, tostring(again), tostring(bytes == bytes2)))
local same = true
for _, r in ipairs(rays) do
  if tree:raycast(r[2], r[3]) ~= again:raycast(r[2], r[3]) then same = false end
end
print("raycasts on the reloaded tree agree: " .. tostring(same))
