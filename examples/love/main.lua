-- examples/love/main.lua: octonav in a LÖVE game. A small world is baked at start (game.lua), seen
-- from above (x right, z down) and from the side (x right, y up); click either view and the agents fly
-- there, their navigators sharing one frame budget. Drawn: the blocked space, each agent's route over
-- the world's tiles (the tiles it crosses, the points where it crosses), its path (the waypoints it was
-- handed) and a HUD with octonav's time this frame against the budget.
--
-- Run from the source tree, after building the module for LÖVE's LuaJIT (`make LUA=luajit`):
--   love examples/love                   play: click the top view or the side view
--   love examples/love --script check    the scripted run `make test-love` makes (check.lua)
-- The module is looked for in OCTONAV_LOVE_BUILD (default: the source tree's build/luajit), the Lua
-- files in the source tree's lua/. A shipped game carries both itself: docs/love.md.
local root = love.filesystem.getSource() .. "/../.."
local build = os.getenv("OCTONAV_LOVE_BUILD") or (root .. "/build/luajit")
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" .. package.path
package.cpath = build .. "/?.so;" .. package.cpath

-- The scripted run fails with a message and exit code 1 instead of LÖVE's error screen (which waits for
-- a key: headless, forever).
for _, a in ipairs(arg or {}) do
  if a == "--script" then
    function love.errorhandler(msg)
      print(debug.traceback("test-love: error: " .. tostring(msg), 3))
      os.exit(1)
    end
  end
end

-- LuaJIT (LÖVE's Lua): octonav's Lua modules run interpreted, the game's own code compiled as usual. The
-- trace compiler compiles a module's new paths inside the frame that first runs them (a click's plans):
-- 2.5-3.8 ms of the game thread's CPU in one frame of a 2 ms budget, 1-6 frames in 2,400 (the
-- scripted run); with the modules interpreted the worst frame was 1.2-2.0 ms and none over 2.5 (five runs,
-- docs/love.md). A searcher ahead of the others loads them with the compiler off for all their functions.
if jit then
  local searchers = package.loaders or package.searchers -- luacheck: ignore (5.1: loaders)
  table.insert(searchers, 2, function(name)
    if not name:find("^octonav") then return nil end
    local path = package.searchpath(name, package.path)
    if not path then return nil end
    local chunk = assert(loadfile(path))
    jit.off(chunk, true) -- (true: every function the chunk defines)
    return chunk
  end)
end

local octonav = require "octonav"
local game = require "game"

local g, world, check            -- the game (game.lua), its world, the scripted check (or nil)
local top, side                  -- the two views: where they are on screen and their pictures
local history, HISTORY = {}, 180 -- octonav's time of the last frames, for the HUD's graph
local COLORS = { { 1, .45, .2 }, { .3, .8, 1 }, { .5, 1, .4 }, { 1, .85, .2 }, { .9, .4, 1 }, { 1, .5, .6 } }

-- A view maps two world axes (u right, v down or up) onto a rectangle of the window.
local function new_view(x, y, px, u, v, flip)
  local lo, n, T = world.origin, world.tiles, world.tile_size
  local view = { x = x, y = y, px = px, u = u, v = v, flip = flip, lo = lo }
  view.wu, view.wv = n[u] * T, n[v] * T -- the world's extent along u and v
  view.w, view.h = view.wu * px, view.wv * px
  return view
end

local function to_screen(view, p)
  local sx = view.x + (p[view.u] - view.lo[view.u]) * view.px
  local t = (p[view.v] - view.lo[view.v]) * view.px
  return sx, view.flip and view.y + view.h - t or view.y + t
end

local function to_world(view, sx, sy)
  local a = view.lo[view.u] + (sx - view.x) / view.px
  local t = view.flip and view.y + view.h - sy or sy - view.y
  return a, view.lo[view.v] + t / view.px
end

local function inside(view, sx, sy)
  return sx >= view.x and sx < view.x + view.w and sy >= view.y and sy < view.y + view.h
end

-- The blocked space as a picture: a ray down (top view) or along +z (side view) through each pixel's
-- centre, shaded by how near the first blocked point is (tree:raycast). Made once: the world is static.
local function picture(view, along, sub)
  local img = love.image.newImageData(view.wu * sub, view.wv * sub)
  local lo, n, T = world.origin, world.tiles, world.tile_size
  local a0, a1 = lo[along], lo[along] + n[along] * T
  for j = 0, img:getHeight() - 1 do
    for i = 0, img:getWidth() - 1 do
      local from, to = {}, {}
      from[view.u], to[view.u] = view.lo[view.u] + (i + .5) / sub, view.lo[view.u] + (i + .5) / sub
      local t = (j + .5) / sub
      local vv = view.lo[view.v] + (view.flip and view.wv - t or t)
      from[view.v], to[view.v] = vv, vv
      -- from above (top view: down from the highest y) or from the near side (z = 0)
      if along == 2 then from[2], to[2] = a1 - 1e-6, a0 else from[3], to[3] = a0, a1 - 1e-6 end
      local hit = world.tree:raycast(from, to)
      if hit then
        local k = along == 2 and 1 - hit or 1 - hit * .8 -- top: high is bright; side: near is bright
        img:setPixel(i, j, .15 + .55 * k, .17 + .55 * k, .22 + .55 * k, 1)
      else
        img:setPixel(i, j, .06, .07, .09, 1)
      end
    end
  end
  local pic = love.graphics.newImage(img)
  pic:setFilter("linear", "nearest")
  return pic
end

