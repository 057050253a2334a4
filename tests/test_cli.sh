#!/usr/bin/env bash
# The command line end to end: help, exit statuses, one-line errors, the
# --out format on a hand-checked graph, JSON, convert and gen round trips.
set -u
bin=${WG_BIN:?WG_BIN not set}
data=${WG_TEST_DATA:-$(cd "$(dirname "$0")" && pwd)/data}
. "$(dirname "$0")/support/cli_check.sh"

# help and usage
check help 0 "$bin" --help
expect_in help "$tmp/out" "usage: wattgraph COMMAND"
for c in info convert gen sssp; do
  check "help-$c" 0 "$bin" $c --help
  expect_in "help-$c" "$tmp/out" "usage: wattgraph $c"
done
check no-args 2 "$bin"
check unknown-command 2 "$bin" frobnicate
one_line_error unknown-command
check unknown-option 2 "$bin" sssp "$data/tiny.gr" --frob
one_line_error unknown-option
check bad-number 2 "$bin" sssp "$data/tiny.gr" -s 12x
one_line_error bad-number
check negative-number 2 "$bin" sssp "$data/tiny.gr" --repeat -1
one_line_error negative-number
check bad-range 2 "$bin" sssp "$data/tiny.gr" --weight-range 9:3
one_line_error bad-range
check missing-arg 2 "$bin" sssp
one_line_error missing-arg
check bad-algo 2 "$bin" sssp "$data/tiny.gr" --algo nope
one_line_error bad-algo

# failures of the work: exit 1 and one line naming the problem
check missing-file 1 "$bin" info "$tmp/nope.gr"
one_line_error missing-file
expect_in missing-file "$tmp/err" "nope.gr"
printf 'p sp 3 2\na 1 2 5\na 1 0 4\n' >"$tmp/bad.gr"
check bad-file 1 "$bin" info "$tmp/bad.gr"
one_line_error bad-file
expect_in bad-file "$tmp/err" "bad.gr:3"
check source-out-of-range 1 "$bin" sssp "$data/tiny.gr" -s 8
one_line_error source-out-of-range
expect_in source-out-of-range "$tmp/err" "source 8"
check source-zero 1 "$bin" sssp "$data/tiny.gr" -s 0
one_line_error source-zero

# the hand-checked distances, in file id order, 'inf' for unreachable
check sssp-out 0 "$bin" sssp "$data/tiny.gr" -s 1 --weights file --verify --out "$tmp/d"
if cmp -s "$tmp/d" "$data/tiny.dist1"; then pass=$((pass + 1)); else
  echo "FAIL sssp-out: distances differ from tests/data/tiny.dist1:"
  diff "$tmp/d" "$data/tiny.dist1" | head
  failures=$((failures + 1))
fi
expect_in sssp-table "$tmp/out" "reached    6 of 7 vertices"
expect_in sssp-table "$tmp/out" "max dist   20"
expect_in sssp-table "$tmp/out" "PASS"
expect_in sssp-energy "$tmp/out" "energy"

# With a meter present (a fake RAPL tree), energy comes from one call that
# repeats the computation for --energy-seconds; 0 keeps the timed runs' window.
# The oracle on the 7-vertex graph takes microseconds, so even a loaded
# machine stays far below the 0.5 s window (a threaded algorithm's start-up
# could not promise that).
rapl=$tmp/powercap/intel-rapl:0
mkdir -p "$rapl"
echo package-0 >"$rapl/name"; echo 1000 >"$rapl/energy_uj"; echo 1000000000 >"$rapl/max_energy_range_uj"
check sssp-energy-window 0 env WG_POWERCAP_ROOT="$tmp/powercap" "$bin" sssp "$data/tiny.gr" -s 1 \
  --weights file --energy-seconds 0.5 --json
expect_in sssp-energy-window "$tmp/out" '"available":true'
runs=$(grep -o '"energy_runs":[0-9]*' "$tmp/out" | cut -d: -f2)
if [ "${runs:-0}" -gt 1 ]; then pass=$((pass + 1)); else
  echo "FAIL sssp-energy-window: energy_runs '${runs:-}' should exceed the 1 timed run"
  failures=$((failures + 1)); fi
check sssp-energy-timed 0 env WG_POWERCAP_ROOT="$tmp/powercap" "$bin" sssp "$data/tiny.gr" -s 1 \
  --weights file --energy-seconds 0 --repeat 2 --json
expect_in sssp-energy-timed "$tmp/out" '"energy_runs":2'
check sssp-energy-text 0 env WG_POWERCAP_ROOT="$tmp/powercap" "$bin" sssp "$data/tiny.gr" -s 1 \
  --weights file --energy-seconds 0.5
