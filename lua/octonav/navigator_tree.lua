--- octonav.navigator_tree: a navigator on a plain tree (internal to octonav.navigator; issue 33).
--
-- A game with one level has a tree and no world: no tiles' graphs to plan a route over, no holes, no
-- doors. octonav.navigator.new(tree) walks it as a world of one step: the route is one search on the
-- tree from the agent to the goal (sliced like any step's, budgeted, smoothed, replanned when the tree
-- changes under the path) and the navigator reports "arrived" as on a world. What the navigator reads
-- of a world, a tree's stands-in have: `tree`, no `holes`, no graph (no graph_revision: never
-- "graph_changed"), no doors. One stand-in per tree (weak keys), so the navigators of a tree share
-- its idle queries as those of a world do. (The stand-in holds its tree: Lua 5.2+ collects such a
-- pair once nothing else holds the tree; 5.1 and LuaJIT keep it until the end: close trees there.)
local util = require "octonav.util"
require("octonav.compat").frame_module() -- (LuaJIT: run interpreted; compat.lua)

local M = {}

local function is_tree(obj)
  local mt = getmetatable(obj)
  return type(obj) == "userdata" and type(mt) == "table" and mt.__name == "octonav.tree"
end
M.is_tree = is_tree

local stand_ins = setmetatable({}, { __mode = "k" })

--- The world a navigator on tree reads (made once per tree).
function M.world(tree)
  local w = stand_ins[tree]
  if not w then
    w = { tree = tree, holes = {}, plain = true }
    stand_ins[tree] = w
  end
  return w
end

--- The route on a plain tree: one step on the tree, searched from the agent's position (off a blocked
-- leaf's face, as on a world) to the goal. Returns nil: the route is known (as plan_route does).
function M.route(self, position, free_start)
  self.from0 = util.copy(free_start(self.world.tree, position))
  self.cells = { { kind = "tile" } }
  self.route_doors = {}
  self.route_ids = nil
  self.locks:planned()
  return nil
end

return M
