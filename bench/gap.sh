#!/usr/bin/env bash
# GAP's delta-stepping SSSP (github sbeamer/gapbs, the reference CPU kernel)
# beside `wattgraph sssp --backend cpu` on the same weighted files
# (docs/nearfar.md, "Against GAP"; issue 28).
#
# The peer is RUN, never built here: GAP (sbeamer/gapbs) is built outside
# the repository by whoever runs this, and its sssp binary given in
# WG_GAP_SSSP. Without it the script says "peer missing"
# and exits 0 after the wattgraph runs.
#
# Files, written once into WG_GAP_WORK (default ${TMPDIR:-/tmp}/wattgraph-gap):
#   NY, FLA   the shared DIMACS roads, [1, 255] weights drawn from seed 1 by
#             `wattgraph convert` (binary cache for us, DIMACS .gr text for
#             GAP, which reads .gr; its converter, when found next to sssp,
#             makes a .wsg that loads faster: same arcs, same weights)
#   kron20    `wattgraph gen kron --scale 20` (edge factor 16, [1, 255]), the
#             same file for both
# Source: file vertex 1 for both (GAP numbers .gr vertices from 0: -r 0).
#
# Then: GAP's delta sweep (the best average of 3 trials kept), and
# ROUNDS alternating rounds of GAP at its best delta, wattgraph nearfar at
# the default delta and selftune at the default P. Both sides are measured
# the same way: one process per run, TRIALS timed runs in it (GAP's -n, our
# -n), the median of them kept, so that the first run, which pays the page
# faults of fresh arrays, the thread pool's start and cold caches, does not
# count on either side (GAP's first trial on FLA took 125 ms where its warm
# trials averaged 77); GAP's trial time, our computation time; distances
# only on both sides: --no-pred. (Our JSON lists the runs' seconds sorted,
# so the first run cannot be picked out: the median is the rule for both.)
# Medians over the rounds and our ratio to GAP are printed with the thread
# count, the wait policy and the load average.
#
# PIN (a taskset CPU list, e.g. 0,1) runs both sides on the same cores;
# RUNS names our runs: ALGO, ALGO:LB, ALGO:LB:DELTA or ALGO:LB:DELTA:P (an
# empty DELTA keeps the default; P is the self-tuning set-point;
# nearfar:thread is the one-region band loop on any graph,
# docs/nearfar.md); a run written
# alt/ALGO... uses the wattgraph binary WG_ALT instead (an older build, to
# compare two versions in the same rounds). BUSY spinning loops (bounded,
# stopped at the end) load the machine, on the PIN cores when PIN is set:
# the loaded-machine case of issue 28 on an otherwise idle host.
#
#   bench/gap.sh [BUILD_DIR]
#   env: WG_GAP_SSSP, WG_GAP_CONVERTER, WG_GAP_WORK, WG_SHARED_DATA,
#        THREADS (2), ROUNDS (4), TRIALS (5), GRAPHS ("NY FLA kron20"),
#        DELTAS (roads: "256 512 1024 2048 4096 8192"),
#        KRON_DELTAS ("8 16 32 64 128 256"), OMP_WAIT_POLICY (as set),
#        PIN (none), RUNS ("nearfar selftune"), WG_ALT (none), BUSY (0),
#        WG_COMMIT (the checkout's HEAD)
set -u
B=${1:-build}
W=$B/wattgraph
D=${WG_SHARED_DATA:-/work/shared/data}
WORK=${WG_GAP_WORK:-${TMPDIR:-/tmp}/wattgraph-gap}
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-4}
TRIALS=${TRIALS:-5}
[ "$TRIALS" -ge 3 ] 2>/dev/null || { echo "gap.sh: TRIALS must be 3 or more" >&2; exit 2; }
GRAPHS=${GRAPHS:-NY FLA kron20}
DELTAS=${DELTAS:-256 512 1024 2048 4096 8192}
KRON_DELTAS=${KRON_DELTAS:-8 16 32 64 128 256}
RUNS=${RUNS:-nearfar selftune}
PIN=${PIN:-}
TS=()
[ -n "$PIN" ] && TS=(taskset -c "$PIN")
GAP=${WG_GAP_SSSP:-}
CONV=${WG_GAP_CONVERTER:-}
[ -x "$W" ] || { echo "gap.sh: $W not found (build first)" >&2; exit 2; }
if [ -z "$GAP" ] || [ ! -x "$GAP" ]; then
  echo "gap.sh: peer missing (set WG_GAP_SSSP to GAP's sssp binary); wattgraph only"
  GAP=
fi
[ -z "$CONV" ] && [ -n "$GAP" ] && [ -x "$(dirname "$GAP")/converter" ] &&
  CONV=$(dirname "$GAP")/converter
mkdir -p "$WORK" || exit 2
export OMP_NUM_THREADS=$THREADS
echo "threads $THREADS, OMP_WAIT_POLICY ${OMP_WAIT_POLICY:-unset, the runtime default}," \
     "rounds $ROUNDS, median of $TRIALS trials a run, cores ${PIN:-any}, load average $(cut -d' ' -f1-3 /proc/loadavg)"
# WG_COMMIT names the binary's commit where the checkout's HEAD is not it
# (a device call runs a packed binary inside another checkout)
echo "wattgraph ${WG_COMMIT:-$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo '?')}, gap ${GAP:-missing}"

