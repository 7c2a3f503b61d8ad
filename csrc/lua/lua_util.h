/*
 * lua_util.h -- what every binding file shares: argument checks that raise errors naming the
 * argument, strict options tables (unknown names rejected), and "nil, reason" returns.
 * Only the binding (csrc/lua_*.c) includes Lua; the core never does.
 */
#ifndef OCTONAV_LUA_UTIL_H
#define OCTONAV_LUA_UTIL_H

#include "octonav.h"

#include <lauxlib.h>
#include <lua.h>

#include "lua_compat.h" /* the 5.4 API on Lua 5.1, LuaJIT, 5.2 and 5.3 (issue 34) */

/* Errors a user can act on (issue 32): every error a binding function raises starts with the name the
 * reference gives that function ("tree:add_box: min: point {x, y, z} expected, ...",
 * "octonav.query.new: argument #1: octonav.tree expected, got table"), and carries no position inside
 * the library's Lua layers (a call from the user's own code keeps the user's file and line). The name is
 * looked up on the error path only: the running C function among the octonav classes' methods (CLASS:NAME,
 * CLASS the last part of its metatable name) and the functions of the octonav and octonav.core modules.
 * The lauxlib calls below are redirected here in every binding file (lua_util.c defines them). */
int on_lua_error(lua_State *L, const char *fmt, ...);
int on_lua_argerror(lua_State *L, int arg, const char *extramsg);
int on_lua_typeerror(lua_State *L, int arg, const char *tname);
lua_Integer on_lua_checkinteger(lua_State *L, int arg);
lua_Number on_lua_checknumber(lua_State *L, int arg);
const char *on_lua_checklstring(lua_State *L, int arg, size_t *len);
lua_Integer on_lua_optinteger_arg(lua_State *L, int arg, lua_Integer def);
lua_Number on_lua_optnumber_arg(lua_State *L, int arg, lua_Number def);
void on_lua_checktype_arg(lua_State *L, int arg, int t);
void *on_lua_checkudata(lua_State *L, int arg, const char *tname);
int on_lua_checkoption(lua_State *L, int arg, const char *def, const char *const lst[]);
#ifndef ON_LUA_UTIL_IMPL
#undef luaL_error
#define luaL_error(...) on_lua_error(__VA_ARGS__)
#undef luaL_argerror
#define luaL_argerror(L, arg, msg) on_lua_argerror((L), (arg), (msg))
#undef luaL_typeerror
#define luaL_typeerror(L, arg, tname) on_lua_typeerror((L), (arg), (tname))
#undef luaL_checkinteger
#define luaL_checkinteger(L, arg) on_lua_checkinteger((L), (arg))
#undef luaL_checknumber
#define luaL_checknumber(L, arg) on_lua_checknumber((L), (arg))
#undef luaL_checklstring
#define luaL_checklstring(L, arg, len) on_lua_checklstring((L), (arg), (len))
#undef luaL_optinteger
#define luaL_optinteger(L, arg, def) on_lua_optinteger_arg((L), (arg), (def))
#undef luaL_optnumber
#define luaL_optnumber(L, arg, def) on_lua_optnumber_arg((L), (arg), (def))
#undef luaL_checktype
#define luaL_checktype(L, arg, t) on_lua_checktype_arg((L), (arg), (t))
#undef luaL_checkudata
#define luaL_checkudata(L, arg, tname) on_lua_checkudata((L), (arg), (tname))
#undef luaL_checkoption
#define luaL_checkoption(L, arg, def, lst) on_lua_checkoption((L), (arg), (def), (lst))
#endif

