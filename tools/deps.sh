#!/usr/bin/env bash
# Installs what octonav needs to build and test when it is missing (Debian): lua5.4, its headers, busted,
# luacheck (lua-check).
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
if [ ${#need[@]} -gt 0 ]; then
  echo "deps: installing ${need[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >&2
  $SUDO apt-get install -y -qq "${need[@]}" >&2
fi
