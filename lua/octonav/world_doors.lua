--- octonav.world_doors: a world's doors and holes' insides at run time (docs/world.md "Doors at run
-- time", "The world tree around a hole"); octonav.world installs these methods on its class.
--
--   world:set_door(hole, door, open), world:door_box(hole, door [, box])   (every agent of the group)
--   world:reapply_doors(tiles), world:reapply_hole_doors(hole)             (the streamer calls them)
--   world:block_hole_inside(hole), world:unblock_hole_inside(hole), world:reapply_hole_insides(tiles)
-- and for octonav.world: hole_arg, free_boxes, inside_boxes, block_inside, unblock_inside.
local compat = require "octonav.compat"
compat.frame_module() -- (LuaJIT: run interpreted; compat.lua)
local util = require "octonav.util"
local raise = util.raise -- (errors at the user's call: no line of the library's files)
local tilegrid = require "octonav.tilegrid"
local agents_mod = require "octonav.world_agents"
local doorway = require "octonav.doorway"

local M = {}

local World_ = {} -- the methods install copies onto the world class

-- A hole argument (index or name) -> index, record; raises naming world:FNAME otherwise.
local function hole_arg(self, hole, fname)
  local i = hole
  if type(hole) == "string" then i = self.hole_index[hole] end
  if not compat.isinteger(i) or not self.holes[i] then
    raise(("world:%s: hole: unknown hole %s"):format(fname, tostring(hole)))
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
  if not compat.isinteger(door) or not h.doors[door] then
    raise(("world:%s: door: integer 1..%d expected, got %s"):format(fname, #h.doors, tostring(door)))
  end
  return i, h, h.doors[door]
end

-- ---- a door's doorway when it has no box ----------------------------------------------------------

-- The doorway of a door without a box, as the bake's seal knows it (octonav.doorway): the bounding box
-- of its opening (world space, { min, max }), or nil when the segment from the door's inside point
-- to its outside point does not leave the bounds or the leaf where it does is not free (no doorway
-- to block).
local function doorway_box(tree, h, d)
  local s, o = h.scale, h.min
  local lo, hi -- leaf index bounds
  doorway.flood(tree, h, doorway.grid(h), d, function(a, la, j, k)
    local b, c = a % 3 + 1, (a + 1) % 3 + 1
    if not lo then lo, hi = { [a] = la, [b] = j, [c] = k }, { [a] = la, [b] = j, [c] = k } end
    lo[a], hi[a] = math.min(lo[a], la), math.max(hi[a], la)
    lo[b], hi[b] = math.min(lo[b], j), math.max(hi[b], j)
    lo[c], hi[c] = math.min(lo[c], k), math.max(hi[c], k)
  end)
  if not lo then return nil end
  local mn, mx = {}, {}
  for x = 1, 3 do
    mn[x] = o[x] + lo[x] * s
    mx[x] = math.min(o[x] + (hi[x] + 1) * s, h.max[x])
  end
  return { min = mn, max = mx }
end

-- The box a closed door blocks: its own `box`, else its doorway (doorway_box; found once from the
-- hole's tree, the loaded one or one read for it, and kept on the door as `doorway`). nil, message,
-- raised when it has neither (raised: true when there is no doorway to block, false when the hole's
-- tree could not be read).
local function door_block_box(self, hi, h, d, di)
  if d.box then return d.box end
  if d.doorway then return d.doorway end
  local tree, close = h.tree, false
  if not tree then
    local err
    tree, err = self:load_hole(hi)
    if not tree then return nil, err, false end
    close = true
  end
  local box = doorway_box(tree, h, d)
  if close then tree:close() end
  if not box then
    return nil, ("door %d of hole '%s' has no box and its way out crosses no free doorway on the hole's bounds"
      .. " (give it one with world:door_box)"):format(di, h.name), true
  end
  d.doorway = box
  return box
end

-- ---- blocking and unblocking, undone when a later step fails -----------------------------------------

-- tree[method](tree, arg), protected: the result, or nil, message, raised (true when it raised:
-- misuse such as a tree in use by a path server; false for a nil, reason answer).
local function try(tree, method, arg)
  local ok, r, reason = pcall(tree[method], tree, arg)
  if not ok then return nil, (tostring(r):gsub("^[%w_]+:[%w_]+: ", "", 1)), true end -- (the caller names itself)
  if r == nil then return nil, reason, false end
  return r
end

-- Blocks a closed door's box in the world tree and in its hole's tree (when loaded), as temporary
-- obstacles (tree:add_obstacle); the ids are kept on the door (world_obstacle, hole_obstacle). Each
-- step done appends its undoing to `undo`. Returns true, or nil, message, raised.
local function block_door(self, h, d, box, undo)
  if not d.world_obstacle then
    local id, err, raised = try(self.tree, "add_obstacle", box)
    if not id then return nil, err, raised end
    d.world_obstacle = id
    undo[#undo + 1] = function()
      self.tree:remove_obstacle(id)
      d.world_obstacle = nil
    end
  end
  if h.tree and not d.hole_obstacle then
    local tree = h.tree
    local id, err, raised = try(tree, "add_obstacle", box)
    if not id then return nil, err, raised end
    d.hole_obstacle, d.hole_tree = id, tree
    undo[#undo + 1] = function()
      tree:remove_obstacle(id)
      d.hole_obstacle, d.hole_tree = nil, nil
    end
  end
  return true
end

-- Removes them (an obstacle no longer in place, nil, reason, is no failure). As block_door.
local function unblock_door(self, h, d, box, undo)
  local wid = d.world_obstacle
  if wid then
    local ok, err, raised = try(self.tree, "remove_obstacle", wid)
    if not ok and raised then return nil, err, true end
    d.world_obstacle = nil
    if ok then
      undo[#undo + 1] = function() d.world_obstacle = self.tree:add_obstacle(box) end
    end
  end
  -- a hole tree the streamer closed meanwhile took its obstacle with it
  local hid, tree = d.hole_obstacle, d.hole_tree
  if hid and tree == h.tree then
    local ok, err, raised = try(tree, "remove_obstacle", hid)
    if not ok and raised then return nil, err, true end
    if ok then
      undo[#undo + 1] = function() d.hole_obstacle, d.hole_tree = tree:add_obstacle(box), tree end
    end
  end
  d.hole_obstacle, d.hole_tree = nil, nil
  return true
end

-- The box obstacle `id` of tree blocks ({ min, max }), or nil (what opening a door needs to undo its
-- removal when the door record lost its doorway: a hole rebaked keeps the ids, not the doorway).
local function obstacle_box(tree, id)
  if not id then return nil end
  for _, o in ipairs(tree:obstacles()) do
    if o.id == id then return { min = o.min, max = o.max } end
  end
  return nil
end

-- Undoes the steps done, last first.
local function undo_all(undo)
  for k = #undo, 1, -1 do undo[k]() end
end

--- Opens or closes a door (hole: index or name; door: index; open: boolean). The planner only uses
-- open doors. A closed door's doorway is blocked in the world tree and in its hole's tree as a
-- temporary obstacle (tree:add_obstacle), removed when it opens: its `box` (from the bake config's
-- door entry, or set with world:door_box), else, for a door without one, the doorway the bake's seal
-- knows (the free leaves of the hole's face layer where the door's way out crosses the bounds: their
-- bounding box, kept on the door as `doorway`; a door whose way out crosses no free doorway raises).
-- Paths through the doorway go stale (path:is_valid()), navigators whose route passes the door plan
-- again (stats().door_replans) and with a streamer the change is listed by its next update
-- (changes.doors) and the agents whose path uses the door are in `stale`. Setting the state a door
-- already has changes nothing. All or nothing: a step refused (a tree in use by a running search or a
-- path server with requests out raises, naming world:set_door; no memory answers nil, reason) undoes
-- the steps before it, and the door, the trees, door_revision and door_log are as they were.
function World_:set_door(hole, door, open)
  local i, h, d = door_arg(self, hole, door, "set_door")
  if type(open) ~= "boolean" then raise("world:set_door: open: boolean expected, got " .. type(open)) end
  if (d.open ~= false) == open then return self end
  local group = agents_mod.each(self)
  local undo = {}
  for _, w in ipairs(group) do -- every agent's trees
    local wh = w.holes[i]
    local wd = wh.doors[door]
    local ok, err, raised = true, nil, false
    if open then
      -- (what closing it blocked; none: nothing to remove)
      local box = wd.box or wd.doorway or obstacle_box(w.tree, wd.world_obstacle)
      if box then ok, err, raised = unblock_door(w, wh, wd, box, undo) end
    else
      local box
      box, err, raised = door_block_box(w, i, wh, wd, door)
      ok = box ~= nil
      if ok then ok, err, raised = block_door(w, wh, wd, box, undo) end
    end
    if not ok then
      undo_all(undo)
      if raised then raise("world:set_door: " .. tostring(err)) end
      return nil, err
    end
  end
  for _, w in ipairs(group) do -- every step done: the state changes
    w.holes[i].doors[door].open = open
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
      raise("world:door_box: box: { min = {x, y, z}, max = {x, y, z} } expected")
    end
    for a = 1, 3 do -- (else the next set_door(.., false) raised from tree:add_obstacle)
      if not (box.min[a] <= box.max[a]) then raise("world:door_box: box: min must not exceed max on any axis") end
    end
    local undo = {}
    for _, w in ipairs(agents_mod.each(self)) do
      local wh = w.holes[i]
      local wd = wh.doors[door]
      local old = wd.box or wd.doorway
      local ok, err = true, nil
      if old then ok, err = unblock_door(w, wh, wd, old, undo) end
      if ok then
        local was, was_doorway = wd.box, wd.doorway
        wd.box = { min = { box.min[1], box.min[2], box.min[3] }, max = { box.max[1], box.max[2], box.max[3] } }
        undo[#undo + 1] = function() wd.box, wd.doorway = was, was_doorway end
        if wd.open == false then ok, err = block_door(w, wh, wd, wd.box, undo) end
      end
      if not ok then
        undo_all(undo)
        raise("world:door_box: " .. tostring(err))
      end
    end
  end
  return d.box
end

--- world:reapply_doors(tiles) -> count: the closed doors whose box overlaps one of `tiles` (tile
-- indices just loaded) are blocked again in the world tree (a tile loaded after the obstacle was
-- added comes back as its file holds it). world:rebake calls it for the tiles it decoded (the C streamer
-- blocks a tree's obstacles again in the tiles it installs by itself).
-- tiles: an array of tile indices (the streamer's loaded list), checked
local function tiles_arg(tiles, fname)
  if type(tiles) ~= "table" then raise(("world:%s: tiles: array of tile indices expected, got %s"):format(fname,
    type(tiles))) end
  for k, t in ipairs(tiles) do
    if not compat.isinteger(t) then raise(("world:%s: tiles: element %d is not a tile index"):format(fname, k)) end
  end
end

function World_:reapply_doors(tiles)
  tiles_arg(tiles, "reapply_doors")
  if #tiles == 0 then return 0 end
  local set = {}
  for _, t in ipairs(tiles) do set[t] = true end
  local n, r = 0, self.tree_radius or self.radius or 0
  for _, h in ipairs(self.holes) do
    for _, d in ipairs(h.doors) do
      local box = d.box or d.doorway
      if d.open == false and box then
        local hit = false
        local lo, hi = box.min, box.max
        lo, hi = { lo[1] - r, lo[2] - r, lo[3] - r }, { hi[1] + r, hi[2] + r, hi[3] + r }
        for _, t in ipairs(tilegrid.in_box(self.grid, lo, hi, false)) do
          if set[t] then
            hit = true
            break
          end
        end
        if hit then
          if d.world_obstacle then self.tree:remove_obstacle(d.world_obstacle) end
          d.world_obstacle = self.tree:add_obstacle(box)
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
  local i, h = hole_arg(self, hole, "reapply_hole_doors")
  for j, d in ipairs(h.doors) do
    local box = d.box or d.doorway
    if d.open == false and not box and h.tree then box = door_block_box(self, i, h, d, j) end -- (rebaked)
    if d.open == false and box and h.tree and d.hole_tree ~= h.tree then
      d.hole_obstacle, d.hole_tree = h.tree:add_obstacle(box), h.tree
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
  local r, ids, watch = self.tree_radius or self.radius or 0, {}, {}
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
  tiles_arg(tiles, "reapply_hole_insides")
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
