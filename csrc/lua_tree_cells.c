/*
 * lua_tree_cells.c -- the `octonav.tree` methods that read its cells and its prepared graph: locate,
 * locate_status, raycast, visible, visible_many, neighbors, face_cells, prepare, boxes (added to the
 * tree class by on_lua_tree_cells_open, from on_lua_tree_open). Cells are tables {min, size, code, tile}; a cell
 * passed back in is checked to be a free cell of this tree still. locate answers "unloaded", {i,j,k}
 * for a point in a tile not loaded (not "blocked": the tree does not know).
 */
#include "lua_util.h"

#include <stdlib.h>
#include <string.h>

static void push_cell(lua_State *L, const on_tree *t, on_cell c)
{
    double mn[3], s;
    int ijk[3];
    on_tree_cell_bounds(t, c, mn, &s);
    on_tree_tile_coords(t, c.tile, ijk);
    lua_createtable(L, 0, 4);
    on_lua_pushpoint(L, mn);
    lua_setfield(L, -2, "min");
    lua_pushnumber(L, s);
    lua_setfield(L, -2, "size");
    lua_pushinteger(L, (lua_Integer)c.code);
    lua_setfield(L, -2, "code");
    on_lua_pushint3(L, ijk);
    lua_setfield(L, -2, "tile");
}

/* A cell table (from locate or neighbors) back to an on_cell, checked against the tree. */
static on_cell check_cell(lua_State *L, const on_tree *t, int idx)
{
    luaL_checktype(L, idx, LUA_TTABLE);
    int ijk[3];
    if (lua_getfield(L, idx, "tile") != LUA_TTABLE) luaL_argerror(L, idx, "cell: table with 'tile' and 'code' expected");
    on_lua_checkint3_arg(L, -1, idx, "cell.tile", ijk);
    lua_pop(L, 1);
    for (int i = 0; i < 3; i++)
        if (ijk[i] < 0 || ijk[i] >= on_tree_get_params(t)->tiles[i]) luaL_argerror(L, idx, "cell: tile out of range");
    lua_getfield(L, idx, "code");
    int isint;
    lua_Integer code = lua_tointegerx(L, -1, &isint);
    lua_pop(L, 1);
    if (!isint || code < 0 || code > 0x7fffffff) luaL_argerror(L, idx, "cell: integer 'code' expected");
    on_cell c = {on_tree_tile_index(t, ijk), (uint32_t)code};
    /* it must still be a free cell of this tree */
    on_status s = on_tree_cell_check(t, c);
    if (s & ON_INVALID) luaL_argerror(L, idx, "cell: code has a bad layer");
    if (!on_ok(s)) luaL_argerror(L, idx, "cell: not a free cell of this tree (stale or made up)");
    return c;
}

static int l_locate(lua_State *L)
{
    on_tree *t = on_lua_checktree(L, 1);
    double p[3];
    on_lua_checkpoint(L, 2, "point", p);
    on_cell c;
    on_status s = on_tree_locate(t, p, &c);
    if (on_ok(s)) {
        lua_pushliteral(L, "free");
        push_cell(L, t, c);
        return 2;
    }
    if (s & ON_BLOCKED) {
        lua_pushliteral(L, "blocked");
        return 1;
    }
    if (s & ON_UNLOADED) { /* "unloaded", {i, j, k}: its tile is not in memory */
        int ijk[3];
        on_tree_tile_coords(t, c.tile, ijk);
        lua_pushliteral(L, "unloaded");
        on_lua_pushint3(L, ijk);
        return 2;
    }
    lua_pushnil(L);
    lua_pushliteral(L, "outside");
    return 2;
}

/* locate's answer without its cell: "free", "blocked", "unloaded" or "outside", one interned string
 * and nothing allocated. A navigator asks whether a point is blocked every plan it starts; locate's
 * cell table (and its min and tile tables) was garbage the caller never read. */
static int l_locate_status(lua_State *L)
{
    on_tree *t = on_lua_checktree(L, 1);
    double p[3];
    on_lua_checkpoint(L, 2, "point", p);
    on_cell c;
    on_status s = on_tree_locate(t, p, &c);
    if (on_ok(s))
        lua_pushliteral(L, "free");
    else if (s & ON_BLOCKED)
        lua_pushliteral(L, "blocked");
    else if (s & ON_UNLOADED)
        lua_pushliteral(L, "unloaded");
    else
        lua_pushliteral(L, "outside");
    return 1;
}

static int l_raycast(lua_State *L)
{
    on_tree *t = on_lua_checktree(L, 1);
    double a[3], b[3], th;
    on_lua_checkpoint(L, 2, "from", a);
    on_lua_checkpoint(L, 3, "to", b);
    on_status s = on_tree_raycast(t, a, b, &th);
    if (on_ok(s)) {
        lua_pushnil(L);
        return 1;
    }
    double hit[3];
    for (int i = 0; i < 3; i++) hit[i] = a[i] + th * (b[i] - a[i]);
    lua_pushnumber(L, th);
    on_lua_pushpoint(L, hit);
    return 2;
}

