#!/bin/sh
# bench/sidebyside.sh -- two or more builds of bench/query timed side by side on this shared machine:
# for each map in turn, runs each binary on it (`-p 3`), alternating, ROUNDS times over, and prints each
# binary's fastest median and fastest p99 a map (us). Times here drift by up to 1.6x between runs and
# within one over seconds (a whole 13-map run of one build, then the other's, measured the same code
# 0-18 % apart); alternating the builds map by map and keeping each one's fastest compares them under
# the same conditions.
# Usage: sh bench/sidebyside.sh ROUNDS "MAP ..." BINARY BINARY ...   ("" for every map)
rounds=${1:?rounds}
maps=$2
shift 2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
[ -n "$maps" ] || maps="Simple Complex A1 A2 A3 A4 BC1 DA1 DB1 DB2 DC1 EB1 EC1"
r=0
while [ "$r" -lt "$rounds" ]; do
    for m in $maps; do
        for b in "$@"; do
            "$b" -p 3 "$m" | awk -F'|' -v B="$b" 'NR > 2 && NF > 10 { gsub(/ /, "", $2); print B, $2, $10, $11 }' >>"$out"
        done
    done
    r=$((r + 1))
done
echo "| binary | map | fastest median us | fastest p99 us |"
echo "|---|---|---:|---:|"
awk '{ k = $1 " " $2; if (!(k in m) || $3 < m[k]) m[k] = $3; if (!(k in p) || $4 < p[k]) p[k] = $4
       if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
     END { for (i = 1; i <= n; i++) { split(order[i], a, " "); print "| " a[1] " | " a[2] " | " m[order[i]] " | " p[order[i]] " |" } }' "$out" |
    sort -t'|' -k3,3 -s
