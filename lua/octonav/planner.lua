--- octonav.planner: the Cell-level A* over connect blocks and doors (the seed's 层级A* / Cell层级寻路).
--
--   local route, reason = require("octonav.planner").plan(world, a, b)
--
-- `world` is the world object of docs/world.md (what octonav.world.load returns, or a table built by
-- hand with the same fields and an `in_hole` method). The result is the route of docs/world.md, or
-- nil and one of "start_outside", "goal_outside", "start_blocked", "goal_blocked", "unreachable",
-- "door_closed" (no route with the doors as they are, but one with every door open).
--
-- Cells. A point is in hole H when world:in_hole(p) names H (inside H's box and free in H's tree);
-- otherwise it is in the tile holding it (world:tile_of(p); computed from origin, tile_size and tiles
-- when the world has no such method), where world.tree must say "free" (else *_blocked); no tile ->
-- *_outside. Start and goal in the same cell -> a route of one step.
--
-- Graph. Nodes are connect blocks (at their centres), doors (at their outside points) and the goal.
--   start in tile T   -> the blocks of T that a reaches inside T (see "Local reach" below): the
--                        local path length for the nearest block of each component reached, |a -
--                        centre| for the others; each open door of the goal's hole whose outside
--                        point lies in T and that a reaches inside T: the local path length
--   start in hole H   -> each open door j of H: |a - inside| + |inside - outside|
--   block -> block     weights[tile][a][b] (read both ways: the graph stores a symmetric weight once
--                      or twice), links[id] (across a tile face)
--   block -> door      door_links, only towards open doors of the goal's hole (the seed expands
--                      towards a hole only when it is the target)
--   door -> block      door_links, only from doors of the start's hole
--   door -> door       the start hole's door to a goal hole's door whose outside points share a tile
--                      and reach each other inside it: the local path length
--   -> goal            goal in tile T: from the blocks of T that reach b inside T (as for the start)
--                      and from start-hole doors whose outside point lies in T and reaches b inside T
--                      (local path length); goal in hole G: from G's doors
--                      (|outside - inside| + |inside - b|)
-- Local reach (issue 11: a straight-line join picked blocks the start cannot reach, e.g. from a closed
-- room whose only exit is on the far side of its tile): a point is joined only to what a query on a
-- one-tile copy of its tile reaches (the query cannot leave the tile). Blocks go by components of the
-- tile's weights: with weights = "path" the bake weighs only pairs of blocks with a path inside the
-- tile, so one local search per component decides for all its blocks; with "straight" weights every
-- pair is weighed and the tile is one component (the join is exact only for the nearest block).
-- Heuristic: the straight distance from the node's point to b. Holes other than the start's and the
-- goal's are never crossed (the seed's four cases: tile->tile, tile->hole, hole->tile,
-- hole->tile->hole).
--
-- Route. Steps split where the path crosses a tile face (a link A -> B) or a door. Blocks visited
-- inside one tile are not steps (the C query searches the whole step). A tile step's tile is the
-- tile of its enter point (the tile of the link's block B after a face crossing, of the door's
-- outside point after leaving a hole). Exit points:
--   through a connect block A (link A -> B): the point p of A minimising
--     |enter - p.inside| + |p.outside - centre(B)| (the point nearest the way on, rather than the
--     point nearest the line to the goal: it accounts for where the step was entered); the step
--     exits at p.inside and the next step enters at p.outside. A block without points uses the
--     centres of A and B.
--   through a door: door.outside / door.inside (leaving the tile / entering the hole) or the reverse.
-- Each step has `via` (what it leaves through: a block id, or a door index), and in addition to
-- docs/world.md `via_kind` = "block" | "door" and, for doors, `via_hole` (the hole of that door).
-- The last step has no via.
local M = {}

local util = require "octonav.util"
local tilegrid = require "octonav.tilegrid"

local type, huge = type, math.huge
local dist, copy = util.dist, util.copy

-- fname: the name errors give (octonav.planner.plan, or world:plan when the world calls it)
local function check_point(fname, p, what)
  if not util.is_point(p) then
    error(("%s: %s must be a point {x, y, z} of finite numbers"):format(fname, what), 3)
  end
end

local function check_world(fname, world)
  if type(world) ~= "table" then error(fname .. ": world must be a world table", 3) end
  for _, k in ipairs { "tree", "holes", "blocks", "tile_blocks", "links", "weights", "door_links" } do
    if world[k] == nil then error(fname .. ": world." .. k .. " is missing", 3) end
  end
  if type(world.in_hole) ~= "function" then error(fname .. ": world:in_hole is missing", 3) end
