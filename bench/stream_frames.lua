-- bench/stream_frames.lua -- the caller's cost of streamer:update() frames that load tiles.
--
--   LUA_PATH="lua/?.lua;lua/?/init.lua;;" LUA_CPATH="build/?.so;;" \
--     lua5.4 bench/stream_frames.lua PACK [WORKERS=2] [PASSES=5] [FRAMES=600] [SEED=1]
--
-- One agent walks a seeded random walk over the pack's grid (a step of tile_size / 8 a frame, turning
-- a little each frame, bouncing off the grid's sides, at the height of the middle of the lowest tile
-- layer); load_padding = tile_size, unload_padding = 2 x tile_size. Each frame moves the agent and
-- calls update() (no wait), timed on the monotonic clock of the calling thread (core.clock: wall time,
-- so the workers' time is not in it). Printed: for the frames whose update() listed loaded tiles, p50,
-- p99 and max in microseconds, each the fastest over PASSES passes (a fresh streamer each pass, the
-- same walk), with the count of such frames and of tiles loaded.
local core = require "octonav.core"
local streamer = require "octonav.streamer"

local PACK = assert(arg[1], "usage: stream_frames.lua PACK [WORKERS] [PASSES] [FRAMES] [SEED]")
local WORKERS = tonumber(arg[2] or 2)
local PASSES = tonumber(arg[3] or 5)
local FRAMES = tonumber(arg[4] or 600)
local SEED = tonumber(arg[5] or 1)
local GAP = os.getenv("GAP") or "0.004"

local function lcg(seed)
  local s = seed * 2654435761 % 4294967296
  return function()
    s = (s * 1664525 + 1013904223) % 4294967296
    return s / 4294967296
  end
end

local function pct(sorted, q)
  if #sorted == 0 then return 0 end
  return sorted[math.max(1, math.ceil(q * #sorted))]
end

local function pass()
  local s = assert(streamer.new(PACK, { load_padding = 0, unload_padding = 1, workers = WORKERS }))
  local w = s.world
  local g = w.grid
  local T = g.tile_size
  s:close()
  s = assert(streamer.new(PACK, { load_padding = T, unload_padding = 2 * T, workers = WORKERS }))
  w = s.world
  local lo, hi = {}, {}
  for k = 1, 3 do
    lo[k] = g.origin[k] + 0.5
    hi[k] = g.origin[k] + g.tiles[k] * T - 0.5
  end
  local rnd = lcg(SEED)
  local p = { (lo[1] + hi[1]) / 2, g.origin[2] + T / 2, (lo[3] + hi[3]) / 2 }
  local ang = rnd() * 2 * math.pi
  local id = s:add_agent(p)
  local times, tiles = {}, 0
  for _ = 1, FRAMES do
    ang = ang + (rnd() - 0.5) * 0.6
    for _, k in ipairs { 1, 3 } do
      local d = (k == 1 and math.cos(ang) or math.sin(ang)) * T / 8
      p[k] = p[k] + d
      if p[k] < lo[k] or p[k] > hi[k] then
        p[k] = math.max(lo[k], math.min(hi[k], p[k]))
        ang = ang + math.pi / 2
      end
    end
    s:move_agent(id, p)
    local t0 = core.clock()
    local ch = s:update()
    local dt = core.clock() - t0
    if #ch.loaded > 0 then
      times[#times + 1] = dt * 1e6
      tiles = tiles + #ch.loaded
    end
    assert(#ch.failed == 0, ch.failed[1] and ch.failed[1].reason)
    if WORKERS > 0 then os.execute("sleep " .. GAP) end -- the rest of a frame: the workers read meanwhile
  end
  s:close()
  table.sort(times)
  return { p50 = pct(times, 0.5), p99 = pct(times, 0.99), max = times[#times] or 0, frames = #times, tiles = tiles }
end

local best
for _ = 1, PASSES do
  local r = pass()
  if not best then
    best = r
  else
    for _, key in ipairs { "p50", "p99", "max" } do best[key] = math.min(best[key], r[key]) end
  end
end
print(("%s workers=%d: %d load frames (%d tiles): update() p50 %.0f us, p99 %.0f us, max %.0f us (fastest of %d)")
  :format(PACK, WORKERS, best.frames, best.tiles, best.p50, best.p99, best.max, PASSES))
