--- bench/crowd_record.lua -- what recording a crowd and writing its page cost (issue 33, the crowd seen).
--   LUA_PATH="lua/?.lua;;" LUA_CPATH="build/?.so;;" lua5.4 bench/crowd_record.lua [AGENTS] [FRAMES]
-- AGENTS (1000: a cube of 10 x 10 x 10 in a 128^3 tree, each sent to the opposite corner) fly FRAMES
-- (100) frames recorded one in one; the fastest of 5 passes of 20 frames each for crowd:update and
-- rec:capture, side by side; then the viewer's page of the recording (view:html), fastest of 3.
local octonav = require "octonav"
local record = require "octonav.crowd_record"
local view = require "octonav.view"

local side = math.max(1, math.floor((tonumber(arg[1]) or 1000) ^ (1 / 3) + 0.5))
local frames = tonumber(arg[2]) or 100
local tree = octonav.tree.new { depth = 7 }
local crowd = octonav.crowd.new(tree, { max_agents = side ^ 3 })
local step = 100 / side
for x = 0, side - 1 do
  for y = 0, side - 1 do
    for z = 0, side - 1 do
      local id = assert(crowd:add { pos = { 10 + x * step, 10 + y * step, 10 + z * step }, radius = 1 })
      crowd:set_goal(id, 118 - x * step, 118 - y * step, 118 - z * step)
    end
  end
end
for _ = 1, 10 do crowd:update(1 / 30) end
local clock = os.clock
local probe = record.new(crowd)
local best_u, best_c = math.huge, math.huge
for _ = 1, 5 do
  local t0 = clock()
  for _ = 1, 20 do crowd:update(1 / 30) end
  local t1 = clock()
  for _ = 1, 20 do probe:capture() end
  best_u, best_c = math.min(best_u, (t1 - t0) / 20), math.min(best_c, (clock() - t1) / 20)
end
local rec = record.new(crowd)
for _ = 1, frames do
  crowd:update(1 / 30)
  rec:capture()
end
local best_p, html = math.huge, nil
for _ = 1, 3 do
  local t0 = clock()
  html = view.new():add(rec):html()
  best_p = math.min(best_p, clock() - t0)
end
print(("%d agents: update %.3f ms, capture %.3f ms a frame, %d bytes a frame recorded; a page of %d frames: %.3f s, %d bytes")
  :format(#crowd, best_u * 1e3, best_c * 1e3, #select(1, rec:frame_bytes(1)), rec:frames(), best_p, #html))
crowd:close()
