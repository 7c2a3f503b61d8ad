/*
 * lua_util.c -- argument and option checking shared by the binding files, and the one class helper
 * every userdata type uses (see lua_util.h).
 */
#define ON_LUA_UTIL_IMPL /* (the lauxlib calls of this file are its own: not redirected) */
#include "lua_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors naming the function (lua_util.h) --------------------------------------------------------- */

/* Looks for the function at index fn among the functions of the table at index t (one level, or two
 * when deep: fields of its table fields that are not classes' method tables); on a match pushes
 * PREFIX.KEY (PREFIX.KEY.KEY2) and returns 1. */
static int find_in(lua_State *L, int t, int fn, const char *prefix, int deep)
{
    lua_pushnil(L);
    while (lua_next(L, t)) {
        if (lua_type(L, -2) == LUA_TSTRING) {
            if (lua_rawequal(L, -1, fn)) {
                lua_pushfstring(L, "%s.%s", prefix, lua_tostring(L, -2));
                lua_replace(L, -3);
                lua_pop(L, 1);
                return 1;
            }
            if (deep && lua_type(L, -1) == LUA_TTABLE) {
                const char *sub = lua_pushfstring(L, "%s.%s", prefix, lua_tostring(L, -2));
                if (find_in(L, lua_absindex(L, -2), fn, sub, 0)) {
                    lua_replace(L, -4);
                    lua_pop(L, 2);
                    return 1;
                }
                lua_pop(L, 1);
            }
        }
        lua_pop(L, 1);
    }
    return 0;
}

/* Pushes the name of the function at index fn as the reference writes it and returns 1, or returns 0
 * (nothing pushed) when it is none of octonav's. */
