/*
 * lua_tree_cells.c -- the `octonav.tree` methods that read its cells and its prepared graph: locate,
 * locate_status, raycast, visible, visible_many, neighbors, face_cells, prepare, boxes (added to the
 * tree class by on_lua_tree_cells_open, from on_lua_tree_open). Cells are tables {min, size, code, tile}; a cell
 * passed back in is checked to be a free cell of this tree still. locate answers "unloaded", {i,j,k}
 * for a point in a tile not loaded (not "blocked": the tree does not know).
 */
#include "lua_util.h"

#include "clearance.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A cell as its table holds it, computed from the tree before any table is made (lua_util.h, rule (b):
 * the tables are built from these copies). */
typedef struct cellv {
    double min[3], size;
    uint32_t code;
    int tile[3];
    int face; /* -1: no face field */
} cellv;

static void cell_of(const on_tree *t, on_cell c, int face, cellv *v)
{
    on_tree_cell_bounds(t, c, v->min, &v->size);
    on_tree_tile_coords(t, c.tile, v->tile);
    v->code = c.code;
    v->face = face;
}

static const char *const face_names[6] = {"-x", "+x", "-y", "+y", "-z", "+z"};

static void push_cell(lua_State *L, const cellv *v)
{
    lua_createtable(L, 0, 5);
    on_lua_pushpoint(L, v->min);
    lua_setfield(L, -2, "min");
    lua_pushnumber(L, v->size);
    lua_setfield(L, -2, "size");
    lua_pushinteger(L, (lua_Integer)v->code);
    lua_setfield(L, -2, "code");
    on_lua_pushint3(L, v->tile);
    lua_setfield(L, -2, "tile");
    if (v->face >= 0) {
        lua_pushstring(L, face_names[v->face]);
        lua_setfield(L, -2, "face");
    }
}

/* A cell table (from locate or neighbors) at idx, read before the tree is taken (rule (a)). */
typedef struct cellarg {
    int tile[3];
    lua_Integer code;
    int isint;
} cellarg;

static void read_cell(lua_State *L, int idx, cellarg *a)
{
    luaL_checktype(L, idx, LUA_TTABLE);
    if (lua_getfield(L, idx, "tile") != LUA_TTABLE) luaL_argerror(L, idx, "cell: table with 'tile' and 'code' expected");
    on_lua_checkint3_arg(L, -1, idx, "cell.tile", a->tile);
    lua_pop(L, 1);
    lua_getfield(L, idx, "code");
    a->code = lua_tointegerx(L, -1, &a->isint);
    lua_pop(L, 1);
}

/* The cell read by read_cell, checked against the tree (raises nothing that runs Lua code before). */
static on_cell check_cell(lua_State *L, const on_tree *t, int idx, const cellarg *a)
{
    for (int i = 0; i < 3; i++)
        if (a->tile[i] < 0 || a->tile[i] >= on_tree_get_params(t)->tiles[i]) luaL_argerror(L, idx, "cell: tile out of range");
    if (!a->isint || a->code < 0 || a->code > 0x7fffffff) luaL_argerror(L, idx, "cell: integer 'code' expected");
    on_cell c = {on_tree_tile_index(t, a->tile), (uint32_t)a->code};
    /* it must still be a free cell of this tree */
    on_status s = on_tree_cell_check(t, c);
    if (s & ON_INVALID) luaL_argerror(L, idx, "cell: code has a bad layer");
    if (!on_ok(s)) luaL_argerror(L, idx, "cell: not a free cell of this tree (stale or made up)");
    return c;
}

