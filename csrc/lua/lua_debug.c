/*
 * lua_debug.c -- octonav.core.debug: what a tree looks like, packed for drawing. The Lua layer
 * (lua/octonav/debug.lua) walks these for an engine's drawer and the viewer (lua/octonav/view.lua)
 * embeds them in a page. Results are strings of little-endian float32 so a large tree costs no Lua
 * table per cell, and a page can take the bytes as they are.
 */
#include "lua_util.h"

#include <string.h>

typedef struct pack_ctx {
    luaL_Buffer *b;
    const on_tree *t;
    const on_tree_params *p;
    int what;
    lua_Integer n;
} pack_ctx;

static void put_f32(luaL_Buffer *b, double v)
{
    float f = (float)v;
    char bytes[4];
    memcpy(bytes, &f, 4);
    luaL_addlstring(b, bytes, 4);
}

static int pack_quad(void *ud, const int64_t c[4][3], int normal)
{
    pack_ctx *x = ud;
    for (int j = 0; j < 4; j++)
        for (int a = 0; a < 3; a++) put_f32(x->b, x->p->origin[a] + (double)c[j][a] * x->p->scale);
    put_f32(x->b, normal);
    x->n++;
    return 0;
}

static int pack_cell(void *ud, on_cell c, int blocked)
{
    pack_ctx *x = ud;
    if (blocked != (x->what == 0)) return 0;
    double mn[3], s;
    on_tree_cell_bounds(x->t, c, mn, &s);
    for (int a = 0; a < 3; a++) put_f32(x->b, mn[a]);
    put_f32(x->b, s);
    x->n++;
    return 0;
}

static int check_what(lua_State *L, int idx)
{
    static const char *const names[] = {"blocked", "free", NULL};
    return luaL_checkoption(L, idx, "blocked", names);
}

/* The tree at argument 1 packed by pack_quad (surface) or pack_cell (cells) into a string: bytes, count.
 * Out of memory in the surface raises; other failures return nil, "FNAME: reason". */
typedef struct pack_call {
    on_tree *t;
    int surface, what;
    const char *fname;
} pack_call;

/* (pinned: the buffer grows while the walk reads the tree, lua_util.h rule (b)) */
static int pack_body(lua_State *L, void *ctx)
{
    const pack_call *c = ctx;
    on_tree *t = c->t;
    int surface = c->surface;
    const char *fname = c->fname;
    pack_ctx x = {NULL, t, on_tree_get_params(t), c->what, 0};
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    x.b = &b;
    on_status s = surface ? on_tree_surface(t, x.what, pack_quad, &x) : on_tree_visit(t, pack_cell, &x);
    if (!on_ok(s)) {
        if (surface && (s & ON_NO_MEMORY)) return luaL_error(L, "%s: out of memory", fname);
        return on_lua_fail(L, s, fname);
    }
    luaL_pushresult(&b);
    lua_pushinteger(L, x.n);
    return 2;
}

static int pack(lua_State *L, int surface, const char *fname)
{
    luaL_checkudata(L, 1, ON_TREE_MT);
    pack_call c = {NULL, surface, check_what(L, 2), fname}; /* the argument first (rule (a)) */
    lua_settop(L, 2);
    on_lhandle *h = on_lua_checkhandle(L, 1, &on_lua_tree_class);
    c.t = h->p;
    return on_lua_pinned(L, &h, 1, pack_body, &c);
}

/* debug.surface(tree [, "blocked"|"free"]) -> bytes, count: the merged boundary quads, 13 float32
 * each (4 corners x y z counter-clockwise from the normal's side, then the normal 0..5). */
static int l_surface(lua_State *L) { return pack(L, 1, "surface"); }

/* debug.cells(tree [, "blocked"|"free"]) -> bytes, count: each blocked (or free) cube as 4 float32
 * (min x, y, z, edge), world space. */
static int l_cells(lua_State *L) { return pack(L, 0, "cells"); }

/* debug.base64(s) -> the standard base64 of s (RFC 4648, with '=' padding): the viewer embeds its
 * float32 arrays (a crowd recording: megabytes) in its page this way. */
static int l_base64(lua_State *L)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n;
    const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1, &n);
    if (n > ((size_t)-1 / 4 - 3) / 4 * 3) return luaL_error(L, "base64: string too long");
    luaL_Buffer b;
    char *o = luaL_buffinitsize(L, &b, (n + 2) / 3 * 4 + 1);
    size_t k = 0, i = 0;
    for (; i + 2 < n; i += 3) {
        unsigned long v = (unsigned long)s[i] << 16 | (unsigned long)s[i + 1] << 8 | s[i + 2];
        o[k++] = abc[v >> 18 & 63];
        o[k++] = abc[v >> 12 & 63];
        o[k++] = abc[v >> 6 & 63];
        o[k++] = abc[v & 63];
    }
    if (i < n) {
        unsigned long v = (unsigned long)s[i] << 16 | (i + 1 < n ? (unsigned long)s[i + 1] << 8 : 0);
        o[k++] = abc[v >> 18 & 63];
        o[k++] = abc[v >> 12 & 63];
        o[k++] = i + 1 < n ? abc[v >> 6 & 63] : '=';
        o[k++] = '=';
    }
    luaL_pushresultsize(&b, k);
    return 1;
}

int on_lua_debug_open(lua_State *L)
{
    static const luaL_Reg funcs[] = {{"surface", l_surface}, {"cells", l_cells}, {"base64", l_base64}, {NULL, NULL}};
    luaL_newlib(L, funcs);
    return 1;
}