/* A point {x, y, z} of finite numbers at stack index idx; `name` is used in the error. */
void on_lua_checkpoint(lua_State *L, int idx, const char *name, double out[3]);
/* The same for a value at idx that is a field of argument argn (errors name argument argn). */
void on_lua_checkpoint_arg(lua_State *L, int idx, int argn, const char *name, double out[3]);
void on_lua_checkint3_arg(lua_State *L, int idx, int argn, const char *name, int out[3]);
void on_lua_pushpoint(lua_State *L, const double p[3]);
/* Three finite numbers in a table, or integer triples. */
void on_lua_checkint3(lua_State *L, int idx, const char *name, int out[3]);
void on_lua_pushint3(lua_State *L, const int v[3]);
/* Raise unless the table at idx (if not nil) only has keys from the NULL-terminated list. */
void on_lua_checkopts(lua_State *L, int idx, const char *fname, const char *const *known);
/* Field helpers for an options table at idx (absent or nil -> default). */
double on_lua_optnumber(lua_State *L, int idx, const char *key, double def);
lua_Integer on_lua_optinteger(lua_State *L, int idx, const char *key, lua_Integer def);
/* A number bounded before any use or cast: v itself when lo <= v <= hi, else raises "FNAME: NAME must be
 * a finite number in [LO, HI]" (NaN and infinities never pass). */
double on_lua_inrange(lua_State *L, double v, const char *fname, const char *name, double lo, double hi);
int on_lua_optboolean(lua_State *L, int idx, const char *key, int def);
/* Option `key` as the index of its string in names (NULL-terminated), def when absent; anything else
 * raises "option 'KEY' must be MSG". */
int on_lua_optchoice(lua_State *L, int idx, const char *key, const char *const *names, int def, const char *msg);
/* The numbers t[1 .. n] of the table at idx copied into a Lua buffer pushed on the stack (collected with
 * it, so an error while reading leaks nothing); NULL with *bad = the 1-based index of the first that
 * is not a finite number (the buffer still pushed). */
double *on_lua_tonumbers(lua_State *L, int idx, lua_Integer n, lua_Integer *bad);
/* A flat array of 6*n finite numbers (segments ax, ay, az, bx, by, bz, ...): returns a copy in a Lua
 * buffer pushed on the stack, and n; raises on bad input. */
double *on_lua_checksegments(lua_State *L, int idx, size_t *n);
/* obj:visible(from, to) -> boolean and obj:visible_many(segments [, results]) -> number clear (with a
 * results table, results[i] = boolean: one call for many sight lines, and for benchmarks that time
 * the walk rather than the call), added to class c for objects with line-of-sight function fn.
 * Give it a static on_lua_visibility (kept as the methods' upvalue). */
typedef on_status (*on_lua_visible_fn)(const void *obj, const double a[3], const double b[3]);
typedef struct on_lua_visibility {
    const struct on_lclass *c;
    on_lua_visible_fn fn;
} on_lua_visibility;
void on_lua_addvisibility(lua_State *L, const on_lua_visibility *v);
/* The reason string of a failed status: the name of the first listed bit it has (a list ending in
 * {0, NULL}), else on_status_string. on_lua_place_reasons: outside, blocked, unreachable. */
typedef struct on_lua_reason_name {
    on_status bit;
    const char *name;
} on_lua_reason_name;
const char *on_lua_reason(on_status s, const on_lua_reason_name *names);
extern const on_lua_reason_name on_lua_place_reasons[];
/* A file operation's answer: true (returns 1); or nil and err, or "PATH: STATUS" when err is empty
 * (returns 2); with fname, out of memory raises "FNAME: out of memory" instead. */
int on_lua_file_result(lua_State *L, on_status s, const char *err, const char *path, const char *fname);
/* Push nil and a reason for a failed status; returns 2. */
int on_lua_fail(lua_State *L, on_status s, const char *context);
/* Set field k of the table at the top to an integer / a number. */
void on_lua_setint(lua_State *L, const char *k, lua_Integer v);
void on_lua_setnum(lua_State *L, const char *k, double v);
/* Set fields keys[i] (a NULL-terminated list) to the integers v[i]. */
void on_lua_setints(lua_State *L, const char *const *keys, const lua_Integer *v);

/* Search results (lua_path.c). A record (what a result depends on: the tree userdata at treeidx and
 * the salts of the tiles it read) is pushed, then attached to the path and the info tables, hidden from
 * pairs(). on_lua_setpath / on_lua_setinfo give the table at the top its metatable. */
void on_lua_result_record(lua_State *L, int treeidx, const uint32_t *tiles, const uint32_t *salts, size_t n);
void on_lua_result_attach(lua_State *L, int idx, int recidx);
void on_lua_setpath(lua_State *L);
void on_lua_setinfo(lua_State *L);
int on_lua_path_open(lua_State *L);

