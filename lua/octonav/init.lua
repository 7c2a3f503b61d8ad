--- octonav: 3D navigation for agents that fly or swim, over a sparse octree.
-- The C core (`octonav.core`) provides the tree, grid (and later query and streamer) objects;
-- this module gathers them with the Lua layers. `require "octonav"` is all a script needs.
local core = require "octonav.core"

local M = {
  _VERSION = "octonav " .. core.version,
  core = core,
  tree = core.tree,    -- octonav.tree.new{...}, octonav.tree.load(path)
  grid = core.grid,    -- the dense grid A* baseline
}

M.movingai = require "octonav.movingai"

return M
