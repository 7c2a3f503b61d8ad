package = "octonav"
version = "scm-1"
-- `luarocks make --lua-version=5.4` in the source tree builds that tree and does not read source.url.
-- `luarocks build octonav-scm-1.rockspec` (from any directory) fetches source.url: the address below is
-- a placeholder for the project's published repository (set it where the project is published).
source = { url = "git+https://github.com/octonav/octonav.git" }
description = {
  summary = "3D navigation over a sparse octree for agents that fly or swim",
  detailed = [[
A C core (sparse octree with compact hashed nodes, exact line of sight, compact tile files, a grid
A* baseline) exposed as octonav.core, with Lua layers on top.]],
  license = "MIT",
  homepage = "https://github.com/octonav/octonav", -- placeholder, as source.url
}
dependencies = { "lua >= 5.4" }
-- The build is the Makefile's rock-install target (type "make", install pass only): LuaRocks' builtin
-- type compiles each source into an object file beside it, leaving csrc/*.o behind; rock-install
-- compiles in a temporary directory it removes. `modules` below lists what it installs (spec/00
-- checks that every C source and Lua module is listed); the make type itself does not read it.
build = {
  type = "make",
  build_pass = false,
  install_target = "rock-install",
  install_variables = {
    CFLAGS = "$(CFLAGS)",
    LUA_INC = "-I$(LUA_INCDIR)",
    ROCK_LIBDIR = "$(LIBDIR)",
    ROCK_LUADIR = "$(LUADIR)",
  },
  modules = {
    ["octonav.core"] = {
      sources = {
        "csrc/table.c", "csrc/fileio.c", "csrc/tree.c", "csrc/freespace.c", "csrc/prepare.c", "csrc/boxes.c",
        "csrc/geometry.c", "csrc/raycast.c", "csrc/losmap.c", "csrc/tilefile.c",
        "csrc/objfile.c", "csrc/voxmap.c", "csrc/grid.c", "csrc/export.c", "csrc/nodepool.c", "csrc/graph.c",
        "csrc/graph_cells.c", "csrc/celladj.c", "csrc/landmarks.c", "csrc/graph_boxes.c", "csrc/graph_areas.c", "csrc/tiledeps.c", "csrc/tighten.c", "csrc/search.c", "csrc/search_path.c", "csrc/search_corridor.c", "csrc/streamer.c",
        "csrc/surface.c",
        "csrc/streamer_worker.c", "csrc/streamer_update.c", "csrc/grid_map2d.c", "csrc/grid_search.c",
        "csrc/lua_tree_edit.c", "csrc/lua_tree_cells.c",
        "csrc/portals.c", "csrc/route.c",
        "csrc/reach.c", "csrc/reach_run.c", "csrc/tgraph_coarse.c", "csrc/tgraph_codec.c", "csrc/wgraph.c", "csrc/route_start.c",
        "csrc/pointquery.c", "csrc/areas.c", "csrc/obstacles.c",
        "csrc/lua_util.c", "csrc/lua_core.c", "csrc/lua_tree.c", "csrc/lua_grid.c", "csrc/lua_query.c", "csrc/lua_path.c",
        "csrc/lua_streamer.c", "csrc/lua_debug.c", "csrc/lua_points.c", "csrc/lua_flat.c", "csrc/lua_areas.c", "csrc/lua_obstacles.c",
        "csrc/lua_route.c",
        "csrc/lua_pathserver.c", "csrc/pathserver.c",
        "csrc/crowd/avoidance.c", "csrc/crowd/boundary.c", "csrc/crowd/crowd.c", "csrc/crowd/follow.c",
        "csrc/crowd/lp.c", "csrc/crowd/plan.c", "csrc/crowd/proximity.c", "csrc/lua_crowd.c",
      },
      incdirs = { "csrc" },
      defines = { "_POSIX_C_SOURCE=200809L" },
      libraries = { "m", "pthread" },
    },
    ["octonav"] = "lua/octonav/init.lua",
    ["octonav.movingai"] = "lua/octonav/movingai.lua",
    ["octonav.checker"] = "lua/octonav/checker.lua",
    ["octonav.bake"] = "lua/octonav/bake.lua",
    ["octonav.pack"] = "lua/octonav/pack.lua",
    ["octonav.world"] = "lua/octonav/world.lua",
    ["octonav.world_agents"] = "lua/octonav/world_agents.lua",
    ["octonav.world_doors"] = "lua/octonav/world_doors.lua",
    ["octonav.world_validate"] = "lua/octonav/world_validate.lua",
    ["octonav.doorway"] = "lua/octonav/doorway.lua",
    ["octonav.progress"] = "lua/octonav/progress.lua",
    ["octonav.cli"] = "lua/octonav/cli.lua",
    ["octonav.cli_bench"] = "lua/octonav/cli_bench.lua",
    ["octonav.planner"] = "lua/octonav/planner.lua",
    ["octonav.navigator"] = "lua/octonav/navigator.lua",
    ["octonav.navigator_search"] = "lua/octonav/navigator_search.lua",
    ["octonav.navigator_plan"] = "lua/octonav/navigator_plan.lua",
    ["octonav.crowd"] = "lua/octonav/crowd.lua",
    ["octonav.navbudget"] = "lua/octonav/navbudget.lua",
    ["octonav.smoother"] = "lua/octonav/smoother.lua",
    ["octonav.streamer"] = "lua/octonav/streamer.lua",
    ["octonav.util"] = "lua/octonav/util.lua",
    ["octonav.tilegrid"] = "lua/octonav/tilegrid.lua",
    ["octonav.navlocks"] = "lua/octonav/navlocks.lua",
    ["octonav.bake.config"] = "lua/octonav/bake/config.lua",
    ["octonav.bake.geometry"] = "lua/octonav/bake/geometry.lua",
    ["octonav.bake.tiles"] = "lua/octonav/bake/tiles.lua",
    ["octonav.bake.holes"] = "lua/octonav/bake/holes.lua",
    ["octonav.bake.link"] = "lua/octonav/bake/link.lua",
    ["octonav.bake.publish"] = "lua/octonav/bake/publish.lua",
    ["octonav.debug"] = "lua/octonav/debug.lua",
    ["octonav.view"] = "lua/octonav/view.lua",
    ["octonav.view_page"] = "lua/octonav/view_page.lua",
    ["octonav.image"] = "lua/octonav/image.lua",
    ["octonav.cli_view"] = "lua/octonav/cli_view.lua",
  },
  install = { bin = { octonav = "bin/octonav" } },
}
