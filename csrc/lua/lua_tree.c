/*
 * lua_tree.c -- the `octonav.tree` userdata: its class, construction (new, load, from_voxmap), stats
 * and params, files and tiles (save, export_obj, encode/decode/clear a tile, salts, compact). The
 * edits are in lua_tree_edit.c, the cell queries and the prepared graph in lua_tree_cells.c.
 *
 * Follows liolib's pattern through the class helper of lua_util.h: one metatable named ON_TREE_MT,
 * the handle made closed before the tree, a __tostring that summarises. A closed tree raises on use;
 * a tree a running search reads (a Lua heuristic calling back) refuses to close or change. The binding only converts values and
 * errors: misuse raises; runtime failures (a file, an outside point) return nil, reason.
 */
#include "lua_util.h"

#include <stdio.h>
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
        lua_Integer d = on_lua_optinteger(L, 1, "depth", 9);
        p.depth = d < 1 || d > ON_MAX_DEPTH ? 0 : (int)d; /* (checked below) */
        p.scale = on_lua_optnumber(L, 1, "scale", 1.0);
        p.radius = on_lua_optnumber(L, 1, "radius", 0.0);
    }
    if (p.depth < 1 || p.depth > ON_MAX_DEPTH) return luaL_error(L, "octonav.tree.new: depth must be 1..%d", ON_MAX_DEPTH);
    for (int i = 0; i < 3; i++) on_lua_inrange(L, p.origin[i], "octonav.tree.new", "origin", -ON_MAX_COORD, ON_MAX_COORD);
    for (int i = 0; i < 3; i++)
        if (p.tiles[i] < 1 || p.tiles[i] > ON_MAX_TILES_PER_AXIS)
            return luaL_error(L, "octonav.tree.new: tiles must be 1..%d per axis", ON_MAX_TILES_PER_AXIS);
    if ((double)p.tiles[0] * p.tiles[1] * p.tiles[2] >= 2147483648.0)
        return luaL_error(L, "octonav.tree.new: too many tiles");
    if (!(p.scale > 0)) return luaL_error(L, "octonav.tree.new: scale must be > 0");
    if (!(p.radius >= 0)) return luaL_error(L, "octonav.tree.new: radius must be >= 0");
    on_lua_inrange(L, p.scale, "octonav.tree.new", "option 'scale'", ON_MIN_SCALE, ON_MAX_SCALE);
    on_lua_inrange(L, p.radius, "octonav.tree.new", "option 'radius'", 0, ON_MAX_COORD);
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

/* tree:revision() -> an integer bumped by every change to the tree (stats().revision without the
 * stats table: a navigator reads it every update to know whether its paths may have gone stale) */
static int l_revision(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)on_tree_revision(on_lua_checktree(L, 1)));
    return 1;
}

static int l_stats(lua_State *L)
{
    on_tree *t = on_lua_checktree(L, 1);
    on_tree_stats st;
    on_tree_stats_get(t, &st);
    lua_Integer revision = (lua_Integer)on_tree_revision(t); /* (t is not used past the first allocation) */
    static const char *const keys[] = {"tiles", "tiles_loaded", "nodes", "slots", "bytes", "table_bytes", NULL};
    const lua_Integer v[] = {(lua_Integer)st.tiles, (lua_Integer)st.tiles_loaded, (lua_Integer)st.nodes,
                             (lua_Integer)st.slots, (lua_Integer)st.bytes,        (lua_Integer)st.table_bytes};
    lua_createtable(L, 0, 12);
    on_lua_setints(L, keys, v);
    on_lua_setnum(L, "bytes_per_node", st.bytes_per_node);
    on_lua_setnum(L, "load_factor", st.load_factor);
    on_lua_setint(L, "revision", revision);
    on_lua_setint(L, "tiles_prepared", (lua_Integer)st.tiles_prepared);
    on_lua_setint(L, "boxes", (lua_Integer)st.boxes);
    on_lua_setint(L, "box_bytes", (lua_Integer)st.box_bytes);
    on_lua_setint(L, "los_tiles", (lua_Integer)st.los_tiles);
    on_lua_setint(L, "los_bytes", (lua_Integer)st.los_bytes);
    on_lua_setint(L, "los_dropped", (lua_Integer)st.los_dropped);
    on_lua_setint(L, "adjacency_tiles", (lua_Integer)st.adj_tiles);
    on_lua_setint(L, "adjacency_bytes", (lua_Integer)st.adj_bytes);
    on_lua_setint(L, "landmark_bytes", (lua_Integer)st.landmark_bytes);
    return 1;
}

