--- octonav.streamer: a world's tiles and holes loaded and unloaded around agents (the seed's
-- 寻路地图的流式加载方案), over the C streamer (octonav.core.streamer).
--
--   local s = octonav.streamer.new(world_or_pack_dir, {
--     load_padding = 32, unload_padding = 64,  -- world units; unload_padding > load_padding (checked)
--     workers = 1,                              -- worker threads reading and decoding tile files
--     max_loaded = 0,                           -- 0 = no limit
--     prepare = false,                          -- true: the workers also build each tile's search
--                                               -- graph (tree:prepare), so queries run over boxes
--     joins = false,                            -- true (without prepare): the workers build each tile's
--                                               -- route join set: routes never build boxes (below)
--     max_publish = 4, max_unloads = 1,         -- an update installs at most 4 finished tiles and unloads
--                                               -- at most 1 (0 = no limit; update(true) does it all)
--     publish_ms = 0,                           -- and stops installing and unloading once they took this
--                                               -- many ms of the caller's thread CPU (first always done;
--                                               -- 0 = no time bound)
--     trim_on_free = false,                     -- false (workers, glibc): glibc's trim at a free is off
--                                               -- for the process, the workers trim (below); true: left
--   })                                          -- -> streamer, or nil, err when the pack cannot be read
--                                               -- (the workers always build each tile's line-of-sight
--                                               -- masks and cell adjacency beside its decode, unless
--                                               -- tree:los_masks(false) / tree:adjacency(false))
--   s.world                                     -- the world (docs/world.md) whose tiles it streams
--   local id = s:add_agent(p); s:move_agent(id, p); s:remove_agent(id)
--   local changes = s:update([wait])            -- every frame, on the caller's thread (with nothing to
--                                               -- report: the same table each time, its lists empty)
--   -- changes = { loaded = { {i,j,k}, ... }, unloaded = { {i,j,k}, ... },
--   --             failed = { { tile = {i,j,k}, reason = "corrupt tile file" }, ... },
--   --             holes_loaded = { name, ... }, holes_unloaded = { name, ... },
--   --             holes_failed = { { hole = name, reason = "..." }, ... },
--   --             stale = { agent id, ... },
--   --             doors = { { hole = name, door = j, open = bool }, ... } }  -- world:set_door since the last update
--   s:close()
--
-- A pack directory is loaded with octonav.world.load(dir, { tiles = false }): manifest and holes'
-- lines, no tile data and no tile graph (the streamer owns that world and closes it with itself); a
-- tile's graph is added to the world graph when the tile loads and removed when it unloads: the
-- worker that reads the tile file reads and decodes its graph file too (through the core's file
-- reader, so a FIFO or device is refused at once), and update() only links the decoded graph into
-- the world graph (core streamer:set_graph). A missing or bad graph file is a `failed` entry for its
-- tile, which stays loaded without a graph (queries work there, routes through it answer loading).
-- A world object
-- (octonav.world.load) is streamed through world.tree and world.dir: starting the streamer unloads
-- every tile of its tree, and its holes are unloaded at the first update unless something keeps them.
--
-- Tiles: a tile is {i, j, k} or a linear tile index (i + nx*(j + ny*k), what world:tile_of returns).
-- Tiles within load_padding of an agent load, loaded tiles beyond unload_padding of every agent
-- unload unless locked or forced. s:lock(tile) / s:unlock(tile) (counted: a locked tile loads and
-- stays), s:force_load(tile) (pinned until s:force_unload(tile), which unloads at once unless locked;
-- that unload is listed by the next update), s:retry(tile) (a failed tile is not retried by itself),
-- s:is_loaded(tile), s:state(tile) -> "unloaded" | "queued" | "loaded" | "failed", s:waiting() (the
-- tiles max_loaded keeps out: { { tile, reason = "max_loaded" }, ... }). Reading and decoding
-- tile files happen on the worker threads; update() installs them, so the tree changes only there.
--
-- Holes (hole: index into world.holes or name): a hole's tree (holes/NAME.tree) is loaded while an
-- agent is inside the hole's bounds (min..max, inclusive), or it is locked or forced, and unloaded
-- (tree closed, world.holes[i].tree = nil) when none of these holds. Hole trees are read on the worker
-- threads like tiles (s:hole_state(h) is "queued" meanwhile; update(true) waits for them too) and
-- installed by update() on the caller's thread (a non-regular file such as a FIFO fails at once).
-- s:lock_hole(h) / s:unlock_hole(h) (counted), s:force_load_hole(h) / s:force_unload_hole(h)
-- (unloads at once unless locked; listed by the next update), s:retry_hole(h), s:hole_loaded(h),
-- s:hole_state(h) -> "unloaded" | "queued" | "loaded" | "failed". A missing or bad hole file is a
-- holes_failed entry, not retried until s:retry_hole(h).
--
-- Paths: s:set_path(agent, path) registers what an agent follows (a query path, or anything with an
-- is_valid method; nil unregisters; a navigator bound to the streamer registers its own);
-- s:path(agent) returns it. update() lists in `stale` the agents whose registered path is no longer
-- valid (path:is_valid() false: a tile it crosses was unloaded or re-baked, its hole tree closed), each
-- once until a new path is set. A navigator's registered path is also invalid once a door its route
-- passes (ahead of the agent) is closed, so world:set_door puts those agents in `stale`.
--
-- Doors: a closed door's box is a temporary obstacle (world:set_door) of the world tree, which the C
-- streamer blocks again in every tile it installs; a hole tree it installs comes back as its file
-- holds it, so update() blocks the closed doors' boxes there again (world:reapply_hole_doors).
--
-- World agents (several radii from one bake, docs/world.md "Agents"): the streamer streams every agent
-- of the world's group (world.group) together. Each agent's tree gets a C streamer of its own (its
-- workers read that agent's files), given the same streamer agents, locks, pins and retries, so all
-- decide the same loads. A tile is loaded for the streamer when every agent's tree has it: s:is_loaded
-- and `changes.loaded` / `unloaded` say so for the unit (s:state: "failed" if any agent's failed,
-- else "loaded" if all, else "queued" if any is, else "unloaded"; s:agent_state(agent_world, tile)
-- one agent's); each agent's tile graphs, closed doors and holes' insides follow its own tree's loads,
-- and each tree keeps its own salts. A hole is installed when every agent's tree of it has been read
-- (in one update), and unloaded for all at once. `failed` entries carry `agent` (its name) when there
-- are several.
--
-- Route join sets (joins = true; off by default: memory, below): a route's start and goal join the
-- world graph by a search over their tile's boxes (docs/world.md, "Routes at scale"). The workers
-- build each tile's boxes beside its decode and the tree keeps them as the tile's join set, which
-- only the route planner reads (queries keep walking the cells), so no plan builds boxes of a
-- streamed tile. Any change of a loaded tile (an obstacle, a door, a hole's inside blocked again)
-- drops its set; the next update copies the tile and a worker builds it again (update(true) waits
-- for that too). A 512^3 tile's set is ~3.5 MB (about 6 times its tree) and 0.12-0.22 s of worker
-- time, which is why it is opt-in: the seed's 8x1x8 x 512^3 world streams in 4 times slower and holds
-- 222 MB of sets beside a 35 MB tree, for route plans of p99 ~1.1 ms instead of ~8-20 ms.
--
-- Frames (docs/streaming.md): the workers take the tiles agents stand in first (the most agents
-- first: a navigator's first move waits for its own tile alone), then the other locked or forced tiles,
-- then the rest, each nearest first; a queued tile no rule wants leaves the queue unread
-- (stats.cancelled); update() installs <= max_publish tiles in that order, unloads <= max_unloads
-- (stats.deferred: left for later); s:delivered(). A
-- tile a worker decodes with more loads queued behind it is installed without its line-of-sight masks
-- and cell adjacency, which a worker builds once no load is queued
-- (meanwhile lines of sight read its node table and build none): on a cold start the tiles come in
-- 3-4 times sooner. A worker going idle after work gives the allocator's free pages back to the
-- system (glibc's malloc_trim, at most once a second: stats.trims, trim_seconds of worker time), and
-- with trim_on_free false glibc no longer trims inside a free: a free on the game's thread shrank the
-- heap there, waiting for the worker's CPU (2-3 ms inside a frame; docs/streaming.md).
--
-- s:stats() -> the C streamer's stats (agents, loaded, queued, failed, locked, decoded, cancelled,
-- deferred, masks_built, adjacency_built, decode_seconds, tree_bytes, join_tiles, join_bytes, join_seconds,
-- joins_rebuilt, trims, trim_seconds) plus holes_loaded, holes_locked, paths, per_agent (see Streamer:stats).

local compat = require "octonav.compat"
compat.frame_module() -- (LuaJIT: run interpreted; compat.lua)
local core = require "octonav.core"
local world_mod = require "octonav.world"
local tilegrid = require "octonav.tilegrid"
local pack = require "octonav.pack"
local util = require "octonav.util"
local paths = require "octonav.streamer_paths"
local changes_mod = require "octonav.streamer_changes"
local new_changes, quiet, take, no_events = changes_mod.new, changes_mod.quiet, changes_mod.take, changes_mod.no_events
local agent_update = changes_mod.agent_update
local raise = util.raise -- (errors at the user's call: no line of the library's files)

local M = {}

local Streamer = util.class()
M.Streamer = Streamer

local type = type


-- The worlds of a world's agents (octonav.world_agents: the group; the world alone when it has none).
local function agent_worlds(world) return world.group or { world } end

--- octonav.streamer.new(world_or_pack_dir, opts) -> streamer | nil, err (see the top of this file).
function M.new(src, opts)
  if type(opts) ~= "table" then raise("octonav.streamer.new: opts must be a table") end
  local world, own
  if type(src) == "string" then
    local err
    world, err = world_mod.load(src, { tiles = false })
    if not world then return nil, err end
    own = true
  elseif type(src) == "table" and src.tree ~= nil and type(src.holes) == "table" and type(src.dir) == "string" then
    world = src
  else
    raise("octonav.streamer.new: a world (octonav.world.load) or a pack directory expected, got " .. type(src))
  end
  -- one C streamer per agent (its tree, its files), all given the same agents, locks and pins, so
  -- they decide the same loads; the tiles' unit state is theirs together (see "Agents" above)
  local group, cores = agent_worlds(world), {}
  for n, aw in ipairs(group) do
    local ok, cs = pcall(core.streamer.new, aw.tree, aw.dir, opts)
    if not ok then
      for _, c in ipairs(cores) do c:close() end
      if own then world:close() end
      raise(cs)
    end
    cores[n] = cs
    -- tile graphs stream with the tiles: read and decoded on the workers, linked by update()
    if aw.graphs_stream then cs:set_graph(aw.graph, pack.MAX_GRAPH_FILE) end
  end
  local holes = {}
  for i, h in ipairs(world.holes) do
    holes[i] = { locks = 0, forced = false, state = h.tree and "loaded" or "unloaded" }
  end
  local self = setmetatable({
    world = world, core = cores[1], own = own,
    group = group,        -- the agents' worlds (world.group, or the world alone)
    cores = cores,        -- their C streamers, in the same order
    ids = {},             -- streamer agent id (cores[1]'s) -> { the id in each core }
    unit = {},            -- tile index -> true while every agent's tree has the tile loaded
    pending = {},         -- hole index -> { [agent n] = tree read } until every agent's has come
    agents = {},          -- id -> true while the agent is in (its position: the C streamer's)
    holes = holes,        -- per hole: locks, forced, state
    paths = {},           -- agent id -> { path = p, reported = bool, bound = bool } (streamer_paths.lua)
    unbound = 0,          -- registered paths whose validity is not bound to tree revisions
    dropped = {},         -- per agent n: tiles force_unload unloaded at once, listed by the next update
    dropped_holes = {},   -- the same for holes
    deliveries = 0,       -- tiles and hole trees the workers finished (loaded or failed), every agent's
    quiet = nil,          -- where an update gathers its changes (answered itself when it has none)
    evs = {},             -- scratch: each core's events in an update
    no_events = no_events(), -- what a core's update answers without events
    tile_scratch = { 0, 0, 0 }, -- (tile_arg's)
    closed = false,
  }, Streamer)
  for n, aw in ipairs(group) do
    aw.streamer = self  -- the world's rebake and planner ask it what is loaded
    self.dropped[n] = {}
  end
  group[1].door_log = {} -- world:set_door appends its changes: listed by the next update (changes.doors)
  return self
end

local function check_open(self, fname)
  if self.closed then raise("streamer:" .. fname .. ": the streamer is closed") end
end

-- {i,j,k} from a tile argument ({i,j,k} or a linear index).
local function tile_arg(self, tile, fname)
  if compat.isinteger(tile) then
    local n = self.world.tiles
    if tile < 0 or tile >= n[1] * n[2] * n[3] then
      raise(("streamer:%s: tile index %d out of range (0..%d)"):format(fname, tile, n[1] * n[2] * n[3] - 1))
    end
    -- (the streamer's own {i, j, k}, read at once by the caller: no table a call, as a waiting
    -- navigator asks s:is_loaded and s:state every update)
    local t = self.tile_scratch
    t[1], t[2], t[3] = tilegrid.coords(self.world, tile)
    return t
  end
  if type(tile) ~= "table" or not compat.isinteger(tile[1]) or not compat.isinteger(tile[2])
    or not compat.isinteger(tile[3]) then
    raise("streamer:" .. fname .. ": tile must be {i, j, k} or a tile index")
  end
  return tile
end

local function hole_arg(self, hole, fname)
  local i = hole
  if type(hole) == "string" then i = self.world.hole_index[hole] end
  if not compat.isinteger(i) or not self.world.holes[i] then
    raise(("streamer:%s: unknown hole %s"):format(fname, tostring(hole)))
  end
  return i, self.world.holes[i], self.holes[i]
end

-- ---- agents ----------------------------------------------------------------------------------------

function Streamer:add_agent(p)
  check_open(self, "add_agent")
  local id = self.core:add_agent(p)
  local ids = { id }
  for n = 2, #self.cores do ids[n] = self.cores[n]:add_agent(p) end
  self.ids[id] = ids
  self.agents[id] = true
  return id
end

-- (every navigator calls it every frame: 1,000 calls a frame at 1,000 navigators, so no more than the
-- C call for a one-core streamer; the position lives in the C streamer only: agent_position reads it)
function Streamer:move_agent(id, p)
  if self.closed then check_open(self, "move_agent") end
  self.core:move_agent(id, p)
  local cores = self.cores
  if cores[2] then
    local ids = self.ids[id]
    for n = 2, #cores do cores[n]:move_agent(ids[n], p) end
  end
end

function Streamer:remove_agent(id)
  check_open(self, "remove_agent")
  self.core:remove_agent(id)
  local ids = self.ids[id]
  for n = 2, #self.cores do self.cores[n]:remove_agent(ids[n]) end
  self.ids[id] = nil
  self.agents[id] = nil
  paths.set(self, id, nil)
end

--- s:agent_position(id) -> the agent's position (a copy) or nil.
function Streamer:agent_position(id)
  check_open(self, "agent_position")
  return self.agents[id] and self.core:agent_position(id) or nil
end

-- ---- tiles -----------------------------------------------------------------------------------------

function Streamer:lock(tile)
  check_open(self, "lock")
  local t = tile_arg(self, tile, "lock")
  for _, c in ipairs(self.cores) do c:lock(t) end
end

function Streamer:unlock(tile)
  check_open(self, "unlock")
  local t = tile_arg(self, tile, "unlock")
  for _, c in ipairs(self.cores) do c:unlock(t) end
end

function Streamer:force_load(tile)
  check_open(self, "force_load")
  local t = tile_arg(self, tile, "force_load")
  for _, c in ipairs(self.cores) do c:force_load(t) end
end

function Streamer:force_unload(tile)
  check_open(self, "force_unload")
  local t = tile_arg(self, tile, "force_unload")
  for n, c in ipairs(self.cores) do
    local was = c:is_loaded(t)
    c:force_unload(t)
    if was and not c:is_loaded(t) then table.insert(self.dropped[n], { t[1], t[2], t[3] }) end
  end
end

function Streamer:retry(tile)
  check_open(self, "retry")
  local t = tile_arg(self, tile, "retry")
  for _, c in ipairs(self.cores) do c:retry(t) end
end

-- Is tile t ({i,j,k}) loaded in every agent's tree?
local function all_loaded(self, t)
  for _, c in ipairs(self.cores) do
    if not c:is_loaded(t) then return false end
  end
  return true
end

--- s:is_loaded(tile): the tile is loaded for every agent (a tile loads and unloads as a unit).
function Streamer:is_loaded(tile)
  check_open(self, "is_loaded")
  return all_loaded(self, tile_arg(self, tile, "is_loaded"))
end

--- s:waiting() -> { { tile = {i,j,k}, reason = "max_loaded" }, ... }: the tiles the load rule wants
-- that do not fit under max_loaded (the C streamer's list, as of the last update).
function Streamer:waiting()
  check_open(self, "waiting")
  return self.core:waiting()
end

--- s:agent_state(agent_world, tile) -> the state of tile in that agent's tree (its own C streamer's;
-- s:state is the unit's over every agent). world:rebake asks it.
function Streamer:agent_state(aw, tile)
  check_open(self, "agent_state")
  local t = tile_arg(self, tile, "agent_state")
  for n, w in ipairs(self.group) do
    if w == aw then return self.cores[n]:state(t) end
  end
  raise("streamer:agent_state: the world is not one of this streamer's agents")
end

-- The unit state of a tile over the agents: "failed" if any agent's failed, else "loaded" if every
-- agent's is, else "queued" if any is queued, else "unloaded".
local STATE_RANK = { failed = 4, queued = 3, unloaded = 2, loaded = 1 }

function Streamer:state(tile)
  check_open(self, "state")
  local t = tile_arg(self, tile, "state")
  local st = self.core:state(t)
  for n = 2, #self.cores do
    local o = self.cores[n]:state(t)
    if STATE_RANK[o] > STATE_RANK[st] then st = o end
  end
  return st
end

-- ---- holes -----------------------------------------------------------------------------------------

-- Closes hole i's trees (every agent's) and any read for it still pending.
local function unload_hole(self, i, hs)
  for _, aw in ipairs(self.group) do
    local h = aw.holes[i]
    if h and h.tree then h.tree:close() end
    if h then h.tree = nil end
  end
  for _, tree in pairs(self.pending[i] or {}) do tree:close() end
  self.pending[i] = nil
  hs.state = "unloaded"
end

function Streamer:lock_hole(hole)
  check_open(self, "lock_hole")
  local _, _, hs = hole_arg(self, hole, "lock_hole")
  hs.locks = hs.locks + 1
end

function Streamer:unlock_hole(hole)
  check_open(self, "unlock_hole")
  local _, _, hs = hole_arg(self, hole, "unlock_hole")
  if hs.locks == 0 then raise("streamer:unlock_hole: the hole is not locked") end
  hs.locks = hs.locks - 1
end

function Streamer:force_load_hole(hole)
  check_open(self, "force_load_hole")
  local _, _, hs = hole_arg(self, hole, "force_load_hole")
  hs.forced = true
end

function Streamer:force_unload_hole(hole)
  check_open(self, "force_unload_hole")
  local i, h, hs = hole_arg(self, hole, "force_unload_hole")
  hs.forced = false
  if hs.state == "loaded" and hs.locks == 0 then
    unload_hole(self, i, hs)
    self.dropped_holes[#self.dropped_holes + 1] = h.name
  end
end

function Streamer:retry_hole(hole)
  check_open(self, "retry_hole")
  local _, _, hs = hole_arg(self, hole, "retry_hole")
  if hs.state == "failed" then hs.state = "unloaded" end
end

function Streamer:hole_loaded(hole)
  local _, _, hs = hole_arg(self, hole, "hole_loaded")
  return hs.state == "loaded"
end

function Streamer:hole_state(hole)
  local _, _, hs = hole_arg(self, hole, "hole_state")
  return hs.state
end

--- s:hole_locks(hole) -> how many locks the hole holds.
function Streamer:hole_locks(hole)
  local _, _, hs = hole_arg(self, hole, "hole_locks")
  return hs.locks
end

-- Is an agent inside hole h's box (bounds included)? Asked for every hole every update: the C
-- streamer's loop over its agents (the first core holds every agent at the same positions), not a
-- Lua loop over self.agents (0.1-0.2 ms an update for each hole at 1,000 agents).
local function agent_inside(self, h) return self.core:agents_in(h.min, h.max) end

local function hole_needed(self, h, hs) return hs.forced or hs.locks > 0 or agent_inside(self, h) end

-- The holes' rule, before the core update: a needed hole's tree is queued for the workers (state
-- "queued"; with update(true) it is read within the same update), a loaded hole no longer needed is
-- unloaded (changes.holes_unloaded).
local function queue_holes(self, changes)
  local world = self.world
  for i, h in ipairs(world.holes) do
    local hs = self.holes[i]
    if not hs then -- a hole added under the streamer (world:rebake): start tracking it
      hs = { locks = 0, forced = false, state = h.tree and "loaded" or "unloaded" }
      self.holes[i] = hs
    end
    local needed = hole_needed(self, h, hs)
    if needed and hs.state == "unloaded" then
      for n, c in ipairs(self.cores) do c:load_tree(i, self.group[n]:hole_path(i)) end
      hs.state = "queued"
    elseif not needed and hs.state == "loaded" then
      unload_hole(self, i, hs)
      changes.holes_unloaded[#changes.holes_unloaded + 1] = h.name
    end
  end
end

-- Hole trees the workers read (evs: each agent's C streamer's events): a hole is installed when
-- every agent's tree of it has come and it is still wanted (each checked against the manifest),
-- closed otherwise; failures (any agent's) are holes_failed entries (not retried until s:retry_hole).
local function fail_hole(self, changes, i, h, hs, reason)
  for _, tree in pairs(self.pending[i] or {}) do tree:close() end
  self.pending[i] = nil
  hs.state = "failed"
  changes.holes_failed[#changes.holes_failed + 1] = { hole = h.name, reason = reason }
end

local function install_holes(self, evs, changes)
  local world, group = self.world, self.group
  for n, ev in ipairs(evs) do
    for _, r in ipairs(ev.trees) do
      local h, hs = world.holes[r.id], self.holes[r.id]
      if not (h and hs and hs.state == "queued") then
        r.tree:close()
      elseif not hole_needed(self, h, hs) then
        r.tree:close()
        unload_hole(self, r.id, hs)
      else
        local tree, err = group[n]:check_hole_tree(r.id, r.tree)
        if tree then
          local p = self.pending[r.id] or {}
          self.pending[r.id] = p
          if p[n] then p[n]:close() end
          p[n] = tree
        else
          fail_hole(self, changes, r.id, h, hs, tostring(err))
        end
      end
    end
    for _, r in ipairs(ev.trees_failed) do
      local h, hs = world.holes[r.id], self.holes[r.id]
      if h and hs and hs.state == "queued" then fail_hole(self, changes, r.id, h, hs, r.reason) end
    end
  end
  for i, p in pairs(self.pending) do
    local complete = true
    for n = 1, #group do complete = complete and p[n] ~= nil end
    local hs = self.holes[i]
    if complete and hs and hs.state == "queued" then
      self.pending[i] = nil
      for n, aw in ipairs(group) do
        aw.holes[i].tree = p[n]
        aw:reapply_hole_doors(i) -- its closed doors' boxes blocked in the new tree
      end
      hs.state = "loaded"
      changes.holes_loaded[#changes.holes_loaded + 1] = world.holes[i].name
    end
  end
end

-- ---- paths -----------------------------------------------------------------------------------------

--- s:set_path(agent, path): the path the agent follows (nil: none); update() reports it once stale.
function Streamer:set_path(id, path)
  check_open(self, "set_path")
  if not self.agents[id] then raise("streamer:set_path: no such agent " .. tostring(id)) end
  paths.set(self, id, path)
end

--- s:path(agent) -> the registered path or nil.
function Streamer:path(id)
  local r = self.paths[id]
  return r and r.path or nil
end

-- ---- update ----------------------------------------------------------------------------------------

-- Several agents: the tiles that became loaded for every agent (in some agent's `loaded` list this
-- update) and those no longer loaded for every agent that were (in some `unloaded` list, which holds
-- the tiles force_unload dropped too).
local function unit_changes(self, evs)
  local grid, loaded, unloaded, seen = self.world.grid, {}, {}, {}
  local function visit(list, into, now)
    for _, t in ipairs(list) do
      local ti = tilegrid.index(grid, t[1], t[2], t[3])
      if not seen[ti] then
        seen[ti] = true
        local all = all_loaded(self, t)
        if now and all and not self.unit[ti] then
          self.unit[ti] = true
          into[#into + 1] = t
        elseif not all and self.unit[ti] then
          self.unit[ti] = nil
          unloaded[#unloaded + 1] = t
        end
      end
    end
  end
  for _, ev in ipairs(evs) do visit(ev.unloaded, unloaded, false) end
  for _, ev in ipairs(evs) do visit(ev.loaded, loaded, true) end
  return loaded, unloaded
end

--- s:update([wait]) -> changes (see the top of this file). wait: block until every queued tile is
-- read and installed. An update with nothing to report allocates nothing (issue 31: no step of Lua's
-- collector lands in it): it answers the same table each time, its lists empty (streamer_changes.lua).
function Streamer:update(wait)
  check_open(self, "update")
  local changes = self.quiet
  if not changes or not quiet(changes) then -- (the caller wrote into it: a new one)
    changes = new_changes()
    self.quiet = changes
  end
  local dh = self.dropped_holes
  if #dh > 0 then
    local hu = changes.holes_unloaded
    for _, name in ipairs(dh) do hu[#hu + 1] = name end
    self.dropped_holes = {}
  end
  queue_holes(self, changes)
  local evs, got, none = self.evs, 0, self.no_events
  for n, c in ipairs(self.cores) do
    local ev = c:update(wait, none)
    evs[n] = ev
    if ev ~= none then got = got + #ev.loaded + #ev.failed + #ev.trees + #ev.trees_failed end
  end
  self.deliveries = self.deliveries + got
  install_holes(self, evs, changes)
  local failed, several = changes.failed, #self.group > 1
  for n, aw in ipairs(self.group) do
    local ev, dropped = evs[n], self.dropped[n]
    if #dropped > 0 then -- (force_unload's tiles, first)
      if ev == none then
        ev = no_events()
        evs[n] = ev
      end
      for _, t in ipairs(dropped) do table.insert(ev.unloaded, 1, t) end
      self.dropped[n] = {}
    end
    if ev ~= none then
      local f = {}
      agent_update(aw, ev.loaded, ev.unloaded, ev.graphs_failed, f)
      for _, x in ipairs(ev.failed) do f[#f + 1] = { x.tile, x.reason, tile = x.tile, reason = x.reason } end
      for _, x in ipairs(f) do
        if several then x.agent = aw.agent_name end
        failed[#failed + 1] = x
      end
    end
  end
  if #self.cores == 1 then
    if evs[1] ~= none then changes.loaded, changes.unloaded = evs[1].loaded, evs[1].unloaded end
  else
    local any = false
    for n = 1, #evs do any = any or evs[n] ~= none end
    if any then changes.loaded, changes.unloaded = unit_changes(self, evs) end
  end
  for n = #evs, 1, -1 do evs[n] = nil end
  local log_world = self.group[1]
  local log = log_world.door_log
  if log and #log > 0 then
    changes.doors = log
    log_world.door_log = {}
  end
  paths.stale(self, changes) -- (into changes.stale)
  return take(changes)
end

--- s:delivered() -> tile and hole loads the updates finished so far (loaded or failed, every agent's):
-- it moves while the workers progress (a navigator queued for a tile is in line then, not stuck).
function Streamer:delivered() return self.deliveries end

--- s:stats() -> the C streamer's stats (of the default agent's tree; decoded, decode_seconds,
-- tree_bytes and the join sets' join_tiles, join_bytes, join_seconds, joins_rebuilt summed over the
-- world's agents) plus holes_loaded, holes_locked, paths and per_agent =
-- { { name, radius, loaded, queued, failed, decoded, tree_bytes, graph_bytes, hole_bytes }, ... }
-- (memory per world agent: its tree, its world graph, its loaded holes' trees).
function Streamer:stats()
  check_open(self, "stats")
  local st = self.core:stats()
  local hl, hk, np = 0, 0, 0
  for _, hs in pairs(self.holes) do
    if hs.state == "loaded" then hl = hl + 1 end
    if hs.locks > 0 then hk = hk + 1 end
  end
  for _ in pairs(self.paths) do np = np + 1 end
  st.holes_loaded, st.holes_locked, st.paths = hl, hk, np
  st.per_agent = {} -- (st.agents is the C streamer's count of streamer agents)
  for n, aw in ipairs(self.group) do
    local cs = n == 1 and st or self.cores[n]:stats()
    local hb = 0
    for _, h in ipairs(aw.holes) do
      if h.tree then hb = hb + h.tree:stats().bytes end
    end
    st.per_agent[n] = { name = aw.agent_name, radius = aw.radius, loaded = cs.loaded, queued = cs.queued,
      failed = cs.failed, decoded = cs.decoded, tree_bytes = cs.tree_bytes, graph_bytes = aw:graph_bytes(),
      hole_bytes = hb }
    if n > 1 then
      st.decoded, st.decode_seconds = st.decoded + cs.decoded, st.decode_seconds + cs.decode_seconds
      st.tree_bytes = st.tree_bytes + cs.tree_bytes
      for _, k in ipairs { "join_tiles", "join_bytes", "join_seconds", "joins_rebuilt" } do st[k] = st[k] + cs[k] end
    end
  end
  return st
end

--- s:close(): stops the workers (tiles and holes stay as they are); a world the streamer loaded
-- itself (from a pack directory) is closed too.
function Streamer:close()
  if self.closed then return end
  self.closed = true
  for _, c in ipairs(self.cores) do c:close() end
  for n, aw in ipairs(self.group) do
    if aw.streamer == self then
      aw.streamer = nil
      if n == 1 then aw.door_log = nil end
    end
  end
  for _, p in pairs(self.pending) do
    for _, tree in pairs(p) do tree:close() end
  end
  self.pending = {}
  if self.own then self.world:close() end
end

function Streamer:__tostring()
  if self.closed then return "octonav.streamer (closed)" end
  local st = self:stats()
  return ("octonav.streamer: %d agents, %d tiles loaded, %d queued, %d failed, %d holes loaded"):format(st.agents,
    st.loaded, st.queued, st.failed, st.holes_loaded)
end

Streamer.__close = Streamer.close

return M
