#!/usr/bin/env bash
# OpenMP wait policy on a busy machine (issue 28): wattgraph's CPU near-far
# and self-tuned SSSP (and GAP's delta-stepping when WG_GAP_SSSP names its
# sssp binary) with OMP_WAIT_POLICY unset (the runtime's default: spin, then
# sleep), passive and active, alternating, while BUSY spinning loops load
# the machine; the loops are bounded (timeout) and stopped at the end.
# Prints the median of ROUNDS runs of each cell and the load average.
#
#   bench/wait_policy.sh [BUILD_DIR]
#   env: GRAPH (a .wgc from bench/gap.sh's WG_GAP_WORK; default FLA there),
#        WG_GAP_WORK, WG_GAP_SSSP, THREADS (2), ROUNDS (5), BUSY (2),
#        GAP_DELTA (2048)
set -u
B=${1:-build}
W=$B/wattgraph
WORK=${WG_GAP_WORK:-${TMPDIR:-/tmp}/wattgraph-gap}
GRAPH=${GRAPH:-$WORK/FLA.wgc}
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-5}
BUSY=${BUSY:-2}
GAP=${WG_GAP_SSSP:-}
GAP_DELTA=${GAP_DELTA:-2048}
[ -x "$W" ] || { echo "wait_policy.sh: $W not found (build first)" >&2; exit 2; }
[ -s "$GRAPH" ] || { echo "wait_policy.sh: $GRAPH missing (run bench/gap.sh first)" >&2; exit 2; }
GAPF=${GRAPH%.wgc}.wsg
[ -s "$GAPF" ] || GAPF=${GRAPH%.wgc}.gr
if [ -z "$GAP" ] || [ ! -x "$GAP" ] || [ ! -s "$GAPF" ]; then
  echo "wait_policy.sh: peer missing (WG_GAP_SSSP and $GAPF); wattgraph only"
  GAP=
fi

pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap stop EXIT
for ((i = 0; i < BUSY; i++)); do
  timeout 900 sh -c 'while :; do :; done' &
  pids+=($!)
done
sleep 2
export OMP_NUM_THREADS=$THREADS

run() { # policy what -> seconds
  local env=(env -u OMP_WAIT_POLICY)
  [ "$1" != default ] && env=(env OMP_WAIT_POLICY="$1")
  case $2 in
    gap) "${env[@]}" "$GAP" -f "$GAPF" -r 0 -d "$GAP_DELTA" -n 1 | awk '/^Trial Time:/ {print $3}' ;;
    *) "${env[@]}" "$W" sssp "$GRAPH" -s 1 --backend cpu --algo "$2" -t "$THREADS" --no-pred --json -q |
         python3 -c 'import json,sys; print(json.load(sys.stdin)["median_seconds"])' ;;
  esac
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

whats="nearfar selftune"
[ -n "$GAP" ] && whats="gap $whats"
declare -A res
for ((r = 0; r < ROUNDS; r++)); do
  for pol in default passive active; do
    for w in $whats; do res[$pol.$w]+="$(run $pol $w) "; done
  done
done
echo "$(basename "$GRAPH" .wgc), $THREADS threads, $BUSY busy loops added, load average" \
     "$(cut -d' ' -f1-3 /proc/loadavg) at the end; median of $ROUNDS (ms)"
printf "%-10s" policy; for w in $whats; do printf " %10s" "$w"; done; echo
for pol in default passive active; do
  printf "%-10s" "$pol"
  for w in $whats; do
    printf " %10.1f" "$(printf '%s\n' ${res[$pol.$w]} | median | awk '{print $1 * 1e3}')"
  done
  echo
done