-- A click on a view: the agents fly there (game.lua says where: above the ground, or at the last
-- goal's z) -> the goal, or nil off the views.
local function click(sx, sy)
  if inside(top, sx, sy) then return g:click_top(to_world(top, sx, sy)) end
  if inside(side, sx, sy) then return g:click_side(to_world(side, sx, sy)) end
end

function love.load(args)
  for i = 1, #args do
    if args[i] == "--script" then check = require(args[i + 1] or "check") end
  end
  local dir
  world, dir = game.bake_and_load()
  g = game.new(world, { agents = #COLORS, ms = 2, dir = dir })
  top = new_view(16, 16, 7, 1, 3, false)
  side = new_view(16, 16 + top.h + 24, 7, 1, 2, true)
  top.pic, side.pic = picture(top, 2, 2), picture(side, 3, 2)
  if check then
    local shot = os.getenv("OCTONAV_LOVE_SHOT") or (root .. "/build/love/check.png")
    assert(octonav.core.mkdir(shot:match("^(.*)/[^/]*$") or "."))
    check.start(g, click, to_screen, top, side, shot)
  end
end

function love.mousepressed(x, y, button)
  if button == 1 and not check then click(x, y) end
end

function love.update(dt)
  if check then dt = 1 / 60 end -- the scripted run: the same frames on any machine
  g:update(math.min(dt, 0.1))
  history[#history + 1] = g.frame_ms
  if #history > HISTORY then table.remove(history, 1) end
  if check then check.frame(g) end
end

local function line(view, a, b)
  local x1, y1 = to_screen(view, a)
  local x2, y2 = to_screen(view, b)
  love.graphics.line(x1, y1, x2, y2)
end

local function rect(view, lo, hi, inset)
  inset = inset or 0
  local x1, y1 = to_screen(view, lo)
  local x2, y2 = to_screen(view, hi)
  love.graphics.rectangle("line", math.min(x1, x2) + inset, math.min(y1, y2) + inset,
    math.abs(x2 - x1) - 2 * inset, math.abs(y2 - y1) - 2 * inset)
end

local function draw_view(view, label)
  local gr = love.graphics
  gr.setColor(1, 1, 1)
  gr.draw(view.pic, view.x, view.y, 0, view.w / view.pic:getWidth(), view.h / view.pic:getHeight())
  gr.setLineWidth(1)
  gr.setColor(1, 1, 1, .15) -- the tile grid
  local n = world.tiles
  for t = 0, n[1] * n[2] * n[3] - 1 do rect(view, world:tile_bounds(t)) end
  for _, h in ipairs(world.holes) do -- holes (the cave), outlined
    gr.setColor(.9, .8, .3, .6)
    rect(view, h.min, h.max, 0)
  end
  for i, a in ipairs(g.agents) do
    local c = COLORS[i]
    local route = a.route -- the route it follows, or followed last: its tiles and where it crosses them
    if route then
      gr.setColor(c[1], c[2], c[3], a.status == "idle" and .2 or .35)
      for _, step in ipairs(route) do
        if step.kind == "tile" then
          local lo, hi = world:tile_bounds(step.tile)
          rect(view, lo, hi, 2 + i)
        end
        line(view, step.enter, step.exit)
      end
    end
    gr.setColor(c[1], c[2], c[3], .9) -- the path: the waypoints it was handed, then where it is now
    for k = 2, #a.path do line(view, a.path[k - 1], a.path[k]) end
    if a.goal then
      local gx, gy = to_screen(view, a.goal)
      gr.circle("line", gx, gy, 4)
    end
    local x, y = to_screen(view, a.pos)
    gr.circle("fill", x, y, 4)
  end
  gr.setColor(1, 1, 1)
  gr.print(label, view.x + 4, view.y + 2)
end

function love.draw()
  -- the scripted run draws one frame in 10 (drawing, in software under xvfb-run, is most of its time)
  if check and g.frames % 10 ~= 0 and not check.drawing() then return end
  local gr = love.graphics
  gr.clear(.03, .03, .04)
  draw_view(top, "top (x right, z down): click to fly there, 4 above the ground")
  draw_view(side, "side (x right, y up): click to fly there, at the last goal's z")
  -- the HUD: octonav's time this frame against its budget, the worst so far, the agents
  local x, y = top.x + top.w + 24, 16
  local arrived, failed, busy = g:counts()
  gr.setColor(1, 1, 1)
  gr.print(table.concat({
    ("octonav this frame: %.2f ms of %g"):format(g.frame_ms, g.ms),
    ("worst %.2f ms, %d of %d frames over %g"):format(g.worst_ms, g.over, g.frames, g.ms + .5),
    ("agents: %d moving or planning, %d arrived, %d failed"):format(busy, arrived, failed),
    ("arrivals %d, failures %d, %d fps"):format(g.arrivals, g.failures, love.timer.getFPS()),
  }, "\n"), x, y)
  -- the last frames' octonav time, the budget as a line (2 pixels a frame, 40 pixels a millisecond)
  local gy, gh = y + 80, 120
  gr.setColor(.2, .2, .25)
  gr.rectangle("fill", x, gy, 2 * HISTORY, gh)
  gr.setColor(.4, .9, .5)
  for k, ms in ipairs(history) do
    local bar = math.min(gh, ms * 40)
    gr.rectangle("fill", x + 2 * (k - 1), gy + gh - bar, 2, bar)
  end
  gr.setColor(1, .3, .3)
  gr.line(x, gy + gh - g.ms * 40, x + 2 * HISTORY, gy + gh - g.ms * 40)
  for i, a in ipairs(g.agents) do
    local c = COLORS[i]
    gr.setColor(c[1], c[2], c[3])
    gr.print(("agent %d: %s%s"):format(i, a.status ~= "idle" and a.status or (a.done or "idle"),
      a.reason and (" (" .. tostring(a.reason) .. ")") or ""), x, gy + gh + 12 + 18 * (i - 1))
  end
end

function love.quit()
  if g then g:close() end
end
