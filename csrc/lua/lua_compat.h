/*
 * lua_compat.h -- the Lua 5.4 C API the binding uses, on Lua 5.1, LuaJIT 2.1, 5.2 and 5.3 (issue 34).
 * Included by lua_util.h after lua.h and lauxlib.h, so every binding file is written against 5.4 and
 * builds unchanged on each version; on 5.4 this header adds nothing.
 *
 * Why a header of our own and not Debian's lua-compat53 (compat-5.3.h): that one stops at 5.3 (no
 * lua_newuserdatauv / user values, the 5.4 API the binding uses most), it would be a build dependency
 * for every rock user outside Debian (LuaRocks' build cannot fetch a C header), and it carries far more
 * than the ~25 calls below. Each replacement is a static inline function named onc_* with the 5.4 name
 * defined to it, so a version that has the function (LuaJIT has luaL_setfuncs, lua_tonumberx...) still
 * gets the one behaviour written here.
 *
 * Behaviour kept from 5.4 (tested by spec/82-lua_versions_spec.lua on every version):
 *  - integers: before 5.3 every number is a double. lua_tointegerx, lua_tointeger, luaL_checkinteger and
 *    luaL_optinteger accept a number only when it is integral and inside lua_Integer's range, as 5.3+
 *    does for a float (1.5 raises "number has no integer representation"; 5.1's API truncates it);
 *    lua_isinteger answers true for an integral number (there is no float 2.0 apart from an integer 2).
 *  - lua_pushfstring / luaL_error understand %I (lua_Integer), which 5.1 and 5.2 lack (their own
 *    versions would leave the argument unread and misread the ones after it).
 *  - lua_getfield, lua_rawget, lua_rawgeti, lua_gettable return the type pushed, as since 5.3.
 *  - user values (lua_newuserdatauv, lua_getiuservalue, lua_setiuservalue): kept in one table per
 *    userdata, its environment on 5.1 / LuaJIT and its user value on 5.2 / 5.3 (a userdata made with
 *    nuv = 0 has none: lua_getiuservalue then pushes nil and answers LUA_TNONE, as on 5.4).
 *  - lua_Unsigned is 64 bits wide (5.2's is 32).
 */
#ifndef OCTONAV_LUA_COMPAT_H
#define OCTONAV_LUA_COMPAT_H

#include <lauxlib.h>
#include <lua.h>

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if LUA_VERSION_NUM < 502 /* ---- Lua 5.1 and LuaJIT 2.1 ---------------------------------------------- */

#ifndef LUA_OK
#define LUA_OK 0
#endif

static inline int onc_absindex(lua_State *L, int i)
{
    return (i > 0 || i <= LUA_REGISTRYINDEX) ? i : lua_gettop(L) + i + 1;
}
#undef lua_absindex
#define lua_absindex onc_absindex
#undef lua_rawlen
#define lua_rawlen(L, i) lua_objlen((L), (i))

static inline lua_Number onc_tonumberx(lua_State *L, int i, int *isnum)
{
    lua_Number n = lua_tonumber(L, i);
    if (isnum) *isnum = (n != 0 || lua_isnumber(L, i));
    return n;
}
#undef lua_tonumberx
#define lua_tonumberx onc_tonumberx

static inline void onc_setfuncs(lua_State *L, const luaL_Reg *l, int nup)
{
    luaL_checkstack(L, nup, "too many upvalues");
    for (; l->name; l++) {
        if (l->func) {
            for (int i = 0; i < nup; i++) lua_pushvalue(L, -nup);
            lua_pushcclosure(L, l->func, nup);
        } else {
            lua_pushboolean(L, 0); /* a placeholder, as 5.4 */
        }
        lua_setfield(L, -(nup + 2), l->name);
    }
    lua_pop(L, nup);
}
#undef luaL_setfuncs
#define luaL_setfuncs onc_setfuncs
#undef luaL_newlibtable
#define luaL_newlibtable(L, l) lua_createtable((L), 0, (int)(sizeof(l) / sizeof((l)[0])) - 1)
#undef luaL_newlib
#define luaL_newlib(L, l) (luaL_newlibtable(L, l), luaL_setfuncs((L), (l), 0))

