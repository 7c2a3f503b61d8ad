/*
 * lua_grid.c -- the `octonav.grid` userdata: the dense grid A* baseline (grid.c) for Lua, with the
 * Moving AI loaders for .3dmap (3D) and .map (2D) files. Coordinates are 0-based cell indices.
 */
#include "lua_util.h"

#include <stdlib.h>

#define GRID_MT "octonav.grid"

static void grid_destroy(on_lhandle *h)
{
    on_grid_destroy(h->p);
}

static void grid_describe(lua_State *L, on_lhandle *h)
{
    int d[3];
    on_grid_dims(h->p, d);
    lua_pushfstring(L, "octonav.grid: %dx%dx%d cells", d[0], d[1], d[2]);
}

static const on_lclass grid_class = {GRID_MT, "grid is in use", grid_destroy, grid_describe};

static on_grid *checkgrid(lua_State *L, int idx)
{
    return on_lua_checkhandle(L, idx, &grid_class)->p;
}

static int l_new(lua_State *L)
{
    lua_Integer w = luaL_checkinteger(L, 1), h = luaL_checkinteger(L, 2), d = luaL_optinteger(L, 3, 1);
    if (w < 1 || h < 1 || d < 1 || w > 65535 || h > 65535 || d > 65535 || (double)w * h * d >= 4294967296.0)
        return luaL_error(L, "octonav.grid.new: sizes must be 1..65535 with fewer than 2^32 cells");
    on_lhandle *u = on_lua_newhandle(L, &grid_class, sizeof *u, 0);
    on_grid *g;
    on_status s = on_grid_create((int)w, (int)h, (int)d, &g);
    if (!on_ok(s)) return luaL_error(L, "octonav.grid.new: %s", on_status_string(s));
    u->p = g;
    return 1;
}

/* The result of a loader into the closed handle h below: the grid, or nil and the reason. */
static int push_loaded(lua_State *L, on_lhandle *h, on_status s, on_grid *g, const char *err, const char *path)
{
    if (!on_ok(s)) {
        if (s & ON_NO_MEMORY) return luaL_error(L, "out of memory loading %s", path);
        lua_pushnil(L);
        if (err[0]) lua_pushstring(L, err);
        else lua_pushfstring(L, "%s: %s", path, on_status_string(s));
        return 2;
    }
    h->p = g;
    return 1;
}

static int l_load_voxmap(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    on_lhandle *h = on_lua_newhandle(L, &grid_class, sizeof *h, 0);
    char err[512] = "";
    on_voxmap m;
    on_grid *g = NULL;
    on_status s = on_voxmap_read(path, &m, err, sizeof err);
    if (on_ok(s)) {
        s = on_grid_from_voxmap(&m, &g);
        on_voxmap_free(&m);
    }
    return push_loaded(L, h, s, g, err, path);
}

static int l_load_map2d(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    on_lhandle *h = on_lua_newhandle(L, &grid_class, sizeof *h, 0);
    char err[512] = "";
    on_grid *g = NULL;
    on_status s = on_grid_read_map2d(path, &g, err, sizeof err);
    return push_loaded(L, h, s, g, err, path);
}

static void check_cell3(lua_State *L, int idx, const char *name, int out[3])
{
    on_lua_checkint3(L, idx, name, out);
}

static int l_set(lua_State *L)
{
    on_grid *g = checkgrid(L, 1);
    int dims[3];
    on_grid_dims(g, dims);
    int c[3];
    for (int i = 0; i < 3; i++) {
        lua_Integer v = (i == 2 && lua_isnoneornil(L, 4)) ? 0 : luaL_checkinteger(L, 2 + i);
        if (v < 0 || v >= dims[i]) luaL_argerror(L, 2 + i, "cell coordinate out of range");
        c[i] = (int)v;
    }
    int blocked = lua_isnoneornil(L, 5) ? 1 : lua_toboolean(L, 5);
    on_grid_set(g, c[0], c[1], c[2], blocked);
    lua_settop(L, 1);
    return 1;
}