/* q:find's search options other than the heuristic, from the table at idx (lua_query.c; the caller
 * checks the option names), and the reason string of a failed search's status (which: 0 start, 1 goal). */
void on_lua_query_opts(lua_State *L, int idx, on_query_opts *o);
const char *on_lua_query_reason(on_status s, int which);

/* Per-file openers called by luaopen_octonav_core (each leaves one table on the stack). */
int on_lua_tree_open(lua_State *L);
int on_lua_grid_open(lua_State *L);
int on_lua_query_open(lua_State *L);
int on_lua_streamer_open(lua_State *L);
int on_lua_debug_open(lua_State *L);
int on_lua_route_open(lua_State *L); /* sets field "route" of the module table on top (lua_route.c) */
/* Adds reachable, random_free and nearest_free to the tree class (after on_lua_tree_open). */
int on_lua_points_open(lua_State *L);
/* Adds visible_xyz, raycast_xyz and locate_status_xyz to the tree class (lua_flat.c). */
int on_lua_flat_open(lua_State *L);
/* Add the tree's edits (lua_tree_edit.c) and cell queries (lua_tree_cells.c) to the tree class
 * (after on_lua_tree_open: luaopen_octonav_core calls them). */
int on_lua_tree_edit_open(lua_State *L);
int on_lua_tree_cells_open(lua_State *L);
int on_lua_pathserver_open(lua_State *L);
int on_lua_crowd_open(lua_State *L); /* lua_crowd.c */
/* Sets pack, unpack and xorshift in the module table on top (lua_compat.c: for Lua 5.1, LuaJIT, 5.2). */
int on_lua_compat_open(lua_State *L);

/* One class helper for every userdata type (liolib's luaL_Stream idea): each userdata starts with a
 * handle whose `p` is the C object, NULL while closed. A handle is made closed (on_lua_newhandle) before
 * its object is created, so an error between the two cannot leak the object. `busy` counts the
 * running searches using the object: a Lua heuristic may call back into the library while the C search
 * runs, and closing or changing what the search reads must then raise instead of freeing it. `held`
 * counts longer-lived users that need the object open but let it change (path servers over a tree,
 * also while paused or idle): close raises "close: <held_msg>" while it is > 0.
 *
 * THE RULE for every binding function (issue 30): Lua code can run inside almost any Lua API call: a
 * metamethod of an argument (__index / __len / __newindex when a table is read or written through
 * lua_geti, lua_getfield, luaL_len, lua_setfield...; luaL_checkstring converting a number) and a
 * finalizer (__gc, run by the collection step of anything that allocates: lua_createtable,
 * lua_newuserdatauv, lua_pushstring / pushfstring, luaL_Buffer, a number converted to a string). That
 * code may close, collect or change any object. So a C pointer taken from a handle (on_lua_checkhandle
 * and the class wrappers) is only used until the next such call, and:
 *  (a) a function reads and copies ALL its arguments (points, numbers, strings, options, lists) before
 *      it takes a pointer from any handle; checks that need the object (a tile index in range) run on
 *      the copies afterwards;
 *  (b) a function that, holding pointers, must still make such calls (it builds result tables from what
 *      the object holds, or allocates a buffer the object fills) runs that part in on_lua_pinned: the
 *      objects are pinned (`pins`) for it: a close (from a finalizer or a metamethod) is deferred to the
 *      moment the pin drops, at the end of the call (the object reads as closed meanwhile); changes
 *      raise as while busy (in a finalizer, Lua swallows that error with a warning). The pinned part
 *      runs protected, so an error in it (out of memory) unpins before it is raised again.
 * Results made from values already copied out of the objects (into C locals or a Lua buffer) need no
 * pin: once a function has used its pointers for the last time, it may allocate freely. */
typedef struct on_lhandle {
    void *p;
    unsigned busy;
    unsigned held;
    const char *held_msg;
    unsigned pins;                /* on_lua_pinned calls running with the object pinned */
    int closing;                  /* a close came while pinned: done when the last pin drops */
    const struct on_lclass *cls;  /* set by on_lua_newhandle */
} on_lhandle;