/* The per-tile caches a tree builds on first use (line of sight's masks, the search's cell adjacency)
 * share their Lua faces: a switch, tree:NAME(on) -> tree (off frees the built ones), and a build of
 * every loaded tile's now, tree:NAME_prepare() -> bytes | nil, reason (`off` when switched off). */
static int cache_switch(lua_State *L, const char *name, void (*set)(on_tree *, int))
{
    on_tree *t = on_lua_checktree_idle(L, 1, name);
    luaL_checktype(L, 2, LUA_TBOOLEAN);
    set(t, lua_toboolean(L, 2));
    lua_settop(L, 1);
    return 1;
}

static int cache_prepare(lua_State *L, const char *name, on_status (*prepare)(const on_tree *, size_t *),
                         const char *off)
{
    on_tree *t = on_lua_checktree_idle(L, 1, name);
    size_t bytes = 0;
    on_status st = prepare(t, &bytes);
    if (on_failed(st)) {
        lua_pushnil(L);
        lua_pushstring(L, (st & ON_INVALID) ? off : "out of memory");
        return 2;
    }
    lua_pushinteger(L, (lua_Integer)bytes);
    return 1;
}

/* tree:los_masks(on): line of sight through each tile's mask hierarchy (true, the default: built on a
 * tile's first line of sight) or the node table only (false). tree:los_prepare(): "masks are off". */
static int l_los_masks(lua_State *L) { return cache_switch(L, "los_masks", on_tree_set_los_masks); }
static int l_los_prepare(lua_State *L)
{
    return cache_prepare(L, "los_prepare", on_tree_los_prepare, "masks are off");
}

/* tree:los_defer(on): with true, line of sight never builds a tile's masks (it reads the node table and
 * marks the tile wanted) and tree:los_step builds them in slices; false (the default): built on first read.
 * tree:los_step([opts]) -> work, built, wanted, partial[, left]: builds masks for at most opts.work node
 * reads (integer >= 0, 0 = no limit) and opts.ms milliseconds (number >= 0, 0 = no limit), the wanted
 * tiles first, then with opts.all (false) every loaded tile (left: those still without masks); nil,
 * "masks are off" or nil, "out of memory". */
static int l_los_defer(lua_State *L) { return cache_switch(L, "los_defer", on_tree_set_los_defer); }
/* tree:border_free(on): with true, searches with a radius and tree:visible_radius count outside the grid
 * as free (a world's tree: as the bake's tree for that radius); false (the default): blocked. */
static int l_border_free(lua_State *L) { return cache_switch(L, "border_free", on_tree_set_border_free); }
/* tree:los_budget([bytes]) -> the masks' budget now in bytes, or false (no limit): bytes an integer >= 0,
 * false (no limit: a tree's default) or "tree" (an eighth of the tree's bytes: a world's tree); none or
 * nil only reads it. Kept by tree:los_step, which drops the least recently read tiles' masks
 * (on_tree_set_los_budget). */
static int l_los_budget(lua_State *L)
{
    on_tree *t;
    if (lua_isnoneornil(L, 2)) {
        t = on_lua_checktree(L, 1);
    } else {
        size_t b;
        if (lua_isboolean(L, 2) && !lua_toboolean(L, 2)) {
            b = ON_LOS_BUDGET_NONE;
        } else if (lua_type(L, 2) == LUA_TSTRING && strcmp(lua_tostring(L, 2), "tree") == 0) {
            b = ON_LOS_BUDGET_TREE;
        } else {
            int isint = 0;
            lua_Integer v = lua_type(L, 2) == LUA_TNUMBER ? lua_tointegerx(L, 2, &isint) : 0;
            if (!isint || v < 0)
                return luaL_argerror(L, 2, "bytes must be an integer >= 0, false or \"tree\"");
            b = (size_t)v;
        }
        t = on_lua_checktree_idle(L, 1, "los_budget");
        on_tree_set_los_budget(t, b);
    }
    size_t now = on_tree_los_budget(t);
    if (now == ON_LOS_BUDGET_NONE)
        lua_pushboolean(L, 0);
    else
        lua_pushinteger(L, (lua_Integer)now);
    return 1;
}
static int l_los_step(lua_State *L)
{
    static const char *const known[] = {"work", "ms", "all", NULL};
    on_lua_checkopts(L, 2, "los_step", known);
    lua_Integer work = on_lua_optinteger(L, 2, "work", 0);
    double ms = on_lua_optnumber(L, 2, "ms", 0);
    int all = on_lua_optboolean(L, 2, "all", 0);
    if (work < 0) return luaL_argerror(L, 2, "option 'work' must be an integer >= 0");
    if (!(ms >= 0 && ms <= 1e9)) return luaL_argerror(L, 2, "option 'ms' must be a number from 0 to 1e9");
    on_tree *t = on_lua_checktree_idle(L, 1, "los_step"); /* (after the options: their reads run no C state) */
    on_los_step_info info;
    on_status st = on_tree_los_step(t, (uint64_t)work, ms / 1000.0, all, &info);
    if (on_failed(st)) {
        lua_pushnil(L);
        lua_pushstring(L, (st & ON_INVALID) ? "masks are off" : "out of memory");
        return 2;
    }
    lua_pushinteger(L, (lua_Integer)info.work);
    lua_pushinteger(L, (lua_Integer)info.built);
    lua_pushinteger(L, (lua_Integer)info.wanted);
    lua_pushboolean(L, info.partial);
    if (!all) return 4;
    lua_pushinteger(L, (lua_Integer)info.left);
    return 5;
}

