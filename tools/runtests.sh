#!/usr/bin/env bash
# Runs the C unit tests and the busted specs against the build in $1 (default: build) and ends with
# one line "N passed, N failed, N skipped" adding both up (a pending spec, e.g. one whose data file is
# absent, counts as skipped, not passed). SANITIZE=1 preloads the ASan runtime for lua5.4; CTESTS limits
# the C tests to the names it lists. LUA (default lua5.4; luajit, lua5.1, lua5.2, lua5.3: issue 34) is the
# Lua busted runs the specs with, exported as OCTONAV_LUA for the commands the specs start; the build in
# $1 must be made for it (make test LUA=luajit builds build/luajit). LUA=luajit runs the interpreter
# tools/luajit.sh prints (a LuaJIT without bug 829; OCTONAV_LUAJIT=PATH chooses one).
set -u
build=${1:-build}; shift || true
ctest_only=0
if [ "${1:-}" = "--ctest-only" ]; then ctest_only=1; shift; fi
cd "$(dirname "$0")/.."
pass=0; fail=0
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

for t in "$build"/tests/test_*; do
  [ -x "$t" ] || continue
  # CTESTS="test_a test_b": only those C tests (check-tsan: the ones that start threads)
  if [ -n "${CTESTS:-}" ] && [[ " $CTESTS " != *" $(basename "$t") "* ]]; then continue; fi
  out=$("$t" 2>&1); rc=$?
  echo "$out" | grep -v '^c/' | tail -20
  line=$(echo "$out" | grep -E '^c/.*: [0-9]+ passed, [0-9]+ failed$' | tail -1)
  if [ -n "$line" ]; then
    echo "$line"
    p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed/\1/')
    f=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed/\2/')
    pass=$((pass + p)); fail=$((fail + f))
    [ $rc -ne 0 ] && [ "$f" -eq 0 ] && fail=$((fail + 1))
  else
    echo "$t: crashed or printed no summary (exit $rc)"; fail=$((fail + 1))
  fi
done

if [ $ctest_only = 1 ]; then
  echo "$pass passed, $fail failed, 0 skipped"
  [ $fail -eq 0 ]
  exit
fi

# the commands specs run (bin/octonav, examples, writers) load this build's module too
case $build in /*) OCTONAV_BUILD=$build ;; *) OCTONAV_BUILD=$PWD/$build ;; esac # (specs run some from other directories)
export OCTONAV_BUILD
lua=${LUA:-lua5.4}
# LuaJIT: the interpreter tools/luajit.sh names (Debian 12's luajit has LuaJIT bug 829, a SIGSEGV in
# compiled pairs loops: the specs then run on OpenResty's LuaJIT; docs/lua-versions.md)
if [ "$lua" = luajit ]; then lua=$(bash tools/luajit.sh) || lua=luajit; fi
export OCTONAV_LUA=$lua
echo "specs on $lua ($("$lua" -v 2>&1 | head -n 1))"
preload=""
if [ "${SANITIZE:-0}" = 1 ]; then
  preload=$(${CC:-cc} -print-file-name=libasan.so)
  # busted itself and the Lua interpreter are not instrumented; their own allocations are not ours
  export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1"
fi
tap=$(mktemp)
if [ "${SANITIZE:-0}" = thread ]; then
  # ThreadSanitizer cannot start through busted's lua5.1 launcher: run busted on lua5.4 directly
  LD_PRELOAD=$(${CC:-cc} -print-file-name=libtsan.so) TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1}" \
    lua5.4 "$(command -v busted)" --ignore-lua --cpath="$build/?.so" -o TAP "$@" >"$tap" 2>&1
else
  LD_PRELOAD="$preload" busted --lua="$lua" --cpath="$build/?.so" -o TAP "$@" >"$tap" 2>&1
fi
brc=$?
grep -vE '^ok [0-9]+' "$tap" | head -200
# busted's TAP marks a pending spec "ok N - # SKIP reason"
grep -E '^ok [0-9]+ - # SKIP' "$tap" | sed -E 's/^ok [0-9]+ - # SKIP /skipped: /' | head -50
ss=$(grep -cE '^ok [0-9]+ - # SKIP' "$tap")
sp=$(( $(grep -cE '^ok [0-9]+' "$tap") - ss )); sf=$(grep -cE '^not ok [0-9]+' "$tap")
echo "specs: $sp passed, $sf failed, $ss skipped"
if [ $brc -ne 0 ] && ! grep -qE '^1\.\.[0-9]+$' "$tap"; then
  # busted died before its plan line (a crash in the module or the Lua, e.g. "Segmentation fault"):
  # the specs after the last one reported did not run, whatever the counts above say
  echo "busted stopped (exit $brc) after test $(grep -cE '^(not )?ok [0-9]+' "$tap"), before its plan: the specs after it did not run"
  sf=$((sf + 1))
elif [ $brc -ne 0 ] && [ "$sf" -eq 0 ]; then echo "busted exited $brc"; sf=1; fi
rm -f "$tap"
pass=$((pass + sp)); fail=$((fail + sf))
echo "$pass passed, $fail failed, $ss skipped"
[ $fail -eq 0 ]
