#!/usr/bin/env bash
# The power set-point's energy-time trade-off (issue 25): many sources on
# the GPU (wattgraph sssp --random-sources K) uncapped, then capped at each
# set-point, printing seconds and joules per source, the mean power, and
# how each 5 s window of the trace held the set-point (worst deviation, the
# first 3 s after the start left out), and the governor thread's CPU time
# against the run. Run it where NVML and a GPU are (without, the cap fails
# with a message naming the missing meter). K sources run uncapped; each
# capped run gets as many sources as take SECONDS (default 22) at the
# uncapped rate scaled by the set-point's share of the draw above idle.
# Last, one run with a set-point schedule (60% of the draw above idle, 90%
# at SCHED_T1 (8) s, 40% at SCHED_T2 (16) s; SCHEDULE=0 skips it) reports the settling time
# after each change: from the change until the 1 s mean (trace windows)
# stays within 5% of the new set-point; with bench/power_judge.py's watch
# beside it (JUDGE=0 skips), the same judged by true 1 s means.
#   bench/power_sweep.sh [BUILD_DIR] [GRAPH] [K] [WATTS...]
# GRAPH defaults to the shared FLA (unweighted files get [1, 255] weights,
# seed 1: --weights auto, as the benchmarks); WATTS defaults to 40..90% of the
# uncapped draw above idle (idle read from nvidia-smi before the runs).
set -u
B=${1:-build}
G=${2:-${WG_SHARED_DATA:-/work/shared/data}/dimacs9-USA-road-FLA.pace16-topology.gr.xz}
K=${3:-20000}
SECONDS_RUN=${SECONDS_RUN:-22}
shift $(($# < 3 ? $# : 3))
W=$B/wattgraph
TMP=${TMPDIR:-/tmp}/power_sweep.$$
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT

run() { # label, extra options...
  local label=$1
  shift
  local k=$K
  case "${1:-}" in k=*) k=${1#k=}; shift ;; esac
  "$W" sssp "$G" --weights auto --random-sources "$k" --reduce ecc --reduce-out "$TMP/red.csv" --json -q \
    "$@" >"$TMP/out.json" || return 1
  python3 - "$label" "$TMP/out.json" "$TMP/trace.csv" <<'PY'
import csv, json, os, sys
label, out, trace = sys.argv[1:4]
j = json.load(open(out))
e = [r for r in j["energy"] if r.get("kind") == "gpu" and r.get("available")]
joules = sum(r["joules"] for r in e)
watts = joules / j["seconds"] if j["seconds"] > 0 else 0
worst = ""
if label != "uncapped" and not os.environ.get("SETTLE") and os.path.exists(trace):
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
cost = ""
if "power_governor_cpu_seconds" in j and j["seconds"] > 0:
    cost = "  governor CPU %.4f s (%.3f%%), waits %.1f s" % (
        j["power_governor_cpu_seconds"], 100 * j["power_governor_cpu_seconds"] / j["seconds"],
        j.get("power_waited_seconds", 0))
    if "power_governor_reads" in j:
        cost += ", %d reads / %d windows / %d wake-ups, %d feed-forward jumps" % (
            j["power_governor_reads"], j["power_governor_windows"],
            j.get("power_governor_wakeups", 0), j.get("power_feedforward_jumps", 0))
print("%-10s %6d src %8.3f s %10.4f ms/source %9.4f J/source %7.1f W  worst 5 s window %s%s"
      % (label, j["sources"], j["seconds"], 1e3 * j["seconds_per_source"], joules / j["sources"],
         watts, worst, cost))
sys.stdout.flush()
if os.path.exists(trace) and os.environ.get("SETTLE"):
    rows = [(float(r["t"]), float(r["watts"]), float(r["setpoint"])) for r in csv.DictReader(open(trace))]
    changes = [i for i in range(1, len(rows)) if rows[i][2] != rows[i - 1][2]]
    for c in changes:
        sp = rows[c][2]
        t_change = rows[c - 1][0]
        end = next((i for i in changes if i > c), len(rows))
        settled = None
        for i in range(c, end):
            ok = True
            for k in range(i, end):
                w = [x[1] for x in rows[c:end] if rows[k][0] - 1.0 < x[0] <= rows[k][0]]
                if abs(sum(w) / len(w) - sp) / sp > 0.05:
                    ok = False
                    break
            if ok:
                settled = rows[i][0] - t_change
                break
        print("  set-point %.0f W at %.2f s: settled %s" % (sp, t_change,
              "after %.2f s (1 s mean within 5%% to the next change)" % settled if settled is not None else "never"))
PY
}

idle=${IDLE_W:-$(nvidia-smi --query-gpu=power.draw --format=csv,noheader,nounits 2>/dev/null | head -1)}
run uncapped || { echo "uncapped run failed"; exit 1; }
read -r peak rate < <(python3 -c 'import json; j=json.load(open("'"$TMP/out.json"'")); e=[r for r in j["energy"] if r.get("kind")=="gpu" and r.get("available")]; print(sum(r["joules"] for r in e)/j["seconds"] if e else 0, j["sources"]/j["seconds"])')
if python3 -c "import sys; sys.exit(0 if float('$peak') > 0 else 1)"; then :; else
  echo "# no GPU energy reading (NVML): nothing to sweep"
  exit 1
fi
at() { python3 -c "print('%.0f' % (float('${idle:-0}' or 0) + $1 * ($peak - float('${idle:-0}' or 0))))"; }
if [ $# -eq 0 ]; then
  set -- $(at 0.4) $(at 0.6) $(at 0.75) $(at 0.9)
fi
echo "# idle ${idle:-unknown} W, uncapped mean $peak W, $rate sources/s; set-points: $*"
for w in "$@"; do
  rm -f "$TMP/trace.csv"
  k=$(python3 -c "
idle = float('${idle:-0}' or 0); f = max(0.15, min(1.0, ($w - idle) / ($peak - idle)))
print(int($rate * $SECONDS_RUN * f * 1.1))")
  run "cap ${w}W" k="$k" --power-cap "$w" --power-trace "$TMP/trace.csv"
  [ -n "${KEEP_TRACES:-}" ] && cp "$TMP/trace.csv" "$KEEP_TRACES/trace-${w}.csv"
done
if [ "${SCHEDULE:-1}" != 0 ]; then
  rm -f "$TMP/trace.csv"
  w60=$(at 0.6) w90=$(at 0.9) w40=$(at 0.4)
  t1=${SCHED_T1:-8} t2=${SCHED_T2:-16}
  k=$(python3 -c "print(int($rate * ($t2 + $t2 - $t1) * 0.6 * 1.1))")
  # the judge's meter beside it (bench/power_judge.py): the trace's windows
  # are +-20% by the counter's staleness, the judge's 1 s means ~+-0.4%
  judge=$(dirname "$0")/power_judge.py
  jp=
  if [ "${JUDGE:-1}" != 0 ] && [ -f "$judge" ]; then
    python3 "$judge" watch "$TMP/watch.csv" $((t2 + t2 - t1 + 30)) >"$TMP/watch.log" 2>&1 &
    jp=$!
    sleep 1
  fi
  SETTLE=1 run "schedule ${w60}W,${w90}W@$t1,${w40}W@$t2" k="$k" --power-cap "$w60" \
    --power-schedule "${w90}@$t1,${w40}@$t2" --power-trace "$TMP/trace.csv"
  [ -n "${KEEP_TRACES:-}" ] && cp "$TMP/trace.csv" "$KEEP_TRACES/trace-schedule.csv"
  if [ -n "$jp" ]; then
    kill -TERM "$jp" 2>/dev/null
    wait "$jp"
    cat "$TMP/watch.log"
    [ -s "$TMP/watch.csv" ] && python3 "$judge" judge "$TMP/watch.csv" "$TMP/trace.csv"
  fi
fi
