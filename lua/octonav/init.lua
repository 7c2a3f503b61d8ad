--- octonav: 3D navigation for agents that fly or swim, over a sparse octree.
-- The C core (`octonav.core`) provides the tree, grid (and later query and streamer) objects;
-- this module gathers them with the Lua layers. `require "octonav"` is all a script needs.
local core = require "octonav.core"

local M = {
  _VERSION = "octonav " .. core.version,
  core = core,
  tree = core.tree,    -- octonav.tree.new{...}, octonav.tree.load(path)
  grid = core.grid,    -- the dense grid A* baseline
  query = core.query,  -- octonav.query.new(tree, { max_nodes = 262144 }): path searches
  pathserver = core.pathserver, -- octonav.pathserver.new(tree, { workers = 2 }): searches on worker threads
  route = core.route,  -- tile portal graphs, the world graph and its planner (docs/world.md, "World graph")
}

--- Option presets for query:find / query:start.
M.presets = {
  -- the seed's own search: f = g + 2.5*h - size over cell centres (fast, greedy, paths less short)
  seed = { weight = 2.5, size_bias = 1.0, points = "centre" },
  -- plain A* over the graph of cell centres (optimal for that graph), pulled tight in its corridor,
  -- no smoothing
  astar = { weight = 1.0, smooth = "none", escalate = 0, points = "centre" },
  -- Lazy Theta*: any-angle parents, one line-of-sight check per expansion
  theta = { any_angle = true },
  -- for trees prepared with tree:prepare(): the search runs over boxes, whose points are rougher
  -- estimates than cell faces, so a lower weight keeps the paths as short (README, "Prepared graph")
  boxes = { weight = 1.2 },
}

M.movingai = require "octonav.movingai"
M.bake = require "octonav.bake"          -- octonav.bake(config): a world into a nav pack (docs/world.md)
M.world = require "octonav.world"        -- octonav.world.load(dir) -> world
M.planner = require "octonav.planner"    -- the Cell-level planner (world:plan)
M.navigator = require "octonav.navigator"-- octonav.navigator.new(world, opts): multi-segment paths per frame
M.smoother = require "octonav.smoother"  -- per-frame incremental smoothing
M.streamer = require "octonav.streamer"  -- octonav.streamer.new(world_or_pack_dir, { load_padding, unload_padding, ... })
M.crowd = require "octonav.crowd"        -- octonav.crowd.new(tree_or_world, opts): agents that avoid each other

--- octonav.library_jit([on]) -> whether it was on. LuaJIT only (elsewhere: false, and `on` changes
-- nothing): the library's Lua that runs each frame (navigators, budget, streamer, planner, smoother)
-- runs in LuaJIT's interpreter by default, its compiler's traces and flushes kept out of the frames
-- (lua/octonav/compat.lua); true compiles it again, false stops that. The game's own code is not touched.
function M.library_jit(on)
  if on ~= nil and type(on) ~= "boolean" then
    require("octonav.util").raise("octonav.library_jit: on: a boolean or nil expected (got " .. type(on) .. ")")
  end
  return require("octonav.compat").library_jit(on)
end

return M
