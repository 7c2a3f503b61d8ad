-- bench/flat.lua [--n N] [--passes P]: what a table per point costs in the hot point calls, on the Lua
-- running it (lua5.4 or luajit: `make bench-luajit` runs both side by side). A 128^3 tree with 400
-- random boxes; N random point pairs (200000), precomputed as numbers (what a game holds: x, y, z
-- fields of its entities). For each call, ns a call (fastest of P passes, 5) and bytes allocated a
-- call (the collector stopped), in these forms:
--   fresh   a new table per point, as in tree:visible({ ax, ay, az }, { bx, by, bz })
--   reused  the caller's two tables, refilled per call (the documented API, nothing allocated)
--   flat    the numbers themselves, tree:visible_xyz(ax, ay, az, bx, by, bz) and the like
-- and nav:update(position) (a moving navigator on a small world, updated at one position): its
-- position a new table per call or the caller's (its waypoint out is the path's own point, no table).
-- Run: lua5.4 bench/flat.lua (after `make`), luajit bench/flat.lua (after `make LUA=luajit`).
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("OCTONAV_BUILD") or "build") .. "/?.so;" .. package.cpath
local octonav = require "octonav"
local clock = octonav.core.thread_clock -- CPU time of this thread: a loaded machine's waits left out

local N, PASSES = 200000, 5
for i = 1, #arg, 2 do
  local v = tonumber(arg[i + 1])
  if arg[i] == "--n" and v then N = v
  elseif arg[i] == "--passes" and v then PASSES = v
  else io.stderr:write("bench/flat.lua: usage: [--n N] [--passes P]\n") os.exit(2) end
end

local st = 12345
local function rnd() -- a small LCG on doubles: the same numbers on every Lua
  st = (st * 1103515245 + 12345) % 2147483648
  return st / 2147483648
end

local tree = octonav.tree.new { depth = 7 }
for _ = 1, 400 do
  local x, y, z = rnd() * 120, rnd() * 120, rnd() * 120
  tree:add_box({ x, y, z }, { x + 2 + rnd() * 8, y + 2 + rnd() * 8, z + 2 + rnd() * 8 })
end
local P = {} -- 6 numbers a pair: ax, ay, az, bx, by, bz
for i = 0, N - 1 do
  for k = 1, 6 do P[6 * i + k] = 1 + rnd() * 126 end
  -- segments of about 16 units: long enough to read a few cells, short enough to be clear half the time
  for k = 4, 6 do P[6 * i + k] = math.max(0.5, math.min(127.5, P[6 * i + k - 3] + (P[6 * i + k] - 64) / 4)) end
end

-- one pass of a case: seconds, bytes allocated a call
local function run(fn)
  collectgarbage()
  collectgarbage("stop")
  local k0 = collectgarbage("count")
  local t0 = clock()
  local r = fn()
  local t = clock() - t0
  local bytes = (collectgarbage("count") - k0) * 1024 / N
  collectgarbage("restart")
  assert(r ~= nil)
  return t, bytes
end