static on_status visible_of(const void *obj, const double a[3], const double b[3])
{
    return on_tree_visible((const on_tree *)obj, a, b);
}

static int l_neighbors(lua_State *L)
{
    on_tree *t = on_lua_checktree(L, 1);
    on_cell c = check_cell(L, t, 2);
    size_t cap = 64, n = 0;
    for (;;) {
        on_cell *out = malloc(cap * sizeof *out);
        uint8_t *faces = malloc(cap);
        if (!out || !faces) {
            free(out);
            free(faces);
            return luaL_error(L, "neighbors: out of memory");
        }
        on_status s = on_tree_neighbors(t, c, out, faces, cap, &n);
        if (on_ok(s)) {
            static const char *const fname[6] = {"-x", "+x", "-y", "+y", "-z", "+z"};
            lua_createtable(L, (int)n, 0);
            for (size_t i = 0; i < n; i++) {
                push_cell(L, t, out[i]);
                lua_pushstring(L, fname[faces[i]]);
                lua_setfield(L, -2, "face");
                lua_rawseti(L, -2, (lua_Integer)i + 1);
            }
            free(out);
            free(faces);
            return 1;
        }
        free(out);
        free(faces);
        cap = n;
    }
}

static const char *const face_names[6] = {"-x", "+x", "-y", "+y", "-z", "+z"};

/* tree:face_cells(i, j, k, face) -> array of the free cells of tile (i,j,k) touching that face */
static int l_face_cells(lua_State *L)
{
    on_tree *t = on_lua_checktree(L, 1);
    uint32_t ti = on_lua_checktile(L, t, 2);
    const char *fs = luaL_checkstring(L, 5);
    int face = -1;
    for (int i = 0; i < 6; i++)
        if (strcmp(fs, face_names[i]) == 0) face = i;
    if (face < 0) luaL_argerror(L, 5, "face must be one of \"-x\", \"+x\", \"-y\", \"+y\", \"-z\", \"+z\"");
    size_t cap = 256, n = 0;
    for (;;) {
        on_cell *out = malloc(cap * sizeof *out);
        if (!out) return luaL_error(L, "face_cells: out of memory");
        on_status s = on_tree_face_cells(t, ti, face, out, cap, &n);
        if (on_ok(s)) {
            lua_createtable(L, (int)n, 0);
            for (size_t i = 0; i < n; i++) {
                push_cell(L, t, out[i]);
                lua_rawseti(L, -2, (lua_Integer)i + 1);
            }
            free(out);
            return 1;
        }
        free(out);
        cap = n;
    }
}

/* tree:prepare([i, j, k]): the search graph of one tile or of all loaded tiles (the prepared graph). */
static int l_prepare(lua_State *L)
{
    on_tree *t = on_lua_checktree_idle(L, 1, "prepare");
    int64_t tile = lua_isnoneornil(L, 2) ? -1 : (int64_t)on_lua_checktile(L, t, 2);
    size_t n = 0;
    on_lua_checkstatus(L, on_tree_prepare(t, tile, &n), "prepare");
    lua_pushinteger(L, (lua_Integer)n);
    return 1;
}

/* tree:boxes(i, j, k): a prepared tile's boxes, each {min = {x,y,z}, max = {x,y,z}, neighbors = {...}}
 * in world space (neighbors: 1-based indices of boxes of the same tile sharing a face), or nil and a
 * reason when the tile has no valid graph. For tests and tools, not for hot paths. */
static int l_boxes(lua_State *L)
{
    on_tree *t = on_lua_checktree(L, 1);
    uint32_t ti = on_lua_checktile(L, t, 2);
    uint32_t n;
    if (!on_ok(on_tree_tile_box_count(t, ti, &n))) {
        lua_pushnil(L);
        lua_pushstring(L, "tile not prepared");
        return 2;
    }
    lua_createtable(L, (int)n, 0);
    for (uint32_t i = 0; i < n; i++) {
        double mn[3], mx[3];
        const uint32_t *nb;
        uint32_t nn;
        on_tree_tile_box(t, ti, i, mn, mx, &nb, &nn);
        lua_createtable(L, 0, 3);
        on_lua_pushpoint(L, mn);
        lua_setfield(L, -2, "min");
        on_lua_pushpoint(L, mx);
        lua_setfield(L, -2, "max");
        lua_createtable(L, (int)nn, 0);
        for (uint32_t e = 0; e < nn; e++) {
            lua_pushinteger(L, (lua_Integer)nb[e] + 1);
            lua_rawseti(L, -2, (lua_Integer)e + 1);
        }
        lua_setfield(L, -2, "neighbors");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

int on_lua_tree_cells_open(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"locate", l_locate},         {"locate_status", l_locate_status},
        {"raycast", l_raycast},       {"neighbors", l_neighbors},
        {"face_cells", l_face_cells}, {"prepare", l_prepare},       {"boxes", l_boxes},
        {NULL, NULL},
    };
    static const on_lua_visibility vis = {&on_lua_tree_class, visible_of};
    on_lua_addmethods(L, ON_TREE_MT, methods);
    on_lua_addvisibility(L, &vis);
    return 0;
}
