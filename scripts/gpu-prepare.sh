#!/usr/bin/env bash
# Prepares .gpu/ (git-ignored) for a run on a lent GPU machine, which gets
# only the checkout and has none of our Debian packages: builds with CUDA for
# sm_90 here (in build-gpu/), copies the binaries (stripped, and packed in
# .gpu/bin.tar.xz), the shared libraries they need and the real graphs the
# benchmarks read. The device call carries .gpu/bin.tar.xz, .gpu/lib,
# .gpu/data and .gpu/commit.txt and runs bench/gpu.sh. Programs linked with igraph (only
# CPU comparisons) stay behind: its libraries would not fit the 64 MiB carry.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${WG_SHARED_DATA:-../shared/data}
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DWG_USE_CUDA=ON -DWG_WERROR=ON >/dev/null
cmake --build build-gpu -j"$(nproc)" >/dev/null
rm -rf .gpu/bin .gpu/lib .gpu/data
mkdir -p .gpu/bin .gpu/lib .gpu/data
# Only what needs the GPU travels (each binary carries the whole static
# library with its CUDA code, about 3.6 MB): the CLI, the CUDA tests and the
# GPU benchmarks. The CPU suite runs in CI.
for bin in build-gpu/wattgraph build-gpu/tests/test_cuda_* build-gpu/bench_sssp_gpu build-gpu/bench_sssp_async build-gpu/bench_pq \
           build-gpu/bench_route_gpu build-gpu/bench_sssp_many build-gpu/serve_load build-gpu/bench_traffic_gpu; do
  [ -x "$bin" ] && [ -f "$bin" ] || continue
  ldd "$bin" | grep -q libigraph && continue
  cp "$bin" .gpu/bin/
done
strip --strip-debug .gpu/bin/*
for bin in .gpu/bin/*; do
  ldd "$bin" | awk '$3 ~ /^\// {print $3}'
done | sort -u | grep -vE '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" .gpu/lib/; done
for f in dimacs9-USA-road-NY.pace16-topology.gr.xz dimacs9-USA-road-FLA.pace16-topology.gr.xz; do
  [ -f "$shared/$f" ] && cp "$shared/$f" .gpu/data/
done
# The binaries travel packed (about 17 of 70 MB: each carries the library's
# CUDA code, and the async engine's compile-time variants doubled it);
# bench/gpu.sh and bench/coll.sh unpack them when .gpu/bin did not travel.
# Peers travel as built here (never committed, never built by this repo):
# RoutingKit's driver when WG_ROUTINGKIT_DRIVER names one (bench/route_peer.sh).
rm -rf .gpu/peer
if [ -n "${WG_ROUTINGKIT_DRIVER:-}" ] && [ -x "$WG_ROUTINGKIT_DRIVER" ]; then
  mkdir -p .gpu/peer && cp "$WG_ROUTINGKIT_DRIVER" .gpu/peer/rk_driver
fi
tar -cf - -C .gpu bin | xz -T"$(nproc)" -3 >.gpu/bin.tar.xz
git describe --always --dirty >.gpu/commit.txt
du -sh .gpu/bin .gpu/bin.tar.xz .gpu/lib .gpu/data
