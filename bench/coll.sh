#!/usr/bin/env bash
# The multi-GPU run of the collectives (issues 5 and 6), for a lent machine of
# several GPUs (nvidia-h200-x2, -x4, -x8), after scripts/gpu-prepare.sh here;
# the device call carries .gpu. One call: the link topology, the CUDA
# correctness tests with their one-process groups on every GPU, the size
# sweep of every algorithm against NCCL (8 B to 1 GiB), the global sum, and
# a short table last (bench/coll_summary.py). Full JSON and logs go to $OUT.
#   WG_COLL_GPUS     GPUs of the sweep (default: all)
#   WG_COLL_TEST=0   skips the correctness tests
#   WG_COLL_ALGOS    the algorithms up to 16 MiB (default: every one)
#   WG_COLL_LARGE_ALGOS  from 32 MiB (default: every one but LL)
#   WG_COLL_PER_PROCESS=0  skips the sweep with one process per GPU
#   WG_COLL_PP_ALGOS  its algorithms (default: nccl,ll,allgather,auto)
#   WG_COLL_ENERGY_REPS  repeats of the 1 s energy windows, 1-16 MiB (3; 0 skips)
set -uo pipefail
cd "$(dirname "$0")/.."
[ -d .gpu/bin ] || [ ! -f .gpu/bin.tar.xz ] || tar -xJf .gpu/bin.tar.xz -C .gpu
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
OUT=${OUT:-/tmp/wg-coll}
mkdir -p "$OUT"
B=$PWD/.gpu/bin
ngpu=$(nvidia-smi -L | grep -c '^GPU')
gpus=${WG_COLL_GPUS:-$ngpu}
echo "commit $(cat .gpu/commit.txt 2>/dev/null || echo unknown), $ngpu GPUs, sweep on $gpus"
nvidia-smi --query-gpu=index,name,driver_version,power.limit --format=csv,noheader
nvidia-smi topo -m >"$OUT/topo.txt" 2>&1 && head -n $((ngpu + 1)) "$OUT/topo.txt"

status=0
if [ "${WG_COLL_TEST:-1}" != 0 ]; then
  t0=$(date +%s)
  WG_COLL_TEST_GPUS=$gpus WG_COLL_TEST_MAX_BYTES=${WG_COLL_TEST_MAX_BYTES:-64M} \
    timeout "${WG_COLL_TEST_TIMEOUT:-240}" "$B"/test_cuda_coll >"$OUT/test_cuda_coll.log" 2>&1
  rc=$?
  echo "test_cuda_coll on $gpus GPUs: exit $rc in $(( $(date +%s) - t0 )) s"
  grep -E "GPUs|cases|checked|global sum|PASSED|FAILED|differs|never" "$OUT/test_cuda_coll.log" | head -40
  [ $rc = 0 ] || status=1
fi

small=${WG_COLL_ALGOS:-nccl,read,gather,allgather,rsag,tree,ll,auto}
t0=$(date +%s)
timeout 200 "$B"/wattgraph allreduce --gpus "$gpus" --min-bytes 8 --max-bytes 16M --iters 50 \
  --energy-seconds 0.1 --algo "$small" --json >"$OUT/sweep-small.json" 2>"$OUT/sweep-small.err" || status=1
echo "small sweep: $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout 200 "$B"/wattgraph allreduce --gpus "$gpus" --min-bytes 32M --max-bytes 1G --iters 20 \
  --energy-seconds 1 --algo "${WG_COLL_LARGE_ALGOS:-nccl,read,gather,allgather,rsag,tree,auto}" --json \
  >"$OUT/sweep-large.json" 2>"$OUT/sweep-large.err" || status=1
echo "large sweep: $(( $(date +%s) - t0 )) s"
if [ "${WG_COLL_PER_PROCESS:-1}" != 0 ]; then
  # One process per GPU, NCCL likewise: each host process launches only its
  # own GPU's kernel per op, as MPI jobs do.
  t0=$(date +%s)
  timeout 200 "$B"/wattgraph allreduce --per-process --gpus "$gpus" --min-bytes 8 --max-bytes 16M \
    --iters 50 --energy-seconds 0.1 --algo "${WG_COLL_PP_ALGOS:-nccl,ll,allgather,auto}" --json \
    >"$OUT/sweep-per-process.json" 2>"$OUT/sweep-per-process.err" || status=1
  echo "per-process sweep: $(( $(date +%s) - t0 )) s"
fi
if [ "${WG_COLL_ENERGY_REPS:-3}" != 0 ]; then
  # Energy where the 0.1 s windows are too short for NVML's ~100 ms counter
  # steps: 1 s windows, NCCL and auto alternating, repeated.
  t0=$(date +%s)
  for rep in $(seq "${WG_COLL_ENERGY_REPS:-3}"); do
    timeout 100 "$B"/wattgraph allreduce --gpus "$gpus" --min-bytes 1M --max-bytes 16M --iters 20 \
      --energy-seconds 1 --no-graph --gsum-bytes 0 --algo nccl,auto --json \
      >"$OUT/energy-$rep.json" 2>>"$OUT/energy.err" || status=1
  done
  echo "energy windows: $(( $(date +%s) - t0 )) s"
fi
tail -n 3 "$OUT"/sweep-*.err
python3 bench/coll_summary.py "$OUT"/sweep-small.json "$OUT"/sweep-large.json | tee "$OUT/summary.txt"
if [ -s "$OUT/sweep-per-process.json" ]; then
  echo "one process per GPU:"
  python3 bench/coll_summary.py "$OUT"/sweep-per-process.json | tee "$OUT/summary-per-process.txt"
fi
for f in "$OUT"/energy-*.json; do
  [ -s "$f" ] || continue
  python3 - "$f" <<'PY'
import json, sys
rows = {}
for line in open(sys.argv[1]):
    if line.startswith("{"):
        r = json.loads(line)
        if r.get("command") == "allreduce":
            rows.setdefault(r["bytes"], {})[r["algo"]] = r
out = []
for b in sorted(rows):
    n, a = rows[b].get("nccl"), rows[b].get("auto")
    if n and a and n["joules_per_op"] > 0:
        out.append(f"{b >> 20}M {a['ran']} {a['joules_per_op'] / n['joules_per_op']:.2f}x")
print("energy, 1 s windows, auto vs NCCL: " + ", ".join(out))
PY
done
exit $status
