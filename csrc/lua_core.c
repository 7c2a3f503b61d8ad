/*
 * lua_core.c -- luaopen_octonav_core: the C module `octonav.core`, assembled from the per-file
 * openers (tree, grid). The Lua module `octonav` (lua/octonav/init.lua) wraps it.
 */
#include "lua_util.h"

__attribute__((visibility("default"))) int luaopen_octonav_core(lua_State *L);

int luaopen_octonav_core(lua_State *L)
{
    lua_newtable(L);
    on_lua_tree_open(L);
    lua_setfield(L, -2, "tree");
    on_lua_grid_open(L);
    lua_setfield(L, -2, "grid");
    lua_pushliteral(L, "0.1.0");
    lua_setfield(L, -2, "version");
    return 1;
}