static int name_of(lua_State *L, int fn)
{
    /* a class method: registry["octonav.X.Y"].__index[name] -> "Y:name" */
    lua_pushnil(L);
    while (lua_next(L, LUA_REGISTRYINDEX)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TTABLE &&
            strncmp(lua_tostring(L, -2), "octonav.", 8) == 0) {
            if (lua_getfield(L, -1, "__index") == LUA_TTABLE) {
                lua_pushnil(L);
                while (lua_next(L, -2)) {
                    if (lua_type(L, -2) == LUA_TSTRING && lua_rawequal(L, -1, fn)) {
                        const char *cls = strrchr(lua_tostring(L, -5), '.') + 1;
                        lua_pushfstring(L, "%s:%s", cls, lua_tostring(L, -2));
                        lua_replace(L, -6);
                        lua_pop(L, 4);
                        return 1;
                    }
                    lua_pop(L, 1);
                }
            }
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    /* a module function: octonav.X.f (octonav.tree.new), then octonav.core.X(.f) */
    static const char *const mods[] = {"octonav", "octonav.core"};
    for (int i = 0; i < 2; i++) {
        lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
        int found = lua_getfield(L, -1, mods[i]) == LUA_TTABLE && find_in(L, lua_absindex(L, -1), fn, mods[i], 1);
        if (found) {
            lua_replace(L, -3);
            lua_pop(L, 1);
            return 1;
        }
        lua_pop(L, 2);
    }
    return 0;
}

/* Pushes the name of the running binding function (the first of octonav's among the C functions at
 * the top of the call stack: a pinned call's body runs in a trampoline) and returns 1, else 0. */
static int running_name(lua_State *L)
{
    lua_Debug ar;
    for (int level = 0; level < 3 && lua_getstack(L, level, &ar); level++) {
        lua_getinfo(L, "Sf", &ar);
        if (strcmp(ar.what, "C") != 0) {
            lua_pop(L, 1);
            return 0;
        }
        int found = name_of(L, lua_gettop(L));
        lua_remove(L, found ? -2 : -1);
        if (found) return 1;
    }
    return 0;
}

/* The position of the binding function's caller as luaL_where gives it, or rather of the first caller
 * outside the library's own Lua files (lua/octonav/..., an installed .../5.4/octonav/...: their lines
 * would mean nothing to the user); none when that is a C function (pcall). */
static void push_where(lua_State *L)
{
    lua_Debug ar;
    int level = 1;
    while (lua_getstack(L, level, &ar) && lua_getinfo(L, "S", &ar) &&
           (strstr(ar.source, "lua/octonav/") || strstr(ar.source, "/5.4/octonav/")))
        level++;
    luaL_where(L, level);
}

/* Raises msg (at the top) as "NAME: msg" with NAME the running function's name: kept when msg already
 * starts with it; with strip_bare, replacing a shorter form of it ("flat: ..." -> "planner:flat: ...";
 * not for an argument's message, whose first word may be an argument named as the method, q:start's). */
static int raise_named(lua_State *L, int strip_bare)
{
    int msg = lua_gettop(L);
    if (running_name(L)) {
        const char *name = lua_tostring(L, -1), *m = lua_tostring(L, msg);
        size_t n = strlen(name);
        if ((strncmp(m, name, n) == 0 && m[n] == ':') || strncmp(m, "octonav.", 8) == 0) {
            lua_pop(L, 1); /* (named already: by this name, or by the one the module goes by) */
        } else {
            /* a shorter form of the name the message starts with: "build: " or "route.build: " for
             * octonav.route.build */
            for (const char *s = name; strip_bare && *s; s++) {
                if (*s != '.' && *s != ':') continue;
                size_t b = strlen(s + 1);
                if (strncmp(m, s + 1, b) == 0 && m[b] == ':' && m[b + 1] == ' ') {
                    m += b + 2;
                    break;
                }
            }
            /* or its class alone ("planner: its world graph was closed" from planner:start) */
            const char *colon = strchr(name, ':');
            if (strip_bare && colon && strncmp(m, name, (size_t)(colon - name)) == 0 && m[colon - name] == ':' &&
                m[colon - name + 1] == ' ')
                m += colon - name + 2;
            lua_pushfstring(L, "%s: %s", name, m);
            lua_replace(L, msg);
            lua_pop(L, 1);
        }
    }
    push_where(L);
    lua_insert(L, msg);
    lua_concat(L, 2);
    return lua_error(L);
}

int on_lua_error(lua_State *L, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    lua_pushvfstring(L, fmt, ap);
    va_end(ap);
    return raise_named(L, 1);
}

int on_lua_argerror(lua_State *L, int arg, const char *extramsg)
{
    lua_Debug ar;
    int method = 0;
    if (running_name(L)) {
        method = strchr(lua_tostring(L, -1), ':') != NULL;
        lua_pop(L, 1);
    } else if (lua_getstack(L, 0, &ar)) {
        lua_getinfo(L, "n", &ar);
        method = ar.namewhat && strcmp(ar.namewhat, "method") == 0;
    }
    /* a message that names its argument ("min: point {x, y, z} expected") says which; else its number
     * (self not counted for a method) */
    const char *p = extramsg;
    while (*p == '_' || *p == '.' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))
        p++;
    if ((p > extramsg && p[0] == ':' && p[1] == ' ') || strncmp(extramsg, "option '", 8) == 0 ||
        strncmp(extramsg, "unknown option '", 16) == 0)
        lua_pushstring(L, extramsg);
    else if (method && arg == 1) lua_pushfstring(L, "self: %s", extramsg);
    else lua_pushfstring(L, "argument #%d: %s", method ? arg - 1 : arg, extramsg);
    return raise_named(L, 0);
}

int on_lua_typeerror(lua_State *L, int arg, const char *tname)
{
    const char *got;
    if (luaL_getmetafield(L, arg, "__name") == LUA_TSTRING) got = lua_tostring(L, -1);
    else if (lua_type(L, arg) == LUA_TLIGHTUSERDATA) got = "light userdata";
    else got = luaL_typename(L, arg);
    return on_lua_argerror(L, arg, lua_pushfstring(L, "%s expected, got %s", tname, got));
}

