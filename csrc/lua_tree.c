/*
 * lua_tree.c -- the `octonav.tree` userdata: construction, insertion, queries, files.
 *
 * Follows liolib's pattern through the class helper of lua_util.h: one metatable named ON_TREE_MT,
 * the handle made closed before the tree, a __tostring that summarises. A closed tree raises on use;
 * a tree a running search reads (a Lua heuristic calling back) refuses to close or change. The binding only converts values and
 * errors: misuse raises; runtime failures (a file, an outside point) return nil, reason.
 */
#include "lua_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void tree_destroy(on_lhandle *h)
{
    on_tree_destroy(h->p);
}

static void tree_describe(lua_State *L, on_lhandle *h)
{
    const on_tree *t = h->p;
    on_tree_stats st;
    on_tree_stats_get(t, &st);
    const on_tree_params *p = on_tree_get_params(t);
    char buf[240];
    snprintf(buf, sizeof buf, "octonav.tree: %dx%dx%d tiles of %d^3 leaves (scale %g), %zu nodes, %.2f MB%s", p->tiles[0],
             p->tiles[1], p->tiles[2], 1 << p->depth, p->scale, st.nodes, (double)st.bytes / 1048576.0,
             h->busy ? ", in use by a running search" : "");
    lua_pushstring(L, buf);
}

const on_lclass on_lua_tree_class = {ON_TREE_MT, "tree is in use by a running search", tree_destroy, tree_describe};

on_tree *on_lua_checktree(lua_State *L, int idx)
{
    return on_lua_checkhandle(L, idx, &on_lua_tree_class)->p;
}

on_tree *on_lua_testtree(lua_State *L, int idx)
{
    on_lhandle *h = on_lua_testhandle(L, idx, &on_lua_tree_class);
    return h ? h->p : NULL;
}

on_tree *on_lua_checktree_idle(lua_State *L, int idx, const char *fname)
{
    return on_lua_checkidle(L, idx, &on_lua_tree_class, fname)->p;
}

static const char *const new_opts[] = {"tiles", "depth", "scale", "origin", "radius", NULL};

/* octonav.tree.new{ tiles = {nx,ny,nz}, depth = 9, scale = 1, origin = {0,0,0}, radius = 0 } */
static int l_new(lua_State *L)
{
    on_lua_checkopts(L, 1, "octonav.tree.new", new_opts);
    on_tree_params p = {{1, 1, 1}, 9, 1.0, {0, 0, 0}, 0.0};
    if (!lua_isnoneornil(L, 1)) {
        if (lua_getfield(L, 1, "tiles") != LUA_TNIL) on_lua_checkint3_arg(L, -1, 1, "tiles", p.tiles);
        lua_pop(L, 1);
        if (lua_getfield(L, 1, "origin") != LUA_TNIL) on_lua_checkpoint_arg(L, -1, 1, "origin", p.origin);
        lua_pop(L, 1);
        p.depth = (int)on_lua_optinteger(L, 1, "depth", 9);
        p.scale = on_lua_optnumber(L, 1, "scale", 1.0);
        p.radius = on_lua_optnumber(L, 1, "radius", 0.0);
    }
    if (p.depth < 1 || p.depth > ON_MAX_DEPTH) return luaL_error(L, "octonav.tree.new: depth must be 1..%d", ON_MAX_DEPTH);
    for (int i = 0; i < 3; i++)
        if (p.tiles[i] < 1 || p.tiles[i] > ON_MAX_TILES_PER_AXIS)
            return luaL_error(L, "octonav.tree.new: tiles must be 1..%d per axis", ON_MAX_TILES_PER_AXIS);
    if ((double)p.tiles[0] * p.tiles[1] * p.tiles[2] >= 2147483648.0)
        return luaL_error(L, "octonav.tree.new: too many tiles");
    if (!(p.scale > 0)) return luaL_error(L, "octonav.tree.new: scale must be > 0");
    if (!(p.radius >= 0)) return luaL_error(L, "octonav.tree.new: radius must be >= 0");
    on_lhandle *h = on_lua_newhandle(L, &on_lua_tree_class, sizeof *h, 0);
    on_tree *t;
    on_status s = on_tree_create(&p, &t);
    if (!on_ok(s)) return luaL_error(L, "octonav.tree.new: %s", on_status_string(s));
    h->p = t;
    return 1;
}

