#!/usr/bin/env bash
# bench/luajit.sh: LuaJIT against Lua 5.4, side by side in one run (make bench-luajit; issue 34).
# Each pass runs every benchmark on lua5.4 then on luajit (the same module source, built for each:
# build/ and build/luajit); PASSES passes (3), the fastest of each kept:
#   DC1 queries   bin/octonav bench DC1.3dmap --limit 300 --grid-limit 0 --repeat 3 (each query the
#                 fastest of 3 runs): median us a query
#   frames        bench/frames.lua --nobudget on a 4x1x4 world of 128^3 tiles (terrain.lua, baked once
#                 with lua5.4 into build/bench-luajit/t4): 100 navigators, 600 frames, each update its
#                 own fixed limits (the same work on both Luas): thread CPU ms a frame, p50 and p99
#   flat          bench/flat.lua: ns a call of tree:visible / raycast / locate_status with a new table
#                 per point, reused tables and the flat form; nav:update with a new or a reused table
# Prints a markdown table with the ratio LuaJIT / 5.4 (below 1: LuaJIT faster). Skips what
# ../shared/data lacks. Run from the project root after `make` and `make LUA=luajit`.
set -euo pipefail
cd "$(dirname "$0")/.."
PASSES=${PASSES:-3}
data=../shared/data
tmp=build/bench-luajit
mkdir -p "$tmp"
have_dc1=0; [ -f $data/voxel/DC1.3dmap ] && have_dc1=1
have_t4=0
if [ -f $data/worlds/terrain.lua ]; then
  if [ ! -f $tmp/t4/manifest.txt ]; then
    NX=4 NZ=4 NY=1 DEPTH=7 SCALE=1 OUT=$PWD/$tmp/t4 lua5.4 bin/octonav bake $data/worlds/terrain.lua >/dev/null
  fi
  have_t4=1
fi

declare -A best
keep() { # keep NAME VALUE: the smallest value seen
  local cur=${best[$1]:-}
  if [ -z "$cur" ] || awk -v a="$2" -v b="$cur" 'BEGIN { exit !(a < b) }'; then best[$1]=$2; fi
}
for pass in $(seq "$PASSES"); do
  for lua in lua5.4 luajit; do
    b=build; [ $lua = luajit ] && b=build/luajit
    if [ $have_dc1 = 1 ]; then
      out=$(OCTONAV_BUILD=$b $lua bin/octonav bench $data/voxel/DC1.3dmap --limit 300 --grid-limit 0 --repeat 3 | tail -n 1)
      keep "$lua dc1" "$(echo "$out" | sed -E 's/.* median_us=([0-9.]+).*/\1/')"
    fi
    if [ $have_t4 = 1 ]; then
      row=$(OCTONAV_BUILD=$b $lua bench/frames.lua $tmp/t4 --agents 100 --frames 600 --nobudget | grep '^| 1 |')
      cpu=$(echo "$row" | cut -d'|' -f3)
      keep "$lua frames p50" "$(echo "$cpu" | awk -F/ '{ print $1 + 0 }')"
      keep "$lua frames p99" "$(echo "$cpu" | awk -F/ '{ print $2 + 0 }')"
      keep "$lua frames arrivals" "$(echo "$row" | cut -d'|' -f6 | awk '{ print $1 }')"
    fi
    while IFS='|' read -r _ call form ns _; do
      keep "$lua flat $(echo $call) $(echo $form)" "$(echo $ns)"
    done < <(OCTONAV_BUILD=$b $lua bench/flat.lua --n 100000 --passes 2 | grep -E '^\| [a-z_:]+ \| (fresh|reused|flat) ')
  done
done

echo "LuaJIT against Lua 5.4, $(date -u +%Y-%m-%d), fastest of $PASSES passes (load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo "| benchmark | lua5.4 | luajit | luajit / lua5.4 |"
echo "|---|---:|---:|---:|"
row() { # row LABEL KEY
  local a=${best["lua5.4 $2"]:-} b=${best["luajit $2"]:-}
  [ -n "$a" ] && [ -n "$b" ] || return 0
  awk -v l="$1" -v a="$a" -v b="$b" 'BEGIN { printf "| %s | %.4g | %.4g | %.2f |\n", l, a, b, b / a }'
}
row "DC1 queries, median us (300 scenarios)" dc1
row "frames, 100 navigators, thread CPU p50 ms" "frames p50"
row "frames, 100 navigators, thread CPU p99 ms" "frames p99"
row "frames, arrivals in 600 frames (the same work: equal)" "frames arrivals"
for call in visible raycast locate_status; do
  for form in fresh reused flat; do row "tree:$call, $form, ns a call" "flat $call $form"; done
done
for form in fresh reused; do row "nav:update, position $form, ns a call" "flat nav:update $form"; done