lua_Integer on_lua_checkinteger(lua_State *L, int arg)
{
    int ok = 0;
    lua_Integer v = lua_tointegerx(L, arg, &ok);
    if (!ok) {
        if (lua_isnumber(L, arg)) on_lua_argerror(L, arg, "number has no integer representation");
        else on_lua_typeerror(L, arg, "number");
    }
    return v;
}

lua_Number on_lua_checknumber(lua_State *L, int arg)
{
    int ok = 0;
    lua_Number v = lua_tonumberx(L, arg, &ok);
    if (!ok) on_lua_typeerror(L, arg, "number");
    return v;
}

const char *on_lua_checklstring(lua_State *L, int arg, size_t *len)
{
    const char *s = lua_tolstring(L, arg, len);
    if (!s) on_lua_typeerror(L, arg, "string");
    return s;
}

lua_Integer on_lua_optinteger_arg(lua_State *L, int arg, lua_Integer def)
{
    return lua_isnoneornil(L, arg) ? def : on_lua_checkinteger(L, arg);
}

lua_Number on_lua_optnumber_arg(lua_State *L, int arg, lua_Number def)
{
    return lua_isnoneornil(L, arg) ? def : on_lua_checknumber(L, arg);
}

void on_lua_checktype_arg(lua_State *L, int arg, int t)
{
    if (lua_type(L, arg) != t) on_lua_typeerror(L, arg, lua_typename(L, t));
}

void *on_lua_checkudata(lua_State *L, int arg, const char *tname)
{
    void *p = luaL_testudata(L, arg, tname);
    if (!p) on_lua_typeerror(L, arg, tname);
    return p;
}

int on_lua_checkoption(lua_State *L, int arg, const char *def, const char *const lst[])
{
    const char *name = def && lua_isnoneornil(L, arg) ? def : on_lua_checklstring(L, arg, NULL);
    for (int i = 0; lst[i]; i++)
        if (strcmp(lst[i], name) == 0) return i;
    return on_lua_argerror(L, arg, lua_pushfstring(L, "invalid option '%s'", name));
}

/* ---- arguments and options ------------------------------------------------------------------------------ */

void on_lua_checkpoint(lua_State *L, int idx, const char *name, double out[3])
{
    on_lua_checkpoint_arg(L, idx, idx, name, out);
}

/* Elements 1..3 of the table at idx (absolute) into d (numbers) or n (integers, when n is not NULL),
 * up to the first that is not one: returns its 1-based index, 0 when all are. Raises naming argument
 * argn when idx holds no table ("NAME: WHAT expected, got TYPE"). */
static int get3(lua_State *L, int idx, int argn, const char *name, const char *what, double d[3], lua_Integer n[3])
{
    if (lua_type(L, idx) != LUA_TTABLE)
        on_lua_argerror(L, argn, lua_pushfstring(L, "%s: %s expected, got %s", name, what, luaL_typename(L, idx)));
    for (int i = 0; i < 3; i++) {
        int ok = 0;
        lua_geti(L, idx, i + 1);
        if (n) n[i] = lua_tointegerx(L, -1, &ok);
        else d[i] = (double)lua_tonumberx(L, -1, &ok);
        lua_pop(L, 1);
        if (!ok) return i + 1;
    }
    return 0;
}

void on_lua_checkpoint_arg(lua_State *L, int idx, int argn, const char *name, double out[3])
{
    idx = lua_absindex(L, idx);
    int bad = get3(L, idx, argn, name, "point {x, y, z}", out, NULL);
    for (int i = 0; i < (bad ? bad - 1 : 3); i++) /* the first element at fault is the one named */
        if (!isfinite(out[i]))
            on_lua_argerror(L, argn, lua_pushfstring(L, "%s: coordinates must be finite numbers (element %d)", name, i + 1));
    if (bad)
        on_lua_argerror(L, argn, lua_pushfstring(L, "%s: point {x, y, z} expected, element %d is not a number", name, bad));
}

void on_lua_pushpoint(lua_State *L, const double p[3])
{
    lua_createtable(L, 3, 0);
    for (int i = 0; i < 3; i++) {
        lua_pushnumber(L, p[i]);
        lua_rawseti(L, -2, i + 1);
    }
}

