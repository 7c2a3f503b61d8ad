#!/bin/sh
# bench/query_ir.sh -- instructions per query (deterministic): runs the query benchmark's count mode
# (bench/query.c -c: a warm-up pass over the seeded 300-scenario sample, then the counted pass, default
# options) under callgrind, counting inside the counted on_query_find calls only (bench_find: what a
# tree builds on its first use, such as line of sight's tile masks, is left out), and prints per map
# the instructions a query in steady state and their split:
# init (locate, direct check), the search (on_query_update), finalize (corridor, refine, smooth,
# relax) and, across all of them, line of sight and turn checks. Needs valgrind (skipped without).
# Usage: sh bench/query_ir.sh BENCH_QUERY_BINARY MAP ...   (make bench-query-ir: DC1 Complex A1)
# QUERY_IR_ARGS adds options to the benchmark (e.g. "-P" for the prepared graph, "-n 100").
bin=$1
shift
if ! command -v valgrind >/dev/null 2>&1; then
    echo "bench-query-ir: skipped (install valgrind)"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| map | queries | instructions / query | init | search | finalize | of which line of sight | turn checks |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for map in "$@"; do
    out="$tmp/cg.$map"
    # shellcheck disable=SC2086
    valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect='bench_find*' \
        "$bin" -c $QUERY_IR_ARGS "$map" >"$tmp/table.$map" 2>"$tmp/err.$map" || {
        echo "$map: benchmark failed"; cat "$tmp/err.$map"; continue; }
    n=$(awk -F'|' 'NR == 3 { gsub(/ /, "", $4); print $4 }' "$tmp/table.$map")
    callgrind_annotate --inclusive=yes --threshold=100 "$out" 2>/dev/null >"$tmp/ann.$map"
    awk -v map="$map" -v n="$n" '
        function num(s) { gsub(/,/, "", s); return s + 0 }
        /PROGRAM TOTALS/ { total = num($1) }
        # (each function is listed twice, with and without its object: count the one with it; a build
        # with -flto or -fprofile-use may add suffixes such as .constprop.0 or .lto_priv.0)
        /:on_query_init(\.[a-z_]+\.[0-9]+)* \[/ { init += num($1) }
        /:on_query_update(\.[a-z_]+\.[0-9]+)* \[/ { search += num($1) }
        /:on_query_finalize(\.[a-z_]+\.[0-9]+)* \[/ { fin += num($1) }
        /:on_tree_visible_nav(\.[a-z_]+\.[0-9]+)* \[/ || /:on_tree_visible_nav_cached(\.[a-z_]+\.[0-9]+)* \[/ || /:on_tree_walk_cells(\.[a-z_]+\.[0-9]+)* \[/ || /:on_tree_walk_cells_hit(\.[a-z_]+\.[0-9]+)* \[/ { los += num($1) }
        /:on_tree_turn_ok(\.[a-z_]+\.[0-9]+)* \[/ || /:on_tree_turn_ok_cached(\.[a-z_]+\.[0-9]+)* \[/ { turn += num($1) }
        END {
            if (n == 0) n = 1
            printf "| %s | %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |\n", map, n, total / n, init / n, search / n,
                fin / n, los / n, turn / n
        }' "$tmp/ann.$map"
done
