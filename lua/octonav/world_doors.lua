--- octonav.world_doors: a world's doors and holes' insides at run time (docs/world.md "Doors at run
-- time", "The world tree around a hole"); octonav.world installs these methods on its class.
--
--   world:set_door(hole, door, open), world:door_box(hole, door [, box])   (every agent of the group)
--   world:reapply_doors(tiles), world:reapply_hole_doors(hole)             (the streamer calls them)
--   world:block_hole_inside(hole), world:unblock_hole_inside(hole), world:reapply_hole_insides(tiles)
-- and for octonav.world: hole_arg, free_boxes, inside_boxes, block_inside, unblock_inside.
local util = require "octonav.util"
local tilegrid = require "octonav.tilegrid"
local agents_mod = require "octonav.world_agents"

local M = {}

local World_ = {} -- the methods install copies onto the world class

-- A hole argument (index or name) -> index, record; raises naming world:FNAME otherwise.
local function hole_arg(self, hole, fname)
  local i = hole
  if type(hole) == "string" then i = self.hole_index[hole] end
  if math.type(i) ~= "integer" or not self.holes[i] then
    error(("world:%s: hole: unknown hole %s"):format(fname, tostring(hole)), 3)
  end
  return i, self.holes[i]
end

-- The free boxes (world space) of a sealed hole tree: it is prepared (tree:boxes).
local function free_boxes(tree, h)
  tree:prepare()
  local list = {}
  for ti = 0, h.tree_tiles[1] - 1 do
    for tj = 0, h.tree_tiles[2] - 1 do
      for tk = 0, h.tree_tiles[3] - 1 do
        for _, b in ipairs(tree:boxes(ti, tj, tk) or {}) do list[#list + 1] = { min = b.min, max = b.max } end
      end
    end
  end
  return list
end

-- ---- doors ----------------------------------------------------------------------------------------

local function door_arg(self, hole, door, fname)
  local i, h = hole_arg(self, hole, fname)
  if math.type(door) ~= "integer" or not h.doors[door] then
    error(("world:%s: door: integer 1..%d expected, got %s"):format(fname, #h.doors, tostring(door)), 3)
  end
  return i, h, h.doors[door]
end

-- Blocks a closed door's box in the world tree and in its hole's tree (when loaded), as temporary
-- obstacles (tree:add_obstacle); the ids are kept on the door (world_obstacle, hole_obstacle).
local function block_door(self, h, d)
  if not d.box then return end
  if not d.world_obstacle then d.world_obstacle = self.tree:add_obstacle(d.box) end
  if h.tree and not d.hole_obstacle then
    d.hole_obstacle = h.tree:add_obstacle(d.box)
    d.hole_tree = h.tree
  end
end

local function unblock_door(self, h, d)
  if d.world_obstacle then self.tree:remove_obstacle(d.world_obstacle) end
  -- a hole tree the streamer closed meanwhile took its obstacle with it
  if d.hole_obstacle and d.hole_tree == h.tree then h.tree:remove_obstacle(d.hole_obstacle) end
  d.world_obstacle, d.hole_obstacle, d.hole_tree = nil, nil, nil
end

--- Opens or closes a door (hole: index or name; door: index; open: boolean). The planner only uses
-- open doors. A closed door with a `box` (its doorway, from the bake config's door entry, or set with
-- world:door_box) is blocked in the world tree and in its hole's tree as a temporary obstacle
-- (tree:add_obstacle), removed when it opens: paths through the doorway go stale (path:is_valid()),
-- navigators whose route passes the door plan again (stats().door_replans) and with a streamer the
-- change is listed by its next update (changes.doors) and the agents whose path uses the door are in
-- `stale`. Setting the state a door already has changes nothing.
function World_:set_door(hole, door, open)
  local i, h, d = door_arg(self, hole, door, "set_door")
  if type(open) ~= "boolean" then error("world:set_door: open: boolean expected, got " .. type(open), 2) end
  if (d.open ~= false) == open then return self end
  local group = agents_mod.each(self)
  for _, w in ipairs(group) do -- every agent's trees
    local wh = w.holes[i]
    local wd = wh.doors[door]
    wd.open = open
    if open then unblock_door(w, wh, wd) else block_door(w, wh, wd) end
    w.door_revision = (w.door_revision or 0) + 1
  end
  local log = group[1].door_log
  if log then log[#log + 1] = { hole = h.name, door = door, open = open } end
  return self
end

--- world:door_box(hole, door [, box]) -> the door's box ({ min, max } or nil); with box, sets it
-- first (a closed door is blocked again with the new box), for every agent.
function World_:door_box(hole, door, box)
  local i, _, d = door_arg(self, hole, door, "door_box")
  if box ~= nil then
    if type(box) ~= "table" or not util.is_point(box.min) or not util.is_point(box.max) then
      error("world:door_box: box: { min = {x, y, z}, max = {x, y, z} } expected", 2)
    end
    for _, w in ipairs(agents_mod.each(self)) do
      local wh = w.holes[i]
      local wd = wh.doors[door]
      unblock_door(w, wh, wd)
      wd.box = { min = { box.min[1], box.min[2], box.min[3] }, max = { box.max[1], box.max[2], box.max[3] } }
      if wd.open == false then block_door(w, wh, wd) end
    end
  end
  return d.box
end

--- world:reapply_doors(tiles) -> count: the closed doors whose box overlaps one of `tiles` (tile
-- indices just loaded) are blocked again in the world tree (a tile loaded after the obstacle was
-- added comes back as its file holds it). world:rebake calls it for the tiles it decoded (the C streamer
-- blocks a tree's obstacles again in the tiles it installs by itself).
function World_:reapply_doors(tiles)
  if #tiles == 0 then return 0 end
  local set = {}
  for _, t in ipairs(tiles) do set[t] = true end
  local n, r = 0, self.radius or 0
  for _, h in ipairs(self.holes) do
    for _, d in ipairs(h.doors) do
      if d.open == false and d.box then
        local hit = false
        local lo, hi = d.box.min, d.box.max
        lo, hi = { lo[1] - r, lo[2] - r, lo[3] - r }, { hi[1] + r, hi[2] + r, hi[3] + r }
        for _, t in ipairs(tilegrid.in_box(self.grid, lo, hi, false)) do
          if set[t] then
            hit = true
            break
          end
        end
        if hit then
          if d.world_obstacle then self.tree:remove_obstacle(d.world_obstacle) end
          d.world_obstacle = self.tree:add_obstacle(d.box)
          n = n + 1
        end
      end
    end
  end
  return n
end

--- world:reapply_hole_doors(hole): a hole tree just installed (the streamer) gets its closed doors'
-- boxes blocked.
function World_:reapply_hole_doors(hole)
  local _, h = hole_arg(self, hole, "reapply_hole_doors")
  for _, d in ipairs(h.doors) do
    if d.open == false and d.box and h.tree and d.hole_tree ~= h.tree then
      d.hole_obstacle, d.hole_tree = h.tree:add_obstacle(d.box), h.tree
    end
  end
end

-- ---- holes' insides in the world tree ------------------------------------------------------------

-- The free boxes of hole h's sealed tree (its inside), world space: a fresh copy of its tree read
-- from the pack and prepared (the loaded one is left unprepared: its searches keep their graph),
-- cached on the hole record (a rebaked hole gets a new record). Returns the list or nil, err.
local function inside_boxes(self, i, h)
  if h.inside_boxes then return h.inside_boxes end
  local tree, err = self:load_hole(i)
  if not tree then return nil, err end
  h.inside_boxes = free_boxes(tree, h)
  tree:close()
  return h.inside_boxes
end

local function unblock_inside(self, h)
  for _, id in ipairs(h.inside_obstacles or {}) do self.tree:remove_obstacle(id) end
  h.inside_obstacles = nil
end

-- Blocks hole h's inside in the world tree: one temporary obstacle per free box of its sealed tree,
-- shrunk by the world's radius (add_obstacle grows it back: the world leaves overlapping the box are
-- blocked, a box thinner than twice the radius is blocked from its middle plane, the radius around
-- it). An obstacle that would block a door's outside point free before is taken back and counted in
-- h.inside_skipped (validate's world entry then shows the free cells it leaves). Returns the count
-- of obstacles in place, or nil, err.
local function block_inside(self, i, h)
  local boxes, err = inside_boxes(self, i, h)
  if not boxes then return nil, err end
  unblock_inside(self, h)
  local r, ids, watch = self.radius or 0, {}, {}
  for _, d in ipairs(h.doors) do
    if self.tree:locate(d.outside) == "free" then watch[#watch + 1] = d.outside end
  end
  h.inside_skipped = 0
  for _, b in ipairs(boxes) do
    local lo, hi = {}, {}
    for a = 1, 3 do
      lo[a], hi[a] = b.min[a] + r, b.max[a] - r
      if lo[a] > hi[a] then
        lo[a] = (b.min[a] + b.max[a]) / 2
        hi[a] = lo[a]
      end
    end
    local id = self.tree:add_obstacle({ min = lo, max = hi })
    for _, p in ipairs(watch) do
      if self.tree:locate(p) ~= "free" then
        self.tree:remove_obstacle(id)
        h.inside_skipped = h.inside_skipped + 1
        id = nil
        break
      end
    end
    ids[#ids + 1] = id
  end
  h.inside_obstacles = ids
  return #ids
end

--- world:block_hole_inside(hole) -> count | nil, err: hole's sealed inside (the free space of its tree)
-- is blocked in the world tree's loaded tiles as temporary obstacles (docs/world.md "The world tree
-- around a hole"), replacing the ones it had. Loading a pack does it for every hole, the streamer
-- for the tiles it loads (world:reapply_hole_insides).
function World_:block_hole_inside(hole)
  local i, h = hole_arg(self, hole, "block_hole_inside")
  h.inside_blocked_off = nil -- blocked again: tiles loaded later get it too (reapply_hole_insides)
  return block_inside(self, i, h)
end

--- world:unblock_hole_inside(hole): removes those obstacles (the world tree offers the cave again;
-- for checks: validate's world entry names the leak).
function World_:unblock_hole_inside(hole)
  local _, h = hole_arg(self, hole, "unblock_hole_inside")
  unblock_inside(self, h)
  h.inside_blocked_off = true
end

--- world:reapply_hole_insides(tiles) -> count: the holes whose bounds overlap one of `tiles` (tile
-- indices just loaded) get their inside blocked again (block_hole_inside). The streamer calls it
-- with reapply_doors. Returns the number of obstacles added.
function World_:reapply_hole_insides(tiles)
  if not self.block_holes then return 0 end
  local set, n = {}, 0
  for _, t in ipairs(tiles) do set[t] = true end
  for i, h in ipairs(self.holes) do
    if not h.inside_blocked_off then
      for _, t in ipairs(h.tiles) do
        if set[t] then
          n = n + (block_inside(self, i, h) or 0)
          break
        end
      end
    end
  end
  return n
end

M.hole_arg, M.free_boxes, M.inside_boxes, M.block_inside, M.unblock_inside =
  hole_arg, free_boxes, inside_boxes, block_inside, unblock_inside

--- Adds the methods above to the world class.
function M.install(World)
  for k, f in pairs(World_) do World[k] = f end
end

return M
