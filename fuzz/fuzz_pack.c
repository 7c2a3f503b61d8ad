/*
 * fuzz_pack.c -- libFuzzer target for the pack's Lua parsers (lua/octonav/pack.lua): built twice,
 * PACK_TARGET 1 for the manifest (pack.parse_manifest) and 2 for the graph (pack.parse_graph, against
 * a fixed manifest with two holes and doors). The parsers run in an embedded Lua 5.4 in protected
 * mode; an error raised by a parser (rather than returned as nil, reason) or a result of the wrong
 * shape aborts, which libFuzzer reports as a crash.
 *
 * Each input is parsed twice: as it is (the checksum line checked, so the unsealing paths are fuzzed)
 * and resealed (its last line dropped when it is a "crc32 " line, a correct one appended), so that
 * mutations reach the line parsers instead of failing the checksum. Lua is not instrumented, so a
 * line hook feeds libFuzzer the transitions between executed Lua lines as extra coverage counters:
 * inputs that reach new parser lines are kept.
 */
#include "fileio.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PACK_TARGET
#define PACK_TARGET 1
#endif
#ifndef OCTONAV_LUA_DIR
#define OCTONAV_LUA_DIR "lua"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((section("__libfuzzer_extra_counters"))) static uint8_t lua_cov[1 << 14];
static lua_State *L;
static uint32_t prev_line;

/* The line number alone (pack.lua is nearly all the Lua that runs; a collision with the harness's few
 * lines only blurs the signal), paired with the previous line: an edge, as libFuzzer's own counters. */
static void line_hook(lua_State *Ls, lua_Debug *ar)
{
    (void)Ls;
    uint32_t here = (uint32_t)ar->currentline * 2654435761u;
    lua_cov[((here >> 18) ^ (prev_line >> 19)) % sizeof lua_cov]++;
    prev_line = here;
}

static int l_crc32(lua_State *Ls)
{
    size_t n;
    const char *s = luaL_checklstring(Ls, 1, &n);
    lua_Integer crc = luaL_optinteger(Ls, 2, 0);
    lua_pushinteger(Ls, (lua_Integer)on_crc32((uint32_t)crc, (const uint8_t *)s, n));
    return 1;
}

static int core_loader(lua_State *Ls)
{
    lua_newtable(Ls);
    lua_pushcfunction(Ls, l_crc32);
    lua_setfield(Ls, -2, "crc32");
    return 1;
}

static const char setup[] =
    "local pack = require 'octonav.pack'\n"
    "local m = assert(pack.parse_manifest('m', pack.manifest_text { scale = 0.5, depth = 3,\n"
    "  origin = { 0, 0, 0 }, tiles = { 3, 2, 1 }, radius = 0.25, holes = {\n"
    "  { name = 'cave', kind = 'under_terrain', min = { 1, 1, 1 }, max = { 3, 3, 3 }, scale = 0.25, depth = 2,\n"
    "    origin = { 1, 1, 1 }, tiles = { 2, 2, 2 }, doors = { { inside = { 2, 2, 2 }, outside = { 2, 4, 2 } },\n"
    "    { inside = { 1.5, 2, 2 }, outside = { 0, 2, 2 } } } },\n"
    "  { name = 'pit', kind = 'over_terrain', min = { 5, 0, 0 }, max = { 6, 1, 1 }, scale = 1, depth = 1,\n"
    "    origin = { 5, 0, 0 }, tiles = { 1, 1, 1 }, doors = { { inside = { 5.5, 0.5, 0.5 }, outside = { 7, 0.5, 0.5 } } } },\n"
    "} }))\n"
    "local target = ...\n"
    "local function check(a, b)\n"
    "  if a == nil then assert(type(b) == 'string', 'nil without a reason') return end\n"
    "  assert(type(a) == 'table', 'not a table')\n"
    "end\n"
    "local function reseal(t)\n"
    "  local body = t:gsub('crc32 [^\\n]*\\n?$', '')\n"
    "  if body ~= '' and body:sub(-1) ~= '\\n' then body = body .. '\\n' end\n"
    "  return body .. ('crc32 %08x\\n'):format(pack.crc32(body))\n"
    "end\n"
    "return function(text)\n"
    "  local parse = target == 1 and function(t) return pack.parse_manifest('fuzz', t) end\n"
    "    or function(t) return pack.parse_graph('fuzz', t, m) end\n"
    "  check(parse(text))\n"
    "  check(parse(reseal(text)))\n"
    "end\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    L = luaL_newstate();
    if (!L) abort();
    luaL_openlibs(L);
    lua_getglobal(L, "package");
    const char *dir = getenv("OCTONAV_LUA_DIR");
    if (!dir) dir = OCTONAV_LUA_DIR;
    lua_pushfstring(L, "%s/?.lua;%s/?/init.lua", dir, dir);
    lua_setfield(L, -2, "path");
    lua_getfield(L, -1, "preload");
    lua_pushcfunction(L, core_loader);
    lua_setfield(L, -2, "octonav.core");
    lua_pop(L, 2);
    if (luaL_loadstring(L, setup) != LUA_OK) {
        fprintf(stderr, "fuzz_pack: %s\n", lua_tostring(L, -1));
        abort();
    }
    lua_pushinteger(L, PACK_TARGET);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
        fprintf(stderr, "fuzz_pack: setup: %s\n", lua_tostring(L, -1));
        abort();
    }
    lua_setfield(L, LUA_REGISTRYINDEX, "fuzz_pack_run");
    lua_sethook(L, line_hook, LUA_MASKLINE, 0);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    prev_line = 0;
    lua_getfield(L, LUA_REGISTRYINDEX, "fuzz_pack_run");
    lua_pushlstring(L, (const char *)data, size);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        fprintf(stderr, "fuzz_pack: the parser raised: %s\n", lua_tostring(L, -1));
        abort();
    }
    lua_settop(L, 0);
    return 0;
}
