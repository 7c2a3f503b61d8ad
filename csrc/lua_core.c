/*
 * lua_core.c -- luaopen_octonav_core: the C module `octonav.core`, assembled from the per-file
 * openers (tree, grid, query, streamer). The Lua module `octonav` (lua/octonav/init.lua) wraps it.
 */
#include "lua_util.h"

#include <time.h>

__attribute__((visibility("default"))) int luaopen_octonav_core(lua_State *L);

/* core.clock() -> seconds on a monotonic clock, for benchmarks (os.clock is CPU time, coarse). */
static int l_clock(lua_State *L)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec * 1e-9);
    return 1;
}

int luaopen_octonav_core(lua_State *L)
{
    lua_newtable(L);
    lua_pushcfunction(L, l_clock);
    lua_setfield(L, -2, "clock");
    on_lua_tree_open(L);
    lua_setfield(L, -2, "tree");
    on_lua_grid_open(L);
    lua_setfield(L, -2, "grid");
    on_lua_query_open(L);
    lua_setfield(L, -2, "query");
    on_lua_streamer_open(L);
    lua_setfield(L, -2, "streamer");
    lua_pushliteral(L, "0.1.0");
    lua_setfield(L, -2, "version");
    return 1;
}
