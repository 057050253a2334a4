#!/usr/bin/env bash
# The power set-point's energy-time trade-off (issue 25): many sources on
# the GPU (wattgraph sssp --random-sources K) uncapped, then capped at each
# set-point, printing seconds and joules per source, the mean power, and
# how each 5 s window of the trace held the set-point (worst deviation, the
# first 3 s after the start left out). Run it where NVML and a GPU are
# (without, the cap fails with a message naming the missing meter). Use
# enough sources for >= 20 s runs (K far above what fits in one chunk, so
# the knob has chunks to steer).
#   bench/power_sweep.sh [BUILD_DIR] [GRAPH] [K] [WATTS...]
# GRAPH defaults to the shared FLA (unweighted files get [1, 255] weights,
# seed 1: --weights auto, as the benchmarks); WATTS defaults to 40..90% of the
# uncapped draw above idle (idle read from nvidia-smi before the runs).
set -u
B=${1:-build}
G=${2:-${WG_SHARED_DATA:-/work/shared/data}/dimacs9-USA-road-FLA.pace16-topology.gr.xz}
K=${3:-50000}
shift $(($# < 3 ? $# : 3))
W=$B/wattgraph
TMP=${TMPDIR:-/tmp}/power_sweep.$$
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT

run() { # label, extra options...
  local label=$1
  shift
  "$W" sssp "$G" --weights auto --random-sources "$K" --reduce ecc --reduce-out "$TMP/red.csv" --json -q \
    "$@" >"$TMP/out.json" || return 1
  python3 - "$label" "$TMP/out.json" "$TMP/trace.csv" <<'PY'
import csv, json, os, sys
label, out, trace = sys.argv[1:4]
j = json.load(open(out))
e = [r for r in j["energy"] if r.get("kind") == "gpu" and r.get("available")]
joules = sum(r["joules"] for r in e)
watts = joules / j["seconds"] if j["seconds"] > 0 else 0
worst = ""
if label != "uncapped" and os.path.exists(trace):
    rows = [(float(r["t"]), float(r["watts"]), float(r["setpoint"])) for r in csv.DictReader(open(trace))]
    if rows:
        sp, t0, t1 = rows[0][2], rows[0][0] + 3.0, rows[-1][0]
        dev = []
        a = t0
        while a + 5.0 <= t1:
            w = [x[1] for x in rows if a <= x[0] < a + 5.0]
            if w:
                dev.append(abs(sum(w) / len(w) - sp) / sp)
            a += 1.0
        worst = "%.1f%%" % (100 * max(dev)) if dev else "run < 8 s"
print("%-10s %8.3f s %10.3f ms/source %9.4f J/source %7.1f W  worst 5 s window %s"
      % (label, j["seconds"], 1e3 * j["seconds_per_source"], joules / j["sources"], watts, worst))
PY
}

idle=$(nvidia-smi --query-gpu=power.draw --format=csv,noheader,nounits 2>/dev/null | head -1)
run uncapped || { echo "uncapped run failed"; exit 1; }
if [ $# -eq 0 ]; then
  peak=$(python3 -c 'import json; j=json.load(open("'"$TMP/out.json"'")); e=[r for r in j["energy"] if r.get("kind")=="gpu" and r.get("available")]; print(sum(r["joules"] for r in e)/j["seconds"] if e else 0)')
  if python3 -c "import sys; sys.exit(0 if float('$peak') > 0 else 1)"; then :; else
    echo "# no GPU energy reading (NVML): nothing to sweep"
    exit 1
  fi
  set -- $(python3 -c "
idle = float('${idle:-0}' or 0); peak = float('$peak')
print(' '.join('%.0f' % (idle + f * (peak - idle)) for f in (0.4, 0.5, 0.6, 0.7, 0.8, 0.9)))")
  echo "# idle ${idle:-unknown} W, uncapped mean $peak W; set-points: $*"
fi
for w in "$@"; do
  rm -f "$TMP/trace.csv"
  run "cap ${w}W" --power-cap "$w" --power-trace "$TMP/trace.csv"
done