end

-- A route prints as its steps: "octonav.route: 3 steps: tile 0 -> hole 1 -> tile 1" (holes by index).
local Route = {}
function Route.__tostring(route)
  local parts = {}
  for i, st in ipairs(route) do
    if i > 8 then
      parts[#parts + 1] = ("... (%d more)"):format(#route - 8)
      break
    end
    parts[i] = st.kind == "hole" and ("hole " .. tostring(st.hole)) or ("tile " .. tostring(st.tile))
  end
  return ("octonav.route: %d step%s: %s"):format(#route, #route == 1 and "" or "s", table.concat(parts, " -> "))
end
M.Route = Route

-- Tile index of a world point (the linear index i + nx*(j + ny*k)) or nil outside the grid.
local function tile_of(world, p)
  if type(world.tile_of) == "function" then return world:tile_of(p) end
  return tilegrid.tile_of(world, p)
end

local function hole_of(world, name)
  if math.type(name) == "integer" then return name end
  local hi = world.hole_index
  if hi and hi[name] then return hi[name] end
  for i, h in ipairs(world.holes) do
    if h.name == name then return i end
  end
  error("octonav.planner.plan: world:in_hole returned an unknown hole " .. tostring(name), 3)
end

local function cell_of(world, p, what)
  local name = world:in_hole(p)
  if name ~= nil then return { kind = "hole", hole = hole_of(world, name) } end
  local t = tile_of(world, p)
  if t == nil then return nil, what .. "_outside" end
  local state = world.tree:locate(p)
  if state == nil then return nil, what .. "_outside" end
  if state ~= "free" then return nil, what .. "_blocked" end
  return { kind = "tile", tile = t }
end

local function same_cell(c1, c2)
  return c1.kind == c2.kind and (c1.kind == "tile" and c1.tile == c2.tile or c1.kind == "hole" and c1.hole == c2.hole)
end

local function weight(world, tile, a, b)
  local w = world.weights[tile]
  if not w then return nil end
  local wa = w[a]
  local c = wa and wa[b]
  if c == nil then
    local wb = w[b]
    c = wb and wb[a]
  end
  return c
end

---------------------------------------------------------------------------------------------------
-- Local reach: the start and the goal join the graph only at what they reach inside their own tile.
-- A tile of the world tree is copied into a tree of one tile (same depth, scale, radius; origin at the
-- tile's corner), so a query on it cannot leave the tile; the copy is cached per world and tile and
-- made again when the tile's salt changes (a rebake, a reload). Costs are the query's path lengths.

local LOCAL_CACHE = 4096 -- local trees kept per world (fewer than the tiles planned over: rebuilt, thrashing)
local locals = setmetatable({}, { __mode = "k" }) -- world -> { [tile] = entry, order = { tiles } }

local function local_query(world, tile)
  local tree = world.tree
  if type(tree.tile_salt) ~= "function" or type(tree.encode_tile) ~= "function" then return nil end
  local n = world.tiles
  local i, j, k = tile % n[1], (tile // n[1]) % n[2], tile // (n[1] * n[2])
  local okp, salt = pcall(tree.tile_salt, tree, i, j, k)
  if not okp then return nil end
  local cache = locals[world]
  if not cache then
    cache = { order = {} }
    locals[world] = cache
  end
  local e = cache[tile]
  if e and e.salt == salt then return e.q, e.tree end
  if e then
    e.q:close()
    e.tree:close()
    cache[tile] = nil
  end
  local okb, blob = pcall(tree.encode_tile, tree, i, j, k)
  if not okb then return nil end
  local p = tree:params()
  local T = world.tile_size
  local o = world.origin
  local lt = require("octonav.core").tree.new { tiles = { 1, 1, 1 }, depth = p.depth, scale = p.scale,
    radius = p.radius, origin = { o[1] + i * T, o[2] + j * T, o[3] + k * T } }
  if not lt:decode_tile(0, 0, 0, blob) then
    lt:close()
    return nil
  end
  -- the tile's box graph (tree:prepare): local searches run over boxes, not cells
  if type(lt.prepare) == "function" then pcall(lt.prepare, lt) end
  e = { salt = salt, tree = lt, q = require("octonav.core").query.new(lt, { max_nodes = 1 << 16 }) }
  cache[tile] = e
  local order = cache.order
  order[#order + 1] = tile
  if #order > LOCAL_CACHE then
    local old = table.remove(order, 1)
    local oe = cache[old]
    if oe and old ~= tile then
      oe.q:close()
      oe.tree:close()
      cache[old] = nil
    end
  end
  return e.q, e.tree
end

-- reach(world, tile, p) -> function(target) -> path length inside the tile from p to target, or nil
-- when target is not reached without leaving the tile. Without a usable tile copy (a hand-built
-- world whose tree has no tile functions): the straight distance, as the seed did.
local function reach(world, tile, p)
  local q, lt = local_query(world, tile)
  local memo = {}
  return function(target)
    local r = memo[target]
    if r ~= nil then return r or nil end
    if not q then
      r = dist(p, target)
    elseif lt:visible(p, target) then -- in sight inside the tile: the straight line (a ray, no search)
      r = dist(p, target)
    else
      local path, info = q:find(p, target)
      r = path and info.length or false
    end
    memo[target] = r
    return r or nil
  end
end

-- The blocks of a tile in components: two blocks are in one component when the tile's weights join
-- them (with weights = "path" the bake weighs only pairs with a path inside the tile, so these are
-- the tile's connected parts; with "straight" weights the whole tile is one). Memoised per weights
-- table (a rebake or reload replaces it).
local comps_memo = setmetatable({}, { __mode = "k" })

local function components(world, tile)
  local wt = world.weights[tile]
  local ids = world.tile_blocks[tile] or {}
  local key = wt or ids
  local c = comps_memo[key]
  if c then return c end
  c = {}
  local n = 0
  for _, id in ipairs(ids) do
    if not c[id] then
      n = n + 1
      local stack = { id }
      c[id] = n
      while #stack > 0 do
        local x = table.remove(stack)
        for _, y in ipairs(ids) do
          if not c[y] and weight(world, tile, x, y) then
            c[y] = n
            stack[#stack + 1] = y
          end
        end
      end
    end
  end
  comps_memo[key] = c
  return c
end

-- reach_blocks(world, tile, p) -> function(block id) -> cost or nil: a block is joined when p reaches
-- its component inside the tile (one local search per component, to its block nearest p); the cost is
-- the local path length for that block, the straight distance (a lower bound) for the others.
local function reach_blocks(world, tile, p)
  local comp = components(world, tile)
  local to = reach(world, tile, p)
  local rep = nil
  local verdict = {}
  return function(id)
    local blk = world.blocks[id]
    if not blk then return nil end
    local k = comp[id]
    if k == nil then return to(blk.center) end
    if verdict[k] == nil then
      if not rep then -- each component's block nearest p
        rep = {}
        for bid, kk in pairs(comp) do
          local b2 = world.blocks[bid]
          if b2 and (not rep[kk] or dist(p, b2.center) < dist(p, world.blocks[rep[kk]].center)
            or dist(p, b2.center) == dist(p, world.blocks[rep[kk]].center) and bid < rep[kk]) then
            rep[kk] = bid
          end
        end
      end
      verdict[k] = to(world.blocks[rep[k]].center) ~= nil
    end
    if not verdict[k] then return nil end
    if rep[k] == id then return to(blk.center) end
    return dist(p, blk.center)
  end
end

---------------------------------------------------------------------------------------------------
-- A binary min-heap of {f, key}.

local function heap_push(h, f, key)
  local i = #h + 1
  h[i] = { f, key }
  while i > 1 do
    local p = i // 2
    if h[p][1] <= h[i][1] then break end
    h[p], h[i] = h[i], h[p]
    i = p
  end
end

local function heap_pop(h)
  local n = #h
  local top = h[1]
  h[1] = h[n]
  h[n] = nil
  n = n - 1
  local i = 1
  while true do
    local l, r, m = 2 * i, 2 * i + 1, i
    if l <= n and h[l][1] < h[m][1] then m = l end
    if r <= n and h[r][1] < h[m][1] then m = r end
    if m == i then break end
    h[i], h[m] = h[m], h[i]
    i = m
  end
  return top[1], top[2]
end

---------------------------------------------------------------------------------------------------
-- The search. Node keys: block ids (numbers), "d:H:J" for door J of hole H, "start", "goal".

local function door_key(h, j) return "d:" .. h .. ":" .. j end

local function search(world, a, b, sc, gc, all_open)
  local holes, blocks = world.holes, world.blocks
  local sh = sc.kind == "hole" and sc.hole or nil
  local gh = gc.kind == "hole" and gc.hole or nil
  local gt = gc.kind == "tile" and gc.tile or nil

  local function usable(h, j)
    return all_open or holes[h].doors[j].open ~= false
  end

  -- the node table: key -> { pos, tile, block | hole, door }
  local nodes = {}
  local function block_node(id)
    local n = nodes[id]
    if not n then
      local blk = blocks[id]
      if not blk then return nil end
      n = { pos = blk.center, tile = blk.tile, block = id }
      nodes[id] = n
    end
    return n
  end
  local function door_node(h, j)
    local key = door_key(h, j)
    local n = nodes[key]
    if not n then
      local d = holes[h].doors[j]
      n = { pos = d.outside, tile = tile_of(world, d.outside), hole = h, door = j, key = key }
      nodes[key] = n
    end
    return key, n
  end

  -- goal hole: reverse door links block -> { {door, cost} }, and its doors by outside tile
  local to_goal_doors, goal_doors_in = {}, {}
  if gh then
    local dl = world.door_links[gh] or {}
    for j, door in ipairs(holes[gh].doors) do
      if usable(gh, j) then
        for _, l in ipairs(dl[j] or {}) do
          local list = to_goal_doors[l.block]
          if not list then
            list = {}
            to_goal_doors[l.block] = list
          end
          list[#list + 1] = { door = j, cost = l.cost }
        end
        local t = tile_of(world, door.outside)
        if t then
          goal_doors_in[t] = goal_doors_in[t] or {}
          table.insert(goal_doors_in[t], j)
        end
      end
    end
  end

  -- what the start and the goal reach inside their tiles (lazily, memoised per target point)
  local from_start = sc.kind == "tile" and reach(world, sc.tile, a) or nil
  local start_blocks = sc.kind == "tile" and reach_blocks(world, sc.tile, a) or nil
  local to_goal = gt and reach(world, gt, b) or nil
  local goal_blocks = gt and reach_blocks(world, gt, b) or nil

  local g, parent, closed, open = { start = 0 }, {}, {}, {}
  local function relax(from, key, pos, cost)
    local ng = g[from] + cost
    if closed[key] then return end
    local old = g[key]
    if old == nil or ng < old then
      g[key] = ng
      parent[key] = from
      heap_push(open, ng + (pos and dist(pos, b) or 0), key)
    end
  end

  -- edges out of a node key (the node at point `pos`, in tile `tile`)
  local function expand(key)
    if key == "start" then
      if sc.kind == "tile" then
        for _, id in ipairs(world.tile_blocks[sc.tile] or {}) do
          local n = block_node(id)
          local c = n and start_blocks(id)
          if c then relax("start", id, n.pos, c) end
        end
        for _, j in ipairs(goal_doors_in[sc.tile] or {}) do
          local k, n = door_node(gh, j)
          local c = from_start(n.pos)
          if c then relax("start", k, n.pos, c) end
        end
      else
        for j, door in ipairs(holes[sh].doors) do
          if usable(sh, j) then
            local k, n = door_node(sh, j)
            relax("start", k, n.pos, dist(a, door.inside) + dist(door.inside, door.outside))
          end
        end
      end
      return
    end
    local n = nodes[key]
    if n.block then
      local id = n.block
      for _, other in ipairs(world.tile_blocks[n.tile] or {}) do
        if other ~= id then
          local c = weight(world, n.tile, id, other)
          local m = c and block_node(other)
          if m then relax(key, other, m.pos, c) end
        end
      end
      for _, l in ipairs(world.links[id] or {}) do
        local m = block_node(l.block)
        if m then relax(key, l.block, m.pos, l.cost) end
      end
      if gt and n.tile == gt then
        local c = goal_blocks(id)
        if c then relax(key, "goal", nil, c) end
      end
      for _, l in ipairs(to_goal_doors[id] or {}) do
        local k, m = door_node(gh, l.door)
        relax(key, k, m.pos, l.cost)
      end
    elseif n.hole == gh then
      local door = holes[gh].doors[n.door]
      relax(key, "goal", nil, dist(door.outside, door.inside) + dist(door.inside, b))
    else -- a door of the start hole: out into the world
      local dl = world.door_links[n.hole]
      for _, l in ipairs(dl and dl[n.door] or {}) do
        local m = block_node(l.block)
        if m then relax(key, l.block, m.pos, l.cost) end
      end
      if gt and n.tile == gt then
        local c = to_goal(n.pos)
        if c then relax(key, "goal", nil, c) end
      end
      if gh and n.tile then
        local from_door = reach(world, n.tile, n.pos)
        for _, j in ipairs(goal_doors_in[n.tile] or {}) do
          local k, m = door_node(gh, j)
          local c = from_door(m.pos)
          if c then relax(key, k, m.pos, c) end
        end
      end
    end
  end

  heap_push(open, dist(a, b), "start")
  while #open > 0 do
    local _, key = heap_pop(open)
    if not closed[key] then
      if key == "goal" then
        local seq = {}
        local k = parent.goal
        while k ~= "start" do
          table.insert(seq, 1, nodes[k])
          k = parent[k]
        end
        return seq, g.goal
      end
      closed[key] = true
      expand(key)
    end
  end
  return nil
end

---------------------------------------------------------------------------------------------------
-- The node sequence -> route steps.

local function best_point(blk, enter, toward)
  local best, bc = nil, huge
  for _, p in ipairs(blk.points or {}) do
    local c = dist(enter, p.inside) + dist(p.outside, toward)
    if c < bc then best, bc = p, c end
  end
  return best
end

local function build_route(world, a, b, sc, seq)
  local steps = {}
  local cur = { kind = sc.kind, enter = copy(a) }
  if sc.kind == "tile" then cur.tile = sc.tile else cur.hole = sc.hole end
  for i, n in ipairs(seq) do
    if n.door then
      local door = world.holes[n.hole].doors[n.door]
      cur.via, cur.via_kind, cur.via_hole = n.door, "door", n.hole
      if cur.kind == "hole" then -- leaving the start hole
        cur.exit = copy(door.inside)
        steps[#steps + 1] = cur
        cur = { kind = "tile", tile = n.tile, enter = copy(door.outside) }
        if cur.tile == nil then -- a door leading outside the grid: the tile of the next block
          local nx = seq[i + 1]
          cur.tile = nx and nx.tile
        end
      else -- entering the goal hole
        cur.exit = copy(door.outside)
        steps[#steps + 1] = cur
        cur = { kind = "hole", hole = n.hole, enter = copy(door.inside) }
      end
    else
      local nx = seq[i + 1]
      if nx and nx.block and nx.tile ~= n.tile then -- a link across a tile face
        local blk = world.blocks[n.block]
        local p = best_point(blk, cur.enter, nx.pos)
        cur.via, cur.via_kind = n.block, "block"
        cur.exit = copy(p and p.inside or n.pos)
        steps[#steps + 1] = cur
        cur = { kind = "tile", tile = nx.tile, enter = copy(p and p.outside or nx.pos) }
      end
    end
  end
  cur.exit = copy(b)
  steps[#steps + 1] = cur
  return steps
end

--- plan(world, a, b) -> route | nil, reason (see the top of this file and docs/world.md).
-- A second return value on success: the Cell-level cost of the route.
local function plan(fname, world, a, b)
  check_world(fname, world)
  check_point(fname, a, "start")
  check_point(fname, b, "goal")
  local sc, why = cell_of(world, a, "start")
  if not sc then return nil, why end
  local gc, why2 = cell_of(world, b, "goal")
  if not gc then return nil, why2 end
  if same_cell(sc, gc) then
    local step = { kind = sc.kind, enter = copy(a), exit = copy(b) }
    if sc.kind == "tile" then step.tile = sc.tile else step.hole = sc.hole end
    return setmetatable({ step }, Route), dist(a, b)
  end
  local seq, cost = search(world, a, b, sc, gc, false)
  if seq then return setmetatable(build_route(world, a, b, sc, seq), Route), cost end
  if search(world, a, b, sc, gc, true) then return nil, "door_closed" end
  return nil, "unreachable"
end

function M.plan(world, a, b) return plan("octonav.planner.plan", world, a, b) end

--- The same, with errors naming `fname` (world:plan calls it so).
function M.plan_named(fname, world, a, b) return plan(fname, world, a, b) end

--- planner.tile_of(world, p) -> the linear tile index of world point p (i + nx*(j + ny*k)), or nil
-- outside the tile grid (world:tile_of when the world has it). The navigator locks tiles by it.
M.tile_of = tile_of

return M