static int l_locate(lua_State *L)
{
    on_lhandle *h = on_lua_checktype(L, 1, &on_lua_tree_class);
    double p[3];
    on_lua_checkpoint(L, 2, "point", p);
    on_tree *t = on_lua_checkopen(L, h)->p;
    on_cell c;
    on_status s = on_tree_locate(t, p, &c);
    if (on_ok(s)) {
        cellv v;
        cell_of(t, c, -1, &v);
        lua_pushliteral(L, "free");
        push_cell(L, &v);
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
    on_lhandle *h = on_lua_checktype(L, 1, &on_lua_tree_class);
    double p[3];
    on_lua_checkpoint(L, 2, "point", p);
    on_cell c;
    on_status s = on_tree_locate(on_lua_checkopen(L, h)->p, p, &c);
    on_lua_push_locate_status(L, s);
    return 1;
}

static int l_raycast(lua_State *L)
{
    on_lhandle *h = on_lua_checktype(L, 1, &on_lua_tree_class);
    double a[3], b[3], th;
    on_lua_checkpoint(L, 2, "from", a);
    on_lua_checkpoint(L, 3, "to", b);
    on_status s = on_tree_raycast(on_lua_checkopen(L, h)->p, a, b, &th);
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

/* tree:visible_radius(from, to, r) -> boolean: line of sight for a sphere of radius r (world units >= 0;
 * R = ceil(r / scale) leaves, clearance.h): true when every point of the segment keeps R from blocked
 * space, unloaded tiles and the grid's border (issue 33: a navigator's smoothing at a radius). */
static int l_visible_radius(lua_State *L)
{
    on_lhandle *h = on_lua_checktype(L, 1, &on_lua_tree_class);
    double a[3], b[3], na[3], nb[3];
    on_lua_checkpoint(L, 2, "from", a);
    on_lua_checkpoint(L, 3, "to", b);
    double r = luaL_checknumber(L, 4);
    const on_tree *t = on_lua_checkopen(L, h)->p;
    if (!(r >= 0) || !(r * t->inv_scale <= ON_MAX_RADIUS_LEAVES))
        return luaL_error(L, "visible_radius: radius must be a number in [0, %d leaves]", ON_MAX_RADIUS_LEAVES);
    on_to_nav(t, a, na);
    on_to_nav(t, b, nb);
    lua_pushboolean(L, on_tree_visible_radius(t, NULL, na, nb, (int64_t)ceil(r * t->inv_scale)));
    return 1;
}

static on_status visible_of(const void *obj, const double a[3], const double b[3])
{
    return on_tree_visible((const on_tree *)obj, a, b);
}

/* neighbors and face_cells, pinned (rule (b)): the cells into Lua buffers grown until they fit, then
 * copied out as cellv before the list is built. */
typedef struct cells_ctx {
    on_tree *t;
    on_cell cell; /* neighbors: of this cell */
    uint32_t tile; /* face_cells: of this tile's face */
    int face;      /* -1: neighbors */
} cells_ctx;

static int cells_body(lua_State *L, void *ctx)
{
    const cells_ctx *x = ctx;
    size_t cap = 64, n = 0;
    for (;;) {
        on_cell *out = lua_newuserdatauv(L, cap * sizeof *out, 0);
        uint8_t *faces = lua_newuserdatauv(L, cap, 0);
        on_status s = x->face < 0 ? on_tree_neighbors(x->t, x->cell, out, faces, cap, &n)
                                  : on_tree_face_cells(x->t, x->tile, x->face, out, cap, &n);
        if (on_ok(s)) {
            cellv *v = lua_newuserdatauv(L, (n ? n : 1) * sizeof *v, 0);
            for (size_t i = 0; i < n; i++) cell_of(x->t, out[i], x->face < 0 ? faces[i] : -1, &v[i]);
            lua_createtable(L, n > INT32_MAX ? INT32_MAX : (int)n, 0);
            for (size_t i = 0; i < n; i++) {
                push_cell(L, &v[i]);
                lua_rawseti(L, -2, (lua_Integer)i + 1);
            }
            return 1;
        }
        lua_pop(L, 2);
        if (!(s & ON_BUFFER_SMALL) || n <= cap) return luaL_error(L, "%s: %s", x->face < 0 ? "neighbors" : "face_cells",
                                                                 on_status_string(s));
        cap = n;
    }
}

static int l_neighbors(lua_State *L)
{
    luaL_checkudata(L, 1, ON_TREE_MT);
    cellarg a;
    read_cell(L, 2, &a);
    on_lhandle *h = on_lua_checkhandle(L, 1, &on_lua_tree_class);
    cells_ctx x = {h->p, check_cell(L, h->p, 2, &a), 0, -1};
    return on_lua_pinned(L, &h, 1, cells_body, &x);
}

/* tree:face_cells(i, j, k, face) -> array of the free cells of tile (i,j,k) touching that face */
static int l_face_cells(lua_State *L)
{
    luaL_checkudata(L, 1, ON_TREE_MT);
    const char *fs = luaL_checkstring(L, 5);
    int face = -1;
    for (int i = 0; i < 6; i++)
        if (strcmp(fs, face_names[i]) == 0) face = i;
    on_lhandle *h = on_lua_checkhandle(L, 1, &on_lua_tree_class);
    cells_ctx x = {h->p, {0, 0}, on_lua_checktile(L, h->p, 2), face};
    if (face < 0) luaL_argerror(L, 5, "face must be one of \"-x\", \"+x\", \"-y\", \"+y\", \"-z\", \"+z\"");
    return on_lua_pinned(L, &h, 1, cells_body, &x);
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

/* (pinned: the tables are built from the tree's boxes, rule (b)) */
static int boxes_body(lua_State *L, void *ctx)
{
    const cells_ctx *x = ctx;
    uint32_t n;
    if (!on_ok(on_tree_tile_box_count(x->t, x->tile, &n))) {
        lua_pushnil(L);
        lua_pushstring(L, "tile not prepared");
        return 2;
    }
    lua_createtable(L, n > INT32_MAX ? INT32_MAX : (int)n, 0);
    for (uint32_t i = 0; i < n; i++) {
        double mn[3], mx[3];
        const uint32_t *nb;
        uint32_t nn;
        on_tree_tile_box(x->t, x->tile, i, mn, mx, &nb, &nn);
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

/* tree:boxes(i, j, k): a prepared tile's boxes, each {min = {x,y,z}, max = {x,y,z}, neighbors = {...}}
 * in world space (neighbors: 1-based indices of boxes of the same tile sharing a face), or nil and a
 * reason when the tile has no valid graph. For tests and tools, not for hot paths. */
static int l_boxes(lua_State *L)
{
    on_lhandle *h = on_lua_checkhandle(L, 1, &on_lua_tree_class);
    cells_ctx x = {h->p, {0, 0}, on_lua_checktile(L, h->p, 2), -1};
    return on_lua_pinned(L, &h, 1, boxes_body, &x);
}

int on_lua_tree_cells_open(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"locate", l_locate},         {"locate_status", l_locate_status},
        {"raycast", l_raycast},       {"neighbors", l_neighbors},   {"visible_radius", l_visible_radius},
        {"face_cells", l_face_cells}, {"prepare", l_prepare},       {"boxes", l_boxes},
        {NULL, NULL},
    };
    static const on_lua_visibility vis = {&on_lua_tree_class, visible_of};
    on_lua_addmethods(L, ON_TREE_MT, methods);
    on_lua_addvisibility(L, &vis);
    return 0;
}