void on_lua_checkint3(lua_State *L, int idx, const char *name, int out[3])
{
    on_lua_checkint3_arg(L, idx, idx, name, out);
}

void on_lua_checkint3_arg(lua_State *L, int idx, int argn, const char *name, int out[3])
{
    idx = lua_absindex(L, idx);
    lua_Integer v[3];
    int bad = get3(L, idx, argn, name, "table of 3 integers", NULL, v);
    for (int i = 0; i < (bad ? bad - 1 : 3); i++)
        if (v[i] < -0x7fffffff || v[i] > 0x7fffffff) {
            bad = i + 1;
            break;
        }
    if (bad) on_lua_argerror(L, argn, lua_pushfstring(L, "%s: element %d must be an integer", name, bad));
    for (int i = 0; i < 3; i++) out[i] = (int)v[i];
}

void on_lua_pushint3(lua_State *L, const int v[3])
{
    lua_createtable(L, 3, 0);
    for (int i = 0; i < 3; i++) {
        lua_pushinteger(L, v[i]);
        lua_rawseti(L, -2, i + 1);
    }
}

void on_lua_checkopts(lua_State *L, int idx, const char *fname, const char *const *known)
{
    if (lua_isnoneornil(L, idx)) return;
    on_lua_checktype_arg(L, idx, LUA_TTABLE);
    idx = lua_absindex(L, idx);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        int ok = 0;
        if (lua_type(L, -1) == LUA_TSTRING) {
            const char *k = lua_tostring(L, -1);
            for (const char *const *p = known; *p; p++)
                if (strcmp(*p, k) == 0) ok = 1;
        }
        if (!ok) {
            if (lua_type(L, -1) == LUA_TSTRING)
                on_lua_error(L, "%s: unknown option '%s'", fname, lua_tostring(L, -1));
            on_lua_error(L, "%s: option names must be strings (got %s)", fname, luaL_typename(L, -1));
        }
    }
}

static int getfield(lua_State *L, int idx, const char *key)
{
    if (lua_isnoneornil(L, idx)) return 0;
    lua_getfield(L, idx, key);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    return 1;
}

double on_lua_optnumber(lua_State *L, int idx, const char *key, double def)
{
    if (!getfield(L, idx, key)) return def;
    int isnum = 0;
    double v = (double)lua_tonumberx(L, -1, &isnum);
    if (!isnum) on_lua_error(L, "option '%s': number expected, got %s", key, luaL_typename(L, -1));
    if (!isfinite(v)) on_lua_error(L, "option '%s': must be a finite number", key);
    lua_pop(L, 1);
    return v;
}

lua_Integer on_lua_optinteger(lua_State *L, int idx, const char *key, lua_Integer def)
{
    if (!getfield(L, idx, key)) return def;
    int isnum = 0;
    lua_Integer v = lua_tointegerx(L, -1, &isnum);
    if (!isnum) on_lua_error(L, "option '%s': integer expected, got %s", key, luaL_typename(L, -1));
    lua_pop(L, 1);
    return v;
}

/* "FNAME: NAME must be a finite number in [LO, HI]" (bounds as %g writes them) */
static const char *range_msg(lua_State *L, const char *fname, const char *name, double lo, double hi)
{
    char b[64];
    snprintf(b, sizeof b, "[%g, %g]", lo, hi);
    return lua_pushfstring(L, "%s: %s must be a finite number in %s", fname, name, b);
}

double on_lua_inrange(lua_State *L, double v, const char *fname, const char *name, double lo, double hi)
{
    if (!(v >= lo && v <= hi)) on_lua_error(L, "%s", range_msg(L, fname, name, lo, hi));
    return v;
}

int on_lua_optboolean(lua_State *L, int idx, const char *key, int def)
{
    if (!getfield(L, idx, key)) return def;
    if (!lua_isboolean(L, -1)) on_lua_error(L, "option '%s': boolean expected, got %s", key, luaL_typename(L, -1));
    int v = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
}

