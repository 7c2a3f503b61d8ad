/*
 * lua_compat.c -- library functions the Lua layers use that Lua 5.1, LuaJIT 2.1 and 5.2 lack (issue 34;
 * lua/octonav/compat.lua picks them only there, the standard ones on 5.3+):
 *   core.pack(fmt, ...) -> string, core.unpack(fmt, s [, pos]) -> values..., next pos: string.pack /
 *     string.unpack for the formats octonav writes and reads: endianness < > =, b B h H l L j J i[n]
 *     I[n] (n 1..8), f d n, c[n] (a fixed-size string), x (a zero byte); spaces ignored; no alignment
 *     (!) and no variable-length strings (s, z). In C because floats need their bytes (memcpy), and
 *     the view and the debug drawer pack thousands a call. Before 5.3 a number is a double: an
 *     8-byte integer beyond 2^53 in unpack raises (it would be rounded), as does packing a number
 *     that is not an integer where one is expected.
 *   core.xorshift(seed) -> function([n]): the benchmarks' seeded xorshift64* generator (64-bit
 *     unsigned arithmetic, which doubles cannot do): each call the next number in [0, 1), or with n an
 *     integer in 1..n; the same sequence as the Lua 5.3+ code it replaced, on every version.
 *   core.xorshift64(seed) -> function(): the plain xorshift64 (13, 7, 17) from state = seed (bench/crowd.lua),
 *     each call the next number in [0, 1), on every version.
 */
#include "lua_util.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    const char *f;
    int little;
} fmt_state;

/* the next option: its kind ('i' integer, 'u' unsigned, 'f' float, 'd' double, 'c' chars, 'x' pad,
 * 0 end) and size; raises on an unknown option */
static char next_opt(lua_State *L, fmt_state *fs, size_t *size, const char *fname)
{
    for (;;) {
        char c = *fs->f;
        if (c == 0) return 0;
        fs->f++;
        switch (c) {
        case ' ': continue;
        case '<': fs->little = 1; continue;
        case '>': fs->little = 0; continue;
        case '=': {
            const uint16_t one = 1;
            fs->little = *(const uint8_t *)&one == 1;
            continue;
        }
        case 'b': *size = 1; return 'i';
        case 'B': *size = 1; return 'u';
        case 'h': *size = 2; return 'i';
        case 'H': *size = 2; return 'u';
        case 'l': case 'j': *size = 8; return 'i';
        case 'L': case 'J': *size = 8; return 'u';
        case 'f': *size = 4; return 'f';
        case 'd': case 'n': *size = 8; return 'd';
        case 'x': *size = 1; return 'x';
        case 'i': case 'I': case 'c': {
            size_t n = 0;
            int digits = 0;
            while (*fs->f >= '0' && *fs->f <= '9' && n < 100000000) {
                n = n * 10 + (size_t)(*fs->f++ - '0');
                digits = 1;
            }
            if (c == 'c') {
                if (!digits) luaL_error(L, "%s: missing size for format option 'c'", fname);
                *size = n;
                return 'c';
            }
            if (!digits) n = 4;
            if (n < 1 || n > 8) luaL_error(L, "%s: integral size (%d) out of limits [1,8]", fname, (int)n);
            *size = n;
            return c == 'i' ? 'i' : 'u';
        }
        default: luaL_error(L, "%s: invalid format option '%c'", fname, c); return 0;
        }
    }
}

static void put_bytes(luaL_Buffer *b, uint64_t v, size_t size, int little)
{
    char tmp[8];
    for (size_t k = 0; k < size; k++) tmp[little ? k : size - 1 - k] = (char)(v >> (8 * k));
    luaL_addlstring(b, tmp, size);
}

static uint64_t get_bytes(const unsigned char *p, size_t size, int little)
{
    uint64_t v = 0;
    for (size_t k = 0; k < size; k++) v |= (uint64_t)p[little ? k : size - 1 - k] << (8 * k);
    return v;
}