static int l_load(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    on_lhandle *h = on_lua_newhandle(L, &on_lua_tree_class, sizeof *h, 0);
    on_tree *t;
    char err[512];
    on_status s = on_tree_load_msg(path, &t, err, sizeof err);
    if (!on_ok(s)) {
        lua_pushnil(L);
        lua_pushstring(L, err);
        return 2;
    }
    h->p = t;
    return 1;
}

/* Raise for misuse (bad arguments), return nil, reason for the rest. */
static int check_status(lua_State *L, on_status s, const char *fname)
{
    if (s & ON_NO_MEMORY) return luaL_error(L, "%s: out of memory", fname);
    if (s & ON_INVALID) return luaL_error(L, "%s: invalid argument", fname);
    return 0;
}

static int l_add_box(lua_State *L)
{
    on_tree *t = on_lua_checktree_idle(L, 1, "add_box");
    double mn[3], mx[3];
    on_lua_checkpoint(L, 2, "min", mn);
    on_lua_checkpoint(L, 3, "max", mx);
    for (int i = 0; i < 3; i++)
        if (mn[i] > mx[i]) luaL_argerror(L, 3, "max: must not be below min on any axis");
    check_status(L, on_tree_add_box(t, mn, mx), "add_box");
    lua_settop(L, 1);
    return 1;
}

static int l_add_triangles(lua_State *L)
{
    on_tree *t = on_lua_checktree_idle(L, 1, "add_triangles");
    luaL_checktype(L, 2, LUA_TTABLE);
    luaL_checktype(L, 3, LUA_TTABLE);
    lua_Integer nv = luaL_len(L, 2), ni = luaL_len(L, 3);
    if (nv % 3) luaL_argerror(L, 2, "vertices: length must be a multiple of 3 (x, y, z, x, y, z, ...)");
    if (ni % 3) luaL_argerror(L, 3, "indices: length must be a multiple of 3 (one triple per triangle)");
    if (nv / 3 > 0xfffffffe || ni > 0x7fffffff) luaL_argerror(L, 2, "too many vertices or indices");
    double *v = malloc((size_t)(nv ? nv : 1) * sizeof *v);
    uint32_t *ix = malloc((size_t)(ni ? ni : 1) * sizeof *ix);
    if (!v || !ix) {
        free(v);
        free(ix);
        return luaL_error(L, "add_triangles: out of memory");
    }
    const char *err = NULL;
    lua_Integer bad = 0;
    for (lua_Integer i = 1; i <= nv && !err; i++) {
        int isnum;
        lua_geti(L, 2, i);
        v[i - 1] = (double)lua_tonumberx(L, -1, &isnum);
        lua_pop(L, 1);
        if (!isnum || !isfinite(v[i - 1])) err = "vertices: element %I is not a finite number", bad = i;
    }
    for (lua_Integer i = 1; i <= ni && !err; i++) {
        int isint;
        lua_geti(L, 3, i);
        lua_Integer k = lua_tointegerx(L, -1, &isint);
        lua_pop(L, 1);
        if (!isint || k < 1 || k > nv / 3) err = "indices: element %I is not a vertex number (1..%I)", bad = i;
        else ix[i - 1] = (uint32_t)(k - 1);
    }
    if (err) {
        free(v);
        free(ix);
        lua_pushfstring(L, err, bad, nv / 3);
        return luaL_argerror(L, strncmp(err, "vertices", 8) == 0 ? 2 : 3, lua_tostring(L, -1));
    }
    on_status s = on_tree_add_triangles(t, v, (size_t)(nv / 3), ix, (size_t)(ni / 3));
    free(v);
    free(ix);
    check_status(L, s, "add_triangles");
    lua_pushinteger(L, ni / 3);
    return 1;
}