static inline void *onc_testudata(lua_State *L, int i, const char *tname)
{
    void *p = lua_touserdata(L, i);
    if (p == NULL || !lua_getmetatable(L, i)) return NULL;
    lua_getfield(L, LUA_REGISTRYINDEX, tname);
    if (!lua_rawequal(L, -1, -2)) p = NULL;
    lua_pop(L, 2);
    return p;
}
#undef luaL_testudata
#define luaL_testudata onc_testudata

static inline void onc_setmetatable(lua_State *L, const char *tname)
{
    lua_getfield(L, LUA_REGISTRYINDEX, tname);
    lua_setmetatable(L, -2);
}
#undef luaL_setmetatable
#define luaL_setmetatable onc_setmetatable

static inline int onc_getsubtable(lua_State *L, int i, const char *fname)
{
    i = onc_absindex(L, i);
    lua_getfield(L, i, fname);
    if (lua_type(L, -1) == LUA_TTABLE) return 1;
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, i, fname);
    return 0;
}
#undef luaL_getsubtable
#define luaL_getsubtable onc_getsubtable

/* "NAME: 0x..." with the metatable's __name, else the type name, as 5.4 */
static inline const char *onc_tolstring(lua_State *L, int i, size_t *len)
{
    i = onc_absindex(L, i);
    if (luaL_callmeta(L, i, "__tostring")) {
        if (!lua_isstring(L, -1)) luaL_error(L, "'__tostring' must return a string");
    } else {
        switch (lua_type(L, i)) {
        case LUA_TNUMBER:
        case LUA_TSTRING: lua_pushvalue(L, i); break;
        case LUA_TBOOLEAN: lua_pushstring(L, lua_toboolean(L, i) ? "true" : "false"); break;
        case LUA_TNIL: lua_pushliteral(L, "nil"); break;
        default: {
            int named = luaL_getmetafield(L, i, "__name");
            const char *kind = (named && lua_type(L, -1) == LUA_TSTRING) ? lua_tostring(L, -1) : luaL_typename(L, i);
            lua_pushfstring(L, "%s: %p", kind, lua_topointer(L, i));
            if (named) lua_remove(L, -2);
            break;
        }
        }
    }
    return lua_tolstring(L, -1, len);
}
#undef luaL_tolstring
#define luaL_tolstring onc_tolstring

/* A buffer of sz bytes written in place: a userdata on the stack (where 5.4 keeps its box), its
 * address kept in the buffer's position pointer, which nothing else reads here. */
static inline char *onc_buffinitsize(lua_State *L, luaL_Buffer *b, size_t sz)
{
    luaL_buffinit(L, b);
    b->p = (char *)lua_newuserdata(L, sz ? sz : 1);
    return b->p;
}
static inline void onc_pushresultsize(luaL_Buffer *b, size_t sz)
{
    lua_pushlstring(b->L, b->p, sz);
    lua_remove(b->L, -2);
}
#undef luaL_buffinitsize
#define luaL_buffinitsize onc_buffinitsize
#undef luaL_pushresultsize
#define luaL_pushresultsize onc_pushresultsize

/* as 5.2+: a __len metamethod first (5.1's lua_objlen ignores it), and an integer */
static inline lua_Integer onc_tointegerx(lua_State *L, int i, int *isnum);
static inline lua_Integer onc_len(lua_State *L, int i)
{
    if (luaL_callmeta(L, i, "__len")) {
        int ok;
        lua_Integer n = onc_tointegerx(L, -1, &ok);
        if (!ok) luaL_error(L, "object length is not an integer");
        lua_pop(L, 1);
        return n;
    }
    return (lua_Integer)lua_objlen(L, i);
}
#undef luaL_len
#define luaL_len onc_len

#endif /* < 502 */

