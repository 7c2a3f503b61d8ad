--- octonav.world_validate: world:validate(), the check of a pack's holes and doors (installed on the
-- world class by octonav.world; docs/world.md, "Holes"): per door, its outside point blocked in the
-- hole's tree, its inside point free, reachable from the others, and its outside point free in the
-- world tree; per hole, the pockets no door reaches, the doors whose box does not lie across their
-- opening, and free world cells overlapping the hole's inside.
local compat = require "octonav.compat"
local core = require "octonav.core"
local agents_mod = require "octonav.world_agents"
local doors_mod = require "octonav.world_doors"
local inside_boxes = doors_mod.inside_boxes

local M = {}
local World = {} -- the methods install copies onto the world class

--- Checks every door (the seed's check of a hole's configuration):
--   outside_blocked  the outside point is blocked in the hole's tree (or outside that tree): the
--                    sealing reached it, so the outside does not count as inside the hole
--   inside_free      the inside point is free in the hole's tree: the sealing did not leak in
--   connected        the inside point is reachable, by a query on the hole's tree, from the inside
--                    point of the hole's first door whose inside point is free (for that door
--                    itself: inside_free): no door leads into a pocket cut off from the others
--   outside_free     the outside point is free in the world tree: agents can reach the door
-- ok is true when every door passes all four and the hole lists below are empty:
--   pockets  { hole, name, position }: one entry per pocket, free space inside the hole's tree that no
--            door's inside point reaches (position: a free point in it); the hole's tree is read
--            again and flooded from the inside points for this (at most MAX_POCKETS entries a hole;
--            an entry with `error` instead of `position` when that read failed)
--   leaks    { hole, name, door, position }: a door whose inside point is not free: the sealing (from
--            the bounds' faces and the outside points, docs/world.md "Holes") reached it, so the
--            outside meets the inside other than through a closed door (position: the inside point)
--   unclosed { hole, name, door, box }: a door whose `box` does not lie across its opening (the
--            segment from its inside to its outside point does not cross the box)
--   world    { hole, name, position }: what the world tree offers inside the hole: a free world cell
--            overlapping the hole's sealed inside (the free space of its tree; position: a point of
--            that cell in the inside), at most MAX_POCKETS a hole; empty while the inside is blocked
--            in the world tree (world:block_hole_inside; unloaded world tiles offer nothing); its
--            entries make ok false on a world loaded with block_holes (the default)
-- A hole whose tree is not loaded (a streamed world) is read for the check and closed after; one whose
-- file cannot be read gives door entries with ok = false and `error`. On a streamed world,
-- outside_free is only true where the world tile holding the outside point is loaded.
local MAX_POCKETS = 64

-- Does the segment a-b cross box {min, max} (slab test)?
local function segment_crosses(a, b, box)
  local t0, t1 = 0, 1
  for k = 1, 3 do
    local d = b[k] - a[k]
    if d == 0 then
      if a[k] < box.min[k] or a[k] > box.max[k] then return false end
    else
      local u, v = (box.min[k] - a[k]) / d, (box.max[k] - a[k]) / d
      if u > v then u, v = v, u end
      if u > t0 then t0 = u end
      if v < t1 then t1 = v end
      if t0 > t1 then return false end
    end
  end
  return true
end

local free_boxes = doors_mod.free_boxes

