#!/usr/bin/env bash
# Prepares .gpu/ (git-ignored) for a run on a lent GPU machine, which gets
# only the checkout and has no Debian packages of ours: builds with CUDA for
# sm_90 here, copies the shared libraries the binaries need and the real
# graphs the benchmarks read. Then, on the GPU machine:  bench/gpu.sh
# (the device tool call carries .gpu).
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${WG_SHARED_DATA:-../shared/data}
cmake -S . -B .gpu/build -DCMAKE_BUILD_TYPE=Release -DWG_USE_CUDA=ON -DWG_WERROR=ON >/dev/null
cmake --build .gpu/build -j"$(nproc)"
rm -rf .gpu/lib .gpu/data
mkdir -p .gpu/lib .gpu/data
for bin in .gpu/build/wattgraph .gpu/build/tests/test_* .gpu/build/bench_*; do
  [ -x "$bin" ] || continue
  ldd "$bin" | awk '$3 ~ /^\// {print $3}'
done | sort -u | grep -vE '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" .gpu/lib/; done
for f in dimacs9-USA-road-NY.pace16-topology.gr.xz dimacs9-USA-road-FLA.pace16-topology.gr.xz; do
  [ -f "$shared/$f" ] && cp "$shared/$f" .gpu/data/
done
strip --strip-debug .gpu/build/wattgraph .gpu/build/tests/test_* .gpu/build/bench_* 2>/dev/null || true
du -sh .gpu/build .gpu/lib .gpu/data