#if LUA_VERSION_NUM < 503
/* luaL_getmetafield answers the field's type (LUA_TNIL, pushing nothing, when absent), as since 5.3 */
static inline int onc_getmetafield(lua_State *L, int obj, const char *e)
{
    if (!luaL_getmetafield(L, obj, e)) return LUA_TNIL;
    return lua_type(L, -1);
}
#undef luaL_getmetafield
#define luaL_getmetafield onc_getmetafield
#endif

#if LUA_VERSION_NUM < 504 /* ---- argument errors named as 5.4 names them --------------------------------- */

/* Before 5.4 a C function called in a tail call (`return t:add_box(p)`) has no name in the debug
 * information (5.1 and LuaJIT say '?', or the name of the Lua function it replaced), and the argument
 * number then counts self. on_lua_compat_open records every function of the module and every class
 * method in a registry table (function -> name, ":name" for a method); where the debug information has
 * no name for the function, or another name, argument errors take the name from it, and a method's
 * arguments are counted without self, as 5.4 does (a method called straight from pcall is named too,
 * where 5.4 says '?'). The luaL_check* and
 * luaL_opt* functions the binding uses are redefined here to raise through it. */
#define ONC_NAMES "octonav.compat.names"
static inline int onc_argerror(lua_State *L, int arg, const char *extramsg)
{
    lua_Debug ar;
    if (!lua_getstack(L, 0, &ar)) return luaL_error(L, "bad argument #%d (%s)", arg, extramsg);
    lua_getinfo(L, "nf", &ar);
    const char *name = NULL;
    int method = 0;
    lua_getfield(L, LUA_REGISTRYINDEX, ONC_NAMES);
    if (lua_type(L, -1) == LUA_TTABLE) {
        lua_pushvalue(L, -2);
        lua_rawget(L, -2);
        if (lua_type(L, -1) == LUA_TSTRING) {
            name = lua_tostring(L, -1); /* (the table keeps the string) */
            if (name[0] == ':') {
                method = 1;
                name++;
            }
        }
    }
    /* the debug information's name when it names this function (a method only when called as one);
     * ours when it has none, or names the Lua function this one replaced in a tail call */
    if (ar.name && (!name || strcmp(ar.name, name) == 0)) {
        name = ar.name;
        method = ar.namewhat && strcmp(ar.namewhat, "method") == 0;
    }
    if (!name) name = "?";
    if (method) {
        arg--;
        if (arg == 0) return luaL_error(L, "calling '%s' on bad self (%s)", name, extramsg);
    }
    return luaL_error(L, "bad argument #%d to '%s' (%s)", arg, name, extramsg);
}
#undef luaL_argerror
#define luaL_argerror onc_argerror

/* "EXPECTED expected, got NAME" with the value's __name, as 5.4 */
static inline int onc_typeerror(lua_State *L, int arg, const char *expected)
{
    const char *got = luaL_typename(L, arg);
    if (luaL_getmetafield(L, arg, "__name")) {
        if (lua_type(L, -1) == LUA_TSTRING) got = lua_tostring(L, -1);
    } else if (lua_type(L, arg) == LUA_TLIGHTUSERDATA) {
        got = "light userdata";
    }
    return onc_argerror(L, arg, lua_pushfstring(L, "%s expected, got %s", expected, got));
}
static inline lua_Number onc_checknumber(lua_State *L, int arg)
{
    int ok;
    lua_Number n = lua_tonumberx(L, arg, &ok);
    if (!ok) onc_typeerror(L, arg, "number");
    return n;
}
static inline lua_Number onc_optnumber(lua_State *L, int arg, lua_Number def)
{
    return lua_isnoneornil(L, arg) ? def : onc_checknumber(L, arg);
}
static inline const char *onc_checklstring(lua_State *L, int arg, size_t *len)
{
    const char *s = lua_tolstring(L, arg, len);
    if (!s) onc_typeerror(L, arg, "string");
    return s;
}
static inline const char *onc_optlstring(lua_State *L, int arg, const char *def, size_t *len)
{
    if (lua_isnoneornil(L, arg)) {
        if (len) *len = def ? strlen(def) : 0;
        return def;
    }
    return onc_checklstring(L, arg, len);
}
static inline void onc_checktype(lua_State *L, int arg, int t)
{
    if (lua_type(L, arg) != t) onc_typeerror(L, arg, lua_typename(L, t));
}
static inline void onc_checkany(lua_State *L, int arg)
{
    if (lua_type(L, arg) == LUA_TNONE) onc_argerror(L, arg, "value expected");
}
static inline void *onc_checkudata(lua_State *L, int arg, const char *tname)
{
    void *p = luaL_testudata(L, arg, tname);
    if (!p) onc_typeerror(L, arg, tname);
    return p;
}
static inline int onc_checkoption(lua_State *L, int arg, const char *def, const char *const lst[])
{
    const char *name = def ? onc_optlstring(L, arg, def, NULL) : onc_checklstring(L, arg, NULL);
    for (int i = 0; lst[i]; i++)
        if (strcmp(lst[i], name) == 0) return i;
    return onc_argerror(L, arg, lua_pushfstring(L, "invalid option '%s'", name));
}
#undef luaL_checknumber
#define luaL_checknumber onc_checknumber
#undef luaL_optnumber
#define luaL_optnumber onc_optnumber
#undef luaL_checklstring
#define luaL_checklstring onc_checklstring
/* through the luaL_checklstring / luaL_optlstring names, as 5.4's lauxlib.h writes them: a file that
 * redefines those (lua_util.h: the binding's "tree:save: argument #1: ..." messages) gets its own
 * messages from these too, as on 5.4 */
