#!/usr/bin/env bash
# Runs on a lent GPU machine (after scripts/gpu-prepare.sh here; the device
# call carries .gpu). One call: the CUDA tests, the CUDA tests again under
# compute-sanitizer, the CPU suite's programs as a smoke test on that host,
# and timed runs with energy from every meter. Full logs go to $OUT; a short
# table is printed last.
set -u
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
  "$t" >"$LOGS/$name.log" 2>&1
  rc=$?
  case $rc in 0) r=pass ;; 7) r=skip ;; *) r="FAIL ($rc)" ;; esac
  row "$name" "$r"
done
bash tests/test_cli.sh >"$LOGS/test_cli.log" 2>&1 && row test_cli.sh pass || row test_cli.sh FAIL

# 2. CUDA tests under compute-sanitizer (memcheck, racecheck)
for t in "$B"/test_cuda_*; do
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 99 "$t" >"$LOGS/$(basename "$t").$tool.log" 2>&1
    rc=$?
    row "$(basename "$t") $tool" "$([ $rc -eq 0 ] && echo clean || echo "rc=$rc")"
  done
done

# 3. timed runs with energy (the GPU meter must be available here)
for g in .gpu/data/*.gr.xz data/monaco.osm.pbf; do
  [ -f "$g" ] || continue
  "$WG_BIN" sssp "$g" --repeat 5 --json >"$OUT/sssp-$(basename "$g").json" 2>&1
  if [ $? -eq 0 ]; then
    med=$(grep -o '"median_seconds":[0-9.e-]*' "$OUT/sssp-$(basename "$g").json" | cut -d: -f2)
    gpu=$(grep -o '"kind":"gpu","available":[a-z]*' "$OUT/sssp-$(basename "$g").json" | head -1 | cut -d: -f3)
    row "dijkstra $(basename "$g")" "median ${med}s, gpu meter available: ${gpu}"
  else
    row "dijkstra $(basename "$g")" FAIL
  fi
done

tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$LOGS"
echo
echo "== summary ($(cat "$OUT/commit.txt"), $(sed -n 2p "$OUT/gpu.csv" | cut -d, -f1)) =="
cat "$summary"