static int l_pack(lua_State *L)
{
    fmt_state fs = {luaL_checkstring(L, 1), 1};
    /* every argument checked before the buffer starts (a luaL_Buffer keeps its own stack slots) */
    int arg = 1, top = lua_gettop(L);
    size_t size;
    char kind;
    fmt_state scan = fs;
    while ((kind = next_opt(L, &scan, &size, "pack")) != 0) {
        if (kind == 'x') continue;
        if (++arg > top) luaL_argerror(L, arg, "no value");
        if (kind == 'c') {
            size_t len;
            luaL_checklstring(L, arg, &len);
            if (len > size) luaL_argerror(L, arg, "string longer than given size");
        } else if (kind == 'f' || kind == 'd') {
            luaL_checknumber(L, arg);
        } else {
            lua_Integer v = luaL_checkinteger(L, arg);
            if (size < 8) {
                lua_Integer lim = (lua_Integer)1 << (size * 8 - 1);
                if (kind == 'u' && (v < 0 || v >= 2 * lim)) luaL_argerror(L, arg, "unsigned overflow");
                if (kind == 'i' && (v < -lim || v >= lim)) luaL_argerror(L, arg, "integer overflow");
            }
        }
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    arg = 1;
    while ((kind = next_opt(L, &fs, &size, "pack")) != 0) {
        switch (kind) {
        case 'x': luaL_addlstring(&b, "", 1); break;
        case 'c': {
            size_t len;
            const char *s = lua_tolstring(L, ++arg, &len);
            luaL_addlstring(&b, s, len);
            for (; len < size; len++) luaL_addlstring(&b, "", 1);
            break;
        }
        case 'f': {
            float x = (float)lua_tonumber(L, ++arg);
            uint32_t u;
            memcpy(&u, &x, 4);
            put_bytes(&b, u, 4, fs.little);
            break;
        }
        case 'd': {
            double x = (double)lua_tonumber(L, ++arg);
            uint64_t u;
            memcpy(&u, &x, 8);
            put_bytes(&b, u, 8, fs.little);
            break;
        }
        default: put_bytes(&b, (uint64_t)lua_tointeger(L, ++arg), size, fs.little); break;
        }
    }
    luaL_pushresult(&b);
    return 1;
}

static int l_unpack(lua_State *L)
{
    fmt_state fs = {luaL_checkstring(L, 1), 1};
    size_t len;
    const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 2, &len);
    lua_Integer pos = luaL_optinteger(L, 3, 1);
    if (pos < 0) pos = (lua_Integer)len + pos + 1;
    if (pos < 1 || (size_t)(pos - 1) > len) luaL_argerror(L, 3, "initial position out of string");
    size_t at = (size_t)(pos - 1), size;
    int n = 0;
    char kind;
    while ((kind = next_opt(L, &fs, &size, "unpack")) != 0) {
        if (size > len - at) luaL_argerror(L, 2, "data string too short");
        luaL_checkstack(L, 2, "too many results");
        const unsigned char *p = s + at;
        at += size;
        switch (kind) {
        case 'x': continue;
        case 'c': lua_pushlstring(L, (const char *)p, size); break;
        case 'f': {
            uint32_t u = (uint32_t)get_bytes(p, 4, fs.little);
            float x;
            memcpy(&x, &u, 4);
            lua_pushnumber(L, (lua_Number)x);
            break;
        }
        case 'd': {
            uint64_t u = get_bytes(p, 8, fs.little);
            double x;
            memcpy(&x, &u, 8);
            lua_pushnumber(L, (lua_Number)x);
            break;
        }
        default: {
            uint64_t u = get_bytes(p, size, fs.little);
            int64_t v;
            if (kind == 'i' && size < 8 && (u >> (size * 8 - 1)) & 1) {
                v = (int64_t)(u | (~(uint64_t)0 << (size * 8))); /* sign-extended */
            } else {
                memcpy(&v, &u, 8);
            }
#if LUA_VERSION_NUM < 503
            if (v > ((int64_t)1 << 53) || v < -((int64_t)1 << 53) || (kind == 'u' && size == 8 && (u >> 63)))
                luaL_error(L, "unpack: an integer beyond 2^53 at byte %d does not fit this Lua's numbers",
                           (int)(p - s) + 1);
#endif
            lua_pushinteger(L, (lua_Integer)v);
            break;
        }
        }
        n++;
    }
    lua_pushinteger(L, (lua_Integer)at + 1);
    return n + 1;
}