#undef luaL_checkstring
#define luaL_checkstring(L, n) luaL_checklstring((L), (n), NULL)
#undef luaL_optlstring
#define luaL_optlstring onc_optlstring
#undef luaL_optstring
#define luaL_optstring(L, n, d) luaL_optlstring((L), (n), (d), NULL)
#undef luaL_checktype
#define luaL_checktype onc_checktype
#undef luaL_checkany
#define luaL_checkany onc_checkany
#undef luaL_checkudata
#define luaL_checkudata onc_checkudata
#undef luaL_checkoption
#define luaL_checkoption onc_checkoption

/* __name in every metatable made by luaL_newmetatable, as 5.3+ (5.1 and 5.2 leave it out) */
static inline int onc_newmetatable(lua_State *L, const char *tname)
{
    if (!luaL_newmetatable(L, tname)) return 0;
    lua_pushstring(L, tname);
    lua_setfield(L, -2, "__name");
    return 1;
}
#undef luaL_newmetatable
#define luaL_newmetatable onc_newmetatable

#endif /* < 504 */

#if LUA_VERSION_NUM < 503 /* ---- Lua 5.1, LuaJIT 2.1 and 5.2 ------------------------------------------ */

typedef unsigned long long onc_Unsigned;
#undef lua_Unsigned
#define lua_Unsigned onc_Unsigned

/* v when the number at i is integral and inside lua_Integer's range (lua_Integer is ptrdiff_t before
 * 5.3); else 0 and *isnum = 0 */
static inline lua_Integer onc_tointegerx(lua_State *L, int i, int *isnum)
{
    int ok = 0;
    lua_Number n = lua_tonumber(L, i);
    lua_Integer v = 0;
    if ((n != 0 || lua_isnumber(L, i)) && n == floor(n) && n >= (lua_Number)PTRDIFF_MIN &&
        n < -(lua_Number)PTRDIFF_MIN) {
        v = (lua_Integer)n;
        ok = 1;
    }
    if (isnum) *isnum = ok;
    return v;
}
#undef lua_tointegerx
#define lua_tointegerx onc_tointegerx
#undef lua_tointeger
#define lua_tointeger(L, i) onc_tointegerx((L), (i), NULL)

static inline int onc_isinteger(lua_State *L, int i)
{
    int ok;
    if (lua_type(L, i) != LUA_TNUMBER) return 0;
    onc_tointegerx(L, i, &ok);
    return ok;
}
#undef lua_isinteger
#define lua_isinteger onc_isinteger

