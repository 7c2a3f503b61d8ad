#!/usr/bin/env bash
# Installs what octonav needs to build and test when it is missing (Debian): lua5.4, its headers, busted,
# luacheck (lua-check); for the other Lua versions CI tests (issue 34: make test LUA=luajit / lua5.1,
# make check-rocks) LuaJIT, Lua 5.1 and their headers, and luarocks (OCTONAV_DEPS_MINIMAL=1 skips those).
# Safe to run often: it does nothing when everything is there.
set -e
need=()
command -v lua5.4 >/dev/null 2>&1 || need+=(lua5.4)
[ -f /usr/include/lua5.4/lua.h ] || need+=(liblua5.4-dev)
command -v busted >/dev/null 2>&1 || need+=(lua-busted)
command -v luacheck >/dev/null 2>&1 || need+=(lua-check)
command -v cc >/dev/null 2>&1 || need+=(gcc)
command -v clang >/dev/null 2>&1 || need+=(clang) # CI builds with clang too, and the fuzzers need it
command -v make >/dev/null 2>&1 || need+=(make)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config) # the Makefile's include flags of each Lua
if [ "${OCTONAV_DEPS_MINIMAL:-0}" != 1 ]; then
  command -v luajit >/dev/null 2>&1 || need+=(luajit)
  [ -f /usr/include/luajit-2.1/lua.h ] || need+=(libluajit-5.1-dev)
  command -v lua5.1 >/dev/null 2>&1 || need+=(lua5.1)
  [ -f /usr/include/lua5.1/lua.h ] || need+=(liblua5.1-0-dev)
  command -v luarocks >/dev/null 2>&1 || need+=(luarocks)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "deps: installing ${need[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >&2
  $SUDO apt-get install -y -qq "${need[@]}" >&2
fi
