#!/usr/bin/env python3
"""Short table of `wattgraph allreduce --json` sweeps (bench/coll.sh): per
size, NCCL's latency with stream launches and inside CUDA graphs, the
fastest of our algorithms by each, what auto ran and its ratios to NCCL, and
whether auto's pick was the fastest (within 5%) by graph latency."""
import json
import sys


def human(b):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift}{unit}"
    return str(b)


rows, gsum = {}, []
for path in sys.argv[1:]:
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                r = json.loads(line)
                if r.get("command") == "allreduce":
                    rows.setdefault(r["bytes"], {})[r["algo"]] = r
                elif r.get("command") == "allreduce-global-sum":
                    gsum.append(r)
    except OSError as e:
        print(f"{path}: {e}")

wrong = [(b, a) for b, d in rows.items() for a, r in d.items() if not r.get("correct")]
print("bytes   nccl lat/graph   best lat        best graph      auto(ran) lat/graph   xlat  xgraph xbusbw xJ   pick")
for b in sorted(rows):
    d = rows[b]
    n = d.get("nccl")
    ours = {a: r for a, r in d.items() if a not in ("nccl", "auto")}
    bl = min(ours.items(), key=lambda kv: kv[1]["latency_us"]) if ours else None
    bg = min(ours.items(), key=lambda kv: kv[1]["graph_us"]) if ours else None
    au = d.get("auto")
    line = f"{human(b):>6} "
    line += f"{n['latency_us']:7.1f}/{n['graph_us']:7.1f} " if n else " " * 16
    line += f"{bl[0]:>9} {bl[1]['latency_us']:6.1f} " if bl else " " * 17
    line += f"{bg[0]:>9} {bg[1]['graph_us']:6.1f} " if bg else " " * 17
    if au:
        line += f"{au['ran']:>9} {au['latency_us']:6.1f}/{au['graph_us']:6.1f} "
        if n:
            xj = au["joules_per_op"] / n["joules_per_op"] if n["joules_per_op"] > 0 else 0
            line += (f"{au['latency_us'] / n['latency_us']:5.2f} {au['graph_us'] / n['graph_us']:6.2f} "
                     f"{au['busbw_vs_nccl'] if 'busbw_vs_nccl' in au else 0:6.2f} {xj:4.2f} ")
        best = min([r["graph_us"] for r in ours.values()] + ([n["graph_us"]] if n else []))
        line += "fastest" if au["graph_us"] <= 1.05 * best else f"not ({au['graph_us'] / best:.2f}x best)"
    print(line)
for g in gsum:
    print(f"global sum {g['bytes_per_gpu']} B/GPU: fused {g['fused_us']:.1f} us vs local+NCCL "
          f"{g['local_nccl_us']:.1f} ({g['fused_us'] / g['local_nccl_us']:.2f}x); graphs "
          f"{g['fused_graph_us']:.1f} vs {g['local_nccl_graph_us']:.1f} "
          f"({g['fused_graph_us'] / g['local_nccl_graph_us']:.2f}x); back to back "
          f"{g.get('fused_batch_us', 0):.1f} vs {g.get('local_nccl_batch_us', 0):.1f} "
          f"({g.get('fused_batch_us', 0) / g['local_nccl_batch_us'] if g.get('local_nccl_batch_us') else 0:.2f}x); "
          f"correct {g['correct']}")
print("all rows correct" if not wrong else f"WRONG rows: {wrong}")