/* tree:adjacency(on): the search over the cells reads each tile's cell adjacency (true, the default:
 * built on a tile's first search) or walks the tree for every neighbour list (false: the same paths,
 * more instructions, no memory). tree:adjacency_prepare(): "adjacency is off". */
static int l_adjacency(lua_State *L) { return cache_switch(L, "adjacency", on_tree_set_adjacency); }
static int l_adjacency_prepare(lua_State *L)
{
    return cache_prepare(L, "adjacency_prepare", on_tree_adjacency_prepare, "adjacency is off");
}

/* tree:landmarks_prepare([n]): n landmarks (1..64, default 16) for the search's heuristic and its exact
 * unreachable (on_tree_landmarks_prepare; any edit frees them) -> bytes | nil, reason ("adjacency is
 * off"). An integer out of range or of another type raises, naming the argument. */
static int l_landmarks_prepare(lua_State *L)
{
    lua_Integer n = 16;
    if (!lua_isnoneornil(L, 2)) {
        int isint = 0;
        n = lua_tointegerx(L, 2, &isint);
        if (lua_type(L, 2) != LUA_TNUMBER || !isint || n < 1 || n > ON_LANDMARKS_MAX)
            return luaL_argerror(L, 2, "n: must be an integer from 1 to 64");
    }
    on_tree *t = on_lua_checktree_idle(L, 1, "landmarks_prepare");
    size_t bytes = 0;
    on_status st = on_tree_landmarks_prepare(t, (int)n, &bytes);
    if (on_failed(st)) {
        lua_pushnil(L);
        lua_pushstring(L, (st & ON_INVALID) ? "adjacency is off" : "out of memory");
        return 2;
    }
    lua_pushinteger(L, (lua_Integer)bytes);
    return 1;
}

static int l_params(lua_State *L)
{
    const on_tree_params pc = *on_tree_get_params(on_lua_checktree(L, 1)), *p = &pc; /* a copy: see l_stats */
    lua_createtable(L, 0, 6);
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
    luaL_checkudata(L, 1, ON_TREE_MT);
    const char *path = luaL_checkstring(L, 2);
    on_tree *t = on_lua_checktree(L, 1);
    char err[512];
    return on_lua_file_result(L, on_tree_save_msg(t, path, err, sizeof err), err, path, NULL);
}

typedef struct tile_ctx {
    on_tree *t;
    uint32_t tile;
} tile_ctx;

/* (pinned: the buffer's allocation may run a finalizer) */
static int encode_tile_body(lua_State *L, void *ctx)
{
    const tile_ctx *c = ctx;
    size_t len = 0;
    on_tree_encode_tile(c->t, c->tile, NULL, 0, &len);
    luaL_Buffer b;
    uint8_t *buf = (uint8_t *)luaL_buffinitsize(L, &b, len);
    on_status s = on_tree_encode_tile(c->t, c->tile, buf, len, &len);
    if (!on_ok(s)) return luaL_error(L, "encode_tile: %s", on_status_string(s));
    luaL_pushresultsize(&b, len);
    return 1;
}

static int l_encode_tile(lua_State *L)
{
    on_lhandle *h = on_lua_checkhandle(L, 1, &on_lua_tree_class);
    tile_ctx c = {h->p, on_lua_checktile(L, h->p, 2)};
    return on_lua_pinned(L, &h, 1, encode_tile_body, &c);
}