static int l_blocked(lua_State *L)
{
    on_grid *g = checkgrid(L, 1);
    lua_Integer x = luaL_checkinteger(L, 2), y = luaL_checkinteger(L, 3), z = luaL_optinteger(L, 4, 0);
    if (x < -0x7fffffff || x > 0x7fffffff || y < -0x7fffffff || y > 0x7fffffff || z < -0x7fffffff || z > 0x7fffffff) {
        lua_pushboolean(L, 1);
        return 1;
    }
    lua_pushboolean(L, on_grid_blocked(g, (int)x, (int)y, (int)z));
    return 1;
}

static int l_dims(lua_State *L)
{
    int d[3];
    on_grid_dims(checkgrid(L, 1), d);
    lua_pushinteger(L, d[0]);
    lua_pushinteger(L, d[1]);
    lua_pushinteger(L, d[2]);
    return 3;
}

typedef struct path_ctx {
    on_grid *g;
    size_t np;
} path_ctx;

/* (pinned: the path's buffer is allocated while the grid is used, lua_util.h rule (b)) */
static int path_body(lua_State *L, void *ctx)
{
    const path_ctx *x = ctx;
    size_t np = x->np;
    int32_t *path = lua_newuserdatauv(L, (np ? np : 1) * 3 * sizeof *path, 0);
    on_grid_last_path(x->g, path, np); /* the search just made, read back without searching again */
    lua_createtable(L, (int)np, 0);
    for (size_t i = 0; i < np; i++) {
        int c[3] = {path[3 * i], path[3 * i + 1], path[3 * i + 2]};
        on_lua_pushint3(L, c);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* grid:find(start, goal) -> path (array of {x,y,z} cells), info {length, expansions} | nil, info */
static int l_find(lua_State *L)
{
    luaL_checkudata(L, 1, GRID_MT);
    int s3[3], g3[3];
    check_cell3(L, 2, "start", s3);
    check_cell3(L, 3, "goal", g3);
    lua_settop(L, 4);
    on_lhandle *h = on_lua_checkhandle(L, 1, &grid_class); /* after the cells (rule (a)) */
    on_grid *g = h->p;
    int want_path = lua_isnoneornil(L, 4) || lua_toboolean(L, 4);
    double len = 0;
    size_t exp = 0, np = 0;
    on_status s = on_grid_find(g, s3, g3, &len, &exp, NULL, 0, &np);
    if (s & ON_NO_MEMORY) return luaL_error(L, "grid:find: out of memory");
    if (!on_ok(s)) {
        lua_pushnil(L);
        lua_createtable(L, 0, 3);
        lua_pushstring(L, on_lua_reason(s, on_lua_place_reasons));
        lua_setfield(L, -2, "reason");
        lua_pushinteger(L, (lua_Integer)exp);
        lua_setfield(L, -2, "expansions");
        return 2;
    }
    if (want_path) {
        path_ctx x = {g, np};
        on_lua_pinned(L, &h, 1, path_body, &x);
    } else {
        lua_pushboolean(L, 1);
    }
    lua_createtable(L, 0, 2);
    lua_pushnumber(L, len);
    lua_setfield(L, -2, "length");
    lua_pushinteger(L, (lua_Integer)exp);
    lua_setfield(L, -2, "expansions");
    return 2;
}

static on_status visible_of(const void *obj, const double a[3], const double b[3])
{
    return on_grid_visible((const on_grid *)obj, a, b);
}

static const luaL_Reg methods[] = {
    {"set", l_set}, {"blocked", l_blocked}, {"dims", l_dims}, {"find", l_find}, {NULL, NULL},
};
static const luaL_Reg funcs[] = {
    {"new", l_new}, {"load_voxmap", l_load_voxmap}, {"load_map2d", l_load_map2d}, {NULL, NULL},
};

int on_lua_grid_open(lua_State *L)
{
    static const on_lua_visibility vis = {&grid_class, visible_of};
    on_lua_newclass(L, &grid_class, methods);
    on_lua_addvisibility(L, &vis);
    luaL_newlib(L, funcs);
    return 1;
}
