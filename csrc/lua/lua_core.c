/*
 * lua_core.c -- luaopen_octonav_core: the C module `octonav.core`, assembled from the per-file
 * openers (tree, grid, query, streamer), plus the few helpers the Lua layers need from C: clock,
 * mkdir, isatty, read_obj, crc32, read_file, write_file, link_tree, remove_tree,
 * exchange_dirs. The Lua module `octonav` (lua/octonav/init.lua) wraps it.
 */
#include "fileio.h"
#include "lua_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

__attribute__((visibility("default"))) int luaopen_octonav_core(lua_State *L);

/* core.clock() -> seconds on a monotonic clock, for benchmarks (os.clock is CPU time, coarse). */
static int l_clock(lua_State *L)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec * 1e-9);
    return 1;
}

/* core.thread_clock() -> seconds of CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID): a game
 * thread's own work, without the streamer's or path server's workers nor the time it waited for a core. */
static int l_thread_clock(lua_State *L)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec * 1e-9);
    return 1;
}

/* core.mkdir(path) -> true | nil, err: the directory and its parents (mkdir -p without a shell, so
 * packs can be written where no shell runs and paths need no quoting). */
static int l_mkdir(lua_State *L)
{
    size_t len;
    const char *path = luaL_checklstring(L, 1, &len);
    if (len == 0) luaL_argerror(L, 1, "path must not be empty");
    char *p = malloc(len + 1);
    if (!p) return luaL_error(L, "mkdir: out of memory");
    memcpy(p, path, len + 1);
    int err = 0;
    for (size_t i = 1; i <= len && !err; i++) {
        if (p[i] != '/' && p[i] != '\0') continue;
        char c = p[i];
        p[i] = '\0';
        struct stat st;
        if (mkdir(p, 0777) != 0 && errno != EEXIST) err = errno;
        else if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) err = ENOTDIR;
        p[i] = c;
    }
    free(p);
    if (err) {
        lua_pushnil(L);
        lua_pushfstring(L, "%s: cannot create directory: %s", path, strerror(err));
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* core.read_obj(path) -> vertices, indices (flat arrays, indices 1-based) | nil, "PATH:LINE: reason":
 * the core's OBJ reader for Lua layers that need the triangles themselves (the bake buckets them by tile). */
static int l_read_obj(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    char err[512] = "";
    double *v;
    uint32_t *t;
    size_t nv, nt;
    on_status s = on_obj_read(path, &v, &nv, &t, &nt, err, sizeof err);
    if (!on_ok(s)) {
        if (s & ON_NO_MEMORY) return luaL_error(L, "read_obj: out of memory");
        lua_pushnil(L);
        lua_pushstring(L, err[0] ? err : on_status_string(s));
        return 2;
    }
    lua_createtable(L, (int)(3 * nv), 0);
    for (size_t i = 0; i < 3 * nv; i++) {
        lua_pushnumber(L, v[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_createtable(L, (int)(3 * nt), 0);
    for (size_t i = 0; i < 3 * nt; i++) {
        lua_pushinteger(L, (lua_Integer)t[i] + 1);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    free(v);
    free(t);
    return 2;
}

/* core.crc32(s [, crc]) -> zlib's CRC-32 of a string (the packs' text files use it too). */
static int l_crc32(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    lua_Integer crc = luaL_optinteger(L, 2, 0);
    if (crc < 0 || crc > 0xffffffffLL) luaL_argerror(L, 2, "crc must be 0..2^32-1");
    lua_pushinteger(L, (lua_Integer)on_crc32((uint32_t)crc, (const uint8_t *)s, len));
    return 1;
}

/* core.read_file(path [, max]) -> string | nil, err: a whole regular file, refusing at once what is
 * not one (a FIFO would block io.open's reader forever, /dev/zero never ends) and a file over max
 * bytes (default: no limit) before reading it (fileio.c). */
static int l_read_file(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    lua_Integer max = luaL_optinteger(L, 2, 0);
    if (max < 0) luaL_argerror(L, 2, "max must be >= 0");
    uint8_t *buf;
    size_t len;
    char err[512];
    on_status s = on_read_file_max(path, (size_t)max, &buf, &len, err, sizeof err);
    if (!on_ok(s)) {
        if (s & ON_NO_MEMORY) return luaL_error(L, "read_file: %s", err);
        lua_pushnil(L);
        lua_pushstring(L, err);
        return 2;
    }
    lua_pushlstring(L, (const char *)buf, len);
    free(buf);
    return 1;
}

/* core.write_file(path, data [, sync]) -> true | nil, err: written to a unique temporary beside path,
 * synced (unless sync is false: on_write_file_atomic_sync) and renamed over it (readers never see a
 * partial file; two writers never share a temporary); the error carries the OS's reason ("PATH: cannot
 * write: No space left on device"). */
static int l_write_file(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    size_t len;
    const char *data = luaL_checklstring(L, 2, &len);
    int sync = 1;
    if (!lua_isnoneornil(L, 3)) {
        luaL_checktype(L, 3, LUA_TBOOLEAN);
        sync = lua_toboolean(L, 3);
    }
    char err[512];
    return on_lua_file_result(L, on_write_file_atomic_sync(path, data, len, sync, err, sizeof err), err, path, NULL);
}

/* Directory trees for publishing a pack generation (fileio.h; lua/octonav/bake/publish.lua), each
 * -> true | nil, "PATH: WHAT: REASON":
 * core.link_tree(src, dst), core.remove_tree(path), core.exchange_dirs(next, dir). */
static int l_link_tree(lua_State *L)
{
    const char *src = luaL_checkstring(L, 1), *dst = luaL_checkstring(L, 2);
    char err[512];
    return on_lua_file_result(L, on_link_tree(src, dst, err, sizeof err), err, dst, NULL);
}

static int l_remove_tree(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    char err[512];
    return on_lua_file_result(L, on_remove_tree(path, err, sizeof err), err, path, NULL);
}

static int l_exchange_dirs(lua_State *L)
{
    const char *next = luaL_checkstring(L, 1), *dir = luaL_checkstring(L, 2);
    char err[512];
    return on_lua_file_result(L, on_exchange_dirs(next, dir, err, sizeof err), err, dir, NULL);
}

/* core.isatty(fd) -> boolean (0 stdin, 1 stdout, 2 stderr): for progress bars. */
static int l_isatty(lua_State *L)
{
    lua_Integer fd = luaL_checkinteger(L, 1);
    lua_pushboolean(L, fd >= 0 && fd <= 2 && isatty((int)fd));
    return 1;
}

int on_lua_walk_open(lua_State *L); /* lua_walk.c: core.walker */

int luaopen_octonav_core(lua_State *L)
{
    static const luaL_Reg funcs[] = {{"clock", l_clock}, {"thread_clock", l_thread_clock},         {"mkdir", l_mkdir},       {"read_obj", l_read_obj},
                                     {"crc32", l_crc32},         {"isatty", l_isatty},     {"read_file", l_read_file},
                                     {"write_file", l_write_file}, {"link_tree", l_link_tree},
                                     {"remove_tree", l_remove_tree}, {"exchange_dirs", l_exchange_dirs},
                                     {NULL, NULL}};
    /* the per-file openers: those with a name leave a table for that field; the others add methods
     * to a class opened before them (the tree's edits, cells and points), or set their field
     * themselves (route) */
    static const struct {
        const char *name;
        lua_CFunction open;
    } parts[] = {{"tree", on_lua_tree_open},         {NULL, on_lua_tree_edit_open}, {NULL, on_lua_tree_cells_open},
                 {NULL, on_lua_points_open},         {NULL, on_lua_flat_open},      {"grid", on_lua_grid_open},
                 {"query", on_lua_query_open},       {"streamer", on_lua_streamer_open}, {NULL, on_lua_route_open},
                 {"debug", on_lua_debug_open},       {"pathserver", on_lua_pathserver_open},
                 {"crowd", on_lua_crowd_open},       {"walker", on_lua_walk_open},
                 {NULL, on_lua_compat_open}};
    luaL_newlib(L, funcs);
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        parts[i].open(L);
        if (parts[i].name) lua_setfield(L, -2, parts[i].name);
    }
    lua_pushliteral(L, "0.1.0");
    lua_setfield(L, -2, "version");
    return 1;
}
