--- octonav quadtree2d: the seeds' quadtree case. A small built-in 2D maze is solved twice:
--   * with the dense 2D grid (octonav.grid, 8-connected octile A*, no corner cutting), and
--   * with the octree over the map extruded into columns: 2D cell (x, y) becomes the box
--     [x, x+1] x [0, N] x [y, y+1] (the map's rows run along z) in a tree one tile high, where
--     everything at y >= 1 is blocked, so agents move in a slab one leaf thick (queries at y = 0.5).
-- Both paths are drawn over the map as ASCII art, with their lengths and timings.
-- Run from the source tree after `make`: lua5.4 examples/quadtree2d.lua  (no outside data is used)
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("OCTONAV_BUILD") or "build") .. "/?.so;" .. package.cpath

local octonav = require "octonav"
local checker = require "octonav.checker"

-- '#' blocked, '.' free, S start, G goal
local MAZE = {
  "##############################################",
  "#S.....#...........#..........#..............#",
  "#......#...........#..........#..............#",
  "#......#....####...#...####...#....#######...#",
  "#......#....#......#......#...#..........#...#",
  "#...........#......#......#..............#...#",
  "#######.....#.............#......#########...#",
  "#...........#######.......#......#...........#",
  "#...........#.....#########......#...........#",
  "#....########.....#..............#....########",
  "#.................#......##......#...........#",
  "#.................#......##......#...........#",
  "#########....#########...........######......#",
  "#.......#....#.........................#.....#",
  "#.......#....#.........................#.....#",
  "#.......#....#.....######......#.......#.....#",
  "#............#..........#......#.............#",
  "#............#..........#......#............G#",
  "##############################################",
}

