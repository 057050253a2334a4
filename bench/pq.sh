#!/usr/bin/env bash
# The priority queue benchmark of docs/pq.md, in one call on the lent GPU:
# heap sort of 2^27 pairs (one heap, and two behind a front), delete-min,
# partial batches, mixed 50/50 from 2^24
# keys, memory, the CUB radix sort ceiling, and the CPU backend against the
# binary heap. Usage: bench/pq.sh BIN_DIR [core] (BIN_DIR holds wattgraph
# and bench_pq). `core` runs only the rows of the headline table (heap sort
# of 2^27 pairs verified, 2^27 keys, partial batches of 100 keys, mixed), so
# that two builds fit into one call for a before/after comparison.
set -u
B=${1:-build}
W=$B/wattgraph
run() { echo "== $*"; "$W" heap --json -q "$@"; }
run --n $((1 << 27)) --pairs --backend cuda --verify
run --n $((1 << 27)) --backend cuda
run --n $((1 << 27)) --pairs --shards 2 --backend cuda --verify
run --n $((1 << 24)) --op-keys 100 --backend cuda
run --n $((1 << 24)) --mix 0.5 --backend cuda --pairs
run --n $((1 << 24)) --mix 0.5 --op-keys 100 --backend cuda --pairs
[ "${2:-}" = core ] && exit 0
run --n $((1 << 27)) --keys u64 --pairs --backend cuda
run --n $((1 << 24)) --pairs --order asc --backend cuda
run --n $((1 << 24)) --pairs --order desc --backend cuda
run --n $((1 << 24)) --op-keys 128 --k 1024 --backend cuda
"$B"/bench_pq sort $((1 << 27)) pairs
"$B"/bench_pq sort $((1 << 27))
"$B"/bench_pq cpu $((1 << 24))
run --n $((1 << 24)) --backend cpu
