--- octonav.streamer_changes: what streamer:update() reports (streamer.lua): its changes table, and each
-- world agent's side of an update (tiles re-read after a rebake, tile graphs, holes' insides).
--
-- An update with nothing to report allocates nothing (issue 31, goal 1: a step of Lua's collector
-- lands in the call that allocates, and a frame's streamer:update() runs before the budget's clock):
-- the streamer gathers an update's changes in a table of its own and answers that table itself when
-- nothing was found (again and again, its lists empty), a new one otherwise (take); the core
-- streamers answer a table of no events given to them (no_events) instead of building one.
local tilegrid = require "octonav.tilegrid"
require("octonav.compat").frame_module() -- (LuaJIT: run interpreted; compat.lua)
local pack = require "octonav.pack"

local M = {}

local type, next = type, next

-- The lists of an update's changes (see the top of streamer.lua).
local CHANGE_LISTS = { "loaded", "unloaded", "failed", "holes_loaded", "holes_unloaded", "holes_failed", "stale",
  "doors" }

function M.new()
  return { loaded = {}, unloaded = {}, failed = {}, holes_loaded = {}, holes_unloaded = {}, holes_failed = {},
    stale = {}, doors = {} }
end

-- Are all of a changes table's lists (still) empty?
function M.quiet(ch)
  for i = 1, #CHANGE_LISTS do
    local l = ch[CHANGE_LISTS[i]]
    if type(l) ~= "table" or next(l) ~= nil then return false end
  end
  return true
end

--- take(ch) -> what an update answers with its changes gathered in ch, the streamer's quiet table: ch
-- itself when its lists are empty (kept for the next update), else a new table holding ch's lists
-- that are not (ch gets new empty ones: a table once answered with nothing is never written).
function M.take(ch)
  if M.quiet(ch) then return ch end
  local out = M.new()
  for i = 1, #CHANGE_LISTS do
    local k = CHANGE_LISTS[i]
    local l = ch[k]
    if next(l) ~= nil then
      out[k] = l
      ch[k] = {}
    end
  end
  return out
end

-- What the core streamers' update answers when it has no event (passed to it, never given out).
function M.no_events()
  return { loaded = {}, unloaded = {}, failed = {}, graphs_failed = {}, trees = {}, trees_failed = {} }
end

-- Tile graphs follow their tiles when the world streams them (world.graphs_stream: loaded with
-- { tiles = false }): the C streamer read and decoded a loaded tile's graph file on its worker and
-- linked it into the world graph in update(), and dropped an unloaded tile's (for agent world aw: its
-- tiles in `loaded` and `unloaded`); here the world's graph_revision follows, and each graph the C
-- streamer could not read, decode or link (graphs_failed: the reason without the path) is a `failed`
-- entry "PATH: reason" for its tile (the tile stays loaded: queries work there, routes through it
-- answer loading). Tiles in `redone` had their graph read again by reread: their entries are its.
local function sync_graphs(aw, loaded, unloaded, graphs_failed, failed, redone)
  if not aw.graphs_stream then return end
  if #loaded > 0 or #unloaded > 0 then aw.graph_revision = aw.graph_revision + 1 end
  local grid = aw.grid
  for _, g in ipairs(graphs_failed) do
    local t = g.tile
    if not redone[tilegrid.index(grid, t[1], t[2], t[3])] then
      local err = pack.graph_path(aw.dir, t[1], t[2], t[3]) .. ": " .. g.reason
      failed[#failed + 1] = { t, err, tile = t, reason = err }
    end
  end
end

-- Tiles world:rebake rewrote while they were queued (aw.reread): a worker may have read the old
-- files, so once loaded each is decoded again from its file here, and its graph read again (a
-- failure is a `failed` entry). Returns the set of those tiles.
local NONE_REDONE = {} -- (read only)

local function reread(aw, loaded, failed)
  if not aw.reread or #loaded == 0 then return NONE_REDONE end
  local redone = {}
  local grid = aw.grid
  for _, t in ipairs(loaded) do
    local ti = tilegrid.index(grid, t[1], t[2], t[3])
    if aw.reread[ti] then
      aw.reread[ti] = nil
      redone[ti] = true
      local blob, err = pack.read_tile(aw.dir, t[1], t[2], t[3])
      local ok = blob ~= nil
      if ok then ok, err = aw.tree:decode_tile(t[1], t[2], t[3], blob) end
      if not ok then failed[#failed + 1] = { t, tostring(err), tile = t, reason = tostring(err) } end
      if aw.graphs_stream then
        -- with the tile's blob, a graph left from another bake is refused as on the workers
        ok, err = aw:add_graph(ti, blob)
        if not ok then failed[#failed + 1] = { t, err, tile = t, reason = err } end
      end
    end
  end
  if next(aw.reread) == nil then aw.reread = nil end
  return redone
end

-- One agent's side of an update: rereads, its tiles' graphs, and the holes' insides blocked again over
-- the tiles its tree just loaded. Appends failures to `failed`.
function M.agent_update(aw, loaded, unloaded, graphs_failed, failed)
  local redone = reread(aw, loaded, failed)
  sync_graphs(aw, loaded, unloaded, graphs_failed, failed, redone)
  if #loaded > 0 then
    -- closed doors' boxes are obstacles of the tree: the C streamer blocks them again in the tiles it
    -- installs (csrc/core/obstacles.c); the holes' insides are blocked there again here (docs/world.md)
    local grid, idx = aw.grid, {}
    for n, t in ipairs(loaded) do idx[n] = tilegrid.index(grid, t[1], t[2], t[3]) end
    aw:reapply_hole_insides(idx)
  end
end

return M
