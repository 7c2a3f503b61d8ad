/*
 * fuzz_pack.c -- libFuzzer target "manifest" for the pack's Lua manifest parser (pack.parse_manifest in
 * lua/octonav/pack.lua; the pack's other files are C blobs: tile files are the tile target's). The parser runs in one embedded Lua 5.4 state, made once, in protected mode; an error
 * raised by the parser (rather than returned as nil, reason), a result of the wrong shape or an
 * accepted manifest that does not write back to an equal one aborts, which libFuzzer reports as a crash.
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

/* Returns the function run on each input. A manifest that parses must write back (manifest_text) to
 * text that parses to an equal manifest (numbers compared by value: "-0.0" comes back as 0): what the
 * bake writes, world.load reads. */
static const char setup[] =
    "local pack = require 'octonav.pack'\n"
    "local function same(a, b)\n"
    "  if type(a) ~= 'table' or type(b) ~= 'table' then return a == b end\n"
    "  for k, v in pairs(a) do if not same(v, b[k]) then return false end end\n"
    "  for k in pairs(b) do if a[k] == nil then return false end end\n"
    "  return true\n"
    "end\n"
    "local function check(a, b)\n"
    "  if a == nil then assert(type(b) == 'string', 'nil without a reason') return end\n"
    "  assert(type(a) == 'table', 'not a table')\n"
    "  local again = assert(pack.parse_manifest('fuzz', pack.manifest_text(a)))\n"
    "  assert(same(a, again), 'the manifest written back parses to another')\n"
    "end\n"
    "local function reseal(t)\n"
    "  local body = t:gsub('crc32 [^\\n]*\\n?$', '')\n"
    "  if body ~= '' and body:sub(-1) ~= '\\n' then body = body .. '\\n' end\n"
    "  return body .. ('crc32 %08x\\n'):format(pack.crc32(body))\n"
    "end\n"
    "return function(text)\n"
    "  check(pack.parse_manifest('fuzz', text))\n"
    "  check(pack.parse_manifest('fuzz', reseal(text)))\n"
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
    if (lua_pcall(L, 0, 1, 0) != LUA_OK) {
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