int on_lua_optchoice(lua_State *L, int idx, const char *key, const char *const *names, int def, const char *msg)
{
    if (!getfield(L, idx, key)) return def;
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    for (int i = 0; s && names[i]; i++)
        if (strcmp(s, names[i]) == 0) {
            lua_pop(L, 1);
            return i;
        }
    return on_lua_error(L, "option '%s' must be %s", key, msg);
}

int on_lua_fail(lua_State *L, on_status s, const char *context)
{
    lua_pushnil(L);
    if (context) lua_pushfstring(L, "%s: %s", context, on_status_string(s));
    else lua_pushstring(L, on_status_string(s));
    return 2;
}

double *on_lua_tonumbers(lua_State *L, int idx, lua_Integer n, lua_Integer *bad)
{
    idx = lua_absindex(L, idx);
    *bad = 0;
    double *v = lua_newuserdatauv(L, (size_t)(n > 0 ? n : 1) * sizeof *v, 0);
    for (lua_Integer i = 0; i < n; i++) {
        int isnum;
        lua_geti(L, idx, i + 1);
        v[i] = (double)lua_tonumberx(L, -1, &isnum);
        lua_pop(L, 1);
        if (!isnum || !isfinite(v[i])) {
            *bad = i + 1;
            return NULL;
        }
    }
    return v;
}

double *on_lua_checksegments(lua_State *L, int idx, size_t *n)
{
    on_lua_checktype_arg(L, idx, LUA_TTABLE);
    lua_Integer len = luaL_len(L, idx), bad;
    if (len % 6) on_lua_argerror(L, idx, "segments: length must be a multiple of 6 (ax, ay, az, bx, by, bz, ...)");
    if (len < 0 || (lua_Unsigned)len > ((size_t)-1 / 2) / sizeof(double)) on_lua_argerror(L, idx, "segments: too many");
    double *v = on_lua_tonumbers(L, idx, len, &bad);
    if (!v) on_lua_argerror(L, idx, lua_pushfstring(L, "segments: element %I is not a finite number", bad));
    *n = (size_t)(len / 6);
    return v;
}

/* obj:visible(from, to) and obj:visible_many(segments [, results]) for the class and line-of-sight
 * function of the on_lua_visibility in upvalue 1; the arguments are read before the object is taken
 * (rule (a)), and nothing that may run Lua code runs while it is used (rawseti into results cannot). */
static int l_visible(lua_State *L)
{
    const on_lua_visibility *v = lua_touserdata(L, lua_upvalueindex(1));
    double a[3], b[3];
    on_lhandle *h = on_lua_checktype(L, 1, v->c);
    on_lua_checkpoint(L, 2, "from", a);
    on_lua_checkpoint(L, 3, "to", b);
    lua_pushboolean(L, on_ok(v->fn(on_lua_checkopen(L, h)->p, a, b)));
    return 1;
}

static int l_visible_many(lua_State *L)
{
    const on_lua_visibility *v = lua_touserdata(L, lua_upvalueindex(1));
    on_lhandle *h = on_lua_checktype(L, 1, v->c);
    size_t n;
    const double *s = on_lua_checksegments(L, 2, &n);
    int fill = lua_istable(L, 3);
    const void *obj = on_lua_checkopen(L, h)->p;
    lua_Integer clear = 0;
    for (size_t i = 0; i < n; i++) {
        int ok = on_ok(v->fn(obj, s + 6 * i, s + 6 * i + 3));
        clear += ok;
        if (fill) {
            lua_pushboolean(L, ok);
            lua_rawseti(L, 3, (lua_Integer)i + 1);
        }
    }
    lua_pushinteger(L, clear);
    return 1;
}

