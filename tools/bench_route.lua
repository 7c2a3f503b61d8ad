-- tools/bench_route.lua PACK [PAIRS] -- the world graph (C) on a baked pack: tile graph bytes against the
-- tree's bytes per tile, build time per tile, and route planning time (p50 / p99 over random pairs of free
-- points, fixed seed; each pair the fastest of 5 passes). Usage: lua5.4 tools/bench_route.lua /tmp/pack 200
-- (after `make`). Environment: COSTS=FILE writes each found route's cost; BOUND, STRETCH (route.build
-- options); FILES=1 reads the pack's own tiles/I_J_K.graph instead of building (no build times: for big
-- tiles); PREPARE=1 prepares the tree's boxes first (the planner's local searches then skip building a
-- tile's boxes).
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("OCTONAV_BUILD") or "build") .. "/?.so;" .. package.cpath
local octonav = require "octonav"
local core = require "octonav.core"
local route = core.route
local dir, npairs = assert(arg[1], "usage: bench_route.lua PACK [PAIRS]"), tonumber(arg[2] or 200)
local world = assert(octonav.world.load(dir))
local tree, nt = world.tree, world.tiles
local clock = core.clock
local g = route.world(tree)
local blob_bytes, ntiles, t0 = 0, 0, clock()
local build_times = {}
for k = 0, nt[3] - 1 do
  for j = 0, nt[2] - 1 do
    for i = 0, nt[1] - 1 do
      local c0 = clock()
      local blob
      if os.getenv("FILES") == "1" then
        local f = assert(io.open(("%s/tiles/%d_%d_%d.graph"):format(dir, i, j, k), "rb"))
        blob = f:read("*a")
        f:close()
      else
        blob = assert(route.build(tree, i, j, k, { stretch = tonumber(os.getenv("STRETCH") or 1),
          bound = tonumber(os.getenv("BOUND") or 0) }))
      end
      build_times[#build_times + 1] = clock() - c0
      blob_bytes = blob_bytes + #blob
      ntiles = ntiles + 1
      assert(g:add_tile(i, j, k, blob))
    end
  end
end
local build_s = clock() - t0
local ts = tree:stats()
local gs = g:stats()
table.sort(build_times)
print(("tiles %d; tree %d bytes (%.0f a tile); graph blobs %d bytes (%.0f a tile, %.1f%% of the tree); "
  .. "graph in memory %d bytes (%.1f%%); %d portals, %d edges, %d links, %d rects")
  :format(ntiles, ts.bytes, ts.bytes / ntiles, blob_bytes, blob_bytes / ntiles, 100 * blob_bytes / ts.bytes,
    gs.bytes, 100 * gs.bytes / ts.bytes, gs.portals, gs.edges, gs.links, gs.rects))
print(("build: %.1f ms total, %.3f ms a tile (p50 %.3f, max %.3f)"):format(build_s * 1e3, build_s * 1e3 / ntiles,
  build_times[math.floor((#build_times + 1) / 2)] * 1e3, build_times[#build_times] * 1e3))
-- random free pairs (fixed seed), far apart enough not to be "near"
local seed = 12345
local function rnd() seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 end
local lo, T = world.origin, world.tile_size
local function free_point()
  for _ = 1, 10000 do
    local p = { lo[1] + rnd() * nt[1] * T, lo[2] + rnd() * nt[2] * T, lo[3] + rnd() * nt[3] * T }
    if tree:locate(p) == "free" then return p end
  end
end
if os.getenv("PREPARE") == "1" then tree:prepare() end
local p = g:planner()
local times, found, fails, near, costs = {}, 0, {}, 0, {}
for _ = 1, npairs do
  local a, b = free_point(), free_point()
  local best = math.huge
  local r, why
  for _ = 1, 5 do
    local c0 = clock()
    r, why = p:plan(tree, a, b)
    local dt = clock() - c0
    if dt < best then best = dt end
  end
  if r and r.near then near = near + 1
  else
    if r and os.getenv("COSTS") then costs[#costs + 1] = ("%.6f"):format(r.cost) end
    times[#times + 1] = best
    if r then found = found + 1 else fails[why] = (fails[why] or 0) + 1 end
  end
end
table.sort(times)
local function pct(q) return times[math.max(1, math.ceil(q * #times))] * 1e3 end
local fl = {}
for k, v in pairs(fails) do fl[#fl + 1] = k .. " " .. v end
print(("plan: %d far pairs (%d near skipped), %d found, failed: %s; p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, "
  .. "max %.3f ms (best of 5)")
  :format(#times, near, found, table.concat(fl, ", "), pct(0.5), pct(0.9), pct(0.99), times[#times] * 1e3))
if os.getenv("COSTS") then -- each found route's cost, one a line (to compare two builds)
  local f = assert(io.open(os.getenv("COSTS"), "w"))
  f:write(table.concat(costs, "\n"), "\n")
  f:close()
end
