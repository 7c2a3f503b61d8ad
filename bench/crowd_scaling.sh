#!/bin/bash
# bench/crowd_scaling.sh -- the crowd's two threads against one, 1,000 agents (make bench-crowd-scaling;
# issue 33's goal ">= 1.7x on 2 cores"). Usage: bench/crowd_scaling.sh BUILD [ROUNDS] [PACES]
# (defaults: build, 5 rounds, paces "0 2 8" ms asleep before each update, as a game's frame leaves it).
# Each round, for each pace (every leg 300 frames after 60, p50 wall ms, `chrt -f 10` where allowed):
#   probe   bench/cores: one integer loop alone and on both CPUs at once; together/alone near 1 when
#           the host gives two independent cores, up to 2 when its two virtual CPUs share one core
#   one     one thread pinned to CPU 0, then to CPU 1, the other CPU idle; the faster of the two
#   two     the crowd's two threads (`threads = 2`)
#   twin    two one-thread crowds at once, one on each CPU (independent processes, nothing shared):
#           ceiling = 2 x one / twin, what any split of the work could reach on the host as it is
#   spun    one thread with the other CPU held by a real-time spinner (sessions 30-32's one-thread
#           leg; slower than "one" wherever the CPUs share a core)
# and prints ratio = one / two, ceiling, ratio / ceiling, and spun / two. The frames are the same bit
# for bit on 1 and 2 threads (the hash column of bench/crowd).
set -u
B=${1:-build}; R=${2:-5}; PACES=${3:-"0 2 8"}
crowd=$B/bench/crowd; cores=$B/bench/cores
[ -x "$crowd" ] && [ -x "$cores" ] || { echo "crowd_scaling: $crowd or $cores missing (make bench-crowd-scaling)"; exit 1; }
[ "$(nproc)" -ge 2 ] || { echo "crowd_scaling: one CPU, skipped"; exit 0; }
rt="chrt -f 10"; $rt true 2>/dev/null || rt=""
p50() { grep -o 'p50 [0-9.]*' "$1" | head -1 | awk '{print $2}'; }
leg() { # leg PACE CPU THREADS -> p50 ms
    local o; o=$(mktemp)
    if [ -n "$2" ]; then CROWD_PACE_MS=$1 CROWD_WALL=1 $rt taskset -c "$2" "$crowd" 300 1000 "$3" >"$o" 2>&1
    else CROWD_PACE_MS=$1 $rt "$crowd" 300 1000 "$3" >"$o" 2>&1; fi
    p50 "$o"; rm -f "$o"
}
printf '| round | pace ms | probe | one | two | twin | spun | ratio | ceiling | ratio / ceiling | spun / two |\n'
printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for r in $(seq 1 "$R"); do
  for p in $PACES; do
    probe=$("$cores" | awk '{for (i = 1; i <= NF; i++) if ($i == "together/alone") print $(i + 1)}')
    a=$(leg "$p" 0 1); b=$(leg "$p" 1 1)
    one=$(awk -v a="$a" -v b="$b" 'BEGIN { print (a < b) ? a : b }')
    two=$(leg "$p" "" 2)
    o0=$(mktemp); o1=$(mktemp)
    CROWD_PACE_MS=$p CROWD_WALL=1 $rt taskset -c 1 "$crowd" 300 1000 1 >"$o1" 2>&1 & tw=$!
    CROWD_PACE_MS=$p CROWD_WALL=1 $rt taskset -c 0 "$crowd" 300 1000 1 >"$o0" 2>&1; wait $tw
    twin=$(awk -v a="$(p50 "$o0")" -v b="$(p50 "$o1")" 'BEGIN { print (a > b) ? a : b }'); rm -f "$o0" "$o1"
    $rt taskset -c 1 sh -c 'while :; do :; done' & sp=$!
    spun=$(leg "$p" 0 1); kill $sp; wait $sp 2>/dev/null
    awk -v r="$r" -v p="$p" -v pr="$probe" -v one="$one" -v two="$two" -v tw="$twin" -v sp="$spun" 'BEGIN {
      c = 2 * one / tw; printf "| %d | %d | %s | %.3f | %.3f | %.3f | %.3f | **%.2f** | %.2f | %.2f | %.2f |\n",
      r, p, pr, one, two, tw, sp, one / two, c, one / two / c, sp / two }'
  done
done