void on_lua_addvisibility(lua_State *L, const on_lua_visibility *v)
{
    const luaL_Reg methods[] = {{"visible", l_visible}, {"visible_many", l_visible_many}, {NULL, NULL}};
    luaL_getmetatable(L, v->c->name);
    if (lua_getfield(L, -1, "__index") != LUA_TTABLE) on_lua_error(L, "octonav: class %s is not open", v->c->name);
    lua_pushlightuserdata(L, (void *)v);
    luaL_setfuncs(L, methods, 1);
    lua_pop(L, 2);
}

const char *on_lua_reason(on_status s, const on_lua_reason_name *names)
{
    for (; names->name; names++)
        if (s & names->bit) return names->name;
    return on_status_string(s);
}

const on_lua_reason_name on_lua_place_reasons[] = {
    {ON_OUTSIDE, "outside"}, {ON_BLOCKED, "blocked"}, {ON_UNREACHABLE, "unreachable"}, {0, NULL}};

int on_lua_file_result(lua_State *L, on_status s, const char *err, const char *path, const char *fname)
{
    if (on_ok(s)) {
        lua_pushboolean(L, 1);
        return 1;
    }
    if (fname && (s & ON_NO_MEMORY)) return on_lua_error(L, "%s: out of memory", fname);
    lua_pushnil(L);
    if (err && err[0]) lua_pushstring(L, err);
    else lua_pushfstring(L, "%s: %s", path, on_status_string(s));
    return 2;
}

void on_lua_setints(lua_State *L, const char *const *keys, const lua_Integer *v)
{
    for (size_t i = 0; keys[i]; i++) on_lua_setint(L, keys[i], v[i]);
}

uint32_t on_lua_checktile(lua_State *L, const on_tree *t, int idx)
{
    int ijk[3];
    const on_tree_params *p = on_tree_get_params(t);
    for (int i = 0; i < 3; i++) {
        lua_Integer v = on_lua_checkinteger(L, idx + i);
        if (v < 0 || v >= p->tiles[i])
            on_lua_argerror(L, idx + i, lua_pushfstring(L, "tile index out of range (0..%d)", p->tiles[i] - 1));
        ijk[i] = (int)v;
    }
    return on_tree_tile_index(t, ijk);
}

void on_lua_checkstatus(lua_State *L, on_status s, const char *fname)
{
    if (s & ON_NO_MEMORY) on_lua_error(L, "%s: out of memory", fname);
    if (s & ON_INVALID) on_lua_error(L, "%s: invalid argument", fname);
}

void on_lua_setint(lua_State *L, const char *k, lua_Integer v)
{
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
}

void on_lua_setnum(lua_State *L, const char *k, double v)
{
    lua_pushnumber(L, v);
    lua_setfield(L, -2, k);
}

/* The shared metamethods read their class from upvalue 1. */
static const on_lclass *upclass(lua_State *L)
{
    return lua_touserdata(L, lua_upvalueindex(1));
}

on_lhandle *on_lua_testhandle(lua_State *L, int idx, const on_lclass *c)
{
    on_lhandle *h = luaL_testudata(L, idx, c->name);
    return h && h->p && !h->closing ? h : NULL;
}

on_lhandle *on_lua_checkhandle(lua_State *L, int idx, const on_lclass *c)
{
    on_lhandle *h = on_lua_checkudata(L, idx, c->name);
    if (!h->p || h->closing) on_lua_error(L, "attempt to use a closed %s", c->name);
    return h;
}

on_lhandle *on_lua_checktype(lua_State *L, int idx, const on_lclass *c)
{
    return on_lua_checkudata(L, idx, c->name);
}

on_lhandle *on_lua_checkopen(lua_State *L, on_lhandle *h)
{
    if (!h->p || h->closing) on_lua_error(L, "attempt to use a closed %s", h->cls->name);
    return h;
}

on_lhandle *on_lua_checkidle(lua_State *L, int idx, const on_lclass *c, const char *fname)
{
    on_lhandle *h = on_lua_checkhandle(L, idx, c);
    if (h->busy || h->pins) on_lua_error(L, "%s: %s", fname, c->busy_msg);
    return h;
}

