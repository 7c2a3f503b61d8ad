/*
 * lua_flat.c -- the tree's hot point calls in a flat form: coordinates as numbers in, numbers out, no
 * table per point (issue 34: bench/flat.lua measures what the tables cost on each Lua). Added to the
 * tree class by on_lua_flat_open (after on_lua_tree_open):
 *   tree:visible_xyz(ax, ay, az, bx, by, bz)        -> boolean                 (tree:visible)
 *   tree:raycast_xyz(ax, ay, az, bx, by, bz)        -> nil | t, x, y, z        (tree:raycast)
 *   tree:locate_status_xyz(x, y, z)                 -> status                  (tree:locate_status)
 * Misuse raises naming the function and argument: a missing or non-number coordinate ("number
 * expected"), a NaN or infinite one ("coordinates must be finite numbers").
 */
#include "lua_util.h"

#include <math.h>

/* Arguments first .. first + n - 1 into out (rule (a): read before the tree's pointer is taken). */
static void check_coords(lua_State *L, int first, int n, double *out)
{
    for (int i = 0; i < n; i++) {
        out[i] = (double)luaL_checknumber(L, first + i);
        if (!isfinite(out[i])) luaL_argerror(L, first + i, "coordinates must be finite numbers");
    }
}

static int l_visible_xyz(lua_State *L)
{
    on_lhandle *h = on_lua_checktype(L, 1, &on_lua_tree_class);
    double c[6];
    check_coords(L, 2, 6, c);
    lua_pushboolean(L, on_ok(on_tree_visible(on_lua_checkopen(L, h)->p, c, c + 3)));
    return 1;
}

static int l_raycast_xyz(lua_State *L)
{
    on_lhandle *h = on_lua_checktype(L, 1, &on_lua_tree_class);
    double c[6], th;
    check_coords(L, 2, 6, c);
    if (on_ok(on_tree_raycast(on_lua_checkopen(L, h)->p, c, c + 3, &th))) {
        lua_pushnil(L);
        return 1;
    }
    lua_pushnumber(L, th);
    for (int i = 0; i < 3; i++) lua_pushnumber(L, c[i] + th * (c[3 + i] - c[i]));
    return 4;
}

static int l_locate_status_xyz(lua_State *L)
{
    on_lhandle *h = on_lua_checktype(L, 1, &on_lua_tree_class);
    double p[3];
    check_coords(L, 2, 3, p);
    on_cell cell;
    on_status s = on_tree_locate(on_lua_checkopen(L, h)->p, p, &cell);
    on_lua_push_locate_status(L, s);
    return 1;
}

int on_lua_flat_open(lua_State *L)
{
    static const luaL_Reg methods[] = {{"visible_xyz", l_visible_xyz},
                                       {"raycast_xyz", l_raycast_xyz},
                                       {"locate_status_xyz", l_locate_status_xyz},
                                       {NULL, NULL}};
    on_lua_addmethods(L, ON_TREE_MT, methods);
    return 0;
}