static int rng_next(lua_State *L)
{
    uint64_t *st = (uint64_t *)lua_touserdata(L, lua_upvalueindex(1));
    uint64_t s = *st;
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    *st = s;
    double r = (double)((s * UINT64_C(0x2545F4914F6CDD1D)) >> 11) / 9007199254740992.0;
    if (lua_isnoneornil(L, 1)) {
        lua_pushnumber(L, r);
    } else {
        lua_Integer n = luaL_checkinteger(L, 1);
        lua_pushinteger(L, (lua_Integer)floor(r * (double)n) + 1);
    }
    return 1;
}

static int l_xorshift(lua_State *L)
{
    lua_Integer seed = luaL_optinteger(L, 1, 1);
    uint64_t *st = (uint64_t *)lua_newuserdatauv(L, sizeof *st, 0);
    *st = (uint64_t)seed * UINT64_C(0x9E3779B97F4A7C15) | 1;
    lua_pushcclosure(L, rng_next, 1);
    return 1;
}

#if LUA_VERSION_NUM < 504
/* names[f] = prefix .. key for each C function f in the table at idx (not overwriting a name) */
static void name_functions(lua_State *L, int names, int idx, const char *prefix)
{
    idx = lua_absindex(L, idx);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_iscfunction(L, -1)) {
            lua_pushvalue(L, -1);
            lua_rawget(L, names);
            int named = !lua_isnil(L, -1);
            lua_pop(L, 1);
            if (!named) {
                lua_pushvalue(L, -1);
                lua_pushfstring(L, "%s%s", prefix, lua_tostring(L, -3));
                lua_rawset(L, names);
            }
        }
        lua_pop(L, 1);
    }
}

/* The registry's function -> name table for argument errors before 5.4 (lua_compat.h, onc_argerror):
 * the methods of every octonav class (its metatable's __index, ":name"), then the module's functions
 * and those of its sub-tables (octonav.tree.new: "new"). */
static void name_all(lua_State *L)
{
    int mod = lua_gettop(L);
    lua_newtable(L);
    int names = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, LUA_REGISTRYINDEX)) {
        if (lua_type(L, -2) == LUA_TSTRING && strncmp(lua_tostring(L, -2), "octonav.", 8) == 0 &&
            lua_type(L, -1) == LUA_TTABLE) {
            lua_getfield(L, -1, "__index");
            if (lua_type(L, -1) == LUA_TTABLE) name_functions(L, names, -1, ":");
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    name_functions(L, names, mod, "");
    lua_pushnil(L);
    while (lua_next(L, mod)) {
        if (lua_type(L, -1) == LUA_TTABLE) name_functions(L, names, -1, "");
        lua_pop(L, 1);
    }
    lua_setfield(L, LUA_REGISTRYINDEX, ONC_NAMES);
}
#endif

/* the plain xorshift64 (13, 7, 17) from state = seed: bench/crowd.lua's scenarios (written in 5.3's
 * bit operators before issue 34), the same sequence on every version */
static int rng64_next(lua_State *L)
{
    uint64_t *st = (uint64_t *)lua_touserdata(L, lua_upvalueindex(1));
    uint64_t s = *st;
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    *st = s;
    lua_pushnumber(L, (double)(s >> 11) / 9007199254740992.0);
    return 1;
}

static int l_xorshift64(lua_State *L)
{
    lua_Integer seed = luaL_checkinteger(L, 1);
    if (seed == 0) return luaL_argerror(L, 1, "seed must not be 0 (xorshift64 would draw only 0)");
    uint64_t *st = (uint64_t *)lua_newuserdatauv(L, sizeof *st, 0);
    *st = (uint64_t)seed;
    lua_pushcclosure(L, rng64_next, 1);
    return 1;
}

int on_lua_compat_open(lua_State *L)
{
    static const luaL_Reg funcs[] = {{"pack", l_pack},
                                     {"unpack", l_unpack},
                                     {"xorshift", l_xorshift},
                                     {"xorshift64", l_xorshift64},
                                     {NULL, NULL}};
    luaL_setfuncs(L, funcs, 0);
#if LUA_VERSION_NUM < 504
    name_all(L);
#endif
    return 0;
}
