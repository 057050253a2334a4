#!/usr/bin/env bash
# Installs the Debian packages wattgraph needs to build and test, when they
# are missing. As root it installs them; otherwise it prints the command to
# run and fails. CUDA (nvcc) is optional and never installed here: without it
# the CPU library is complete.
set -euo pipefail

packages=(
  cmake make gcc pkg-config          # build
  clang libclang-rt-14-dev libomp-14-dev  # sanitizer and fuzzing build
  zlib1g-dev liblzma-dev libbz2-dev   # .gz .xz .bz2 input
  libreadosm-dev libexpat1-dev        # OpenStreetMap .osm and .osm.pbf (expat pre-checks XML)
  libxxhash-dev                       # XXH3-64: fast checksum of the binary cache
  libcmocka-dev                       # unit test framework
  libigraph-dev                       # independent Dijkstra for tests and benchmarks
  gnuplot-nox                         # wattgraph plot
  libmicrohttpd-dev                   # wattgraph serve: the HTTP server (thread pool, epoll, suspend/resume)
  libjansson-dev                      # wattgraph serve: JSON answers
  curl                                # tests/test_serve_cli.sh asks the live server over loopback
  xz-utils
  libmetis-dev                        # METIS nested dissection: the router's order (src/route)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "wattgraph needs these Debian packages: ${missing[*]}" >&2
  echo "install them with:  sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi

echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