static int l_decode_tile(lua_State *L)
{
    luaL_checkudata(L, 1, ON_TREE_MT);
    size_t len;
    const char *s = luaL_checklstring(L, 5, &len);
    on_tree *t = on_lua_checktree_idle(L, 1, "decode_tile");
    uint32_t ti = on_lua_checktile(L, t, 2);
    on_status st = on_tree_decode_tile(t, ti, (const uint8_t *)s, len);
    if (st & ON_NO_MEMORY) return luaL_error(L, "decode_tile: out of memory");
    if (!on_ok(st)) return on_lua_fail(L, st, "decode_tile");
    lua_pushboolean(L, 1);
    return 1;
}

static int l_clear_tile(lua_State *L)
{
    on_tree *t = on_lua_checktree_idle(L, 1, "clear_tile");
    on_tree_clear_tile(t, on_lua_checktile(L, t, 2));
    lua_settop(L, 1);
    return 1;
}

static int l_tile_salt(lua_State *L)
{
    on_tree *t = on_lua_checktree(L, 1);
    lua_pushinteger(L, on_tree_tile_salt(t, on_lua_checktile(L, t, 2)));
    return 1;
}

static int l_compact(lua_State *L)
{
    on_tree *t = on_lua_checktree_idle(L, 1, "compact");
    double load = luaL_optnumber(L, 2, 0);
    if (load != 0 && !(load > 0.1 && load <= ON_MAX_LOAD_FACTOR))
        luaL_argerror(L, 2, "load factor must be in (0.1, 0.9]");
    on_lua_checkstatus(L, on_tree_compact(t, load), "compact");
    lua_settop(L, 1);
    return 1;
}

static const char *const export_opts[] = {"what", "form", NULL};

/* tree:export_obj(path [, { what = "blocked"|"free", form = "surface"|"boxes" }]) -> count | nil, err:
 * the surface (merged faces on shared vertices; count = faces, then vertices) or one box per cell
 * (count = boxes). */
static int l_export_obj(lua_State *L)
{
    luaL_checkudata(L, 1, ON_TREE_MT);
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
    on_tree *t = on_lua_checktree(L, 1);
    if (boxes_form) {
        size_t boxes = 0;
        char err[512];
        on_status s = on_tree_export_obj_msg(t, path, what, &boxes, err, sizeof err);
        if (!on_ok(s)) return on_lua_file_result(L, s, err, path, NULL);
        lua_pushinteger(L, (lua_Integer)boxes);
        return 1;
    }
    size_t faces = 0, verts = 0;
    char err[512];
    on_status s = on_tree_export_surface_obj_msg(t, path, what, &faces, &verts, err, sizeof err);
    if (!on_ok(s)) return on_lua_file_result(L, s, err, path, NULL);
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
    if (!on_ok(s)) return on_lua_file_result(L, s, err, path, "load_map");
    on_tree *t;
    s = on_voxmap_fit(&m, (int)depth, err, sizeof err);
    if (on_ok(s)) s = on_tree_from_voxmap(&m, (int)depth, &t);
    int dims[3] = {m.w, m.h, m.d};
    lua_Integer count = (lua_Integer)m.count;
    on_voxmap_free(&m);
    if (!on_ok(s)) return on_lua_file_result(L, s, err, path, "load_map");
    h->p = t;
    on_lua_pushint3(L, dims);
    lua_pushinteger(L, count);
    return 3;
}

static const luaL_Reg methods[] = {
    {"stats", l_stats},
    {"revision", l_revision},
    {"params", l_params},
    {"save", l_save},
    {"encode_tile", l_encode_tile},
    {"decode_tile", l_decode_tile},
    {"clear_tile", l_clear_tile},
    {"tile_salt", l_tile_salt},
    {"compact", l_compact},
    {"los_masks", l_los_masks},
    {"los_prepare", l_los_prepare},
    {"los_defer", l_los_defer},
    {"border_free", l_border_free},
    {"los_step", l_los_step},
    {"los_budget", l_los_budget},
    {"adjacency", l_adjacency},
    {"adjacency_prepare", l_adjacency_prepare},
    {"landmarks_prepare", l_landmarks_prepare},
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
    on_lua_newclass(L, &on_lua_tree_class, methods); /* (lua_core.c adds the edits' and cells' next) */
    luaL_newlib(L, funcs);
    return 1;
}
