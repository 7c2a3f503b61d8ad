-- bench/bake_stages.lua -- the bake's tile stage timed step by step on the calling thread's CPU clock
-- (core.thread_clock): per tile the geometry's selection, the tree's insertion, the tile's encoding and
-- its graph (core.route.build: the tile's box set and the portal weights), then the totals and each
-- step's share. The same steps as octonav.bake.tiles, without writing files.
-- Usage: lua5.4 bench/bake_stages.lua CONFIG.lua [FIRST [COUNT]]   (tiles FIRST .. FIRST+COUNT-1, from 0;
-- the config reads its own environment, e.g. NX=8 NZ=8 NY=1 DEPTH=9 SCALE=1 SEED=11 for the seed's world)
local core = require "octonav.core"
local config_mod = require "octonav.bake.config"
local geometry = require "octonav.bake.geometry"
local tilegrid = require "octonav.tilegrid"
local pack = require "octonav.pack"

local path = arg[1]
if not path then
  io.stderr:write("usage: lua5.4 bench/bake_stages.lua CONFIG.lua [FIRST [COUNT]]\n")
  os.exit(2)
end
local clock = core.thread_clock
local c0 = clock()
local cfg = config_mod.check(dofile(path))
local geo = assert(geometry.collect(cfg))
local grid = cfg.grid
local m = geometry.margin(cfg)
local buckets = geometry.bucket_triangles(geo, grid, m)
local setup = clock() - c0
local first = math.tointeger(tonumber(arg[2] or 0)) or 0
local count = math.tointeger(tonumber(arg[3] or grid.count)) or grid.count
local last = math.min(grid.count - 1, first + count - 1)

print("| tile | select s | insert s | encode s | graph s | portals | graph bytes |")
print("|---|---:|---:|---:|---:|---:|---:|")
local tot = { select = 0, insert = 0, encode = 0, graph = 0, n = 0 }
for t = first, last do
  local i, j, k = tilegrid.coords(grid, t)
  local a = clock()
  local lo, hi = tilegrid.bounds(grid, t)
  lo, hi = geometry.grow(lo, hi, m)
  local sub = geometry.select(geo, lo, hi, buckets[t] or {}, true)
  local b = clock()
  local tree = core.tree.new { tiles = { 1, 1, 1 }, depth = cfg.depth, scale = cfg.scale, radius = cfg.radius,
    origin = tilegrid.min(grid, i, j, k) }
  geometry.insert(tree, sub)
  local c = clock()
  local blob = tree:encode_tile(0, 0, 0)
  local d = clock()
  local graph = assert(core.route.build(tree, 0, 0, 0, { bound = cfg.connect.bound, stretch = cfg.connect.stretch,
    tag = pack.graph_tag(blob) }))
  local e = clock()
  tree:close()
  local info = core.route.info(graph)
  print(("| %d,%d,%d | %.3f | %.3f | %.3f | %.3f | %d | %d |"):format(i, j, k, b - a, c - b, d - c, e - d,
    info.portals, #graph))
  tot.select, tot.insert, tot.encode, tot.graph = tot.select + b - a, tot.insert + c - b, tot.encode + d - c,
    tot.graph + e - d
  tot.n = tot.n + 1
end
local all = setup + tot.select + tot.insert + tot.encode + tot.graph
print(("\n%d tiles, CPU s: config and geometry %.2f, select %.2f, insert %.2f, encode %.2f, graph %.2f (%.2f x the "
  .. "insertion); total %.2f"):format(tot.n, setup, tot.select, tot.insert, tot.encode, tot.graph,
  tot.graph / math.max(tot.insert, 1e-9), all))
