#!/usr/bin/env bash
# wattgraph traffic end to end on a generated road graph: help, exit
# statuses, one-line errors naming the trips file and line, JSON
# conservation, the --out files (series CSV header, FCD XML well formed).
set -u
bin=${WG_BIN:?WG_BIN not set}
. "$(dirname "$0")/support/cli_check.sh"

"$bin" gen road --vertices 2000 -o "$tmp/road.wgc" -q >/dev/null || { echo "FAIL gen road"; exit 1; }
check help 0 "$bin" traffic --help
expect_in help "$tmp/out" "--reroute-mode"
expect_in help_round "$tmp/out" "--round WHERE"
check nothing 2 "$bin" traffic "$tmp/road.wgc"
expect_in nothing "$tmp/err" "nothing to simulate"
check both 2 "$bin" traffic "$tmp/road.wgc" --vehicles 5 --trips x
check range 2 "$bin" traffic "$tmp/road.wgc" --walkers 5 --step 0
check mode 2 "$bin" traffic "$tmp/road.wgc" --walkers 5 --reroute-mode some
check round 2 "$bin" traffic "$tmp/road.wgc" --walkers 5 --round gpu
expect_in round "$tmp/err" "unknown --round 'gpu' (device or host)"
printf '0 1 5\n10 1\n' >"$tmp/bad.trips"
check bad_trips 1 "$bin" traffic "$tmp/road.wgc" --trips "$tmp/bad.trips" -q
expect_in bad_trips "$tmp/err" "bad.trips:2: expected 'depart origin destination', found 2 fields"
printf '0 0 99999\n' >"$tmp/unknown.trips"
check unknown_id 1 "$bin" traffic "$tmp/road.wgc" --trips "$tmp/unknown.trips" -q
expect_in unknown_id "$tmp/err" "unknown.trips:1: destination 99999 is not a vertex of the map"
printf 'p sp 2 1\na 1 2 5\n' >"$tmp/plain.gr"
check no_lengths 1 "$bin" traffic "$tmp/plain.gr" --walkers 1 -q
expect_in no_lengths "$tmp/err" "no road lengths"
printf '0 0 1500\n5 17 3\n30 100 1999\n' >"$tmp/good.trips"
check run 0 "$bin" traffic "$tmp/road.wgc" --trips "$tmp/good.trips" --walkers 300 \
  --duration 600 --reroute 120 --json -q --out "$tmp/run" --fcd-share 0.1
python3 - "$tmp/out" <<'PY' || failures=$((failures + 1))
import json, sys
j = json.loads(open(sys.argv[1]).read())
r = j["removed"]
assert j["departed"] == j["arrived"] + j["running"] + r["gridlock"] + r["dead_end"], j
assert j["departed"] + j["queued"] + sum(j["refused"].values()) == 3 + 300, j
assert j["routes"] >= 3 and j["reroute_rounds"] == 4, j
assert 0 <= j["routing_seconds"] and 0 < j["reroute_round_seconds"] <= j["wall_seconds"], j
assert j["vehicle_updates"] > 0 and j["vehicle_km"] > 0, j
PY
expect_in series "$tmp/run/series.csv" "time,from,to,flow_vph,density_vpkm,speed_ms"
python3 -c "import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); assert len(d.getElementsByTagName('timestep')) == 601" "$tmp/run/fcd.xml" || { echo "FAIL fcd.xml"; failures=$((failures + 1)); }
# --backend cuda: without a GPU (or a CUDA build) a clear refusal; with one,
# the same run as the CPU's (the CUDA step reproduces the CPU step bit for bit)
"$bin" traffic "$tmp/road.wgc" --trips "$tmp/good.trips" --walkers 300 --duration 300 \
  --reroute 120 --json -q --backend cpu >"$tmp/cpu.json" 2>"$tmp/cpu.err"
"$bin" traffic "$tmp/road.wgc" --trips "$tmp/good.trips" --walkers 300 --duration 300 \
  --reroute 120 --json -q --backend cuda >"$tmp/cuda.json" 2>"$tmp/cuda.err"
rc=$?
case $rc in
0)
  python3 - "$tmp/cpu.json" "$tmp/cuda.json" <<'PY' || failures=$((failures + 1))
import json, sys
a, b = (json.loads(open(p).read()) for p in sys.argv[1:3])
assert a["backend"] == "cpu" and b["backend"] == "cuda", (a["backend"], b["backend"])
for k in ("departed", "arrived", "running", "queued", "removed", "refused", "vehicle_km",
          "vehicle_updates", "routes", "reroute_rounds", "mean_trip_seconds"):
    assert a[k] == b[k], (k, a[k], b[k])
PY
  pass=$((pass + 1)) ;;
1)
  expect_in cuda "$tmp/cuda.err" "CUDA" ;;
*)
  echo "FAIL cuda: exit $rc"; failures=$((failures + 1)) ;;
esac
cli_check_done "traffic cli"