prepare() { # name -> $WORK/name.wgc and the file GAP reads
  local g=$1 c=$WORK/$1.wgc
  if [ ! -s "$c" ]; then
    if [ "$g" = kron20 ]; then
      "$W" gen kron --scale 20 -o "$c" -q >/dev/null || return 1
    else
      "$W" convert "$D/dimacs9-USA-road-$g.pace16-topology.gr.xz" "$c" \
        --weights random --weight-range 1:255 --seed 1 -q >/dev/null || return 1
    fi
  fi
  [ -z "$GAP" ] && return 0
  [ -s "$WORK/$g.gr" ] || "$W" convert "$c" "$WORK/$g.gr" -q >/dev/null || return 1
  if [ -n "$CONV" ] && [ ! -s "$WORK/$g.wsg" ]; then
    "$CONV" -f "$WORK/$g.gr" -wb "$WORK/$g.wsg" >/dev/null || rm -f "$WORK/$g.wsg"
  fi
}
gapfile() { [ -s "$WORK/$1.wsg" ] && echo "$WORK/$1.wsg" || echo "$WORK/$1.gr"; }

gap_avg() { # file delta trials -> average seconds
  "${TS[@]}" "$GAP" -f "$1" -r 0 -d "$2" -n "$3" | awk '/^Average Time:/ {print $3}'
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
gap_warm() { # file delta -> median of TRIALS trials in one process (seconds)
  "${TS[@]}" "$GAP" -f "$1" -r 0 -d "$2" -n "$TRIALS" | awk '/^Trial Time:/ {print $3}' | median
}
ours() { # file [alt/]algo[:lb[:delta[:P]]] -> median of TRIALS runs in one process (seconds), iterations
  local algo lb delta extra=() w=$W spec=$2
  if [ "${spec#alt/}" != "$spec" ]; then
    spec=${spec#alt/}
    w=${WG_ALT:-}
    [ -x "$w" ] || { echo "nan 0"; return; }
  fi
  IFS=: read -r algo lb delta par <<<"$spec"
  [ -n "$delta" ] && extra=(--delta "$delta")
  [ -n "$par" ] && extra+=(--parallelism "$par")
  "${TS[@]}" "$w" sssp "$1" -s 1 --backend cpu --algo "$algo" --lb "${lb:-auto}" -t "$THREADS" \
    "${extra[@]}" --no-pred --json -q -n "$TRIALS" |
    python3 -c 'import json,statistics,sys; j=json.load(sys.stdin); print(statistics.median(j["seconds"]), j["iterations"])'
}

BUSY=${BUSY:-0}
busy=()
stop_busy() { for p in "${busy[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap stop_busy EXIT
for ((i = 0; i < BUSY; i++)); do
  "${TS[@]}" timeout 900 sh -c 'while :; do :; done' &
  busy+=($!)
done
[ "$BUSY" -gt 0 ] && echo "$BUSY busy loops on cores ${PIN:-any}" && sleep 1
printf "%-7s %-28s %10s %8s %s\n" graph run median_ms ratio "rounds (ms)"
for g in $GRAPHS; do
  prepare "$g" || { echo "$g: cannot prepare the files" >&2; continue; }
  best=
  if [ -n "$GAP" ]; then
    gf=$(gapfile "$g")
    bt=
    sweep=$DELTAS
    [ "$g" = kron20 ] && sweep=$KRON_DELTAS
    for d in $sweep; do
      t=$(gap_avg "$gf" "$d" 3)
      [ -z "$t" ] && continue
      echo "  $g gap sweep: delta $d average ${t} s" >&2
      if [ -z "$bt" ] || awk -v a="$t" -v b="$bt" 'BEGIN {exit !(a < b)}'; then bt=$t; best=$d; fi
    done
  fi
  gt=()
  declare -A rt=() ri=()
  for ((r = 0; r < ROUNDS; r++)); do
    [ -n "$best" ] && gt+=("$(gap_warm "$gf" "$best")")
    line="  $g round $((r + 1)):"
    [ -n "$best" ] && line="$line gap ${gt[-1]}"
    for run in $RUNS; do
      read -r t i < <(ours "$WORK/$g.wgc" "$run")
      rt[$run]="${rt[$run]:-} $t" ri[$run]=$i
      line="$line $run $t"
    done
    # each round as it ends (seconds): a run cut short by a timeout keeps them
    echo "$line" >&2
  done
  ms() { printf '%s\n' "$@" | awk '{printf "%.1f ", $1 * 1e3}'; }
  gm=
  if [ -n "$best" ]; then
    gm=$(printf '%s\n' "${gt[@]}" | median)
    printf "%-7s %-28s %10.1f %8s %s\n" "$g" "gap delta $best (best)" "$(awk -v x="$gm" 'BEGIN {print x * 1e3}')" 1.00 "$(ms "${gt[@]}")"
  fi
  for run in $RUNS; do
    read -r -a arr <<<"${rt[$run]}"
    case $run in
      nearfar) lab="nearfar default delta" ;;
      selftune) lab="selftune default P" ;;
      *) lab=$run ;;
    esac
    lab="$lab, ${ri[$run]} it"
    m=$(printf '%s\n' "${arr[@]}" | median)
    ratio=-
    [ -n "$gm" ] && ratio=$(awk -v a="$m" -v b="$gm" 'BEGIN {printf "%.2fx", a / b}')
    printf "%-7s %-28s %10.1f %8s %s\n" "$g" "$lab" "$(awk -v x="$m" 'BEGIN {print x * 1e3}')" "$ratio" "$(ms "${arr[@]}")"
  done
  unset rt ri
done
echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
