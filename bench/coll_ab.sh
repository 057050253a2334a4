#!/usr/bin/env bash
# A/B of collective variants in one device call (after scripts/gpu-prepare.sh;
# carry .gpu): for each GPU count and each variant (an environment
# assignment, "-" for none), one `wattgraph allreduce` sweep; then a table of
# each algorithm's graph and stream latency per variant, with NCCL's.
#   WG_AB_GPUS       GPU counts (default "2 4 8", those present)
#   WG_AB_VARIANTS   space-separated, e.g. "WG_COLL_LL_THREADS=512 -"
#   WG_AB_ARGS       sweep arguments (default 8 B to 1 MiB, nccl,ll,auto)
set -uo pipefail
cd "$(dirname "$0")/.."
[ -d .gpu/bin ] || [ ! -f .gpu/bin.tar.xz ] || tar -xJf .gpu/bin.tar.xz -C .gpu
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
OUT=${OUT:-/tmp/wg-coll-ab}
mkdir -p "$OUT"
ngpu=$(nvidia-smi -L | grep -c '^GPU')
args=${WG_AB_ARGS:---min-bytes 8 --max-bytes 1M --iters 50 --energy-seconds 0.1 --algo nccl,ll,auto --gsum-bytes 0}
echo "commit $(cat .gpu/commit.txt 2>/dev/null || echo unknown), $ngpu GPUs"
status=0
for g in ${WG_AB_GPUS:-2 4 8}; do
  [ "$g" -le "$ngpu" ] || continue
  for v in ${WG_AB_VARIANTS:--}; do
    name=$([ "$v" = - ] && echo default || echo "$v")
    t0=$(date +%s)
    env $([ "$v" = - ] || echo "$v") timeout 120 .gpu/bin/wattgraph allreduce --gpus "$g" $args --json \
      >"$OUT/ab-$g-${name//[^A-Za-z0-9_.-]/_}.json" 2>>"$OUT/ab.err" || status=1
    echo "$g GPUs, $name: $(( $(date +%s) - t0 )) s"
  done
done
python3 - "$OUT" <<'PY'
import glob, json, os, sys
rows = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "ab-*.json"))):
    g, var = os.path.basename(path)[3:-5].split("-", 1)
    for line in open(path):
        if line.startswith("{"):
            r = json.loads(line)
            if r.get("command") == "allreduce":
                rows.setdefault((int(g), r["bytes"]), {})[(var, r["algo"])] = r
bad = [k for k, d in rows.items() for r in d.values() if not r.get("correct")]
for (g, b), d in sorted(rows.items()):
    cells = []
    for (var, algo), r in sorted(d.items()):
        tag = algo if algo == "nccl" else f"{algo}:{r['ran']}" if algo == "auto" else algo
        cells.append(f"{var[:22]}/{tag} {r['graph_us']:.1f}g {r['latency_us']:.1f}s")
    print(f"{g} GPUs {b:>8} B  " + " | ".join(cells))
print("all rows correct" if not bad else f"WRONG rows: {bad}")
PY
exit $status