on_lhandle *on_lua_newhandle(lua_State *L, const on_lclass *c, size_t size, int nuv)
{
    on_lhandle *h = lua_newuserdatauv(L, size < sizeof *h ? sizeof *h : size, nuv);
    memset(h, 0, size < sizeof *h ? sizeof *h : size);
    h->cls = c;
    luaL_setmetatable(L, c->name);
    return h;
}

/* Free the object of an open handle now. */
static void destroy(on_lhandle *h)
{
    if (h->p) h->cls->destroy(h);
    h->p = NULL;
    h->closing = 0;
}

typedef struct pinned_call {
    on_lua_body body;
    void *ctx;
} pinned_call;

/* The protected part of on_lua_pinned: its context below a copy of the caller's arguments. */
static int pinned_trampoline(lua_State *L)
{
    const pinned_call *pc = lua_touserdata(L, 1);
    lua_remove(L, 1);
    return pc->body(L, pc->ctx);
}

int on_lua_pinned(lua_State *L, on_lhandle *const *hs, int n, on_lua_body body, void *ctx)
{
    int base = lua_gettop(L);
    luaL_checkstack(L, base + 4, "too many arguments");
    pinned_call pc = {body, ctx};
    lua_pushcfunction(L, pinned_trampoline); /* (a light C function: nothing allocated, no Lua run) */
    lua_pushlightuserdata(L, &pc);
    for (int i = 1; i <= base; i++) lua_pushvalue(L, i);
    for (int i = 0; i < n; i++) hs[i]->pins++;
    int st = lua_pcall(L, base + 1, LUA_MULTRET, 0);
    for (int i = 0; i < n; i++)
        if (--hs[i]->pins == 0 && hs[i]->closing && !hs[i]->busy) destroy(hs[i]);
    if (st != LUA_OK) return lua_error(L);
    return lua_gettop(L) - base;
}

/* obj:close() and __close: refused while a search uses the object (it would be freed under it);
 * deferred to the end of the call while a binding call has it pinned (rule (b)). */
static int l_close(lua_State *L)
{
    const on_lclass *c = upclass(L);
    on_lhandle *h = on_lua_checkudata(L, 1, c->name);
    if (h->p && h->busy) return on_lua_error(L, "close: %s", c->busy_msg);
    if (h->p && h->held) return on_lua_error(L, "close: %s", h->held_msg);
    if (h->p && h->pins) h->closing = 1;
    else destroy(h);
    return 0;
}

/* __gc never raises: a busy or pinned object is reachable from the running call, so it is only
 * collected so when the state itself is closed (os.exit(_, true) from a heuristic or a finalizer);
 * then it is left to the OS. */
static int l_gc(lua_State *L)
{
    on_lhandle *h = lua_touserdata(L, 1);
    if (h && !h->busy && !h->pins) destroy(h);
    return 0;
}

static int l_tostring(lua_State *L)
{
    const on_lclass *c = upclass(L);
    on_lhandle *h = on_lua_checkudata(L, 1, c->name);
    if (!h->p || h->closing) lua_pushfstring(L, "%s (closed)", c->name);
    else c->describe(L, h);
    return 1;
}

void on_lua_addmethods(lua_State *L, const char *mtname, const luaL_Reg *methods)
{
    luaL_getmetatable(L, mtname);
    if (lua_getfield(L, -1, "__index") != LUA_TTABLE) on_lua_error(L, "octonav: class %s is not open", mtname);
    luaL_setfuncs(L, methods, 0);
    lua_pop(L, 2);
}

void on_lua_newclass(lua_State *L, const on_lclass *c, const luaL_Reg *methods)
{
    static const luaL_Reg meta[] = {{"__gc", l_gc}, {"__close", l_close}, {"__tostring", l_tostring}, {NULL, NULL}};
    luaL_newmetatable(L, c->name);
    lua_pushlightuserdata(L, (void *)c);
    luaL_setfuncs(L, meta, 1);
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    lua_pushlightuserdata(L, (void *)c);
    lua_pushcclosure(L, l_close, 1);
    lua_setfield(L, -2, "close");
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
}
