#!/usr/bin/env bash
# Many sources on the GPU against GAP on the host's cores (issue 25):
# `wattgraph sssp --random-sources K` (one call, all sources in flight)
# beside GAP's delta-stepping sssp in its two many-source modes:
#   A  THREADS threads per source, one source after another: one process,
#      GAP's -n N_A trials (each trial a new random source of GAP's own
#      picker), mean trial time x K;
#   B  THREADS single-threaded processes side by side (each pinned to a
#      core when taskset is there), each running N_B trials: K sources take
#      K / (THREADS x N_B) x the slowest process's summed trial time.
# Both GAP modes time a sample (N_A, N_B sources) and extrapolate to K, and
# GAP picks its own random sources (its -r takes one source; every process
# of mode B picks the same sequence): the script says so in its output.
# Trial times only on GAP's side (no graph load), computation time on ours
# (median of ROUNDS runs, the graph load not counted); same graph file,
# same weights ([1, 255] drawn from seed 1 by `wattgraph convert`).
#
# The peer is RUN, never built here: GAP (sbeamer/gapbs) is built outside
# the repository and its sssp binary given in WG_GAP_SSSP (its converter,
# next to it or in WG_GAP_CONVERTER, makes the .wsg; else GAP reads .gr).
# Without it: "peer missing", our run only.
#
#   bench/many_gap.sh [BUILD_DIR] [GRAPH.gr.xz]
#   env: WG_GAP_SSSP, WG_GAP_CONVERTER, WG_GAP_WORK, K (1000), SEED (1),
#        THREADS (16), N_A (200), N_B (16), ROUNDS (3),
#        DELTAS ("1024 2048 4096 8192 16384", GAP's delta sweep, mode A)
set -u
B=${1:-build}
G=${2:-${WG_SHARED_DATA:-/work/shared/data}/dimacs9-USA-road-FLA.pace16-topology.gr.xz}
W=$B/wattgraph
WORK=${WG_GAP_WORK:-${TMPDIR:-/tmp}/wattgraph-many-gap}
K=${K:-1000}
SEED=${SEED:-1}
THREADS=${THREADS:-16}
N_A=${N_A:-200}
N_B=${N_B:-16}
ROUNDS=${ROUNDS:-3}
DELTAS=${DELTAS:-1024 2048 4096 8192 16384}
GAP=${WG_GAP_SSSP:-}
CONV=${WG_GAP_CONVERTER:-}
[ -x "$W" ] || { echo "many_gap.sh: $W not found (build first)" >&2; exit 2; }
if [ -z "$GAP" ] || [ ! -x "$GAP" ]; then
  echo "many_gap.sh: peer missing (set WG_GAP_SSSP to GAP's sssp binary); wattgraph only"
  GAP=
fi
[ -z "$CONV" ] && [ -n "$GAP" ] && [ -x "$(dirname "$GAP")/converter" ] &&
  CONV=$(dirname "$GAP")/converter
mkdir -p "$WORK" || exit 2
name=$(basename "$G" | sed 's/\.gr\.xz$//; s/\.gr$//')
c=$WORK/$name.wgc
if [ ! -s "$c" ]; then
  "$W" convert "$G" "$c" --weights random --weight-range 1:255 --seed 1 -q >/dev/null ||
    { echo "many_gap.sh: cannot convert $G" >&2; exit 1; }
fi
echo "# graph $G, K $K sources (seed $SEED), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- ours: one call, all K sources ----
ours=()
for r in $(seq "$ROUNDS"); do
  "$W" sssp "$c" --random-sources "$K" --seed "$SEED" --reduce ecc --reduce-out /dev/null \
    --json -q >"$WORK/ours.json" || { echo "many_gap.sh: wattgraph failed" >&2; exit 1; }
  s=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["seconds"], j["backend"], j["in_flight"])' "$WORK/ours.json")
  echo "wattgraph run $r: seconds, backend, in flight: $s"
  ours+=("${s%% *}")
done
om=$(printf '%s\n' "${ours[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "wattgraph $K sources: median $om s"
[ -z "$GAP" ] && exit 0

# ---- GAP's files ----
[ -s "$WORK/$name.gr" ] || "$W" convert "$c" "$WORK/$name.gr" -q >/dev/null || exit 1
gf=$WORK/$name.gr
if [ -n "$CONV" ]; then
  [ -s "$WORK/$name.wsg" ] || "$CONV" -f "$WORK/$name.gr" -wb "$WORK/$name.wsg" >/dev/null ||
    rm -f "$WORK/$name.wsg"
  [ -s "$WORK/$name.wsg" ] && gf=$WORK/$name.wsg
fi
trials() { grep -E '^Trial Time:' | awk '{print $3}'; }
mean() { awk '{s+=$1; n++} END {if (n) printf "%.6f\n", s/n}'; }

# ---- mode A: delta sweep at THREADS threads, then N_A sources ----
export OMP_NUM_THREADS=$THREADS OMP_PROC_BIND=${OMP_PROC_BIND:-spread}
best= bt=
for d in $DELTAS; do
  t=$("$GAP" -f "$gf" -d "$d" -n 8 | trials | tail -n +2 | mean)
  echo "gap $THREADS threads delta $d: mean of 7 warm trials ${t:-?} s"
  [ -z "$t" ] && continue
  if [ -z "$bt" ] || awk -v a="$t" -v b="$bt" 'BEGIN {exit !(a < b)}'; then bt=$t; best=$d; fi
done
[ -n "$best" ] || { echo "many_gap.sh: GAP gave no trial times" >&2; exit 1; }
ta=$("$GAP" -f "$gf" -d "$best" -n "$((N_A + 1))" | trials | tail -n +2 | mean)
A=$(awk -v t="$ta" -v k="$K" 'BEGIN {printf "%.4f", t * k}')
echo "gap A ($THREADS threads a source, delta $best): $ta s a source over $N_A of GAP's random sources; $K sources: $A s (extrapolated)"

# ---- mode B: THREADS single-threaded processes side by side ----
unset OMP_PROC_BIND
export OMP_NUM_THREADS=1
tb=
for dd in $best $((best / 2)) $((best * 2)); do
  pids=()
  for i in $(seq 0 $((THREADS - 1))); do
    if command -v taskset >/dev/null; then
      taskset -c "$i" "$GAP" -f "$gf" -d "$dd" -n "$N_B" >"$WORK/b.$i" &
    else
      "$GAP" -f "$gf" -d "$dd" -n "$N_B" >"$WORK/b.$i" &
    fi
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  slow=$(for i in $(seq 0 $((THREADS - 1))); do trials <"$WORK/b.$i" | awk '{s+=$1} END {print s}'; done | sort -g | tail -1)
  t=$(awk -v s="$slow" -v k="$K" -v p="$THREADS" -v n="$N_B" 'BEGIN {printf "%.4f", s * k / (p * n)}')
  echo "gap B ($THREADS x 1 thread, delta $dd): slowest process $slow s for $N_B sources; $K sources: $t s (extrapolated)"
  if [ -z "$tb" ] || awk -v a="$t" -v b="$tb" 'BEGIN {exit !(a < b)}'; then tb=$t; fi
done
bestgap=$(awk -v a="$A" -v b="$tb" 'BEGIN {print (a < b ? a : b)}')
echo "best GAP for $K sources: $bestgap s (A $A, B $tb; samples extrapolated, GAP's own random sources)"
awk -v g="$bestgap" -v o="$om" 'BEGIN {printf "wattgraph %s s: %.1fx the best of GAP (target 25x)\n", o, g / o}'
