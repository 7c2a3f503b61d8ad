/*
 * lua_obstacles.c -- temporary obstacles in Lua (obstacles.c; octonav.h, "temporary obstacles"),
 * added to the tree class's methods by on_lua_obstacles_open (called after on_lua_tree_open):
 *   tree:add_obstacle{ min = {x, y, z}, max = {x, y, z} }  -> id | nil, reason
 *   tree:remove_obstacle(id)                              -> true | nil, reason
 *   tree:obstacles()                                      -> { { id = id, min = ..., max = ... }, ... }
 * Adding and removing change the tree (refused while a search reads it); removing restores exactly
 * what the obstacle's tiles held, with the other obstacles in place.
 */
#include "lua_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* (declared for lua_query.c there, until lua_util.h lists it) */
int on_lua_obstacles_open(lua_State *L);

static const char *const box_fields[] = {"min", "max", NULL};

/* tree:add_obstacle(box) */
static int l_add_obstacle(lua_State *L)
{
    luaL_checkudata(L, 1, ON_TREE_MT);
    luaL_checktype(L, 2, LUA_TTABLE);
    on_lua_checkopts(L, 2, "add_obstacle", box_fields);
    double mn[3], mx[3];
    lua_getfield(L, 2, "min");
    on_lua_checkpoint_arg(L, -1, 2, "min", mn);
    lua_getfield(L, 2, "max");
    on_lua_checkpoint_arg(L, -1, 2, "max", mx);
    for (int k = 0; k < 3; k++)
        if (mn[k] > mx[k]) luaL_argerror(L, 2, "min must not exceed max on any axis");
    on_tree *t = on_lua_checktree_idle(L, 1, "add_obstacle"); /* after the box (lua_util.h, rule (a)) */
    uint32_t id;
    on_status s = on_tree_add_obstacle(t, mn, mx, &id);
    if (!on_ok(s)) {
        lua_pushnil(L);
        lua_pushstring(L, on_status_string(s));
        return 2;
    }
    lua_pushinteger(L, (lua_Integer)id);
    return 1;
}

/* tree:remove_obstacle(id) */
static int l_remove_obstacle(lua_State *L)
{
    on_tree *t = on_lua_checktree_idle(L, 1, "remove_obstacle");
    lua_Integer id = luaL_checkinteger(L, 2);
    on_status s = id >= 1 && id <= (lua_Integer)UINT32_MAX ? on_tree_remove_obstacle(t, (uint32_t)id)
                                                             : (ON_FAILURE | ON_INVALID);
    if (!on_ok(s)) {
        lua_pushnil(L);
        if (s & ON_INVALID) lua_pushfstring(L, "no obstacle %I in place", id);
        else lua_pushstring(L, on_status_string(s));
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* (pinned: the buffers are allocated while the tree is used, rule (b)) */
static int obstacles_body(lua_State *L, void *ctx)
{
    const on_tree *t = ctx;
    size_t n = 0;
    on_tree_obstacles(t, NULL, NULL, 0, &n);
    /* Lua buffers: pushing the list may raise (memory) and must not leak them */
    uint32_t *ids = lua_newuserdatauv(L, (n ? n : 1) * sizeof *ids, 0);
    double *boxes = lua_newuserdatauv(L, (n ? n : 1) * 6 * sizeof *boxes, 0);
    on_tree_obstacles(t, ids, boxes, n, &n);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, 3);
        lua_pushinteger(L, (lua_Integer)ids[i]);
        lua_setfield(L, -2, "id");
        on_lua_pushpoint(L, boxes + 6 * i);
        lua_setfield(L, -2, "min");
        on_lua_pushpoint(L, boxes + 6 * i + 3);
        lua_setfield(L, -2, "max");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* tree:obstacles() */
static int l_obstacles(lua_State *L)
{
    on_lhandle *h = on_lua_checkhandle(L, 1, &on_lua_tree_class);
    return on_lua_pinned(L, &h, 1, obstacles_body, h->p);
}

int on_lua_obstacles_open(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"add_obstacle", l_add_obstacle}, {"remove_obstacle", l_remove_obstacle}, {"obstacles", l_obstacles}, {NULL, NULL}};
    on_lua_addmethods(L, ON_TREE_MT, methods);
    return 0;
}