-- The pockets of hole i (see validate): a fresh copy of its tree (read once: its free boxes are the
-- hole's inside boxes too, cached when not yet) flooded from the doors' inside points; then each free
-- box of the sealed tree whose centre is still free is in a pocket (flooded in turn).
local function find_pockets(self, i, h, report)
  local tree, err = self:load_hole(i)
  if not tree then return err end
  local boxes = free_boxes(tree, h)
  h.inside_boxes = h.inside_boxes or boxes
  for _, d in ipairs(h.doors) do
    if tree:locate(d.inside) == "free" then tree:fill(d.inside) end
  end
  local n = 0
  for _, b in ipairs(boxes) do
    local c = { (b.min[1] + b.max[1]) / 2, (b.min[2] + b.max[2]) / 2, (b.min[3] + b.max[3]) / 2 }
    if tree:locate(c) == "free" then
      n = n + 1
      if n <= MAX_POCKETS then report.pockets[#report.pockets + 1] = { hole = i, name = h.name, position = c } end
      tree:fill(c)
    end
  end
  if n > 0 then report.ok = false end
  tree:close()
end

-- What the world tree offers inside hole i (see validate's `world`): every world leaf (the world's
-- finest cell) overlapping a free box of the hole's sealed tree is located in the world tree; a free
-- one gives an entry (position: its centre clamped into the box), at most MAX_POCKETS a hole.
-- The leaf ranges are clamped to the world's leaves (integers, whatever the numbers: a float index past
-- 2^53 would never step), and a hole whose boxes cover more than MAX_WORLD_LEAVES world leaves is
-- reported as an error instead of scanned.
local MAX_WORLD_LEAVES = 16777216
local function world_inside(self, i, h, report)
  local boxes, err = inside_boxes(self, i, h)
  if not boxes then return err end
  local N = compat.pow2(self.depth)
  local leaf = self.tile_size / N
  local o, n = self.origin, 0
  local ranges, total = {}, 0
  for bi, b in ipairs(boxes) do
    local lo, hi = {}, {}
    for a = 1, 3 do
      local last = self.tiles[a] * N - 1
      local l = math.floor((b.min[a] - o[a]) / leaf)
      local u = math.ceil((b.max[a] - o[a]) / leaf) - 1
      lo[a] = l > 0 and compat.tointeger(math.min(l, last + 1)) or 0 -- (NaN: 0)
      hi[a] = u < last and compat.tointeger(math.max(u, -1)) or last
    end
    ranges[bi] = { lo, hi }
    local c = 1
    for a = 1, 3 do c = c * math.max(0, hi[a] - lo[a] + 1) end
    total = total + c
    if total > MAX_WORLD_LEAVES then
      return ("hole covers more than %d world leaves: not checked"):format(MAX_WORLD_LEAVES)
    end
  end
  for bi, b in ipairs(boxes) do
    local lo, hi = ranges[bi][1], ranges[bi][2]
    for x = lo[1], hi[1] do
      for y = lo[2], hi[2] do
        for z = lo[3], hi[3] do
          local c = { o[1] + (x + 0.5) * leaf, o[2] + (y + 0.5) * leaf, o[3] + (z + 0.5) * leaf }
          for a = 1, 3 do c[a] = math.max(b.min[a], math.min(b.max[a], c[a])) end
          if self.tree:locate(c) == "free" then
            n = n + 1
            if n <= MAX_POCKETS then report.world[#report.world + 1] = { hole = i, name = h.name, position = c } end
          end
        end
      end
    end
  end
  if n > 0 and self.block_holes then report.ok = false end
end

local validate_one

--- world:validate() -> the report above for this world's agent, with `agents`: one such report per
-- agent loaded with it ({ name, radius, ok, doors, pockets, leaks, unclosed, world }, the default
-- agent first); ok is false when any agent's is.
function World:validate()
  local report
  local list = {}
  for n, w in ipairs(agents_mod.each(self)) do
    local r = validate_one(w)
    r.name, r.radius = w.agent_name, w.radius
    list[n] = r
    if w == self then
      report = {}
      for k, v in pairs(r) do report[k] = v end
      report.name, report.radius = nil, nil
    end
  end
  for _, r in ipairs(list) do report.ok = report.ok and r.ok end
  report.agents = list
  return report
end

function validate_one(self)
  local report = { ok = true, doors = {}, pockets = {}, leaks = {}, unclosed = {}, world = {} }
  for i, h in ipairs(self.holes) do repeat -- (`break` below: the next hole; Lua 5.1 has no goto)
    local q
    local ref
    local tree, temp = h.tree, false
    if not tree then
      local err
      tree, err = self:load_hole(i)
      if not tree then
        for j in ipairs(h.doors) do
          report.doors[#report.doors + 1] = { hole = i, name = h.name, door = j, ok = false, error = err }
        end
        report.ok = false
        break -- the next hole
      end
      temp = true
    end
    for _, d in ipairs(h.doors) do
      if tree:locate(d.inside) == "free" then
        ref = d.inside
        break
      end
    end
    for j, d in ipairs(h.doors) do
      local outside_blocked = tree:locate(d.outside) ~= "free"
      local inside_free = tree:locate(d.inside) == "free"
      local connected = false
      if inside_free and ref then
        if ref == d.inside then
          connected = true
        else
          q = q or core.query.new(tree)
          local path, info = q:find(ref, d.inside)
          connected = path ~= nil and info.status == "found"
        end
      end
      local outside_free = self.tree:locate(d.outside) == "free"
      local r = { hole = i, name = h.name, door = j, outside_blocked = outside_blocked, inside_free = inside_free,
        connected = connected, outside_free = outside_free }
      r.ok = outside_blocked and inside_free and connected and outside_free
      if not r.ok then report.ok = false end
      report.doors[#report.doors + 1] = r
      if not inside_free then
        report.leaks[#report.leaks + 1] = { hole = i, name = h.name, door = j, position = d.inside }
        report.ok = false
      end
      if d.box and not segment_crosses(d.inside, d.outside, d.box) then
        report.unclosed[#report.unclosed + 1] = { hole = i, name = h.name, door = j, box = d.box }
        report.ok = false
      end
    end
    for _, check in ipairs { { find_pockets, report.pockets }, { world_inside, report.world } } do
      local err = check[1](self, i, h, report)
      if err then
        report.ok = false
        check[2][#check[2] + 1] = { hole = i, name = h.name, error = err }
      end
    end
    if q then q:close() end
    if temp then tree:close() end
  until true end
  return report
end

--- Adds world:validate to the world class.
function M.install(W)
  for k, f in pairs(World) do W[k] = f end
end

return M
