--- octonav.streamer_paths: the paths a streamer's agents follow and the update's `stale` list (see
-- "Paths" in streamer.lua): s:set_path registers them, every update lists those no longer valid.
--
-- Asking every registered path is_valid() each update costs ~2 us a navigator (0.2 ms a frame for
-- 100, 2 ms for 1,000, measured on the seed's world), while a path's validity only changes with its
-- tree: a query path (userdata) and a navigator's registered route (navlocks.lua: revision_bound) are
-- valid until a tile they cross changes (its salt, so the tree's revision) or a door on the route
-- closes (world:set_door: a door change and a new obstacle). So the update asks them only when
-- something that could change an answer happened since it last asked: a tree revision of a world
-- agent's tree or of a loaded hole tree moved, a tile or hole loaded, unloaded or failed, a door
-- changed (then all of them), or a path was registered (then that one: a navigator registers its
-- route at each new goal, and asking the 100 others cost 0.4-0.5 ms an update on the seed's world);
-- a path of any other kind (a table with its own is_valid) is asked every update.
local raise = require("octonav.util").raise
require("octonav.compat").frame_module() -- (LuaJIT: run interpreted; compat.lua)

local M = {}

-- The sum of the revisions of every agent's tree and of every loaded hole tree (revisions only grow,
-- so any change moves the sum; a hole tree replaced is a holes_loaded / holes_unloaded change too).
-- (tree:revision(), not tree:stats(): no table made in an update, streamer_changes.lua)
local function revisions(s)
  local sum = 0
  for _, aw in ipairs(s.group) do
    sum = sum + aw.tree:revision()
    for _, h in ipairs(aw.holes) do
      if h.tree then sum = sum + h.tree:revision() + 1 end
    end
  end
  return sum
end

-- Is the path's validity bound to tree revisions (a query path or a navigator's registered route)?
local function bound(path)
  return type(path) == "userdata" or rawget(path, "revision_bound") == true
end

--- set(s, id, path): register (nil: unregister) the path agent id follows. The caller checked id.
function M.set(s, id, path)
  local old = s.paths[id]
  if old and not old.bound then s.unbound = s.unbound - 1 end
  if path == nil then
    s.paths[id] = nil
    return
  end
  local tp = type(path)
  if (tp ~= "table" and tp ~= "userdata") or type(path.is_valid) ~= "function" then
    s.paths[id] = old
    if old and not old.bound then s.unbound = s.unbound + 1 end
    raise("streamer:set_path: path must have an is_valid method (a query path) or be nil")
  end
  local b = bound(path)
  if not b then s.unbound = s.unbound + 1 end
  s.paths[id] = { path = path, reported = false, bound = b }
  local fresh = s.paths_fresh or {} -- (asked at the next update, alone when nothing else changed)
  fresh[id] = true
  s.paths_fresh = fresh
end

local function changed(ch)
  return #ch.loaded > 0 or #ch.unloaded > 0 or #ch.failed > 0 or #ch.holes_loaded > 0 or #ch.holes_unloaded > 0
    or #ch.holes_failed > 0 or #ch.doors > 0
end

--- stale(s, changes): changes.stale gets the ids of the agents whose registered path is no longer valid
-- (each once until a new path is set), sorted; asks the paths only when something could have changed
-- (above).
function M.stale(s, changes)
  if next(s.paths) == nil then return end
  local rev = revisions(s)
  local all, fresh = rev ~= s.paths_rev or changed(changes), s.paths_fresh
  if not all and not fresh and s.unbound == 0 then return end
  s.paths_fresh, s.paths_rev = nil, rev
  local ids = changes.stale
  if not all and s.unbound == 0 then
    -- only the paths registered since: visited alone (a navigator registers one almost every frame at
    -- 1,000 navigators, and a walk over all of them to find it was 0.2 ms of the game's thread in two
    -- frames of three on the seed's world streamed: docs/benchmarks.md, session 29 h31first)
    local reg = s.paths
    for id in pairs(fresh) do
      local r = reg[id]
      if r and not r.reported and not r.path:is_valid() then
        r.reported = true
        ids[#ids + 1] = id
      end
    end
  else
    for id, r in pairs(s.paths) do
      if not r.reported and (all or not r.bound or (fresh and fresh[id])) and not r.path:is_valid() then
        r.reported = true
        ids[#ids + 1] = id
      end
    end
  end
  table.sort(ids)
end

return M
