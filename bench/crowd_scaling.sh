#!/bin/bash
# bench/crowd_scaling.sh -- the crowd's two threads against one, 1,000 agents (make bench-crowd-scaling;
# issue 33's goal ">= 1.7x on 2 cores"). Usage: bench/crowd_scaling.sh BUILD [ROUNDS] [PACES]
# (defaults: build, 5 rounds, paces "0 2 8": ms asleep before each update, as a game's frame leaves the
# crowd's pool idle between updates). Every leg at normal priority, as a game runs; 300 frames after
# 60, p50 wall ms. Each round, for each pace:
#   probe  bench/cores: an integer loop alone and on both CPUs at once; together/alone near 1 when the
#          host gives two independent cores, up to 2 when its two virtual CPUs share one (the ratio
#          below is then bounded by the host, not by the crowd)
#   pair   `crowd pair`: a one-thread and a two-thread crowd on the same scene in one process, their
#          updates in turn (the host's changes fall on both legs within milliseconds): its ratio
#   one    one thread in a process of its own pinned to CPU 0, then to CPU 1 (the other idle): the faster
#   two    the crowd's two threads in a process of their own: ratio = one / two
#   twin   two one-thread crowds at once, one on each CPU (nothing shared): ceiling = 2 x one / twin,
#          what any split of the work could reach on the host as it was
# The trajectories are the same bit for bit on 1 and 2 threads (`same hash` of the pair; bench/crowd's
# hash column).
set -u
B=${1:-build}; R=${2:-5}; PACES=${3:-"0 2 8"}
crowd=$B/bench/crowd; cores=$B/bench/cores
[ -x "$crowd" ] && [ -x "$cores" ] || { echo "crowd_scaling: $crowd or $cores missing (make bench-crowd-scaling)"; exit 1; }
[ "$(nproc)" -ge 2 ] || { echo "crowd_scaling: one CPU, skipped"; exit 0; }
p50() { grep -o 'p50 [0-9.]*' "$1" | head -1 | awk '{print $2}'; }
leg() { # leg PACE CPU THREADS -> p50 ms
    local o; o=$(mktemp)
    if [ -n "$2" ]; then CROWD_PACE_MS=$1 CROWD_WALL=1 taskset -c "$2" "$crowd" 300 1000 "$3" >"$o" 2>&1
    else CROWD_PACE_MS=$1 "$crowd" 300 1000 "$3" >"$o" 2>&1; fi
    p50 "$o"; rm -f "$o"
}
printf '| round | pace ms | probe | pair 1 / 2 thr | pair ratio | one | two | ratio | twin | ceiling | ratio / ceiling |\n'
printf '|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n'
fail=0
for r in $(seq 1 "$R"); do
  for p in $PACES; do
    probe=$("$cores" | awk '{for (i = 1; i <= NF; i++) if ($i == "together/alone") print $(i + 1)}')
    pr=$(CROWD_PACE_MS=$p "$crowd" pair 300 1000)
    echo "$pr" | grep -q 'same hash yes' || fail=1
    p1=$(echo "$pr" | grep -o '1 thread p50 [0-9.]*' | awk '{print $4}')
    p2=$(echo "$pr" | grep -o '2 threads p50 [0-9.]*' | awk '{print $4}')
    a=$(leg "$p" 0 1); b=$(leg "$p" 1 1)
    one=$(awk -v a="$a" -v b="$b" 'BEGIN { print (a < b) ? a : b }')
    two=$(leg "$p" "" 2)
    o0=$(mktemp); o1=$(mktemp)
    CROWD_PACE_MS=$p CROWD_WALL=1 taskset -c 1 "$crowd" 300 1000 1 >"$o1" 2>&1 & tw=$!
    CROWD_PACE_MS=$p CROWD_WALL=1 taskset -c 0 "$crowd" 300 1000 1 >"$o0" 2>&1; wait $tw
    twin=$(awk -v a="$(p50 "$o0")" -v b="$(p50 "$o1")" 'BEGIN { print (a > b) ? a : b }'); rm -f "$o0" "$o1"
    awk -v r="$r" -v p="$p" -v pr="$probe" -v p1="$p1" -v p2="$p2" -v one="$one" -v two="$two" -v tw="$twin" 'BEGIN {
      c = 2 * one / tw; printf "| %d | %d | %s | %.3f / %.3f | **%.2f** | %.3f | %.3f | **%.2f** | %.3f | %.2f | %.2f |\n",
      r, p, pr, p1, p2, p1 / p2, one, two, one / two, tw, c, one / two / c }'
  done
done
[ "$fail" = 0 ] || { echo "crowd_scaling: the two crowds' trajectories differ"; exit 1; }
