--- octonav world demo: bake a built-in world of several tiles with a cave (a hole with two doors),
-- load the nav pack, plan the Cell route, and walk an agent from outside into the cave frame by
-- frame with the navigator (sliced searches with a per-frame budget, smoothing while moving).
-- Run from the source tree with `make demo` (or: lua5.4 examples/world_demo.lua after `make`).
-- No data from outside the project is used.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("OCTONAV_BUILD") or "build") .. "/?.so;" .. package.cpath

local octonav = require "octonav"

local function fmt(p) return ("(%.1f, %.1f, %.1f)"):format(p[1], p[2], p[3]) end

-- The world: 96 x 32 x 64 units (3 x 1 x 2 tiles of 32^3 leaves, one unit each), rolling terrain,
-- a wall across it with one gap, and a cave: a closed box shell with a doorway on each side.
local CAVE_MIN, CAVE_MAX = { 60, 8, 20 }, { 80, 20, 44 }
local function cave_shell(geometry)
  local x0, y0, z0 = CAVE_MIN[1], CAVE_MIN[2], CAVE_MIN[3]
  local x1, y1, z1 = CAVE_MAX[1], CAVE_MAX[2], CAVE_MAX[3]
  local function box(a, b) geometry[#geometry + 1] = { box = { min = a, max = b } } end
  box({ x0, y0, z0 }, { x1, y0 + 1, z1 })         -- floor
  box({ x0, y1 - 1, z0 }, { x1, y1, z1 })         -- roof
  box({ x0, y0, z0 }, { x1, y1, z0 + 1 })         -- -z wall
  box({ x0, y0, z1 - 1 }, { x1, y1, z1 })         -- +z wall
  -- the -x and +x walls, each with a doorway 4 wide and 5 high at z in [30, 34], y in [9, 14]
  for _, x in ipairs { x0, x1 - 1 } do
    box({ x, y0, z0 }, { x + 1, y1, 30 })
    box({ x, y0, 34 }, { x + 1, y1, z1 })
    box({ x, 14, 30 }, { x + 1, y1, 34 })
  end
end

local function build_config(dir)
  local heights, nx, nz = {}, 97, 65
  for k = 0, nz - 1 do
    for i = 0, nx - 1 do heights[#heights + 1] = 2 + 1.5 * math.sin(i / 9) * math.cos(k / 7) end
  end
  local geometry = {
    { heightfield = { origin = { 0, 0, 0 }, cell = 1, nx = nx, nz = nz, heights = heights } },
    { box = { min = { 40, 0, 0 }, max = { 42, 32, 26 } } },   -- a wall across the world ...
    { box = { min = { 40, 0, 38 }, max = { 42, 32, 64 } } },  -- ... with a gap at z in [26, 38]
  }
  cave_shell(geometry)
  return {
    range = { min = { 0, 0, 0 }, max = { 96, 32, 64 } },
    scale = 1, depth = 5, radius = 0,
    geometry = geometry,
    holes = {
      { name = "cave", min = CAVE_MIN, max = CAVE_MAX, scale = 0.5, kind = "under_terrain",
        doors = {
          { inside = { 62, 11, 32 }, outside = { 58, 11, 32 }, box = { min = { 60, 9, 30 }, max = { 61, 14, 34 } } },
          { inside = { 78, 11, 32 }, outside = { 82, 11, 32 }, box = { min = { 79, 9, 30 }, max = { 80, 14, 34 } } },
        } },
    },
    output = dir,
    progress = function() end,
  }
end

print("== octonav world demo ==")
local dir = os.tmpname()
os.remove(dir)
local t0 = octonav.core.clock()
assert(octonav.bake(build_config(dir)))
local bake_s = octonav.core.clock() - t0
local world = assert(octonav.world.load(dir))
local st = world.tree:stats()
local gs = world.graph:stats()
print(("baked %d x %d x %d tiles in %.2f s: %d nodes (%.1f KB), world graph %d portals (%.1f KB), hole 'cave' with %d doors")
  :format(world.tiles[1], world.tiles[2], world.tiles[3], bake_s, st.nodes, st.bytes / 1024, gs.portals,
    gs.bytes / 1024, #world.holes[1].doors))
local report = world:validate()
print("validate: " .. (report.ok and "ok" or "NOT ok"))
for _, d in ipairs(report.doors) do
  print(("  door %d: outside blocked in the cave tree %s, inside free %s, connected %s"):format(d.door,
    tostring(d.outside_blocked), tostring(d.inside_free), tostring(d.connected)))
end

-- the Cell route from the far side of the wall into the cave
local start, goal = { 10, 16, 10 }, { 70, 12, 32 }
print(("\nin_hole%s = %s, in_hole%s = %s"):format(fmt(start), tostring(world:in_hole(start)), fmt(goal),
  tostring(world:in_hole(goal))))
local route, cost = assert(world:plan(start, goal))
print(("Cell route (%d steps, cost %.1f):"):format(#route, cost or 0))
for i, step in ipairs(route) do
  print(("  %d. %s %s  enter %s  exit %s"):format(i, step.kind,
    step.kind == "tile" and ("tile " .. step.tile) or world.holes[step.hole].name, fmt(step.enter), fmt(step.exit)))
end

-- walk the agent: each frame the navigator gets a budget of 40 expansions and the agent moves 0.5
local nav = octonav.navigator.new(world, { checks_per_frame = 8 })
nav:go(goal)
local pos, speed, walked, frame = { start[1], start[2], start[3] }, 0.5, 0, 0
local status, wp
local trail = {}
repeat
  frame = frame + 1
  status, wp = nav:update(pos, 40)
  if status == "moving" then
    local d = { wp[1] - pos[1], wp[2] - pos[2], wp[3] - pos[3] }
    local len = math.sqrt(d[1] ^ 2 + d[2] ^ 2 + d[3] ^ 2)
    local step = math.min(speed, len)
    if len > 0 then
      for k = 1, 3 do pos[k] = pos[k] + d[k] / len * step end
      walked = walked + step
    end
  end
  if frame % 20 == 0 then trail[#trail + 1] = { pos[1], pos[3] } end
  if frame % 40 == 0 or status ~= "moving" then
    print(("frame %4d  %-8s at %s  %s"):format(frame, status, fmt(pos), world:in_hole(pos) and "(in the cave)" or ""))
  end
until status == "arrived" or status == "failed" or frame > 5000

print(("\n%s after %d frames, %.1f units walked; the agent is %s"):format(status, frame, walked,
  world:in_hole(pos) == "cave" and "inside the cave" or "NOT in the cave"))

-- a top view (x right, z down): '#' blocked at the agent's walking height, 'o' the agent's trail
print("\n-- top view at y = 12: '#' blocked, 'o' the trail, 'C' the cave's inside --")
local marks = {}
for _, p in ipairs(trail) do marks[math.floor(p[2] / 2) * 1000 + math.floor(p[1] / 2)] = true end
for z = 0, 62, 2 do
  local row = {}
  for x = 0, 94, 2 do
    local p = { x + 0.5, 12, z + 0.5 }
    local c
    if marks[math.floor(z / 2) * 1000 + math.floor(x / 2)] then c = "o"
    elseif world:in_hole(p) then c = "C"
    elseif world.tree:locate(p) == "free" then c = "."
    else c = "#" end
    row[#row + 1] = c
  end
  print(table.concat(row))
end
world:close()
os.execute("rm -rf '" .. dir .. "'")