local A, B = { 0, 0, 0 }, { 0, 0, 0 }
local cases = {
  { "visible", "fresh", function()
    local c = 0
    for i = 0, N - 1 do
      local o = 6 * i
      if tree:visible({ P[o + 1], P[o + 2], P[o + 3] }, { P[o + 4], P[o + 5], P[o + 6] }) then c = c + 1 end
    end
    return c
  end },
  { "visible", "reused", function()
    local c = 0
    for i = 0, N - 1 do
      local o = 6 * i
      A[1], A[2], A[3], B[1], B[2], B[3] = P[o + 1], P[o + 2], P[o + 3], P[o + 4], P[o + 5], P[o + 6]
      if tree:visible(A, B) then c = c + 1 end
    end
    return c
  end },
  { "locate_status", "fresh", function()
    local c = 0
    for i = 0, N - 1 do
      local o = 6 * i
      if tree:locate_status({ P[o + 1], P[o + 2], P[o + 3] }) == "free" then c = c + 1 end
    end
    return c
  end },
  { "locate_status", "reused", function()
    local c = 0
    for i = 0, N - 1 do
      local o = 6 * i
      A[1], A[2], A[3] = P[o + 1], P[o + 2], P[o + 3]
      if tree:locate_status(A) == "free" then c = c + 1 end
    end
    return c
  end },
  { "raycast", "fresh", function() -- a new table per point in, and the hit point out
    local s = 0
    for i = 0, N - 1 do
      local o = 6 * i
      local t, hit = tree:raycast({ P[o + 1], P[o + 2], P[o + 3] }, { P[o + 4], P[o + 5], P[o + 6] })
      if t then s = s + hit[2] end
    end
    return s
  end },
  { "raycast", "reused", function() -- the points reused; the hit point still a new table
    local s = 0
    for i = 0, N - 1 do
      local o = 6 * i
      A[1], A[2], A[3], B[1], B[2], B[3] = P[o + 1], P[o + 2], P[o + 3], P[o + 4], P[o + 5], P[o + 6]
      local t, hit = tree:raycast(A, B)
      if t then s = s + hit[2] end
    end
    return s
  end },
}
-- the flat forms, where this build has them
if tree.visible_xyz then
  cases[#cases + 1] = { "visible", "flat", function()
    local c = 0
    for i = 0, N - 1 do
      local o = 6 * i
      if tree:visible_xyz(P[o + 1], P[o + 2], P[o + 3], P[o + 4], P[o + 5], P[o + 6]) then c = c + 1 end
    end
    return c
  end }
end
if tree.locate_status_xyz then
  cases[#cases + 1] = { "locate_status", "flat", function()
    local c = 0
    for i = 0, N - 1 do
      local o = 6 * i
      if tree:locate_status_xyz(P[o + 1], P[o + 2], P[o + 3]) == "free" then c = c + 1 end
    end
    return c
  end }
end
if tree.raycast_xyz then
  cases[#cases + 1] = { "raycast", "flat", function()
    local s = 0
    for i = 0, N - 1 do
      local o = 6 * i
      local t, _, hy = tree:raycast_xyz(P[o + 1], P[o + 2], P[o + 3], P[o + 4], P[o + 5], P[o + 6])
      if t then s = s + hy end
    end
    return s
  end }
end

-- nav:update(position): the caller's position in (a table), the waypoint out (the path's own point:
-- no table made). A navigator on a one-tile world, moving, updated N times at one position: the
-- update's own work with the position a new table per call or the caller's table.
local dir = os.tmpname()
os.remove(dir)
assert(octonav.bake { range = { min = { 0, 0, 0 }, max = { 32, 32, 32 } }, depth = 5,
  geometry = { { box = { min = { 14, 0, 0 }, max = { 18, 24, 32 } } } }, output = dir, progress = function() end })
local world = assert(octonav.world.load(dir))
local nav = octonav.navigator.new(world)
local POS = { 2, 4, 16 }
nav:go({ 30, 4, 16 })
for _ = 1, 1000 do
  if nav:update(POS, 10000) == "moving" then break end
end
assert(nav:update(POS) == "moving")
cases[#cases + 1] = { "nav:update", "fresh", function()
  local c = 0
  for _ = 1, N do
    if nav:update({ POS[1], POS[2], POS[3] }) == "moving" then c = c + 1 end
  end
  return c
end }
cases[#cases + 1] = { "nav:update", "reused", function()
  local c = 0
  for _ = 1, N do
    if nav:update(POS) == "moving" then c = c + 1 end
  end
  return c
end }

-- the passes interleave the cases (a machine whose load changes meanwhile slows them alike); the
-- first pass also builds the tree's line-of-sight masks, which the fastest pass never includes
for _ = 1, PASSES do
  for _, c in ipairs(cases) do
    local t, b = run(c[3])
    if not c.best or t < c.best then c.best = t end
    c.bytes = b
  end
end
print(("bench/flat.lua on %s: %d calls a case, fastest of %d passes (thread CPU time)"):format(
  jit and jit.version or _VERSION, N, PASSES))
print("| call | form | ns a call | bytes a call |")
print("|---|---|---:|---:|")
for _, name in ipairs { "visible", "raycast", "locate_status", "nav:update" } do
  for _, c in ipairs(cases) do
    if c[1] == name then print(("| %s | %s | %.0f | %.0f |"):format(c[1], c[2], c.best / N * 1e9, c.bytes)) end
  end
end
nav:close()
world:close()
os.execute("rm -rf '" .. dir .. "'")