expect_in sssp-energy-text "$tmp/out" "from one call repeating the computation"

# JSON: one object, with the fields a script needs
check sssp-json 0 "$bin" sssp "$data/tiny.gr" -s 1 --weights file --verify --json --repeat 3
if [ "$(wc -l <"$tmp/out")" -eq 1 ]; then pass=$((pass + 1)); else
  echo "FAIL sssp-json: expected one line"; failures=$((failures + 1)); fi
for field in '"command":"sssp"' '"reached":6' '"max_distance":20' '"verified":true' '"repeat":3' '"energy":['; do
  expect_in sssp-json "$tmp/out" "$field"
done
if command -v python3 >/dev/null; then
  if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out"; then
    pass=$((pass + 1)); else echo "FAIL sssp-json: not valid JSON"; failures=$((failures + 1)); fi
  # the median is the median of the runs listed (which stay in run order)
  ok sssp-json-median python3 -c 'import json,sys,statistics as st; j = json.load(open(sys.argv[1])); s = j["seconds"]; assert len(s) == 3 and abs(st.median(s) - j["median_seconds"]) <= 1e-12 * max(s), j' "$tmp/out"
fi

# convert round trip: cache and DIMACS text give the same distances
check convert-cache 0 "$bin" convert "$data/tiny.gr" "$tmp/tiny.wgc"
if grep -qE 'read in [0-9.]+ (us|ms|s), written in' "$tmp/out"; then pass=$((pass + 1)); else
  echo "FAIL convert-times: unexpected summary:"; cat "$tmp/out"; failures=$((failures + 1)); fi
expect_in convert-energy "$tmp/out" "energy"
check sssp-cache 0 "$bin" sssp "$tmp/tiny.wgc" -s 1 --out "$tmp/d2"
if cmp -s "$tmp/d2" "$data/tiny.dist1"; then pass=$((pass + 1)); else
  echo "FAIL sssp-cache: distances from the cache differ"; failures=$((failures + 1)); fi
check convert-text 0 "$bin" convert "$data/tiny.gr" "$tmp/tiny2.gr.gz"
check sssp-text 0 "$bin" sssp "$tmp/tiny2.gr.gz" -s 1 --out "$tmp/d3"
if cmp -s "$tmp/d3" "$data/tiny.dist1"; then pass=$((pass + 1)); else
  echo "FAIL sssp-text: distances from the DIMACS export differ"; failures=$((failures + 1)); fi

# generators through the CLI, then verified shortest paths on each
check gen-grid 0 "$bin" gen grid --rows 30 --cols 40 -o "$tmp/grid.wgc"
check sssp-grid 0 "$bin" sssp "$tmp/grid.wgc" --verify
expect_in sssp-grid "$tmp/out" "reached    1,200 of 1,200 vertices"
check gen-kron 0 "$bin" gen kron --scale 10 -o "$tmp/kron.gr"
check sssp-kron 0 "$bin" sssp "$tmp/kron.gr" --verify
check gen-road 0 "$bin" gen road -n 5000 -o "$tmp/road.wgc"
check info-road 0 "$bin" info "$tmp/road.wgc"
expect_in info-road "$tmp/out" "components"
expect_in info-road "$tmp/out" "load energy"
check info-json 0 "$bin" info "$tmp/road.wgc" --json
expect_in info-json "$tmp/out" '"energy":['
expect_in info-json "$tmp/out" '"weak_components":1'
check gen-no-output 2 "$bin" gen grid
check gen-regions 0 "$bin" gen road 5000 --model regions -o "$tmp/regions.wgc"
expect_in gen-regions "$tmp/out" "road (regions): 5,000 vertices"
check route-regions 0 "$bin" route "$tmp/regions.wgc" --random 200 --verify
check gen-regions-json 0 "$bin" gen road -n 300 --model regions --json -o "$tmp/regions.gr"
expect_in gen-regions-json "$tmp/out" '"model":"regions"'
check gen-bad-model 2 "$bin" gen road 100 --model rivers -o "$tmp/x.wgc"
expect_in gen-bad-model "$tmp/err" "unknown --model 'rivers'"
check gen-model-not-road 2 "$bin" gen grid --model regions -o "$tmp/x.wgc"
check gen-bad-n 2 "$bin" gen road 0 -o "$tmp/x.wgc"
one_line_error gen-no-output

