/*
 * lua_tree_edit.c -- the `octonav.tree` methods that put obstacles in or fill free space: add_box,
 * add_triangles, add_obj, add_heightfield, fill (added to the tree class by on_lua_tree_edit_open,
 * from on_lua_tree_open). Each refuses while a running search reads the tree; misuse raises, a file
 * that cannot be read or an outside point returns nil, reason.
 */
#include "lua_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int l_add_box(lua_State *L)
{
    luaL_checkudata(L, 1, ON_TREE_MT);
    double mn[3], mx[3];
    on_lua_checkpoint(L, 2, "min", mn);
    on_lua_checkpoint(L, 3, "max", mx);
    for (int i = 0; i < 3; i++)
        if (mn[i] > mx[i]) luaL_argerror(L, 3, "max: must not be below min on any axis");
    on_tree *t = on_lua_checktree_idle(L, 1, "add_box"); /* after the arguments (lua_util.h, rule (a)) */
    on_lua_checkstatus(L, on_tree_add_box(t, mn, mx), "add_box");
    lua_settop(L, 1);
    return 1;
}

static int l_add_triangles(lua_State *L)
{
    luaL_checkudata(L, 1, ON_TREE_MT);
    luaL_checktype(L, 2, LUA_TTABLE);
    luaL_checktype(L, 3, LUA_TTABLE);
    lua_Integer nv = luaL_len(L, 2), ni = luaL_len(L, 3);
    if (nv % 3) luaL_argerror(L, 2, "vertices: length must be a multiple of 3 (x, y, z, x, y, z, ...)");
    if (ni % 3) luaL_argerror(L, 3, "indices: length must be a multiple of 3 (one triple per triangle)");
    if (nv < 0 || ni < 0 || nv / 3 > 0xfffffffe || ni > 0x7fffffff) luaL_argerror(L, 2, "too many vertices or indices");
    /* both copied into Lua buffers (collected with the stack, whatever raises) before the tree is taken */
    lua_Integer bad;
    double *v = on_lua_tonumbers(L, 2, nv, &bad);
    if (!v) return luaL_argerror(L, 2, lua_pushfstring(L, "vertices: element %I is not a finite number", bad));
    uint32_t *ix = lua_newuserdatauv(L, (size_t)(ni ? ni : 1) * sizeof *ix, 0);
    for (lua_Integer i = 1; i <= ni; i++) {
        int isint;
        lua_geti(L, 3, i);
        lua_Integer k = lua_tointegerx(L, -1, &isint);
        lua_pop(L, 1);
        if (!isint || k < 1 || k > nv / 3)
            return luaL_argerror(L, 3, lua_pushfstring(L, "indices: element %I is not a vertex number (1..%I)", i, nv / 3));
        ix[i - 1] = (uint32_t)(k - 1);
    }
    on_tree *t = on_lua_checktree_idle(L, 1, "add_triangles");
    on_status s = on_tree_add_triangles(t, v, (size_t)(nv / 3), ix, (size_t)(ni / 3));
    on_lua_checkstatus(L, s, "add_triangles");
    lua_pushinteger(L, ni / 3);
    return 1;
}

static int l_add_obj(lua_State *L)
{
    luaL_checkudata(L, 1, ON_TREE_MT);
    const char *path = luaL_checkstring(L, 2);
    on_tree *t = on_lua_checktree_idle(L, 1, "add_obj");
    char err[512] = "";
    size_t nv = 0, nt = 0;
    on_status s = on_tree_add_obj(t, path, &nv, &nt, err, sizeof err);
    if (!on_ok(s)) return on_lua_file_result(L, s, err, path, "add_obj");
    lua_pushinteger(L, (lua_Integer)nv);
    lua_pushinteger(L, (lua_Integer)nt);
    return 2;
}

static const char *const hf_opts[] = {"origin", "cell", "nx", "nz", "heights", NULL};

/* tree:add_heightfield{ origin = {x,y,z}, cell = 1, nx = , nz = , heights = {...} (nx*nz, x fastest) } */
static int l_add_heightfield(lua_State *L)
{
    luaL_checkudata(L, 1, ON_TREE_MT);
    luaL_checktype(L, 2, LUA_TTABLE);
    on_lua_checkopts(L, 2, "add_heightfield", hf_opts);
    on_heightfield hf;
    hf.origin[0] = hf.origin[1] = hf.origin[2] = 0;
    if (lua_getfield(L, 2, "origin") != LUA_TNIL) on_lua_checkpoint_arg(L, -1, 2, "origin", hf.origin);
    lua_pop(L, 1);
    hf.cell = on_lua_optnumber(L, 2, "cell", 1.0);
    lua_Integer nx = on_lua_optinteger(L, 2, "nx", 0), nz = on_lua_optinteger(L, 2, "nz", 0);
    if (!(hf.cell > 0)) return luaL_error(L, "add_heightfield: cell must be > 0");
    on_lua_inrange(L, hf.cell, "add_heightfield", "option 'cell'", 0, ON_MAX_COORD);
    if (nx < 2 || nz < 2 || nx > 1000000 || nz > 1000000 || nx * nz > 100000000)
        return luaL_error(L, "add_heightfield: nx and nz must be at least 2 (and nx*nz at most 1e8)");
    if (lua_getfield(L, 2, "heights") != LUA_TTABLE) return luaL_error(L, "add_heightfield: heights must be a table");
    int hi = lua_gettop(L);
    if (luaL_len(L, hi) != nx * nz)
        return luaL_error(L, "add_heightfield: heights has %I values, nx*nz = %I", luaL_len(L, hi), nx * nz);
    lua_Integer bad;
    double *h = on_lua_tonumbers(L, hi, nx * nz, &bad);
    if (!h) return luaL_error(L, "add_heightfield: heights[%I] is not a finite number", bad);
    hf.nx = (int)nx;
    hf.nz = (int)nz;
    hf.heights = h;
    on_tree *t = on_lua_checktree_idle(L, 1, "add_heightfield");
    on_status s = on_tree_add_heightfield(t, &hf);
    on_lua_checkstatus(L, s, "add_heightfield");
    lua_settop(L, 1);
    return 1;
}

static int l_fill(lua_State *L)
{
    luaL_checkudata(L, 1, ON_TREE_MT);
    double p[3];
    on_lua_checkpoint(L, 2, "point", p);
    on_tree *t = on_lua_checktree_idle(L, 1, "fill");
    size_t n = 0;
    on_status s = on_tree_fill(t, p, &n);
    on_lua_checkstatus(L, s, "fill");
    if (!on_ok(s)) {
        lua_pushnil(L);
        lua_pushstring(L, (s & ON_OUTSIDE) ? "outside" : "blocked");
        return 2;
    }
    lua_pushinteger(L, (lua_Integer)n);
    return 1;
}

int on_lua_tree_edit_open(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"add_box", l_add_box},   {"add_triangles", l_add_triangles}, {"add_obj", l_add_obj},
        {"add_heightfield", l_add_heightfield}, {"fill", l_fill}, {NULL, NULL},
    };
    on_lua_addmethods(L, ON_TREE_MT, methods);
    return 0;
}