typedef struct on_lclass {
    const char *name;                          /* the metatable's name, e.g. "octonav.tree" */
    const char *busy_msg;                      /* the error while busy, e.g. "tree is in use by a running search" */
    void (*destroy)(on_lhandle *h);            /* free h->p (and what the type keeps beside it) */
    void (*describe)(lua_State *L, on_lhandle *h); /* push the __tostring text of an open object */
} on_lclass;

/* Register the class's metatable (__index = methods, __name, shared __gc/__close/__tostring and the
 * `close` method); leaves nothing on the stack. */
void on_lua_newclass(lua_State *L, const on_lclass *c, const luaL_Reg *methods);
/* A new closed handle of `size` bytes (zeroed, at least sizeof(on_lhandle)) with nuv user values,
 * pushed with its metatable. */
on_lhandle *on_lua_newhandle(lua_State *L, const on_lclass *c, size_t size, int nuv);
/* The open handle at idx; raises "bad argument" for another type and "attempt to use a closed NAME"
 * (also once a deferred close is pending). */
on_lhandle *on_lua_checkhandle(lua_State *L, int idx, const on_lclass *c);
/* Rule (a) in two steps without a second type check (for hot calls): the handle at idx of class c,
 * open or closed (raises "bad argument" for another type; its memory lives while the value stays on
 * the stack), then, once the arguments are read, that handle open (else raises as on_lua_checkhandle). */
on_lhandle *on_lua_checktype(lua_State *L, int idx, const on_lclass *c);
on_lhandle *on_lua_checkopen(lua_State *L, on_lhandle *h);
/* The same, and raises "FNAME: BUSY_MSG" while a search uses it or it is pinned (for calls that change it). */
on_lhandle *on_lua_checkidle(lua_State *L, int idx, const on_lclass *c, const char *fname);
/* The open handle at idx, or NULL (another type, or closed). */
on_lhandle *on_lua_testhandle(lua_State *L, int idx, const on_lclass *c);
/* Rule (b): runs body(L, ctx) protected with the n open handles hs[] pinned, and returns its results
 * (left on top of the stack; the caller returns this count). body sees the caller's stack as it was
 * (the same indices). On return, or on an error in body (raised again here), every pin is dropped and
 * a close deferred meanwhile takes effect. */
typedef int (*on_lua_body)(lua_State *L, void *ctx);
int on_lua_pinned(lua_State *L, on_lhandle *const *hs, int n, on_lua_body body, void *ctx);
/* Add methods to the class registered as `mtname` (a class whose methods come from several files). */
void on_lua_addmethods(lua_State *L, const char *mtname, const luaL_Reg *methods);

/* The tree class, for the other binding files. */
#define ON_TREE_MT "octonav.tree"
extern const on_lclass on_lua_tree_class;
on_tree *on_lua_checktree(lua_State *L, int idx);
/* The open tree at idx, or NULL. */
on_tree *on_lua_testtree(lua_State *L, int idx);
/* Raise "FNAME: tree is in use by a running search" while a search reads the tree at idx (for calls
 * that change the tree: loads, unloads, edits). */
on_tree *on_lua_checktree_idle(lua_State *L, int idx, const char *fname);
/* The tile of t given as integer arguments idx, idx+1, idx+2 (i, j, k); raises naming the argument
 * out of range. */
uint32_t on_lua_checktile(lua_State *L, const on_tree *t, int idx);
/* Raise "FNAME: out of memory" or "FNAME: invalid argument" for those failures (misuse, or no
 * memory); any other status returns, for the caller to answer nil, reason. */
void on_lua_checkstatus(lua_State *L, on_status s, const char *fname);

/* Push on_tree_locate's status as locate_status answers it: "free", "blocked", "unloaded" or
 * "outside" (an interned literal: nothing allocated). */
static inline void on_lua_push_locate_status(lua_State *L, on_status s)
{
    if (on_ok(s))
        lua_pushliteral(L, "free");
    else if (s & ON_BLOCKED)
        lua_pushliteral(L, "blocked");
    else if (s & ON_UNLOADED)
        lua_pushliteral(L, "unloaded");
    else
        lua_pushliteral(L, "outside");
}

#endif
