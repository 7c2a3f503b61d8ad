--- octonav.world_agents: the agents of a world (several clearance radii baked into one pack;
-- docs/world.md "Agents").
--
-- Each agent of a pack is loaded as a world of its own (octonav.world's load of one agent: its tree,
-- its world graph, its holes' trees, its doors' obstacles), and the agents of one load share a
-- `group` (the list of those worlds, the default agent first). octonav.world.load returns the first;
-- world:agent(name) gives another. What changes a door (world:set_door, world:door_box), a rebake
-- and close act on every agent of the group; plan, validate and the rest read the agent they are
-- called on (world:plan(a, b, { agent = name }) picks one).
--
--   agents.check_names(list)            raises unless list is a non-empty array of distinct strings
--   agents.load(dir, m, o, load_agent)  the group of the agents o.agents names (all when nil) -> the
--                                       default agent's world | nil, err
--   agents.for_radius(self, r, fname) the world of the agent that serves radius r (world units) and the
--                                       radius its searches add (see M.for_radius)
--   agents.install(World)               adds world:agents(), world:agent(name), world:agent_tree(name),
--                                       world:stats() and agents.each/pick to the world class
local compat = require "octonav.compat"
local raise = require("octonav.util").raise -- (errors at the user's call)

local M = {}

--- Raises unless names is a non-empty array of distinct strings (octonav.world.load's option).
function M.check_names(names)
  local what = "octonav.world.load: option 'agents' must be a non-empty list of distinct agent names"
  if type(names) ~= "table" or #names == 0 then raise(what) end
  local seen = {}
  for k, v in pairs(names) do
    if not compat.isinteger(k) or k < 1 or k > #names or type(v) ~= "string" or seen[v] then raise(what) end
    seen[v] = true
  end
end

local function names_of(list)
  local out = {}
  for n, a in ipairs(list) do out[n] = a.name end
  return table.concat(out, ", ")
end

--- The worlds of the agents o.agents names (every agent of manifest m when nil), loaded with
-- load_agent(dir, m, n, o); each gets `group` (the list, in the order asked). Returns the first or
-- nil, err (an agent the pack does not have: "DIR: no agent 'NAME' (the pack's: ...)").
function M.load(dir, m, o, load_agent)
  local pick, perr = M.picked(dir, m, o)
  if not pick then return nil, perr end
  local group = {}
  for n, a in ipairs(pick) do
    local w, err = load_agent(dir, m, a, o)
    if not w then
      for _, g in ipairs(group) do g:close() end
      return nil, err
    end
    group[n] = w
  end
  for _, w in ipairs(group) do w.group = group end
  return group[1]
end

--- The indices in m.agents of the agents o.agents names (every agent when nil), in the order asked,
-- or nil, err (an agent the pack does not have: "DIR: no agent 'NAME' (the pack's: ...)").
function M.picked(dir, m, o)
  local pick = {}
  if o.agents then
    local index = {}
    for n, a in ipairs(m.agents) do index[a.name] = n end
    for n, name in ipairs(o.agents) do
      if not index[name] then
        return nil, ("%s: no agent '%s' (the pack's agents: %s)"):format(dir, name, names_of(m.agents))
      end
      pick[n] = index[name]
    end
  else
    for n in ipairs(m.agents) do pick[n] = n end
  end
  return pick
end

--- The worlds of self's group (self alone when it has none): the worlds that own a tree (what door
-- changes, rebake and close act on).
function M.each(self) return self.group or { self } end

--- Every agent's world: M.each, and a one-tree pack's agents (world.agent_worlds: views over the one
-- world's tree with their own graphs, octonav.onetree).
function M.list(self) return self.agent_worlds or M.each(self) end

--- The world of agent `name` in self's group (self for nil); raises for an unknown name (fname
-- names the caller).
function M.pick(self, name, fname)
  if name == nil then return self end
  for _, w in ipairs(M.list(self)) do
    if w.agent_name == name then return w end
  end
  local list = {}
  for n, w in ipairs(M.list(self)) do list[n] = { name = w.agent_name } end
  raise(("%s: agent: unknown agent %s (loaded: %s)"):format(fname, tostring(name), names_of(list)))
end

--- The world of self's group that serves an agent of radius r (world units, >= 0; fname names the
-- caller in errors), and the radius its searches must still keep (0: none). The agent whose radius is
-- the smallest >= r (its graph's portals are wide enough for r); none: the largest. Its searches keep
-- r less what its tree already keeps (w.tree_radius: the radius its tree was baked with, w.radius when
-- absent): a tree baked for ra grows blocked space by ra, and a search at R' = ceil((r - ra) / scale)
-- leaves on it keeps ra + R' >= r.
function M.for_radius(self, r, fname)
  if type(r) ~= "number" or not (r >= 0) or r == math.huge then
    raise(("%s: radius must be a finite number >= 0, got %s"):format(fname, tostring(r)))
  end
  local best, largest
  for _, w in ipairs(M.list(self)) do
    local wr = w.radius or 0
    if wr >= r and (not best or wr < best.radius) then best = w end
    if not largest or wr > (largest.radius or 0) then largest = w end
  end
  local w = best or largest
  local extra = r - (w.tree_radius or w.radius or 0)
  return w, extra > 0 and extra or 0
end

-- Memory of one agent's world: its tree, its world graph, its loaded holes' trees (a one-tree pack's
-- agent views hold no tree nor holes of their own: 0 bytes, their world's counted once).
local function agent_stats(w)
  local own = rawget(w, "tree") ~= nil
  local ts = own and w.tree:stats() or { bytes = 0, nodes = 0, tiles_loaded = 0 }
  local hole_bytes, holes_loaded = 0, 0
  for _, h in ipairs(own and w.holes or {}) do
    if h.tree then
      hole_bytes = hole_bytes + h.tree:stats().bytes
      holes_loaded = holes_loaded + 1
    end
  end
  local gs = w.graph:stats()
  return { name = w.agent_name, radius = w.radius, tree_bytes = ts.bytes, nodes = ts.nodes,
    tiles_loaded = ts.tiles_loaded, graph_bytes = gs.bytes, graph_tiles = gs.tiles, portals = gs.portals,
    hole_bytes = hole_bytes, holes_loaded = holes_loaded,
    bytes = ts.bytes + gs.bytes + hole_bytes }
end

function M.install(World)
  --- world:agents() -> { { name, radius }, ... }: the agents loaded with this world, the default first.
  function World:agents()
    local out = {}
    for n, w in ipairs(M.list(self)) do out[n] = { name = w.agent_name, radius = w.radius } end
    return out
  end

  --- world:agent(name) -> the world of that agent (its tree, graph and holes; doors shared); nil: this
  -- world (the default agent's for what octonav.world.load returned). Raises for a name the world did
  -- not load.
  function World:agent(name)
    if name ~= nil and type(name) ~= "string" then raise("world:agent: name: string expected, got " .. type(name)) end
    return M.pick(self, name, "world:agent")
  end

  --- world:agent_tree(name) -> agent name's tree (this world's for nil). (Not world:tree(name):
  -- world.tree is the field holding this world's tree.)
  function World:agent_tree(name)
    if name ~= nil and type(name) ~= "string" then
      raise("world:agent_tree: agent: string expected, got " .. type(name))
    end
    return M.pick(self, name, "world:agent_tree").tree
  end

  --- world:stats() -> { agents = { { name, radius, tree_bytes, nodes, tiles_loaded, graph_bytes,
  -- graph_tiles, portals, hole_bytes, holes_loaded, bytes }, ... }, tree_bytes, graph_bytes,
  -- hole_bytes, bytes }: memory per agent (bytes the C side reports) and the totals.
  function World:stats()
    local out = { agents = {}, tree_bytes = 0, graph_bytes = 0, hole_bytes = 0, bytes = 0 }
    for n, w in ipairs(M.list(self)) do
      local e = agent_stats(w)
      out.agents[n] = e
      for _, k in ipairs { "tree_bytes", "graph_bytes", "hole_bytes", "bytes" } do out[k] = out[k] + e[k] end
    end
    return out
  end
end

return M
