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
dependencies = { "lua >= 5.1" }
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
      sources = { -- by room (csrc/README.md)
        "csrc/core/clearance.c", "csrc/core/export.c", "csrc/core/fileio.c", "csrc/core/freespace.c",
        "csrc/core/geometry.c",
        "csrc/core/losmap.c", "csrc/core/losmap_arrays.c", "csrc/core/losmap_step.c", "csrc/core/objfile.c",
        "csrc/core/pointquery.c", "csrc/core/raycast.c",
        "csrc/core/raycast_dense.c", "csrc/core/raycast_turn.c", "csrc/core/surface.c", "csrc/core/table.c",
        "csrc/core/tilefile.c", "csrc/core/tree.c", "csrc/core/voxmap.c",
        "csrc/search/areas.c", "csrc/search/boxes.c", "csrc/search/celladj.c", "csrc/search/celladj_csr.c", "csrc/search/graph.c",
        "csrc/search/graph_areas.c", "csrc/search/graph_boxes.c", "csrc/search/graph_cells.c",
        "csrc/search/graph_use.c", "csrc/search/landmarks.c", "csrc/search/nodepool.c",
        "csrc/search/obstacles.c", "csrc/search/obstacles_stream.c", "csrc/search/prepare.c", "csrc/search/query_mem.c",
        "csrc/search/search.c", "csrc/search/search_corridor.c", "csrc/search/search_path.c",
        "csrc/search/search_start.c", "csrc/search/tighten.c", "csrc/search/tiledeps.c",
        "csrc/world/portals.c", "csrc/world/reach.c", "csrc/world/reach_run.c", "csrc/world/route.c",
        "csrc/world/route_boxes.c", "csrc/world/route_fit.c", "csrc/world/route_start.c", "csrc/world/tgraph.c",
        "csrc/world/tgraph_coarse.c", "csrc/world/tgraph_codec.c", "csrc/world/wgraph.c", "csrc/world/wgraph_pool.c",
        "csrc/stream/pathserver.c", "csrc/stream/streamer.c", "csrc/stream/streamer_events.c",
        "csrc/stream/streamer_update.c", "csrc/stream/streamer_worker.c",
        "csrc/grid/grid.c", "csrc/grid/grid_map2d.c", "csrc/grid/grid_search.c",
        "csrc/lua/lua_compat.c", "csrc/lua/lua_areas.c", "csrc/lua/lua_core.c", "csrc/lua/lua_crowd.c", "csrc/lua/lua_debug.c",
        "csrc/lua/lua_flat.c", "csrc/lua/lua_grid.c", "csrc/lua/lua_obstacles.c", "csrc/lua/lua_path.c",
        "csrc/lua/lua_pathserver.c", "csrc/lua/lua_points.c", "csrc/lua/lua_query.c", "csrc/lua/lua_route.c", "csrc/lua/lua_route_probe.c",
        "csrc/lua/lua_streamer.c", "csrc/lua/lua_tree.c", "csrc/lua/lua_tree_cells.c",
        "csrc/lua/lua_tree_edit.c", "csrc/lua/lua_util.c", "csrc/lua/lua_walk.c",
        "csrc/crowd/avoidance.c", "csrc/crowd/boundary.c", "csrc/crowd/crowd.c", "csrc/crowd/follow.c",
        "csrc/crowd/lp.c", "csrc/crowd/plan.c", "csrc/crowd/proximity.c", "csrc/crowd/rules.c",
        "csrc/crowd/walk.c", "csrc/crowd/workers.c",
      },
      incdirs = { "csrc/core", "csrc/search", "csrc/world", "csrc/stream", "csrc/grid", "csrc/lua", "csrc/crowd" },
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
    ["octonav.onetree"] = "lua/octonav/onetree.lua",
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
    ["octonav.navigator_tree"] = "lua/octonav/navigator_tree.lua",
    ["octonav.navigator_opts"] = "lua/octonav/navigator_opts.lua",
    ["octonav.navbudget"] = "lua/octonav/navbudget.lua",
    ["octonav.navgroup"] = "lua/octonav/navgroup.lua",
    ["octonav.navgroup_walk"] = "lua/octonav/navgroup_walk.lua",
    ["octonav.smoother"] = "lua/octonav/smoother.lua",
    ["octonav.streamer"] = "lua/octonav/streamer.lua",
    ["octonav.streamer_changes"] = "lua/octonav/streamer_changes.lua",
    ["octonav.streamer_paths"] = "lua/octonav/streamer_paths.lua",
    ["octonav.util"] = "lua/octonav/util.lua",
    ["octonav.compat"] = "lua/octonav/compat.lua",
    ["octonav.tilegrid"] = "lua/octonav/tilegrid.lua",
    ["octonav.navlocks"] = "lua/octonav/navlocks.lua",
    ["octonav.crowd"] = "lua/octonav/crowd.lua",
    ["octonav.crowd_record"] = "lua/octonav/crowd_record.lua",
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