static int l_add_obj(lua_State *L)
{
    on_tree *t = on_lua_checktree_idle(L, 1, "add_obj");
    const char *path = luaL_checkstring(L, 2);
    char err[512] = "";
    size_t nv = 0, nt = 0;
    on_status s = on_tree_add_obj(t, path, &nv, &nt, err, sizeof err);
    if (!on_ok(s)) {
        if (s & ON_NO_MEMORY) return luaL_error(L, "add_obj: out of memory");
        lua_pushnil(L);
        if (err[0]) lua_pushstring(L, err);
        else lua_pushfstring(L, "%s: %s", path, on_status_string(s));
        return 2;
    }
    lua_pushinteger(L, (lua_Integer)nv);
    lua_pushinteger(L, (lua_Integer)nt);
    return 2;
}

static const char *const hf_opts[] = {"origin", "cell", "nx", "nz", "heights", NULL};

/* tree:add_heightfield{ origin = {x,y,z}, cell = 1, nx = , nz = , heights = {...} (nx*nz, x fastest) } */
static int l_add_heightfield(lua_State *L)
{
    on_tree *t = on_lua_checktree_idle(L, 1, "add_heightfield");
    luaL_checktype(L, 2, LUA_TTABLE);
    on_lua_checkopts(L, 2, "add_heightfield", hf_opts);
    on_heightfield hf;
    hf.origin[0] = hf.origin[1] = hf.origin[2] = 0;
    if (lua_getfield(L, 2, "origin") != LUA_TNIL) on_lua_checkpoint_arg(L, -1, 2, "origin", hf.origin);
    lua_pop(L, 1);
    hf.cell = on_lua_optnumber(L, 2, "cell", 1.0);
    lua_Integer nx = on_lua_optinteger(L, 2, "nx", 0), nz = on_lua_optinteger(L, 2, "nz", 0);
    if (!(hf.cell > 0)) return luaL_error(L, "add_heightfield: cell must be > 0");
    if (nx < 2 || nz < 2 || nx > 1000000 || nz > 1000000 || nx * nz > 100000000)
        return luaL_error(L, "add_heightfield: nx and nz must be at least 2 (and nx*nz at most 1e8)");
    if (lua_getfield(L, 2, "heights") != LUA_TTABLE) return luaL_error(L, "add_heightfield: heights must be a table");
    int hi = lua_gettop(L);
    if (luaL_len(L, hi) != nx * nz)
        return luaL_error(L, "add_heightfield: heights has %I values, nx*nz = %I", luaL_len(L, hi), nx * nz);
    double *h = malloc((size_t)(nx * nz) * sizeof *h);
    if (!h) return luaL_error(L, "add_heightfield: out of memory");
    for (lua_Integer i = 0; i < nx * nz; i++) {
        int isnum;
        lua_geti(L, hi, i + 1);
        h[i] = (double)lua_tonumberx(L, -1, &isnum);
        lua_pop(L, 1);
        if (!isnum || !isfinite(h[i])) {
            free(h);
            return luaL_error(L, "add_heightfield: heights[%I] is not a finite number", i + 1);
        }
    }
    hf.nx = (int)nx;
    hf.nz = (int)nz;
    hf.heights = h;
    on_status s = on_tree_add_heightfield(t, &hf);
    free(h);
    check_status(L, s, "add_heightfield");
    lua_settop(L, 1);
    return 1;
}

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