local H, W = #MAZE, #MAZE[1]
local blocked, start, goal = {}, nil, nil
for y, row in ipairs(MAZE) do
  assert(#row == W, "ragged maze row " .. y)
  for x = 1, W do
    local c = row:sub(x, x)
    blocked[(y - 1) * W + (x - 1)] = c == "#"
    if c == "S" then start = { x - 1, y - 1 } end
    if c == "G" then goal = { x - 1, y - 1 } end
  end
end
local function is_blocked(x, y)
  if x < 0 or y < 0 or x >= W or y >= H then return true end
  return blocked[y * W + x]
end

-- the dense 2D grid
local grid = octonav.grid.new(W, H)
for y = 0, H - 1 do
  for x = 0, W - 1 do
    if is_blocked(x, y) then grid:set(x, y) end
  end
end

-- the octree over the extruded map: tiles of 16^3 leaves, one tile high
local DEPTH = 4
local N = math.floor(2 ^ DEPTH)
local TX, TZ = math.floor((W + N - 1) / N), math.floor((H + N - 1) / N)
local tree = octonav.tree.new { depth = DEPTH, tiles = { TX, 1, TZ } }
tree:add_box({ 0, 1, 0 }, { TX * N, N, TZ * N })                          -- the slab y in [0, 1]
if TX * N > W then tree:add_box({ W, 0, 0 }, { TX * N, N, TZ * N }) end   -- beyond the map
if TZ * N > H then tree:add_box({ 0, 0, H }, { TX * N, N, TZ * N }) end
for y = 0, H - 1 do
  for x = 0, W - 1 do
    if is_blocked(x, y) then tree:add_box({ x, 0, y }, { x + 1, N, y + 1 }) end
  end
end
tree:compact()

-- time `fn` over enough repetitions for os.clock; returns milliseconds per call and the last results
local function timed(fn)
  local reps, t0 = 0, os.clock()
  local r1, r2
  repeat
    r1, r2 = fn()
    reps = reps + 1
  until os.clock() - t0 > 0.2 and reps >= 5
  return (os.clock() - t0) * 1000 / reps, r1, r2
end

local gms, gpath, ginfo = timed(function() return grid:find({ start[1], start[2], 0 }, { goal[1], goal[2], 0 }) end)
assert(gpath, "grid: " .. tostring(ginfo.reason))

local a = { start[1] + 0.5, 0.5, start[2] + 0.5 }
local b = { goal[1] + 0.5, 0.5, goal[2] + 0.5 }
local query = octonav.query.new(tree)
local results = {}
for _, case in ipairs {
  { "octree (default)", nil },
  { "octree (presets.theta)", octonav.presets.theta },
  { "octree (presets.seed)", octonav.presets.seed },
} do
  local ms, path, info = timed(function() return query:find(a, b, case[2]) end)
  assert(path, case[1] .. ": " .. tostring(info.reason))
  results[#results + 1] = { name = case[1], ms = ms, path = path, info = info }
end

-- every octree segment checked by the pure-Lua line-of-sight rule over the extruded voxels
local vox = {}
function vox.blocked(_, x, y, z)
  if y ~= 0 then return true end
  return is_blocked(x, z)
end
for _, r in ipairs(results) do r.valid = checker.path(vox, r.path) end

-- ASCII art: the map with a path drawn over it
local function canvas()
  local c = {}
  for y = 0, H - 1 do
    c[y] = {}
    for x = 0, W - 1 do c[y][x] = is_blocked(x, y) and "#" or " " end
  end
  return c
end
local function show(c, title)
  print(title)
  for y = 0, H - 1 do
    local row = {}
    for x = 0, W - 1 do row[#row + 1] = c[y][x] end
    print("  " .. table.concat(row))
  end
end

local gc = canvas()
for _, cell in ipairs(gpath) do gc[cell[2]][cell[1]] = "o" end
gc[start[2]][start[1]], gc[goal[2]][goal[1]] = "S", "G"

local oc = canvas()
local opath = results[1].path
for i = 1, #opath - 1 do
  local p, q = opath[i], opath[i + 1]
  local len = math.sqrt((q[1] - p[1]) ^ 2 + (q[3] - p[3]) ^ 2)
  local steps = math.max(1, math.ceil(len / 0.05))
  for k = 0, steps do
    local t = k / steps
    local x, z = p[1] + t * (q[1] - p[1]), p[3] + t * (q[3] - p[3])
    local cx, cz = math.floor(x), math.floor(z)
    if cx >= 0 and cx < W and cz >= 0 and cz < H and oc[cz][cx] == " " then oc[cz][cx] = "*" end
  end
end
for i = 2, #opath - 1 do
  local cx, cz = math.floor(opath[i][1]), math.floor(opath[i][3])
  if cx >= 0 and cx < W and cz >= 0 and cz < H then oc[cz][cx] = "+" end
end
oc[start[2]][start[1]], oc[goal[2]][goal[1]] = "S", "G"

local st = tree:stats()
print("== octonav: a 2D map as a quadtree (the octree over extruded columns) ==")
print(("map %d x %d, %d blocked cells; tree %s"):format(W, H,
  (function() local n = 0 for _, v in pairs(blocked) do if v then n = n + 1 end end return n end)(), tostring(tree)))
print(("octree: %d nodes, %d bytes; grid: %d cells"):format(st.nodes, st.bytes, W * H))
print()
show(gc, ("-- grid path (8-connected, 'o' = cells): length %.4f, %d cells --"):format(ginfo.length, #gpath))
print()
show(oc, ("-- octree path (default options; '+' = waypoints, '*' = cells crossed): length %.4f, %d waypoints --")
  :format(results[1].info.length, #opath))
print()
print(("%-24s %10s %10s %8s %10s %6s"):format("search", "length", "vs grid", "points", "ms/search", "valid"))
print(("%-24s %10.4f %10s %8d %10.3f %6s"):format("grid (octile A*)", ginfo.length, "1.0000", #gpath, gms, "yes"))
for _, r in ipairs(results) do
  print(("%-24s %10.4f %10.4f %8d %10.3f %6s"):format(r.name, r.info.length, r.info.length / ginfo.length,
    #r.path, r.ms, r.valid and "yes" or "NO"))
end
print(("\noctree search (default): %d cells expanded, %d cells in the corridor; grid: %d cells expanded")
  :format(results[1].info.expansions, results[1].info.cells, ginfo.expansions))