# near-far and self-tuning through the CLI: verified, traced, plotted
check sssp-nearfar 0 "$bin" sssp "$tmp/grid.wgc" --algo nearfar --delta 50 --backend cpu --verify --trace "$tmp/base.csv"
expect_in sssp-nearfar "$tmp/out" "nearfar on cpu"
expect_in sssp-nearfar "$tmp/out" "PASS"
check sssp-selftune 0 "$bin" sssp "$tmp/grid.wgc" --parallelism 20 --backend cpu --verify --trace "$tmp/p20.csv"
expect_in sssp-selftune "$tmp/out" "selftune on cpu"
expect_in trace-header "$tmp/p20.csv" "iter,frontier_in,advance_out,filter_out,near_out,far_size,delta,time_us"
if [ "$(wc -l <"$tmp/p20.csv")" -gt 2 ]; then pass=$((pass + 1)); else
  echo "FAIL trace: too few rows in the self-tuned trace"; failures=$((failures + 1)); fi
check delta-zero 2 "$bin" sssp "$tmp/grid.wgc" --algo nearfar --delta 0
one_line_error delta-zero
check delta-dijkstra 2 "$bin" sssp "$tmp/grid.wgc" --algo dijkstra --delta 5
one_line_error delta-dijkstra
check bad-lb 2 "$bin" sssp "$tmp/grid.wgc" --algo nearfar --lb sideways
one_line_error bad-lb
if command -v gnuplot >/dev/null; then
  check plot-profile 0 "$bin" plot profile -o "$tmp/profile.png" "$tmp/base.csv" "$tmp/p20.csv"
  check plot-dist 0 "$bin" plot distribution -o "$tmp/dist.png" "$tmp/base.csv" "$tmp/p20.csv"
  for f in profile dist; do
    if [ "$(head -c 4 "$tmp/$f.png" | od -An -c | tr -d ' ')" = "211PNG" ]; then pass=$((pass + 1)); else
      echo "FAIL plot-$f: $tmp/$f.png is not a PNG"; failures=$((failures + 1)); fi
  done
  check plot-not-trace 1 "$bin" plot profile -o "$tmp/x.png" "$data/tiny.gr"
  one_line_error plot-not-trace
else
  echo "note: gnuplot not installed; plot checks skipped"
fi

# the heap benchmark: verified heap sorts and mixed workloads on the CPU
# backend (every key type, pairs, orders, partial batches), JSON, bad options
check help-heap 0 "$bin" heap --help
expect_in help-heap "$tmp/out" "usage: wattgraph heap"
for keys in u32 u64 f32; do
  check "heap-sort-$keys" 0 "$bin" heap --n 5000 --k 64 --keys $keys --pairs --order desc \
    --backend cpu --verify --json -q
  expect_in "heap-sort-$keys" "$tmp/out" '"verified":true'
  expect_in "heap-sort-$keys" "$tmp/out" "\"keys\":\"$keys\""
done
check heap-mixed 0 "$bin" heap --n 3000 --k 32 --mix 0.6 --op-keys 5 --backend cpu --verify --json -q
expect_in heap-mixed "$tmp/out" '"workload":"mixed"'
expect_in heap-mixed "$tmp/out" '"verified":true'
check heap-shards 0 "$bin" heap --n 20000 --k 64 --pairs --shards 2 --backend cpu --verify --json -q
expect_in heap-shards "$tmp/out" '"verified":true'
expect_in heap-shards "$tmp/out" '"shards":2'
check heap-shards-mix 2 "$bin" heap --n 1000 --mix 0.5 --shards 2
one_line_error heap-shards-mix
check heap-text 0 "$bin" heap --n 1000 --k 16 --order asc --backend cpu --verify
expect_in heap-text "$tmp/out" "PASS"
for bad in "--n 0" "--k 3" "--k 2048" "--mix 1.5" "--keys u16" "--order sideways" \
           "--op-keys 0" "--backend tpu" "--shards 3"; do
  name="heap-bad-${bad// /}"
  check "$name" 2 "$bin" heap $bad
  one_line_error "$name"
done
# a GPU asked for on a machine without one (or a build without CUDA): exit
# 1 and the plain reason
if ! "$bin" heap --n 64 --k 64 --backend cuda -q >/dev/null 2>&1; then
  check heap-no-gpu 1 "$bin" heap --n 64 --k 64 --backend cuda -q
  one_line_error heap-no-gpu
  if grep -qE "no usable GPU|no CUDA device|built without CUDA" "$tmp/err"; then
    pass=$((pass + 1))
  else
    echo "FAIL heap-no-gpu: no plain reason:"; sed 's/^/  /' "$tmp/err"
    failures=$((failures + 1))
  fi
fi

cli_check_done "cli"
