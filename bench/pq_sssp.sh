#!/usr/bin/env bash
# Priority-queue SSSP against near-far, self-tuning and Dijkstra on the CPU
# (docs/pq.md, "priority-queue SSSP"): the shared NY and FLA roads ([1, 255]
# weights drawn from seed 1, as every road benchmark) and Kronecker 18
# (edge factor 16, generated once into a cache file), from each graph's
# default source. Every cell is the median of RUNS runs (--repeat; the CLI
# reports the median), predecessors included, the first run verified against
# the oracle. pq runs at several batch sizes (--parallelism); 0 = the
# default 1024.
#   bench/pq_sssp.sh [BUILD_DIR] [RUNS] [THREADS]
set -u
B=${1:-build}
RUNS=${2:-5}
T=${3:-0}
W=$B/wattgraph
D=${WG_SHARED_DATA:-/work/shared/data}
TMP=${TMPDIR:-/tmp}/pq_sssp_bench.$$
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT
"$W" gen kron --scale 18 --edge-factor 16 -o "$TMP/kron18.wgc" -q >/dev/null || exit 1
THR=()
[ "$T" != 0 ] && THR=(--threads "$T")

cell() { # graph file, label, sssp options...
  local f=$1 label=$2
  shift 2
  "$W" sssp "$f" --repeat "$RUNS" --verify --json -q "${THR[@]}" "$@" |
    python3 -c '
import json, sys
j = json.load(sys.stdin)
print("%-8s %-22s %10.4f %9d %s" % (sys.argv[1], sys.argv[2], j["median_seconds"],
      j["iterations"], "ok" if j.get("verified") else "FAILED"))' "$(basename "$f" | cut -c1-8)" "$label"
}

printf "%-8s %-22s %10s %9s %s\n" graph algo median_s iters verified
for f in "$D/dimacs9-USA-road-NY.pace16-topology.gr.xz" \
         "$D/dimacs9-USA-road-FLA.pace16-topology.gr.xz" "$TMP/kron18.wgc"; do
  cell "$f" dijkstra --algo dijkstra
  cell "$f" "nearfar (default delta)" --algo nearfar
  cell "$f" "selftune (default P)" --algo selftune
  for p in 64 256 1024 4096 16384 65536; do
    cell "$f" "pq batch $p" --algo pq --parallelism $p
  done
done
