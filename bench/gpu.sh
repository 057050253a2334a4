#!/usr/bin/env bash
# Runs on a lent GPU machine (after scripts/gpu-prepare.sh here; the device
# call carries .gpu). One call: the CUDA tests, the CUDA tests again under
# compute-sanitizer, the CPU suite's programs as a smoke test on that host,
# and timed runs with energy from every meter. Full logs go to $OUT; a short
# table is printed last.
set -u
[ -d .gpu/bin ] || [ ! -f .gpu/bin.tar.xz ] || tar -xJf .gpu/bin.tar.xz -C .gpu
OUT=${OUT:-/tmp/wg-out}
LOGS=$OUT/logs
mkdir -p "$LOGS"
export LD_LIBRARY_PATH=$PWD/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export WG_TEST_DATA=$PWD/tests/data WG_SHARED_DATA=$PWD/.gpu/data WG_REPO=$PWD
export WG_BIN=$PWD/.gpu/bin/wattgraph
B=.gpu/bin
summary=$OUT/summary.txt
: >"$summary"
row() { printf '%-44s %s\n' "$1" "$2" | tee -a "$summary"; }

nvidia-smi --query-gpu=name,driver_version,memory.total,power.draw,power.limit,clocks.sm \
  --format=csv >"$OUT/gpu.csv" 2>&1
cat "$OUT/gpu.csv"
cp .gpu/commit.txt "$OUT/commit.txt" 2>/dev/null || echo unknown >"$OUT/commit.txt"

# 1. every test program (CUDA ones run for real here)
for t in "$B"/test_*; do
  name=$(basename "$t")
  s0=$(date +%s)
  timeout "${WG_TEST_TIMEOUT:-300}" "$t" >"$LOGS/$name.log" 2>&1
  rc=$?
  case $rc in 0) r=pass ;; 7) r=skip ;; 124) r="timed out" ;; *) r="FAIL ($rc)" ;; esac
  r="$r, $(($(date +%s) - s0)) s"
  row "$name" "$r"
done
bash tests/test_cli.sh >"$LOGS/test_cli.log" 2>&1 && row test_cli.sh pass || row test_cli.sh FAIL

# 2. CUDA tests under compute-sanitizer, on their quick subsets (the full
#    near-far matrix does not finish under racecheck in a call's time).
export WG_TEST_QUICK=1 WG_PQ_QUICK=1 WG_TEST_ROUTE_SMALL=1
# WG_SANITIZE_TESTS narrows the list (names without test_), e.g. "nearfar pq_sssp";
# WG_SANITIZE_TOOLS the tools (default "memcheck racecheck synccheck").
for t in "$B"/test_cuda_*; do
  if [ -n "${WG_SANITIZE_TESTS:-}" ]; then
    case " $WG_SANITIZE_TESTS " in *" ${t##*/test_cuda_} "*) ;; *) continue ;; esac
  fi
  for tool in ${WG_SANITIZE_TOOLS:-memcheck racecheck synccheck}; do
    q=1; [ $tool = racecheck ] && q=2
    WG_TEST_QUICK=$q timeout "${WG_SANITIZE_TIMEOUT:-120}" compute-sanitizer --tool $tool --error-exitcode 99 "$t" \
      >"$LOGS/$(basename "$t").$tool.log" 2>&1
    rc=$?
    case $rc in 0) r=clean ;; 7) r=skip ;; 124) r="timed out" ;; *) r="rc=$rc" ;; esac
    row "$(basename "$t") $tool" "$r"
  done
done
unset WG_TEST_QUICK WG_PQ_QUICK WG_TEST_ROUTE_SMALL

