#!/usr/bin/env bash
# tools/slurm_bake.sh -- a real batch engine bakes a world (issue 31): brings up a one-node Slurm under a
# temporary directory (munged with its own key, `slurmctld -D`, `slurmd -D`, unique ports), bakes a small
# world twice -- one process (`octonav bake CONFIG`, pack A) and through Slurm (an array job of
# `--job $SLURM_ARRAY_TASK_ID/M` tasks, then a `--link` job with `--dependency=afterok:<array>`, pack B) --
# and compares every file of A and B byte for byte. Tears everything down on any exit (a trap).
# `make test-slurm` runs it; docs/slurm.md shows the same sbatch lines for a real cluster.
#
# Skips (one line, exit 0) where Debian's slurm-wlm or munge is not installed, or not root (slurmd runs
# the jobs). Exit 1 on any difference, failed job or timeout, with the reason on one line.
# Environment:
#   SLURM_BAKE_WORLD    world config (default ../shared/data/worlds/terrain.lua beside the checkout)
#   SLURM_BAKE_TASKS    array tasks M (default 4)
#   SLURM_BAKE_TIMEOUT  seconds for each wait: node idle, array done, link done (default 60)
#   SLURM_BAKE_BREAK    an array task id whose bake is given a missing config (to see afterok hold the link)
#   SLURM_BAKE_KEEP=1   keep the temporary directory (logs) instead of removing it
#   NX NZ NY DEPTH SCALE SEED  the world's own variables (default NX=4 NZ=4 NY=1 DEPTH=6 SCALE=1)
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
T0=$(date +%s.%N)
say() { echo "slurm: $*"; }

for c in munged munge slurmctld slurmd sbatch squeue sinfo scontrol scancel; do
  if ! command -v "$c" > /dev/null 2>&1; then
    say "skipped: $c not found (Debian's slurm-wlm and munge are not installed; as root: apt-get install slurm-wlm munge, or make test-slurm OCTONAV_INSTALL_SLURM=1)"
    exit 0
  fi
done
if [ "$(id -u)" != 0 ]; then
  say "skipped: not root (this one-node Slurm runs slurmd, and so the jobs, as root)"
  exit 0
fi

WORLD=${SLURM_BAKE_WORLD:-$ROOT/../shared/data/worlds/terrain.lua}
M=${SLURM_BAKE_TASKS:-4}
TIMEOUT=${SLURM_BAKE_TIMEOUT:-60}
BREAK=${SLURM_BAKE_BREAK:-}
export NX=${NX:-4} NZ=${NZ:-4} NY=${NY:-1} DEPTH=${DEPTH:-6} SCALE=${SCALE:-1}
OCTONAV="$ROOT/bin/octonav"
[ -f "$WORLD" ] || { say "FAILED: no world config $WORLD (SLURM_BAKE_WORLD)"; exit 1; }
WORLD=$(cd "$(dirname "$WORLD")" && pwd)/$(basename "$WORLD")
[ -f "${OCTONAV_BUILD:-$ROOT/build}/octonav/core.so" ] || { say "FAILED: no build/octonav/core.so (run make)"; exit 1; }

T=$(mktemp -d /tmp/octonav-slurm.XXXXXX)
chmod 700 "$T"
mkdir -p "$T/etc" "$T/munge" "$T/ctld" "$T/spool" "$T/run" "$T/log" "$T/A" "$T/B"
# Every process started here (the daemons, their job steps, the jobs) carries this in its environment:
# the teardown finds them by it, and by nothing broader.
export SLURM_CONF="$T/etc/slurm.conf"
PIDS=()

