#!/usr/bin/env bash
# Prints the LuaJIT interpreter the specs run on for `make test LUA=luajit` and CI's LuaJIT lane
# (tools/runtests.sh; issue 34, docs/lua-versions.md "LuaJIT bug 829").
#
# Debian 12's luajit package (2.1.0~beta3+git20220320) predates LuaJIT's fix of its bug 829
# (github.com/LuaJIT/LuaJIT/issues/829, fixed upstream on 2022-04-05): a compiled pairs() / next() loop
# whose register allocation swaps next's two results emits a 32-bit `xchg eax, edx`, which cuts the
# 64-bit pointer lj_vm_next returns to 32 bits; the trace then reads through it and the process dies of
# a SIGSEGV. Any Lua code can hit it (the suite died in spec/37's own pairs loop, in 2 of 4 runs of
# specs 00-37), so the library cannot work around it: the suite runs on a LuaJIT without the bug.
#
# Where `luajit` is that Debian package older than the fix, this prints OpenResty's LuaJIT 2.1 from
# Debian's own luajit2 package (2.1-20230119, which has the fix), unpacked once into build/luajit2/
# with apt-get download and dpkg -x (nothing installed: luajit2 conflicts with luajit, which LÖVE
# needs); else `luajit`. OCTONAV_LUAJIT=PATH chooses the interpreter. Diagnostics go to stderr.
set -eu
cd "$(dirname "$0")/.."
if [ -n "${OCTONAV_LUAJIT:-}" ]; then
  echo "$OCTONAV_LUAJIT"
  exit 0
fi
# affected: Debian's luajit before the fix (its version names the upstream snapshot's date)
affected() {
  [ "$(command -v luajit 2>/dev/null)" = /usr/bin/luajit ] || return 1
  local v
  v=$(dpkg-query -W -f='${Version}' luajit 2>/dev/null) || return 1
  case $v in 2.1.0~beta3+git*) ;; *) return 1 ;; esac
  dpkg --compare-versions "$v" lt "2.1.0~beta3+git20220405"
}
if ! affected; then
  echo luajit
  exit 0
fi
dir=$PWD/build/luajit2
bin=$dir/root/usr/bin/luajit
if [ ! -x "$bin" ]; then
  echo "luajit.sh: Debian's luajit $(dpkg-query -W -f='${Version}' luajit) has LuaJIT bug 829 (a SIGSEGV in compiled" \
    "pairs loops); unpacking OpenResty's LuaJIT (Debian package luajit2) into build/luajit2 for the specs" >&2
  rm -rf "$dir"
  mkdir -p "$dir/debs"
  (cd "$dir/debs" && apt-get download luajit2 libluajit2-5.1-common >&2) || {
    echo "luajit.sh: apt-get download luajit2 failed; the specs run on Debian's luajit (bug 829)" >&2
    echo luajit
    exit 0
  }
  for d in "$dir"/debs/*.deb; do dpkg -x "$d" "$dir/root"; done
fi
echo "$bin"