static uint32_t check_tile(lua_State *L, const on_tree *t, int idx)
{
    int ijk[3];
    for (int i = 0; i < 3; i++) {
        lua_Integer v = luaL_checkinteger(L, idx + i);
        if (v < 0 || v >= on_tree_get_params(t)->tiles[i])
            luaL_argerror(L, idx + i,
                          lua_pushfstring(L, "tile index out of range (0..%d)", on_tree_get_params(t)->tiles[i] - 1));
        ijk[i] = (int)v;
    }
    return on_tree_tile_index(t, ijk);
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
    lua_pushnil(L);
    lua_pushliteral(L, "outside");
    return 2;
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

/* obj:visible_many(segments [, results]) -> number clear; with a results table, results[i] = boolean.
 * One call for many segments: for agents checking many sight lines, and for benchmarks that
 * time the walk rather than the call. */
static on_status visible_of(const void *obj, const double a[3], const double b[3])
{
    return on_tree_visible((const on_tree *)obj, a, b);
}

static int l_visible_many(lua_State *L)
{
    on_tree *t = on_lua_checktree(L, 1);
    return on_lua_visible_many(L, visible_of, t);
}

static int l_visible(lua_State *L)
{
    on_tree *t = on_lua_checktree(L, 1);
    return on_lua_visible(L, visible_of, t);
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
    uint32_t ti = check_tile(L, t, 2);
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

static int l_fill(lua_State *L)
{
    on_tree *t = on_lua_checktree_idle(L, 1, "fill");
    double p[3];
    on_lua_checkpoint(L, 2, "point", p);
    size_t n = 0;
    on_status s = on_tree_fill(t, p, &n);
    check_status(L, s, "fill");
    if (!on_ok(s)) {
        lua_pushnil(L);
        lua_pushstring(L, (s & ON_OUTSIDE) ? "outside" : "blocked");
        return 2;
    }
    lua_pushinteger(L, (lua_Integer)n);
    return 1;
}

static int l_stats(lua_State *L)
{
    on_tree *t = on_lua_checktree(L, 1);
    on_tree_stats st;
    on_tree_stats_get(t, &st);
    lua_createtable(L, 0, 12);
    on_lua_setint(L, "tiles", (lua_Integer)st.tiles);
    on_lua_setint(L, "tiles_loaded", (lua_Integer)st.tiles_loaded);
    on_lua_setint(L, "nodes", (lua_Integer)st.nodes);
    on_lua_setint(L, "slots", (lua_Integer)st.slots);
    on_lua_setint(L, "bytes", (lua_Integer)st.bytes);
    on_lua_setint(L, "table_bytes", (lua_Integer)st.table_bytes);
    on_lua_setnum(L, "bytes_per_node", st.bytes_per_node);
    on_lua_setnum(L, "load_factor", st.load_factor);
    on_lua_setint(L, "revision", (lua_Integer)on_tree_revision(t));
    on_lua_setint(L, "tiles_prepared", (lua_Integer)st.tiles_prepared);
    on_lua_setint(L, "boxes", (lua_Integer)st.boxes);
    on_lua_setint(L, "box_bytes", (lua_Integer)st.box_bytes);
    return 1;
}

/* tree:prepare([i, j, k]): the search graph of one tile or of all loaded tiles (the prepared graph). */
static int l_prepare(lua_State *L)
{
    on_tree *t = on_lua_checktree_idle(L, 1, "prepare");
    int64_t tile = lua_isnoneornil(L, 2) ? -1 : (int64_t)check_tile(L, t, 2);
    size_t n = 0;
    check_status(L, on_tree_prepare(t, tile, &n), "prepare");
    lua_pushinteger(L, (lua_Integer)n);
    return 1;
}

/* tree:boxes(i, j, k): a prepared tile's boxes, each {min = {x,y,z}, max = {x,y,z}, neighbors = {...}}
 * in world space (neighbors: 1-based indices of boxes of the same tile sharing a face), or nil and a
 * reason when the tile has no valid graph. For tests and tools, not for hot paths. */
static int l_boxes(lua_State *L)
{
    on_tree *t = on_lua_checktree(L, 1);
    uint32_t ti = check_tile(L, t, 2);
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

static int l_params(lua_State *L)
{
    on_tree *t = on_lua_checktree(L, 1);
    lua_createtable(L, 0, 6);
    const on_tree_params *p = on_tree_get_params(t);
    on_lua_pushint3(L, p->tiles);
    lua_setfield(L, -2, "tiles");
    on_lua_setint(L, "depth", p->depth);
    on_lua_setnum(L, "scale", p->scale);
    on_lua_pushpoint(L, p->origin);
    lua_setfield(L, -2, "origin");
    on_lua_setnum(L, "radius", p->radius);
    on_lua_setint(L, "tile_leaves", 1 << p->depth);
    return 1;
}

static int l_save(lua_State *L)
{
    on_tree *t = on_lua_checktree(L, 1);
    const char *path = luaL_checkstring(L, 2);
    char err[512];
    on_status s = on_tree_save_msg(t, path, err, sizeof err);
    if (!on_ok(s)) {
        lua_pushnil(L);
        lua_pushstring(L, err);
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

static int l_encode_tile(lua_State *L)
{
    on_tree *t = on_lua_checktree(L, 1);
    uint32_t ti = check_tile(L, t, 2);
    size_t len = 0;
    on_tree_encode_tile(t, ti, NULL, 0, &len);
    luaL_Buffer b;
    uint8_t *buf = (uint8_t *)luaL_buffinitsize(L, &b, len);
    on_status s = on_tree_encode_tile(t, ti, buf, len, &len);
    if (!on_ok(s)) return luaL_error(L, "encode_tile: %s", on_status_string(s));
    luaL_pushresultsize(&b, len);
    return 1;
}

static int l_decode_tile(lua_State *L)
{
    on_tree *t = on_lua_checktree_idle(L, 1, "decode_tile");
    uint32_t ti = check_tile(L, t, 2);
    size_t len;
    const char *s = luaL_checklstring(L, 5, &len);
    on_status st = on_tree_decode_tile(t, ti, (const uint8_t *)s, len);
    if (st & ON_NO_MEMORY) return luaL_error(L, "decode_tile: out of memory");
    if (!on_ok(st)) return on_lua_fail(L, st, "decode_tile");
    lua_pushboolean(L, 1);
    return 1;
}

static int l_clear_tile(lua_State *L)
{
    on_tree *t = on_lua_checktree_idle(L, 1, "clear_tile");
    on_tree_clear_tile(t, check_tile(L, t, 2));
    lua_settop(L, 1);
    return 1;
}

static int l_tile_salt(lua_State *L)
{
    on_tree *t = on_lua_checktree(L, 1);
    lua_pushinteger(L, on_tree_tile_salt(t, check_tile(L, t, 2)));
    return 1;
}

static int l_compact(lua_State *L)
{
    on_tree *t = on_lua_checktree_idle(L, 1, "compact");
    double load = luaL_optnumber(L, 2, 0);
    if (load != 0 && !(load > 0.1 && load <= ON_MAX_LOAD_FACTOR))
        luaL_argerror(L, 2, "load factor must be in (0.1, 0.9]");
    check_status(L, on_tree_compact(t, load), "compact");
    lua_settop(L, 1);
    return 1;
}

static const char *const export_opts[] = {"what", "form", NULL};

/* tree:export_obj(path [, { what = "blocked"|"free", form = "surface"|"boxes" }]) -> count | nil, err:
 * the surface (merged faces on shared vertices; count = faces, then vertices) or one box per cell
 * (count = boxes). */
static int l_export_obj(lua_State *L)
{
    on_tree *t = on_lua_checktree(L, 1);
    const char *path = luaL_checkstring(L, 2);
    on_lua_checkopts(L, 3, "export_obj", export_opts);
    int what = 0;
    if (!lua_isnoneornil(L, 3) && lua_getfield(L, 3, "what") != LUA_TNIL) {
        const char *w = lua_tostring(L, -1);
        if (!w || (strcmp(w, "blocked") && strcmp(w, "free")))
            return luaL_error(L, "export_obj: option 'what' must be \"blocked\" or \"free\"");
        what = strcmp(w, "free") == 0;
    }
    static const char *const forms[] = {"surface", "boxes", NULL};
    int boxes_form = on_lua_optchoice(L, 3, "form", forms, 0, "\"surface\" or \"boxes\"");
    if (boxes_form) {
        size_t boxes = 0;
        on_status s = on_tree_export_obj(t, path, what, &boxes);
        if (!on_ok(s)) return on_lua_fail(L, s, path);
        lua_pushinteger(L, (lua_Integer)boxes);
        return 1;
    }
    size_t faces = 0, verts = 0;
    on_status s = on_tree_export_surface_obj(t, path, what, &faces, &verts);
    if (!on_ok(s)) return on_lua_fail(L, s, path);
    lua_pushinteger(L, (lua_Integer)faces);
    lua_pushinteger(L, (lua_Integer)verts);
    return 2;
}

static int l_from_voxmap(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    lua_Integer depth = luaL_optinteger(L, 2, 9);
    if (depth < 1 || depth > ON_MAX_DEPTH) luaL_argerror(L, 2, "depth must be 1..9");
    on_lhandle *h = on_lua_newhandle(L, &on_lua_tree_class, sizeof *h, 0);
    on_voxmap m;
    char err[512] = "";
    on_status s = on_voxmap_read(path, &m, err, sizeof err);
    if (!on_ok(s)) {
        if (s & ON_NO_MEMORY) return luaL_error(L, "load_map: out of memory");
        lua_pushnil(L);
        if (err[0]) lua_pushstring(L, err);
        else lua_pushfstring(L, "%s: %s", path, on_status_string(s));
        return 2;
    }
    on_tree *t;
    s = on_voxmap_fit(&m, (int)depth, err, sizeof err);
    if (on_ok(s)) s = on_tree_from_voxmap(&m, (int)depth, &t);
    int dims[3] = {m.w, m.h, m.d};
    lua_Integer count = (lua_Integer)m.count;
    on_voxmap_free(&m);
    if (!on_ok(s)) {
        if (s & ON_NO_MEMORY) return luaL_error(L, "load_map: out of memory");
        lua_pushnil(L);
        if (err[0]) lua_pushstring(L, err);
        else lua_pushfstring(L, "%s: %s", path, on_status_string(s));
        return 2;
    }
    h->p = t;
    on_lua_pushint3(L, dims);
    lua_pushinteger(L, count);
    return 3;
}

static const luaL_Reg methods[] = {
    {"add_box", l_add_box},
    {"add_triangles", l_add_triangles},
    {"add_obj", l_add_obj},
    {"add_heightfield", l_add_heightfield},
    {"fill", l_fill},
    {"locate", l_locate},
    {"raycast", l_raycast},
    {"visible", l_visible},
    {"visible_many", l_visible_many},
    {"neighbors", l_neighbors},
    {"face_cells", l_face_cells},
    {"stats", l_stats},
    {"params", l_params},
    {"save", l_save},
    {"encode_tile", l_encode_tile},
    {"decode_tile", l_decode_tile},
    {"clear_tile", l_clear_tile},
    {"tile_salt", l_tile_salt},
    {"compact", l_compact},
    {"prepare", l_prepare},
    {"boxes", l_boxes},
    {"export_obj", l_export_obj},
    {NULL, NULL},
};

static const luaL_Reg funcs[] = {
    {"new", l_new},
    {"load", l_load},
    {"from_voxmap", l_from_voxmap},
    {NULL, NULL},
};

int on_lua_tree_open(lua_State *L)
{
    on_lua_newclass(L, &on_lua_tree_class, methods);
    luaL_newlib(L, funcs);
    return 1;
}