static inline int onc_getfield(lua_State *L, int i, const char *k)
{
    lua_getfield(L, i, k);
    return lua_type(L, -1);
}
static inline int onc_rawget(lua_State *L, int i)
{
    lua_rawget(L, i);
    return lua_type(L, -1);
}
static inline int onc_rawgeti(lua_State *L, int i, lua_Integer n)
{
    lua_rawgeti(L, i, (int)n);
    return lua_type(L, -1);
}
static inline int onc_gettable(lua_State *L, int i)
{
    lua_gettable(L, i);
    return lua_type(L, -1);
}
#define lua_getfield onc_getfield
#define lua_rawget onc_rawget
#define lua_rawgeti onc_rawgeti
#define lua_gettable onc_gettable
#ifndef LUA_LOADED_TABLE
#define LUA_LOADED_TABLE "_LOADED" /* package.loaded in the registry, as 5.3+ names it */
#endif

static inline int onc_geti(lua_State *L, int i, lua_Integer n)
{
    i = lua_absindex(L, i);
    lua_pushnumber(L, (lua_Number)n);
    return lua_gettable(L, i);
}
#undef lua_geti
#define lua_geti onc_geti


static inline lua_Integer onc_checkinteger(lua_State *L, int arg)
{
    int ok;
    lua_Integer v = onc_tointegerx(L, arg, &ok);
    if (!ok) {
        if (lua_isnumber(L, arg)) luaL_argerror(L, arg, "number has no integer representation");
        else onc_typeerror(L, arg, "number");
    }
    return v;
}
static inline lua_Integer onc_optinteger(lua_State *L, int arg, lua_Integer def)
{
    return lua_isnoneornil(L, arg) ? def : onc_checkinteger(L, arg);
}
#undef luaL_checkinteger
#define luaL_checkinteger onc_checkinteger
#undef luaL_optinteger
#define luaL_optinteger onc_optinteger

/* lua_pushfstring with 5.4's conversions: %s %d %I %f %p %c %U %% (pieces pushed, then joined) */
static inline const char *onc_pushvfstring(lua_State *L, const char *fmt, va_list ap)
{
    int n = 0;
    char tmp[64];
    for (;;) {
        const char *e = strchr(fmt, '%');
        luaL_checkstack(L, 3, "pushfstring");
        if (e == NULL) break;
        lua_pushlstring(L, fmt, (size_t)(e - fmt));
        n++;
        switch (e[1]) {
        case 's': {
            const char *s = va_arg(ap, const char *);
            lua_pushstring(L, s ? s : "(null)");
            break;
        }
        case 'd': snprintf(tmp, sizeof tmp, "%d", va_arg(ap, int)); lua_pushstring(L, tmp); break;
        case 'I': snprintf(tmp, sizeof tmp, "%lld", (long long)va_arg(ap, lua_Integer)); lua_pushstring(L, tmp); break;
        case 'f': snprintf(tmp, sizeof tmp, "%.14g", (double)va_arg(ap, lua_Number)); lua_pushstring(L, tmp); break;
        case 'p': snprintf(tmp, sizeof tmp, "%p", va_arg(ap, void *)); lua_pushstring(L, tmp); break;
        case 'c': tmp[0] = (char)va_arg(ap, int); lua_pushlstring(L, tmp, 1); break;
        case 'U': {
            unsigned long x = va_arg(ap, unsigned long);
            int k = 0;
            if (x < 0x80) tmp[k++] = (char)x;
            else if (x < 0x800) { tmp[k++] = (char)(0xC0 | (x >> 6)); tmp[k++] = (char)(0x80 | (x & 0x3F)); }
            else if (x < 0x10000) {
                tmp[k++] = (char)(0xE0 | (x >> 12)); tmp[k++] = (char)(0x80 | ((x >> 6) & 0x3F));
                tmp[k++] = (char)(0x80 | (x & 0x3F));
            } else {
                tmp[k++] = (char)(0xF0 | ((x >> 18) & 0x07)); tmp[k++] = (char)(0x80 | ((x >> 12) & 0x3F));
                tmp[k++] = (char)(0x80 | ((x >> 6) & 0x3F)); tmp[k++] = (char)(0x80 | (x & 0x3F));
            }
            lua_pushlstring(L, tmp, (size_t)k);
            break;
        }
        case '%': lua_pushliteral(L, "%"); break;
        default:
            lua_pop(L, n);
            luaL_error(L, "invalid conversion '%%%c' to 'lua_pushfstring'", e[1] ? e[1] : '?');
            return NULL;
        }
        n++;
        fmt = e + 2;
    }
    lua_pushstring(L, fmt);
    lua_concat(L, n + 1);
    return lua_tostring(L, -1);
}
static inline const char *onc_pushfstring(lua_State *L, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const char *s = onc_pushvfstring(L, fmt, ap);
    va_end(ap);
    return s;
}
static inline int onc_error(lua_State *L, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    luaL_where(L, 1);
    onc_pushvfstring(L, fmt, ap);
    va_end(ap);
    lua_concat(L, 2);
    return lua_error(L);
}
#undef lua_pushvfstring
#define lua_pushvfstring onc_pushvfstring
#undef lua_pushfstring
#define lua_pushfstring onc_pushfstring
#undef luaL_error
#define luaL_error onc_error

