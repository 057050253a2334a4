#!/usr/bin/env bash
# The CPU benchmarks (`make bench`): each program of bench/ that needs
# neither a GPU nor a peer, run with its defaults on the shared graphs
# (WG_SHARED_DATA, default ../shared/data; a program whose graph is missing
# says so and goes on), each under a time limit (LIMIT seconds, 1800 by
# default). Every program's full output goes to OUT (a new folder
# bench-out/<date-time> by default; an existing OUT is refused, never
# overwritten); a table of exit codes and seconds is printed last. The
# peers' comparisons (GAP, RoutingKit, SUMO) and the GPU benchmarks have
# their own scripts: bench/gap.sh, bench/route_peer.sh,
# bench/traffic_sumo.sh, bench/gpu.sh.
#
#   scripts/bench-cpu.sh [BUILD [OUT]]
set -u
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-bench-out/$(date +%Y%m%d-%H%M%S)}
limit=${LIMIT:-1800}
if [ -e "$out" ]; then
  echo "bench-cpu: $out exists; name a new folder (nothing is overwritten)" >&2
  exit 2
fi
mkdir -p "$out" || exit 1
export WG_SHARED_DATA=${WG_SHARED_DATA:-$(cd .. && pwd)/shared/data}
fla=$WG_SHARED_DATA/dimacs9-USA-road-FLA.pace16-topology.gr.xz
runs=(
  "bench_gen --quick"
  "bench_parse"
  "bench_cache"
  "bench_control"
  "bench_dijkstra"
  "bench_frontier"
  "bench_sssp_cpu"
  "bench_route -f data/monaco.osm.pbf"
)
[ -f "$fla" ] && runs+=("bench_route -f $fla")
table=()
for r in "${runs[@]}"; do
  set -- $r
  prog=$1
  if [ ! -x "$build/$prog" ]; then
    table+=("$(printf '%-44s missing from %s' "$r" "$build")")
    continue
  fi
  log="$out/$(echo "$r" | tr -c 'A-Za-z0-9_.\n-' '_' | cut -c1-80).log"
  echo "bench-cpu: $r (log $log)"
  t0=$SECONDS
  shift
  timeout "$limit" "$build/$prog" "$@" >"$log" 2>&1
  rc=$?
  table+=("$(printf '%-44s rc %-3s %5d s' "$r" "$rc" $((SECONDS - t0)))")
done
echo
echo "CPU benchmarks, $(nproc) cores, $(git describe --always --dirty 2>/dev/null), logs in $out:"
printf "%s\n" "${table[@]}" "(rc 124: stopped at the limit of ${limit} s)" | tee "$out/summary.txt"
