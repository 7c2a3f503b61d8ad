--- examples/love/game.lua: the octonav side of the LÖVE example, with no LÖVE in it (spec/84 runs it
-- under plain Lua too). It bakes a small world, loads it, and flies a few agents to goals, their
-- navigators sharing one frame budget. main.lua draws it and turns clicks into goals.
--
--   local game = require "game"
--   local world, dir = game.bake_and_load()      -- a temporary pack directory, removed by g:close()
--   local g = game.new(world, { agents = 6, ms = 2 })
--   g:send({ x, y, z })                          -- every agent flies to (near) that point
--   g:click_top(x, z), g:click_side(x, y)        -- the same from a click on the top or side view
--   each frame: g:update(dt)                     -- octonav's work, then the agents move
local octonav = require "octonav"

local M = {}

-- The world: 96 x 32 x 64 units, 3 x 1 x 2 tiles of 32^3 leaves of 1 unit. Rolling ground, a wall
-- across it with a gap, a tower, and a cave: a closed box with a doorway in its -x and +x walls, baked
-- as a hole (its own tree at half a unit a leaf) that agents enter through the doors.
M.CAVE_MIN, M.CAVE_MAX = { 60, 8, 20 }, { 80, 20, 44 }

function M.config(dir)
  local geometry = {}
  local function box(a, b) geometry[#geometry + 1] = { box = { min = a, max = b } } end
  local heights, nx, nz = {}, 97, 65
  for k = 0, nz - 1 do
    for i = 0, nx - 1 do heights[#heights + 1] = 2 + 1.5 * math.sin(i / 9) * math.cos(k / 7) end
  end
  geometry[1] = { heightfield = { origin = { 0, 0, 0 }, cell = 1, nx = nx, nz = nz, heights = heights } }
  box({ 36, 0, 0 }, { 38, 32, 26 })  -- the wall, open at z in [26, 38]
  box({ 36, 0, 38 }, { 38, 32, 64 })
  box({ 14, 0, 40 }, { 22, 24, 48 }) -- a tower
  local lo, hi = M.CAVE_MIN, M.CAVE_MAX
  box({ lo[1], lo[2], lo[3] }, { hi[1], lo[2] + 1, hi[3] })     -- cave floor
  box({ lo[1], hi[2] - 1, lo[3] }, { hi[1], hi[2], hi[3] })     -- roof
  box({ lo[1], lo[2], lo[3] }, { hi[1], hi[2], lo[3] + 1 })     -- -z and +z walls
  box({ lo[1], lo[2], hi[3] - 1 }, { hi[1], hi[2], hi[3] })
  for _, x in ipairs { lo[1], hi[1] - 1 } do                    -- -x and +x walls, a doorway in each
    box({ x, lo[2], lo[3] }, { x + 1, hi[2], 30 })              -- at z in [30, 34], y in [9, 14]
    box({ x, lo[2], 34 }, { x + 1, hi[2], hi[3] })
    box({ x, 14, 30 }, { x + 1, hi[2], 34 })
  end
  return {
    range = { min = { 0, 0, 0 }, max = { 96, 32, 64 } }, scale = 1, depth = 5,
    geometry = geometry,
    holes = { { name = "cave", min = lo, max = hi, scale = 0.5, kind = "under_terrain", doors = {
      { inside = { 62, 11, 32 }, outside = { 58, 11, 32 }, box = { min = { 60, 9, 30 }, max = { 61, 14, 34 } } },
      { inside = { 78, 11, 32 }, outside = { 82, 11, 32 }, box = { min = { 79, 9, 30 }, max = { 80, 14, 34 } } },
    } } },
    output = dir,
    progress = function() end, -- quiet
  }
end

--- Bakes the world into a new temporary directory and loads it -> world, dir (or raises).
function M.bake_and_load()
  local dir = os.tmpname() -- a fresh name: the bake makes the directory
  os.remove(dir)
  assert(octonav.bake(M.config(dir)))
  return assert(octonav.world.load(dir)), dir
end

local Game = {}
Game.__index = Game

--- A game over a loaded world. opts: agents (6), ms (2: the frame budget of octonav's work, in
-- milliseconds of the game thread's CPU time), speed (12 units a second), dir (a pack directory
-- g:close() removes).
function M.new(world, opts)
  opts = opts or {}
  local g = setmetatable({
    world = world, dir = opts.dir, speed = opts.speed or 12, ms = opts.ms or 2,
    -- every navigator takes its work from this budget; budget:frame() refills it once a frame
    budget = octonav.navigator.budget { ms = opts.ms or 2 },
    agents = {},
    frames = 0, frame_ms = 0, worst_ms = 0, over = 0, -- octonav's time: this frame's, the worst, frames over
    arrivals = 0, failures = 0,
  }, Game)
  for i = 1, opts.agents or 6 do
    -- start in a column at the -x end of the world, above the ground
    local start = assert(world.tree:nearest_free({ 6, 8, 6 + (i - 1) * 52 / math.max(1, (opts.agents or 6) - 1) }))
    g.agents[i] = {
      nav = octonav.navigator.new(world, { budget = g.budget }),
      pos = { start[1], start[2], start[3] },
      path = { { start[1], start[2], start[3] } }, -- the waypoints it was handed, in order: its path
      status = "idle",
    }
  end
  return g
end

-- Is q free for an agent: in the hole (cave) the goal is in, or outside every hole in the world's tree?
-- (A hole's inside is blocked in the world's tree: its own tree holds it.)
local function free_at(world, q, hole)
  if hole then return world:in_hole(q) == hole end
  return world.tree:locate_status(q) == "free" and world:in_hole(q) == nil
end

--- Sends every agent to a free point near p (agents spread on a small ring around it) -> the goal used,
-- or nil when nothing near p is free.
function Game:send(p)
  local world = self.world
  local hole = world:in_hole(p) -- free in a hole's tree: the goal as it is
  local goal = hole and p or world.tree:nearest_free(p)
  if not goal then return nil end
  self.last_goal = goal
  for i, a in ipairs(self.agents) do
    local t = 2 * math.pi * i / #self.agents
    local q = { goal[1] + 1.5 * math.cos(t), goal[2], goal[3] + 1.5 * math.sin(t) }
    if not free_at(world, q, hole) or not (hole or world.tree:visible(goal, q)) then q = goal end
    a.nav:go(q)
    a.goal, a.status, a.done, a.reason = q, "planning", nil, nil
    a.path, a.route = { { a.pos[1], a.pos[2], a.pos[3] } }, nil
  end
  return goal
end

--- A click on the top view at (x, z): the agents fly to 4 units above what is below it -> the goal.
function Game:click_top(x, z)
  local w = self.world
  local ytop = w.origin[2] + w.tiles[2] * w.tile_size
  local _, hit = w.tree:raycast({ x, ytop - 1e-6, z }, { x, w.origin[2], z })
  return self:send({ x, math.min(ytop - 1, (hit and hit[2] or w.origin[2]) + 4), z })
end

--- A click on the side view at (x, y): the agents fly there, at the last goal's z -> the goal.
function Game:click_side(x, y)
  return self:send({ x, y, self.last_goal and self.last_goal[3] or self.world.origin[3] +
    self.world.tiles[3] * self.world.tile_size / 2 })
end

--- One frame: octonav's work (the budget's frame and every navigator's update), timed on the game's
-- thread by its CPU clock; then each agent moves up to speed * dt towards its waypoint.
function Game:update(dt)
  local clock = octonav.core.thread_clock
  local t0 = clock()
  self.budget:frame()
  for _, a in ipairs(self.agents) do
    a.status, a.wp = a.nav:update(a.pos)
  end
  local ms = (clock() - t0) * 1000
  self.frames, self.frame_ms = self.frames + 1, ms
  if ms > self.worst_ms then self.worst_ms, self.worst_frame = ms, self.frames end
  if ms > self.ms + 0.5 then self.over = self.over + 1 end -- the tolerance frame budgets are held to

  for _, a in ipairs(self.agents) do
    if a.status == "moving" then
      a.route = a.nav:route() -- kept for drawing once it arrived
      local p, w = a.pos, a.wp
      local last = a.path[#a.path]
      if last[1] ~= w[1] or last[2] ~= w[2] or last[3] ~= w[3] then a.path[#a.path + 1] = { w[1], w[2], w[3] } end
      local dx, dy, dz = w[1] - p[1], w[2] - p[2], w[3] - p[3]
      local d = math.sqrt(dx * dx + dy * dy + dz * dz)
      local s = d > 0 and math.min(1, self.speed * dt / d) or 0
      p[1], p[2], p[3] = p[1] + dx * s, p[2] + dy * s, p[3] + dz * s
    elseif a.status == "arrived" or a.status == "failed" then
      if a.status == "arrived" then self.arrivals = self.arrivals + 1 else self.failures = self.failures + 1 end
      a.done = a.status
      a.reason = a.status == "failed" and a.wp or nil
      a.nav:cancel() -- idle until the next goal (counted once)
      a.status = "idle"
    end
  end
end

--- Counts of the agents by what they last did: arrived, failed, busy (planning or moving).
function Game:counts()
  local arrived, failed, busy = 0, 0, 0
  for _, a in ipairs(self.agents) do
    if a.status == "planning" or a.status == "moving" then busy = busy + 1
    elseif a.done == "arrived" then arrived = arrived + 1
    elseif a.done == "failed" then failed = failed + 1 end
  end
  return arrived, failed, busy
end

function Game:close()
  for _, a in ipairs(self.agents) do a.nav:close() end
  self.world:close()
  if self.dir then os.execute("rm -rf '" .. self.dir .. "'") end
end

return M