#endif /* < 503 */


#if LUA_VERSION_NUM < 504 /* ---- every version before 5.4: user values ------------------------------ */

#if LUA_VERSION_NUM < 502
#define onc_getuvtable(L, i) lua_getfenv((L), (i))
#define onc_setuvtable(L, i) lua_setfenv((L), (i))
#else
#define onc_getuvtable(L, i) lua_getuservalue((L), (i))
#define onc_setuvtable(L, i) lua_setuservalue((L), (i))
#endif

static inline void *onc_newuserdatauv(lua_State *L, size_t sz, int nuv)
{
    void *p = lua_newuserdata(L, sz);
    if (nuv > 0) {
        lua_createtable(L, nuv, 1);
        lua_pushinteger(L, nuv);
        lua_setfield(L, -2, "n");
        onc_setuvtable(L, -2);
    }
    return p;
}

/* the table of user values of the userdata at i pushed, or nothing and 0 (none, or not a userdata) */
static inline int onc_uvtable(lua_State *L, int i)
{
    if (lua_type(L, i) != LUA_TUSERDATA) return 0;
    onc_getuvtable(L, i);
    if (lua_type(L, -1) == LUA_TTABLE) {
        lua_getfield(L, -1, "n");
        int ours = lua_type(L, -1) == LUA_TNUMBER; /* 5.1 gives every userdata an environment */
        lua_pop(L, 1);
        if (ours) return 1;
    }
    lua_pop(L, 1);
    return 0;
}

static inline int onc_getiuservalue(lua_State *L, int i, int n)
{
    i = lua_absindex(L, i);
    if (!onc_uvtable(L, i)) {
        lua_pushnil(L);
        return LUA_TNONE;
    }
    lua_getfield(L, -1, "n");
    lua_Integer max = lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (n < 1 || n > max) {
        lua_pop(L, 1);
        lua_pushnil(L);
        return LUA_TNONE;
    }
    lua_rawgeti(L, -1, n);
    lua_remove(L, -2);
    return lua_type(L, -1);
}

static inline int onc_setiuservalue(lua_State *L, int i, int n)
{
    i = lua_absindex(L, i);
    int ok = 0;
    if (onc_uvtable(L, i)) {
        lua_getfield(L, -1, "n");
        lua_Integer max = lua_tointeger(L, -1);
        lua_pop(L, 1);
        if (n >= 1 && n <= max) {
            lua_pushvalue(L, -2);
            lua_rawseti(L, -2, n);
            ok = 1;
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1); /* the value */
    return ok;
}
#undef lua_newuserdatauv
#define lua_newuserdatauv onc_newuserdatauv
#undef lua_getiuservalue
#define lua_getiuservalue onc_getiuservalue
#undef lua_setiuservalue
#define lua_setiuservalue onc_setiuservalue

#endif /* < 504 */

#endif
