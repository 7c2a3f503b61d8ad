--- The world: a loaded nav pack (docs/world.md, "The world object").
--
--   local world = octonav.world.load("pack_dir")   -- world or nil, err
--   world:tile_of(p), world:tile_bounds(tile), world:to_nav(p [, hole]), world:to_world(p [, hole])
--   world:in_hole(p) -> name, i | nil
--   world:validate() -> { ok, doors = { { hole, name, door, outside_blocked, inside_free, connected,
--                                         outside_free } } }   (octonav.world_validate)
--   world:set_door(hole, door, open), world:door_box(hole, door [, box]) (a closed door blocks its box
--   in both trees), world:reapply_doors(tiles), world:reapply_hole_doors(hole),
--   world:rebake(region, config), world:plan(a, b), world:close(), world:close_idle_queries([all])
--   world:add_graph(tile) / world:remove_graph(tile) / world:graph_bytes()
--   world:agents(), world:agent(name), world:agent_tree(name), world:stats()   (octonav.world_agents)
--   doors and holes' insides at run time: set_door, door_box, reapply_*, block/unblock_hole_inside
--   (octonav.world_doors)
--
-- Agents: a pack baked for several radii loads as one world per agent (load_agent below), grouped by
-- octonav.world_agents; load returns the default agent's. Door changes, rebake and close act on
-- every agent of the group; the rest on the agent's world they are called on.
--
-- Loading reads the manifest, every tile file (decoded into one tree), every tile's graph file (added
-- to the world graph, world.graph = octonav.core.route.world: its links across tile faces are made as
-- the tiles' graphs are added) and every hole tree, all through octonav.pack. For streaming
-- (octonav.streamer), `octonav.world.load(dir, { tiles = false })` reads the manifest and the holes'
-- lines only: world.tree has every tile unloaded, the world graph holds no tile and every hole's
-- `tree` is nil; the streamer loads them (a tile's graph with its tile: its workers read and decode
-- the graph file beside the tile's and its update links it into world.graph and drops it at the
-- unload; world:add_graph(t) / world:remove_graph(t) do the same by hand on the caller's thread;
-- world:load_hole(h) reads one hole's tree without installing it). With
-- `{ tiles = false, graphs = true }` every tile's graph is read at once and stays (a skeleton to
-- plan over while the tiles stream). Besides the fields of docs/world.md the world keeps `dir` (its
-- pack directory), `grid` ({ origin, tiles, tile_size, count, ... }), `graph_ids` (tile -> the identity
-- (pack.blob_id) of the graph file the world graph holds for it: the tile graph's salt, which a rebake changes and
-- an unload and reload of the same file does not) and `graph_revision` (bumped by every add and
-- remove); each hole also has `depth`, `origin` and `tree_tiles` (its tree's parameters).
local compat = require "octonav.compat"
compat.frame_module() -- (LuaJIT: run interpreted; compat.lua)
local core = require "octonav.core"
local pack = require "octonav.pack"
local util = require "octonav.util"
local raise = util.raise -- (errors at the user's call: no line of the library's files)
local tilegrid = require "octonav.tilegrid"

local M = {}

local World = util.class()
M.World = World

local function check_point(p, fname, what)
  if not util.is_point(p) then
    raise(("world:%s: %s: point {x, y, z} of finite numbers expected"):format(fname, what or "point"))
  end
  return p
end

local agents_mod = require "octonav.world_agents"
local onetree = require "octonav.onetree"
local doors_mod = require "octonav.world_doors"
local block_inside, unblock_inside = doors_mod.block_inside, doors_mod.unblock_inside

local function grid_of(m) return tilegrid.new(m.origin, m.tiles, m.depth, m.scale, m.radius) end

local same3 = util.same3

-- A hole's tree, checked against its manifest entry.
local function check_hole(path, h, radius, tree)
  local p = tree:params()
  if p.depth ~= h.depth or p.scale ~= h.scale or p.radius ~= radius or not same3(p.origin, h.origin)
    or not same3(p.tiles, h.tiles) then
    tree:close()
    return nil, path .. ": the tree's parameters differ from the manifest's hole line"
  end
  return tree
end

local function load_hole(dir, h, radius)
  local path = pack.hole_path(dir, h.name)
  local tree, err = core.tree.load(path)
  if not tree then return nil, err end
  return check_hole(path, h, radius, tree)
end

-- Reads tile t's graph file and adds it to the world graph. With `blob` (the tile's own blob, when
-- the caller has it) the graph's tag must be that blob's CRC-32: a graph left from another bake of
-- the tile is refused. Returns true or nil, "PATH: reason".
local function add_graph(world, t, blob)
  local i, j, k = tilegrid.coords(world.grid, t)
  local gdir = world.graph_dir or world.dir -- (a one-tree pack's agent: its own, octonav.onetree)
  local path = pack.graph_path(gdir, i, j, k)
  local g, err = pack.read_graph(gdir, i, j, k)
  if not g then return nil, err end
  if blob then
    local info, ierr = core.route.info(g)
    if not info then return nil, path .. ": " .. tostring(ierr) end
    if info.tag ~= pack.graph_tag(blob) then
      return nil, path .. ": built from another version of its tile (bake the tile again)"
    end
  end
  local ok, aerr = world.graph:add_tile(i, j, k, g)
  if not ok then return nil, path .. ": " .. tostring(aerr) end
  world.graph_revision = world.graph_revision + 1
  return true
end

-- The identity of the graph the world graph holds for tile t (pack.blob_id of its file, kept in C:
-- graph:tile_id), nil where none.
local function graph_id(world, t)
  if not compat.isinteger(t) or t < 0 or t >= world.grid.count then return nil end
  local ok, id = pcall(world.graph.tile_id, world.graph, tilegrid.coords(world.grid, t))
  return ok and id or nil -- (a closed graph holds none)
end

-- tile, id of each tile with a graph, in tile order (world:graph_tiles, pairs(world.graph_ids))
local function graph_tiles(world)
  local t = -1
  return function()
    while true do
      t = t + 1
      if t >= world.grid.count then return nil end
      local id = graph_id(world, t)
      if id then return t, id end
    end
  end
end

-- world.graph_ids: tile -> graph_id, read-only; pairs() lists the tiles with one where __pairs exists
-- (5.2+; world:graph_tiles() on every Lua: issue 34).
local function graph_ids_of(world)
  local ids = {}
  return setmetatable(ids, {
    __index = function(_, t) return graph_id(world, t) end,
    __newindex = function() raise("world.graph_ids is read-only (the world graph's)") end,
    __pairs = function() return graph_tiles(world), ids, nil end,
  })
end

-- Marks every tile of a fresh tree unloaded (what the C streamer does when it starts): a tree
-- without a tile's data must not read as free space.
local function unload_all(tree, dir)
  core.streamer.new(tree, dir, { load_padding = 0, unload_padding = 1, workers = 0 }):close()
end

-- The world's hole records from a manifest (trees not read).
local function hole_records(grid, m)
  local list, index = {}, {}
  for i, h in ipairs(m.holes) do
    local doors = {}
    for j, d in ipairs(h.doors) do
      doors[j] = { inside = d.inside, outside = d.outside, open = true }
      if d.box then doors[j].box = { min = d.box.min, max = d.box.max } end
    end
    list[i] = {
      name = h.name, kind = h.kind, min = h.min, max = h.max, scale = h.scale, depth = h.depth,
      origin = h.origin, tree_tiles = h.tiles, doors = doors, tiles = tilegrid.hole_tiles(grid, h),
    }
    index[h.name] = i
  end
  return list, index
end

-- The world of a one-tree pack's agent n (octonav.onetree) over owner's tree: its own graph (the tiles'
-- graphs added by load_agent, tile graphs identical to another agent's held once: route.world's graph2)
-- and graph_dir; the rest (tree, holes, doors) read through from owner.
local function agent_view(dir, m, n, tree, grid, owner_graph)
  local a = m.agents[n]
  local v = { agent_name = a.name, radius = a.radius, graph_dir = onetree.graph_dir(dir, m.radius, a), grid = grid,
    graph = core.route.world(tree, owner_graph), graph_revision = 0 }
  v.graph_ids = graph_ids_of(v)
  return v
end

-- Loads agent n of manifest m (its files under pack.agent_dir) as a world of its own (see M.load).
-- A one-tree pack (m.one_tree): the one tree and its holes from dir, agent n's graphs from its
-- graph_dir, and with `others` (agent indices) those agents' worlds too (agent_view), in
-- world.agent_worlds (n's first). Returns the world or nil, err.
local function load_agent(dir, m, n, o, others)
  local agent = m.agents[n]
  local adir = m.one_tree and dir or pack.agent_dir(dir, n, agent.name)
  local radius = m.one_tree and m.radius or agent.radius -- the tree's
  local with_tiles = o.tiles
  local all_graphs = with_tiles or o.graphs == true
  local grid = grid_of(m)
  local world = {
    dir = adir, pack_dir = dir, agent_name = agent.name, grid = grid, tree_radius = radius,
    graph_dir = m.one_tree and onetree.graph_dir(dir, m.radius, agent) or nil,
    scale = m.scale, depth = m.depth, radius = agent.radius, origin = m.origin, tiles = m.tiles,
    tile_size = grid.tile_size, holes = {}, hole_index = {}, graph_revision = 0,
    graphs_stream = not all_graphs, with_tiles = with_tiles, block_holes = o.block_holes ~= false,
  }
  -- a manifest the tree cannot hold (too many tiles) is a bad file, not misuse: nil, reason
  local made, tree = pcall(core.tree.new, { tiles = m.tiles, depth = m.depth, scale = m.scale, origin = m.origin,
    radius = radius })
  if not made then return nil, ("%s: %s"):format(pack.manifest_path(dir), tostring(tree):gsub("^octonav%.tree%.new: ", "")) end
  -- a cell adjacency costs about a fifth of a tile's bytes (celladj.h: 0.18 of the tree on 512^3 terrain)
  -- and saves about a fifth of a search's instructions: on unless load is given adjacency = false, and
  -- built below for every tile read (a search on a frame budget's deferred tree builds none)
  if o.adjacency == false then tree:adjacency(false) end
  -- searches at a radius count outside the grid as free, as the bake's tree for that radius does (it grows
  -- geometry, not the grid's border): the one tree's paths at r are those of the tree baked for r
  tree:border_free(true)
  world.graph = core.route.world(tree)
  world.graph_ids = graph_ids_of(world)
  local views = {}
  for x, a in ipairs(others or {}) do views[x] = agent_view(dir, m, a, tree, grid, world.graph) end
  local function abort(e)
    for _, v in ipairs(views) do v.graph:close() end
    world.graph:close()
    tree:close()
    for _, h in ipairs(world.holes) do
      if h.tree then h.tree:close() end
    end
    return nil, e
  end
  if with_tiles then
    for t = 0, grid.count - 1 do
      local i, j, k = tilegrid.coords(grid, t)
      local blob, rerr = pack.read_tile(adir, i, j, k)
      if not blob then return abort(rerr) end
      local ok, derr = tree:decode_tile(i, j, k, blob)
      if not ok then return abort(("%s: %s"):format(pack.tile_path(adir, i, j, k), tostring(derr))) end
      local gok, gerr = add_graph(world, t, blob)
      if not gok then return abort(gerr) end
      for _, v in ipairs(views) do
        gok, gerr = add_graph(v, t, blob)
        if not gok then return abort(gerr) end
      end
    end
    tree:compact()
  else
    unload_all(tree, adir)
    if all_graphs then
      for t = 0, grid.count - 1 do
        local gok, gerr = add_graph(world, t)
        if not gok then return abort(gerr) end
        for _, v in ipairs(views) do
          gok, gerr = add_graph(v, t)
          if not gok then return abort(gerr) end
        end
      end
    end
  end
  world.tree = tree
  world.holes, world.hole_index = hole_records(grid, m)
  if with_tiles then
    for _, h in ipairs(world.holes) do
      local herr
      h.tree, herr = load_hole(adir, { name = h.name, depth = h.depth, scale = h.scale, origin = h.origin,
        tiles = h.tree_tiles }, radius)
      if not h.tree then return abort(herr) end
    end
  end
  setmetatable(world, World)
  if m.one_tree then
    world.agent_worlds = { world }
    local meta = { __index = world, __tostring = World.__tostring, __close = World.__close }
    for x, v in ipairs(views) do world.agent_worlds[x + 1] = setmetatable(v, meta) end
  end
  if with_tiles and world.block_holes then -- every hole's inside blocked in the world tree (docs/world.md)
    for i, h in ipairs(world.holes) do
      local ok, berr = block_inside(world, i, h)
      if not ok then return abort(berr) end
    end
  end
  -- the tiles' cell adjacencies, after every edit above (an edit drops its tile's): 7-8 ms a 512^3
  -- terrain tile (issue 31); out of memory leaves the searches walking the tree, the same paths
  if with_tiles and o.adjacency ~= false then tree:adjacency_prepare() end
  -- line of sight's masks within an eighth of the tree's bytes (tree:los_budget, kept by tree:los_step:
  -- a navigator budget's frames drop the least recently read tiles'; issue 31)
  tree:los_budget("tree")
  return world
end

--- Loads a pack directory. Returns the world or nil, "PATH[:LINE]: reason".
-- opts (optional): { tiles = true, graphs = tiles, block_holes = true, adjacency = true, agents = every
-- agent }; adjacency: the world tree's searches read each tile's cell adjacency (tree:adjacency(true),
-- built at load for every tile read: about a fifth of a search's instructions saved, for about a fifth
-- of the tree's bytes; false: off);
-- block_holes: every hole's sealed inside is blocked in the world tree (world:block_hole_inside, kept
-- up by the streamer and rebake: docs/world.md "The world tree around a hole"); tiles = false: no
-- tile file and no hole tree is read (for octonav.streamer): world.tree has every tile unloaded, each
-- hole's tree is nil, and the world graph holds no tile unless graphs = true (then every tile's graph
-- is read and stays). agents: a list of agent names to open (default: the pack's agents, in its
-- order); the first is the default agent, whose tree, graph and holes the returned world holds
-- (world.tree, world.graph, ...); each agent is a world of its own (world:agent(name)) sharing the
-- doors' states (octonav.world_agents, docs/world.md "Agents").
function M.load(dir, opts)
  if type(dir) ~= "string" or dir == "" then raise("octonav.world.load: dir must be a non-empty string") end
  if opts ~= nil and type(opts) ~= "table" then raise("octonav.world.load: opts must be a table") end
  local o = { tiles = true }
  for k, v in pairs(opts or {}) do
    if k == "agents" then
      agents_mod.check_names(v)
    else
      if k ~= "tiles" and k ~= "graphs" and k ~= "block_holes" and k ~= "adjacency" then
        raise("octonav.world.load: unknown option '" .. tostring(k) .. "'")
      end
      if type(v) ~= "boolean" then raise(("octonav.world.load: option '%s' must be a boolean"):format(k)) end
    end
    o[k] = v
  end
  local m, err = pack.read_manifest(dir)
  if not m then return nil, err end
  if m.one_tree then -- one tree, a graph per agent (octonav.onetree): one world, the agents its views
    if o.tiles == false and o.graphs ~= true then -- (the streamer streams the tree, not the agents' graphs)
      return nil, ("%s: a one-tree pack (version %d) streams its tree only: load it with { tiles = false, graphs = true }"
        ):format(pack.manifest_path(dir), onetree.VERSION)
    end
    local pick, perr = agents_mod.picked(dir, m, o)
    if not pick then return nil, perr end
    local others = {}
    for x = 2, #pick do others[x - 1] = pick[x] end
    local w, lerr = load_agent(dir, m, pick[1], o, others)
    if not w then return nil, lerr end
    w.group = { w }
    return w
  end
  return agents_mod.load(dir, m, o, load_agent)
end

-- ---- spaces ---------------------------------------------------------------------------------------

--- Tile index (i + nx*(j + ny*k)) of a world point, or nil outside the tile grid.
function World:tile_of(p)
  check_point(p, "tile_of")
  return tilegrid.tile_of(self.grid, p)
end

--- World box of a tile: min, max.
function World:tile_bounds(tile)
  if not compat.isinteger(tile) or tile < 0 or tile >= self.grid.count then
    raise(("world:tile_bounds: tile must be an integer 0..%d"):format(self.grid.count - 1))
  end
  return tilegrid.bounds(self.grid, tile)
end

local hole_arg = doors_mod.hole_arg

-- The origin and scale of the world's nav space, or of a hole's (index or name) when given.
local function space(self, p, hole, fname)
  check_point(p, fname)
  if hole == nil then return self.origin, self.scale end
  local _, h = hole_arg(self, hole, fname)
  return h.origin, h.scale
end

--- World -> nav space (the seed: P_nav = (P_world - Origin) / Scale), of the world or of a hole
-- (index or name), whose origin is its min corner and scale its own.
function World:to_nav(p, hole)
  local o, s = space(self, p, hole, "to_nav")
  return { (p[1] - o[1]) / s, (p[2] - o[2]) / s, (p[3] - o[3]) / s }
end

--- Nav -> world space (P_world = Origin + P_nav * Scale).
function World:to_world(p, hole)
  local o, s = space(self, p, hole, "to_world")
  return { o[1] + p[1] * s, o[2] + p[2] * s, o[3] + p[3] * s }
end

--- The hole a point is in: inside its bounds and free in its tree (whose outside is sealed).
-- Returns name, index or nil. Streaming: a hole whose bounds hold p must be loaded (its tree not nil;
-- the navigator force-loads it first), else this raises.
function World:in_hole(p)
  check_point(p, "in_hole")
  for i, h in ipairs(self.holes) do
    local mn, mx = h.min, h.max
    if p[1] >= mn[1] and p[1] <= mx[1] and p[2] >= mn[2] and p[2] <= mx[2] and p[3] >= mn[3] and p[3] <= mx[3] then
      if not h.tree then
        raise(("world:in_hole: hole '%s' is not loaded (streaming: load it first)"):format(h.name))
      end
      if h.tree:locate(p) == "free" then return h.name, i end
    end
  end
  return nil
end

--- Reads a hole's tree (hole: index or name) from the pack, checked against the manifest, without
-- installing it (octonav.streamer sets hole.tree). Returns the tree or nil, err.
function World:load_hole(hole)
  local _, h = hole_arg(self, hole, "load_hole")
  return load_hole(self.dir, { name = h.name, depth = h.depth, scale = h.scale, origin = h.origin,
    tiles = h.tree_tiles }, self.tree_radius or self.radius)
end

--- world:hole_path(h) -> the file of hole h's tree (what load_hole reads).
function World:hole_path(hole)
  local _, h = hole_arg(self, hole, "hole_path")
  return pack.hole_path(self.dir, h.name)
end

--- world:check_hole_tree(h, tree) -> tree | nil, err: load_hole's check of a tree read elsewhere (the
-- streamer's workers); a tree whose parameters differ from the manifest's is closed.
function World:check_hole_tree(hole, tree)
  local _, h = hole_arg(self, hole, "check_hole_tree")
  return check_hole(pack.hole_path(self.dir, h.name), { name = h.name, depth = h.depth, scale = h.scale,
    origin = h.origin, tiles = h.tree_tiles }, self.tree_radius or self.radius, tree)
end

-- ---- checks: world:validate (octonav.world_validate) -------------------------------------------

-- ---- the world graph -----------------------------------------------------------------------------

local function tile_arg(self, tile, fname)
  if not compat.isinteger(tile) or tile < 0 or tile >= self.grid.count then
    raise(("world:%s: tile must be an integer 0..%d"):format(fname, self.grid.count - 1))
  end
  return tile
end

--- world:add_graph(tile [, blob]) -> true | nil, err: reads tile's graph file and adds it to the world
-- graph (links to its present neighbours made; graph_ids[tile] set). With `blob`, the tile's own blob
-- (pack.read_tile), a graph built from another bake of the tile is refused. The streamer does the same for the
-- tiles it loads (the file read on its workers), and calls it for a tile a rebake rewrote meanwhile.
function World:add_graph(tile, blob)
  local t = tile_arg(self, tile, "add_graph")
  if blob ~= nil and type(blob) ~= "string" then
    raise("world:add_graph: blob must be a string or nil (got " .. type(blob) .. ")")
  end
  return add_graph(self, t, blob)
end

--- world:remove_graph(tile): drops tile's graph and its links (graph_ids[tile] = nil).
function World:remove_graph(tile)
  local i, j, k = tilegrid.coords(self.grid, tile_arg(self, tile, "remove_graph"))
  if not self.graph:has_tile(i, j, k) then return end
  self.graph:remove_tile(i, j, k)
  self.graph_revision = self.graph_revision + 1
end

--- world:graph_tiles() -> iterator: `for tile, id in world:graph_tiles()` lists the tiles whose graph the
-- world graph holds, in tile order, with world.graph_ids[tile]; on every Lua (pairs(world.graph_ids) does
-- the same on 5.2+ only: 5.1 and LuaJIT have no __pairs).
function World:graph_tiles()
  return graph_tiles(self)
end

--- world:graph_bytes() -> bytes the world graph holds (octonav.core.route's stats).
function World:graph_bytes()
  return self.graph:stats().bytes
end

--- Re-bakes the tiles overlapping region ({ min = {..}, max = {..} }) from config (the pack keeps no
-- config: pass the one it was baked from, edited), see octonav.bake.rebake, then reloads what it
-- rewrote and nothing else: each re-baked tile is decoded into the world tree (its salt changes, so
-- handles and running searches notice) and its graph replaces the old one in the world graph (its
-- graph_ids entry changes: navigators whose route crosses it plan again); re-baked holes get new trees and
-- records, other holes keep theirs; doors keep their open state. On a streamed world (a tile not
-- loaded) the tile stays unloaded and only its graph is replaced when the world graph holds it; the
-- loaded set stays what the streamer says (only the tiles it has loaded are decoded; a tile it is
-- loading, "queued", is decoded again from the new file by its update once it is in: world.reread).
-- Returns the bake summary or nil, err.
local reload_rebaked

function World:rebake(region, config)
  -- (the bake's misuse errors name octonav.bake: said as world:rebake's)
  local done, s, err = pcall(require("octonav.bake").rebake, self.pack_dir or self.dir, region, config)
  if not done then
    raise("world:rebake: " .. tostring(s):gsub("^[^\n:]+%.lua:%d+: ", "", 1):gsub("^octonav%.bake[%w_.]*: ", "", 1))
  end
  if not s then return nil, err end
  for _, w in ipairs(agents_mod.each(self)) do -- every agent's files were rebaked
    local ok, rerr = reload_rebaked(w, s)
    if not ok then return nil, rerr end
  end
  for _, w in ipairs(agents_mod.list(self)) do -- a one-tree pack's other agents: their graphs
    if rawget(w, "tree") == nil then
      for _, t in ipairs(s.rebaked) do
        if w.with_tiles or w.graph:has_tile(tilegrid.coords(w.grid, t)) then
          local ok, gerr = add_graph(w, t)
          if not ok then return nil, gerr end
        end
      end
    end
  end
  return s
end

-- What rebake does for one agent's world once the bake (summary s) is done. Returns true or nil, err.
function reload_rebaked(self, s)
  local decoded = {} -- rebaked tiles decoded here: their closed doors are blocked again below
  for _, t in ipairs(s.rebaked) do
    local i, j, k = tilegrid.coords(self.grid, t)
    local loaded = self.with_tiles
    if self.streamer then
      local st = self.streamer:agent_state(self, t) -- this agent's tree's own state
      loaded = st == "loaded"
      -- a worker may have read the old file: the streamer's update decodes the new one once it is in
      if st == "queued" then
        self.reread = self.reread or {}
        self.reread[t] = true
      end
    end
    local blob
    if loaded then
      local rerr
      blob, rerr = pack.read_tile(self.dir, i, j, k)
      if not blob then return nil, rerr end
      local ok, derr = self.tree:decode_tile(i, j, k, blob)
      if not ok then return nil, ("%s: %s"):format(pack.tile_path(self.dir, i, j, k), tostring(derr)) end
      decoded[#decoded + 1] = t
    end
    if loaded or self.graph:has_tile(i, j, k) then
      local gok, gerr = add_graph(self, t, blob)
      if not gok then return nil, gerr end
    end
  end
  if #s.holes > 0 then
    local m, merr = pack.read_manifest(self.pack_dir or self.dir)
    if not m then return nil, merr end
    local fresh = hole_records(self.grid, m)
    local old = {}
    for _, h in ipairs(self.holes) do old[h.name] = h end
    local redo = {}
    for _, name in ipairs(s.holes) do redo[name] = true end
    for n, h in ipairs(fresh) do
      local o = old[h.name]
      local had_tree = o ~= nil and o.tree ~= nil
      if o then
        for j, d in ipairs(h.doors) do
          local od = o.doors[j]
          if od then
            d.open, d.box = od.open, d.box or od.box
            d.world_obstacle = od.world_obstacle -- the world tree keeps its obstacles
          end
        end
        if redo[h.name] then -- its old inside's obstacles go (blocked again below)
          for _, id in ipairs(o.inside_obstacles or {}) do self.tree:remove_obstacle(id) end
        end
        if not redo[h.name] then
          fresh[n] = o
        elseif o.tree then
          o.tree:close()
          o.tree = nil
        end
        old[h.name] = nil
      end
      if redo[h.name] and (had_tree or (self.with_tiles and not self.streamer)) then
        local herr
        h.tree, herr = load_hole(self.dir, { name = h.name, depth = h.depth, scale = h.scale, origin = h.origin,
          tiles = h.tree_tiles }, self.tree_radius or self.radius)
        if not h.tree then return nil, herr end
      end
    end
    for _, o in pairs(old) do
      for _, od in ipairs(o.doors) do -- a hole gone from the manifest: its doors' obstacles go too
        if od.world_obstacle then self.tree:remove_obstacle(od.world_obstacle) end
      end
      unblock_inside(self, o) -- and its inside's
      if o.tree then o.tree:close() end
    end
    self.holes = fresh
    self.hole_index = {}
    for n, h in ipairs(fresh) do
      self.hole_index[h.name] = n
      if h.tree then self:reapply_hole_doors(n) end
    end
  end
  -- the rebaked tiles come back as their files hold them, a rebaked hole has a new inside
  local redo_tiles = {}
  for _, t in ipairs(s.rebaked) do redo_tiles[#redo_tiles + 1] = t end
  for _, name in ipairs(s.holes) do
    local h = self.holes[self.hole_index[name]]
    for _, t in ipairs(h and h.tiles or {}) do redo_tiles[#redo_tiles + 1] = t end
  end
  self:reapply_doors(decoded)
  self:reapply_hole_insides(redo_tiles)
  return true
end

--- The Cell-level route from a to b (octonav.planner, docs/world.md "Route"): route or nil, reason.
-- opts (optional): { agent = name } plans on that agent's tree and graph (default: this world's);
-- { radius = r } on the graph of the agent that serves radius r (world_agents.for_radius: the smallest
-- agent radius >= r, else the largest). Not both. { weight = w } (1 .. 4, default 1.5): the world
-- search's heuristic weight (1: the cheapest route over the world graph; planner.start).
function World:plan(a, b, opts)
  local w, r, weight = self, nil, nil
  if opts ~= nil then
    if type(opts) ~= "table" then raise("world:plan: opts: table expected, got " .. type(opts)) end
    for k in pairs(opts) do
      if k ~= "agent" and k ~= "radius" and k ~= "weight" then raise("world:plan: unknown option '" .. tostring(k) .. "'") end
    end
    weight = opts.weight
    if opts.agent ~= nil and type(opts.agent) ~= "string" then
      raise("world:plan: option 'agent' must be an agent name (string)")
    end
    if opts.agent ~= nil and opts.radius ~= nil then raise("world:plan: give option 'agent' or 'radius', not both") end
    if opts.radius ~= nil then
      w, r = agents_mod.for_radius(self, opts.radius, "world:plan")
    else
      w = agents_mod.pick(self, opts.agent, "world:plan")
    end
  end
  return require("octonav.planner").plan_named("world:plan", w, a, b, r, weight)
end

-- Is tree the world's own or one of its holes' (the trees its searches run on now)?
local function tree_live(world, tree)
  if tree == world.tree then return true end
  for _, h in ipairs(world.holes or {}) do
    if h.tree == tree then return true end
  end
  return false
end

--- world:close_idle_queries([all]): closes the navigators' idle queries (world.idle_queries: tree ->
-- max_nodes -> list, navigator.lua) of the trees no longer the world's (a hole's tree the streamer
-- replaced or unloaded), or every one with all. Plain functions of the world table: the navigator
-- calls World.close_idle_queries(world) on hand-built worlds as well (docs/world.md).
function World:close_idle_queries(all)
  if all ~= nil and type(all) ~= "boolean" then
    raise("world:close_idle_queries: all must be a boolean, got " .. type(all))
  end
  local pool = self.idle_queries
  if not pool then return end
  for t, by in pairs(pool) do
    if all or not tree_live(self, t) then
      for _, list in pairs(by) do
        for i = #list, 1, -1 do
          list[i]:close()
          list[i] = nil
        end
      end
      pool[t] = nil
    end
  end
end

--- Frees every agent's trees and world graph (the world and its agents' worlds are unusable
-- afterwards).
-- A closed world (world:close()): its methods raise "world:NAME: the world is closed", but close (again:
-- nothing) and tostring; world.closed is true.
local Closed = {
  __index = function(_, k)
    local f = World[k]
    if k == "close" then return function() end end
    if type(f) ~= "function" then return f end
    return function() raise(("world:%s: the world is closed (world:close())"):format(k)) end
  end,
  __tostring = function() return "octonav.world (closed)" end,
  __close = function() end,
}

function World:close()
  for _, w in ipairs(agents_mod.list(self)) do -- a one-tree pack's agents: their graphs
    if rawget(w, "tree") == nil then
      World.close_idle_queries(w, true)
      w.idle_queries = nil
      w.graph:close()
    end
  end
  for _, w in ipairs(agents_mod.each(self)) do
    World.close_idle_queries(w, true)
    w.idle_queries = nil
    if w.graph then w.graph:close() end
    if w.tree then w.tree:close() end
    for _, h in ipairs(w.holes or {}) do
      if h.tree then h.tree:close() end
    end
  end
  for _, w in ipairs(agents_mod.list(self)) do
    rawset(w, "closed", true)
    setmetatable(w, Closed)
  end
end

agents_mod.install(World)
doors_mod.install(World)
require("octonav.world_validate").install(World)

-- `local w <close> = octonav.world.load(dir)` closes it at the end of the block
World.__close = function(self) self:close() end

function World:__tostring()
  local st = self.graph:stats()
  local group = agents_mod.list(self)
  local agents = ""
  if #group > 1 then
    local names = {}
    for n, w in ipairs(group) do names[n] = ("%s r=%g"):format(w.agent_name, w.radius) end
    agents = (", agents %s (this: %s)"):format(table.concat(names, ", "), self.agent_name)
  end
  return ("octonav.world: %dx%dx%d tiles of %g units, %d holes, %d tile graphs, %d portals%s"):format(self.tiles[1],
    self.tiles[2], self.tiles[3], self.tile_size, #self.holes, st.tiles, st.portals, agents)
end

return M
