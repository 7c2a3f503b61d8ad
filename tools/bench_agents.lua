-- tools/bench_agents.lua WORLD [PASSES] -- several agent sizes from one bake (issue 16) against one-agent
-- bakes: WORLD is dungeon or terrain (../shared/data/worlds/WORLD.lua, its defaults: dungeon.obj at 0.5 m
-- leaves; terrain 16x2x16 at 2 m leaves). Bakes the world for radius R1 alone, R2 alone, then for both as
-- agents { small = R1, large = R2 } (R = 0, 0.5 for the dungeon; 0, 1 for the terrain), each the fastest of
-- PASSES (default 3) bake.run passes, and prints per agent its file bytes (tiles, graphs, holes: the
-- bake's summary) and memory once loaded (world:stats(): tree, world graph, holes' trees), and per bake
-- its CPU seconds (os.clock), wall seconds and the pack's load time.
-- Usage (after `make`): lua5.4 tools/bench_agents.lua dungeon 5. Environment: DATA (default ../shared/data),
-- OUT (scratch pack directory, default a temporary name; removed at the end).
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("OCTONAV_BUILD") or "build") .. "/?.so;" .. package.cpath
local octonav = require "octonav"
local bake = require "octonav.bake"
local clock = require("octonav.core").clock

local which, passes = arg[1], tonumber(arg[2] or 3)
if which ~= "dungeon" and which ~= "terrain" then error("usage: bench_agents.lua dungeon|terrain [PASSES]", 0) end
local base = (os.getenv("DATA") or "../shared/data") .. "/worlds/"
local out = os.getenv("OUT") or (os.tmpname() .. ".pack")

-- The world's config with `agents` (or `radius` for one agent) in place of its radius.
local function config(agents)
  local c = dofile(base .. which .. ".lua")
  for _, g in ipairs(c.geometry) do
    if g.obj then g.obj = base .. g.obj end -- relative to the config's directory
  end
  c.radius = nil
  if #agents == 1 then c.radius = agents[1].radius else c.agents = agents end
  c.output, c.progress = out, function() end
  return c
end

local R = which == "dungeon" and { 0, 0.5 } or { 0, 1 }
local runs = {
  { label = ("radius %g alone"):format(R[1]), agents = { { name = "small", radius = R[1] } } },
  { label = ("radius %g alone"):format(R[2]), agents = { { name = "large", radius = R[2] } } },
  { label = "both agents", agents = { { name = "small", radius = R[1] }, { name = "large", radius = R[2] } } },
}
print(("%s, fastest of %d bakes (CPU seconds of this process: os.clock; wall seconds are bound by each"
  .. " file's fsync and drift with the machine's other I/O)"):format(which, passes))
print("| bake | agent | radius | tile bytes | graph bytes | hole bytes | file bytes | tree bytes | graph bytes | "
  .. "holes' trees | memory | bake CPU s | bake wall s | load s |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for _, r in ipairs(runs) do
  local best, cpu
  for _ = 1, passes do
    os.execute("rm -rf '" .. out .. "'")
    local c0 = os.clock()
    local s = assert(bake.run(config(r.agents)))
    local c = os.clock() - c0
    if not cpu or c < cpu then cpu = c end
    if not best or s.seconds < best.seconds then best = s end
  end
  local t0 = clock()
  local w = assert(octonav.world.load(out))
  local load_s = clock() - t0
  local st = w:stats()
  w:close()
  for n, a in ipairs(best.agents) do
    local m = st.agents[n]
    print(("| %s | %s | %g | %d | %d | %d | %d | %d | %d | %d | %d | | | |"):format(r.label, r.agents[n].name, a.radius,
      a.tile_bytes, a.graph_bytes, a.hole_bytes, a.bytes, m.tree_bytes, m.graph_bytes, m.hole_bytes, m.bytes))
  end
  if #best.agents > 1 then
    print(("| %s | all | | %d | %d | %d | %d | %d | %d | %d | %d | | | |"):format(r.label, best.tile_bytes,
      best.graph_bytes, best.hole_bytes, best.bytes, st.tree_bytes, st.graph_bytes, st.hole_bytes, st.bytes))
  end
  print(("| %s | | | | | | | | | | | %.2f | %.2f | %.3f |"):format(r.label, cpu, best.seconds, load_s))
end
os.execute("rm -rf '" .. out .. "'")