teardown() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "${CTLD_PID:-}" ] && kill -0 "$CTLD_PID" 2> /dev/null; then
    local ids
    ids=$(squeue -h -o %i 2> /dev/null | tr '\n' ' ')
    # shellcheck disable=SC2086 # job ids, one word each
    [ -n "$ids" ] && scancel --quiet --full $ids 2> /dev/null
    for _ in 1 2 3 4 5 6 7 8 9 10; do [ -z "$(squeue -h -t R,CG 2> /dev/null)" ] && break; sleep 0.5; done
  fi
  for p in "${PIDS[@]}"; do kill "$p" 2> /dev/null; done
  sleep 0.5
  # anything left that was started under this temporary directory (slurmstepd, a job): by its pid
  local left=()
  for e in /proc/[0-9]*/environ; do
    local p=${e#/proc/}; p=${p%/environ}
    [ "$p" = $$ ] && continue
    if { tr '\0' '\n' < "$e"; } 2> /dev/null | grep -qxF "SLURM_CONF=$SLURM_CONF"; then left+=("$p"); fi
  done
  [ ${#left[@]} -gt 0 ] && kill -9 "${left[@]}" 2> /dev/null
  for p in "${PIDS[@]}"; do wait "$p" 2> /dev/null; done
  if [ "${SLURM_BAKE_KEEP:-0}" = 1 ]; then say "kept $T"; else rm -rf "$T"; fi
  exit "$rc"
}
trap teardown EXIT
trap 'say "FAILED: interrupted"; exit 130' INT TERM

fail() {
  say "FAILED: $*"
  for f in "$T"/log/slurmctld.log "$T"/log/slurmd.log; do
    [ -s "$f" ] && { echo "--- $(basename "$f") (last lines)"; tail -4 "$f"; }
  done
  exit 1
}
elapsed() { echo "$(date +%s.%N) $T0" | awk '{ printf "%.1f", $1 - $2 }'; }

# Two free TCP ports next to each other (slurmctld, slurmd).
port_free() { ! ss -Htan 2> /dev/null | awk '{ print $4 }' | grep -qE "[:.]$1\$"; }
for _ in $(seq 50); do
  PORT=$((20000 + RANDOM % 30000))
  port_free "$PORT" && port_free $((PORT + 1)) && break
done

# munge: its own key, socket, pid, log and seed under $T.
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$T/munge/munge.key"
SOCK="$T/munge/munge.socket"
munged -F --force --socket="$SOCK" --key-file="$T/munge/munge.key" --pid-file="$T/munge/munged.pid" \
  --log-file="$T/log/munged.log" --seed-file="$T/munge/munged.seed" > /dev/null 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do munge -S "$SOCK" -n 2> /dev/null | unmunge -S "$SOCK" > /dev/null 2>&1 && break; sleep 0.1; done
munge -S "$SOCK" -n 2> /dev/null | unmunge -S "$SOCK" > /dev/null 2>&1 || fail "munged did not answer on $SOCK"

NODE=$(hostname -s)
# The node line as slurmd sees the hardware, without RealMemory (the default 1 MB never drains it).
HW=$(slurmd -C 2> /dev/null | head -1 | sed -e 's/^NodeName=[^ ]* //' -e 's/ RealMemory=[0-9]*//')
[ -n "$HW" ] || HW="CPUs=$(nproc)"
cat > "$SLURM_CONF" << EOF
# generated by tools/slurm_bake.sh: a one-node Slurm under $T
ClusterName=octonav
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
MailProg=/bin/true
AuthType=auth/munge
AuthInfo=socket=$SOCK
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=600
PlugStackConfig=$T/etc/plugstack.conf
StateSaveLocation=$T/ctld
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/run/slurmctld.pid
SlurmdPidFile=$T/run/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
NodeName=$NODE NodeAddr=127.0.0.1 $HW State=UNKNOWN
PartitionName=octonav Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
: > "$T/etc/plugstack.conf"
# No cgroup plugin is used (proctrack/linuxproc, task/none); this keeps slurmd from mounting anything.
printf 'CgroupAutomount=no\nConstrainCores=no\nConstrainRAMSpace=no\nConstrainDevices=no\n' > "$T/etc/cgroup.conf"

slurmctld -D -c -f "$SLURM_CONF" > "$T/log/slurmctld.out" 2>&1 &
CTLD_PID=$!
PIDS+=("$CTLD_PID")
slurmd -D -f "$SLURM_CONF" -N "$NODE" > "$T/log/slurmd.out" 2>&1 &
PIDS+=($!)

deadline=$(($(date +%s) + TIMEOUT))
state=
while [ "$(date +%s)" -lt "$deadline" ]; do
  state=$(sinfo -h -n "$NODE" -o %T 2> /dev/null)
  [ "$state" = idle ] && break
  for p in "${PIDS[@]}"; do kill -0 "$p" 2> /dev/null || fail "a daemon (pid $p) exited during start-up"; done
  sleep 0.5
done
[ "$state" = idle ] || fail "node $NODE not idle after ${TIMEOUT}s (sinfo: ${state:-no answer})"
say "one-node Slurm up in $(elapsed) s (node $NODE idle, ports $PORT/$((PORT + 1)), $T)"

# Pack A: one process.
OUT="$T/A" lua5.4 "$OCTONAV" bake "$WORLD" > "$T/log/bake-A.log" 2>&1 || fail "one-process bake: $(tail -1 "$T/log/bake-A.log")"

# Pack B: the array job (task N bakes --job N/M), then the link job afterok.
# The array's command is docs/slurm.md's; SLURM_BAKE_BREAK=N gives task N a config that does not exist.
PRE=''
CFG="'$WORLD'"
if [ -n "$BREAK" ]; then
  PRE="cfg='$WORLD'; [ \"\$SLURM_ARRAY_TASK_ID\" != '$BREAK' ] || cfg='$T/no-such-world.lua'; "
  # shellcheck disable=SC2016 # expanded by the job's shell
  CFG='"$cfg"'
fi
ARR=$(OUT="$T/B" sbatch --parsable --job-name=octonav-tiles --array="0-$((M - 1))" --chdir="$T" \
  --output="$T/log/tiles-%A_%a.log" \
  --wrap "${PRE}lua5.4 '$OCTONAV' bake $CFG --job \$SLURM_ARRAY_TASK_ID/$M") || fail "sbatch of the array job"
ARR=${ARR%%;*}
LINK=$(OUT="$T/B" sbatch --parsable --job-name=octonav-link --dependency="afterok:$ARR" --kill-on-invalid-dep=yes \
  --chdir="$T" --output="$T/log/link-%j.log" --wrap "lua5.4 '$OCTONAV' bake '$WORLD' --link") ||
  fail "sbatch of the link job"
LINK=${LINK%%;*}

# Waits until every record of job $1 is in a final state ($2 records: M for the array); prints one
# "task state exit reason" line a record (task: the array task id, or the job id).
TERMINAL='COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED'
wait_job() {
  local recs=
  while [ "$(date +%s)" -lt "$deadline" ]; do
    recs=$(scontrol -o show job "$1" 2> /dev/null | awk '{
      delete v
      for (i = 1; i <= NF; i++) { k = $i; sub(/=.*/, "", k); v[k] = substr($i, length(k) + 2) }
      print (("ArrayTaskId" in v) ? v["ArrayTaskId"] : v["JobId"]), v["JobState"], v["ExitCode"], v["Reason"] }')
    if [ "$(echo "$recs" | grep -cE "^[^ ]+ ($TERMINAL) ")" -ge "$2" ]; then echo "$recs"; return 0; fi
    sleep 0.5
  done
  echo "$recs"
  return 1
}
deadline=$(($(date +%s) + TIMEOUT))
arr_recs=$(wait_job "$ARR" "$M") || fail "array job $ARR not done after ${TIMEOUT}s: $(tr '\n' ' ' <<< "$arr_recs")"
link_recs=$(wait_job "$LINK" 1) || fail "link job $LINK not done after ${TIMEOUT}s: $(tr '\n' ' ' <<< "$link_recs")"
read -r _ link_state _ link_reason <<< "$link_recs"

why=
while read -r task st ex _; do
  [ "$st" = COMPLETED ] && continue
  why="$why; task $task $st (exit $ex): $(tail -1 "$T/log/tiles-${ARR}_$task.log" 2> /dev/null)"
done <<< "$arr_recs"
if [ -n "$why" ]; then
  ran=no
  [ -f "$T/B/manifest.txt" ] && ran=yes
  fail "array job $ARR$why; link job $LINK $link_state ($link_reason), manifest written: $ran"
fi
[ "$link_state" = COMPLETED ] || fail "link job $LINK $link_state: $(tail -1 "$T"/log/link-"$LINK".log 2> /dev/null)"

# Compare every file of A and B byte for byte.
(cd "$T/A" && find . -type f | sort) > "$T/A.list"
(cd "$T/B" && find . -type f | sort) > "$T/B.list"
cmp -s "$T/A.list" "$T/B.list" || fail "file lists differ: $(diff "$T/A.list" "$T/B.list" | grep '^[<>]' | head -3 | tr '\n' ' ')"
n=0
while read -r f; do
  cmp -s "$T/A/$f" "$T/B/$f" || fail "$f differs between the one-process pack and the Slurm pack"
  n=$((n + 1))
done < "$T/A.list"
{ [ "$n" -gt 0 ] && grep -qx './manifest.txt' "$T/A.list"; } || fail "the pack holds no manifest ($n files)"
world=$(basename "$WORLD")
[ "$world" = terrain.lua ] && world="$world NX=$NX NZ=$NZ NY=$NY DEPTH=$DEPTH SCALE=$SCALE"
say "$n files identical, array job $ARR ($M tasks), link job $LINK afterok ($world; $(elapsed) s in all)"
