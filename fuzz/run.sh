#!/usr/bin/env bash
# fuzz/run.sh SECONDS TARGET... -- runs each libFuzzer target (built by `make fuzz-build`) for SECONDS
# from its seeds in fuzz/corpus/TARGET; inputs it finds go to build/fuzz/corpus/TARGET (kept between
# runs, never into the repo), crashes to build/fuzz/crashes/. Prints one line per target:
# "fuzz TARGET: N execs, N crashes, peak N MB"; exits 1 at the first target that crashes.
# Extra libFuzzer flags: FUZZ_ARGS (e.g. FUZZ_ARGS="-jobs=2 -workers=2").
set -u
cd "$(dirname "$0")/.."
secs=${1:?seconds}; shift
for t in "$@"; do
  mkdir -p "build/fuzz/corpus/$t" build/fuzz/crashes
  log="build/fuzz/$t.log"
  # shellcheck disable=SC2086
  build/fuzz/bin/fuzz_"$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -max_len=8192 -print_final_stats=1 -artifact_prefix="build/fuzz/crashes/$t-" ${FUZZ_ARGS:-} \
    "build/fuzz/corpus/$t" "fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}')
  peak=$(grep -E '^stat::peak_rss_mb' "$log" | awk '{if ($2 > m) m = $2} END {print m + 0}')
  crashes=$(ls build/fuzz/crashes/"$t"-* 2>/dev/null | wc -l)
  echo "fuzz $t: $execs execs, $crashes crashes, peak $peak MB"
  if [ $rc -ne 0 ]; then
    tail -40 "$log"
    exit 1
  fi
done
