--- tools/crowd_shot.lua -- the crowd playback screenshot of docs/crowd.md (docs/crowd.png).
--   lua5.4 tools/crowd_shot.lua OUT_DIR [FRAME]
-- A crowd of 40 agents (radii 0.5 to 1.5) on the camera's side of a wall goes through a 8 x 8 door in
-- it to the other side (fixed seed), recorded every 2 frames for 600 frames (OUT_DIR/door.ocrowd), and the
-- viewer's page over the wall (OUT_DIR/door.html). Then, where chromium is installed:
--   chromium --headless --use-angle=swiftshader --enable-unsafe-swiftshader --window-size=1000,640 \
--     --screenshot=docs/crowd.png "file://$PWD/OUT_DIR/door.html#frame=FRAME"
local octonav = require "octonav"
local record = require "octonav.crowd_record"
local view = require "octonav.view"

local out, frame = arg[1] or ".", tonumber(arg[2] or "110")

local tree = octonav.tree.new { tiles = { 2, 1, 1 }, depth = 5 }
-- a wall at x in [30, 34] with a door y, z in [12, 20)
tree:add_box({ 30, 0, 0 }, { 34, 12, 32 })
tree:add_box({ 30, 20, 0 }, { 34, 32, 32 })
tree:add_box({ 30, 12, 0 }, { 34, 20, 12 })
tree:add_box({ 30, 12, 20 }, { 34, 20, 32 })
local crowd = octonav.crowd.new(tree, { max_agents = 64, plan_budget = 20000 })
local s = 12345
local function rnd()
  s = (s * 1103515245 + 12345) % 2147483648
  return s / 2147483648
end
local placed = {}
while #placed < 40 do
  local r = 0.5 + rnd()
  local p = { 40 + rnd() * 20, 3 + rnd() * 26, 3 + rnd() * 26 }
  local id = crowd:add { pos = p, radius = r, max_speed = 4, max_accel = 8 }
  if id then
    placed[#placed + 1] = id
    crowd:set_goal(id, 4 + rnd() * 20, 4 + rnd() * 24, 4 + rnd() * 24)
  end
end
local rec = record.new(crowd, { every = 2 })
for _ = 1, 600 do
  rec:capture()
  crowd:update(1 / 30)
end
assert(rec:write(out .. "/door.ocrowd"))
local page = view.new { title = "octonav: a crowd through a door" }
page:add(tree)
page:add(rec, { velocity_scale = 0.5 })
assert(page:write(out .. "/door.html", { frame = frame }))
print(("%s/door.html: %s, %d bytes recorded"):format(out, tostring(page), #rec:bytes()))