# 3. timed runs with energy from every meter: the oracle on the CPU, then
#    near-far and self-tuning on the GPU (median of 5, verified)
for g in .gpu/data/*.gr.xz data/monaco.osm.pbf; do
  [ -f "$g" ] || continue
  b=$(basename "$g" | sed 's/dimacs9-USA-road-//; s/.pace16-topology.gr.xz//')
  for run in "dijkstra:--algo dijkstra" "nearfar:--algo nearfar --backend cuda" \
             "selftune:--algo selftune --backend cuda"; do
    name=${run%%:*}
    "$WG_BIN" sssp "$g" ${run#*:} --weights auto --repeat 5 --verify --json >"$OUT/sssp-$b-$name.json" 2>"$LOGS/sssp-$b-$name.err"
    if [ $? -eq 0 ]; then
      med=$(grep -o '"median_seconds":[0-9.e-]*' "$OUT/sssp-$b-$name.json" | cut -d: -f2)
      j=$(grep -o '"kind":"gpu","available":true,"joules_per_run":[0-9.e-]*' "$OUT/sssp-$b-$name.json" | head -1 | cut -d: -f4)
      row "sssp $b $name" "median ${med}s, gpu ${j:-?} J/run, verified"
    else
      row "sssp $b $name" "FAIL: $(head -c 200 "$LOGS/sssp-$b-$name.err")"
    fi
  done
done
mkdir -p "$OUT/json" && mv "$OUT"/sssp-*.json "$OUT/json/" 2>/dev/null
tar -czf "$OUT/sssp-json.tar.gz" -C "$OUT" json && rm -rf "$OUT/json"

# 4. the benchmarks of the issues' targets (WG_GPU_BENCH=0 skips them):
#    async vs sync SSSP on FLA and the 1.5M road graph, Kronecker 21/22 on
#    the sync engine, the heap-sort row of the priority queue. Each has a
#    time limit so a slow one cannot eat the call.
if [ "${WG_GPU_BENCH:-1}" != 0 ]; then
  bench() { # name limit command...
    local name=$1 limit=$2
    shift 2
    timeout "$limit" "$@" >"$OUT/bench-$name.txt" 2>"$LOGS/bench-$name.err"
    local rc=$?
    [ $rc = 0 ] && row "bench $name" "ok" || row "bench $name" "rc=$rc"
  }
  # Energy of the async bests: NVML's counter steps every 100 ms (H100 and
  # H200), so one 1 s window is +-10%; three 4 s windows of each, fixed and
  # self-tuned alternating, watched (WG_METER_WATCH=1: the counter's updates
  # are seen, 0.1-0.3% spread, at +1-2% to both: docs/power.md), give the
  # medians printed in the summary.
  WG_BENCH_SYNC=0 WG_BENCH_DELTAS=16,32,64 WG_BENCH_PS=262144,524288,1048576 \
    WG_BENCH_ENERGY_WINDOW=4 WG_BENCH_ENERGY_REPS=3 WG_METER_WATCH=1 \
    bench async 200 "$B"/bench_sssp_async fla road
  WG_BENCH_QUICK=1 WG_BENCH_MULTS=0.0625,0.125 WG_BENCH_PS=262144,524288 bench kron 150 \
    "$B"/bench_sssp_gpu kron21 kron22
  bench heap 120 "$WG_BIN" heap --n 134217728 --k 1024 --pairs --backend cuda --json -q
  bench heap-shards2 120 "$WG_BIN" heap --n 134217728 --k 1024 --pairs --shards 2 --backend cuda --json -q
  bench heap-partial100 60 "$WG_BIN" heap --n 16777216 --op-keys 100 --backend cuda --json -q
  bench heap-partial127 60 "$WG_BIN" heap --n 16777216 --op-keys 127 --backend cuda --json -q
  grep -E "^(FLA|road1.5M) |energy medians" "$OUT/bench-async.txt" 2>/dev/null | tee -a "$summary"
  grep -E "^kron" "$OUT/bench-kron.txt" 2>/dev/null | head -12 | tee -a "$summary"
  for h in heap heap-shards2 heap-partial100 heap-partial127; do
    echo "$h: $(grep -oE '"((insert|delete|total)_keys_per_s|verified)":[a-z0-9.e+-]*' "$OUT/bench-$h.txt" 2>/dev/null | tr '\n' ' ')" | tee -a "$summary"
  done
fi

# 5. routing and many sources (issue 22 and 25 targets; WG_GPU_ROUTE=0
#    skips): the router's build, customisation, exact and per-level
#    throughput and quality on FLA and a ~20M-arc generated road graph,
#    RoutingKit beside it on this host's cores when its driver travelled
#    (.gpu/peer), and K = 1000 sources at once against one after another.
if [ "${WG_GPU_ROUTE:-1}" != 0 ]; then
  timeout 300 "$B"/bench_route_gpu fla road >"$OUT/bench-route.txt" 2>"$LOGS/bench-route.err"
  row "bench route" "rc=$?"
  if [ -x .gpu/peer/rk_driver ]; then
    fla=$(ls .gpu/data/*FLA*.gr.xz 2>/dev/null | head -1)
    WG_ROUTINGKIT_DRIVER=$PWD/.gpu/peer/rk_driver WG_ROUTE_BACKENDS=cuda \
      timeout 400 bash bench/route_peer.sh "$fla" 100000 "$(nproc)" >"$OUT/bench-route-peer.txt" 2>"$LOGS/bench-route-peer.err"
    row "bench route peer" "rc=$?"
  else
    row "bench route peer" "peer missing"
  fi
  WG_BENCH_K=1000 timeout 300 "$B"/bench_sssp_many fla kron21 >"$OUT/bench-many.txt" 2>"$LOGS/bench-many.err"
  row "bench many-source" "rc=$?"
  tail -n 25 "$OUT/bench-route.txt" 2>/dev/null | tee -a "$summary"
  grep -E "^(RoutingKit|CH |CCH )" "$OUT/bench-route-peer.txt" 2>/dev/null | tee -a "$summary"
  tail -n 12 "$OUT/bench-many.txt" 2>/dev/null | tee -a "$summary"
fi

# 7. traffic (issue 24; WG_GPU_TRAFFIC=0 skips): the CUDA step with the
#    router in the loop on a 1M-vertex generated road network, re-routing
#    every 300 s and without, then the step alone at the issue's scale.
if [ "${WG_GPU_TRAFFIC:-1}" != 0 ] && [ -x "$B/bench_traffic_gpu" ]; then
  timeout 240 "$B"/bench_traffic_gpu --vertices 1000000 --trips 1000000 --walkers 1000000 \
    --steps 600 --reroute 300 >"$OUT/bench-traffic.txt" 2>"$LOGS/bench-traffic.err"
  row "bench traffic 1M reroute 300" "rc=$?"
  tail -n 8 "$OUT/bench-traffic.txt" 2>/dev/null | tee -a "$summary"
fi

# 6. the route server (issue 23; WG_GPU_SERVE=0 skips): median latency of
#    exact single routes, capacity from concurrent clients, and the
#    admission experiment at twice that capacity, on a generated road map
#    of FLA's size (1M vertices, with coordinates), loopback only.
if [ "${WG_GPU_SERVE:-1}" != 0 ] && [ -x "$B/serve_load" ]; then
  "$WG_BIN" gen road -n 1000000 -o "$OUT/road1m.wgc" -q 2>"$LOGS/gen-road1m.err"
  timeout 560 bash bench/serve_gpu.sh "$B" "$OUT/road1m.wgc" "$OUT/serve" >"$OUT/bench-serve.txt" 2>&1
  row "bench serve" "rc=$?"
  tee -a "$summary" <"$OUT/bench-serve.txt"
  rm -f "$OUT/road1m.wgc"
fi

tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$LOGS"
echo
echo "== summary ($(cat "$OUT/commit.txt"), $(sed -n 2p "$OUT/gpu.csv" | cut -d, -f1)) =="
cat "$summary"
