#!/usr/bin/env bash
# Linking (issue 26): `cmake --install` into a temporary prefix, then the
# README's library example is built against that copy twice, with the
# pkg-config one-liner and with find_package(wattgraph), and run on a small
# .gr.xz. Skips (7) when the build folder or a tool is missing.
set -u
build=${WG_BUILD:?WG_BUILD not set}
repo=${WG_REPO:?WG_REPO not set}
data=${WG_TEST_DATA:?WG_TEST_DATA not set}
for tool in cmake cc pkg-config xz; do
  command -v $tool >/dev/null || { echo "skip: $tool not found"; exit 7; }
done
if grep -qE '^WG_(SANITIZE|FUZZ):BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "skip: a sanitizer build's library needs the sanitizer runtime to link"
  exit 7
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL $*"; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "cmake --install"; }
for f in include/wattgraph.h include/wattgraph/core.h bin/wattgraph; do
  [ -e "$tmp/prefix/$f" ] || fail "installed tree lacks $f"
done
lib=$(ls -d "$tmp"/prefix/lib*/libwattgraph.a 2>/dev/null | head -1)
[ -n "$lib" ] || fail "installed tree lacks libwattgraph.a"
libdir=$(dirname "$lib")

# The README's example: the first C block after "## Use it as a library", a
# whole program that takes the graph's path as its argument.
awk '/^## Use it as a library/ { lib = 1 } lib && /^```c/ { on = 1; next } on && /^```/ { exit }
     on { print }' "$repo/README.md" >"$tmp/example.c"
[ -s "$tmp/example.c" ] || fail "no C example under '## Use it as a library' in README.md"
mkdir "$tmp/run"
xz -c "$data/tiny.gr" >"$tmp/run/roads.gr.xz"

# 1. pkg-config, the one line the README shows
export PKG_CONFIG_PATH="$libdir/pkgconfig"
flags=$(pkg-config --cflags --libs wattgraph) || fail "pkg-config does not know wattgraph"
# shellcheck disable=SC2086
cc -std=c11 -Wall -Werror "$tmp/example.c" -o "$tmp/ex-pc" $flags 2>"$tmp/cc.log" ||
  { cat "$tmp/cc.log"; fail "cc with pkg-config flags: $flags"; }
(cd "$tmp/run" && "$tmp/ex-pc" roads.gr.xz) >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "ex-pc ran badly"; }
grep -q '^reached ' "$tmp/out" || { cat "$tmp/out"; fail "ex-pc printed no result"; }

# 2. find_package(wattgraph)
mkdir "$tmp/proj"
cp "$tmp/example.c" "$tmp/proj/"
cat >"$tmp/proj/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.24)
project(example LANGUAGES C)
find_package(wattgraph 0.1 REQUIRED)
add_executable(example example.c)
target_link_libraries(example PRIVATE wattgraph::wattgraph)
CM
cmake -S "$tmp/proj" -B "$tmp/proj/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$tmp/cfg.log" 2>&1 || { cat "$tmp/cfg.log"; fail "find_package"; }
cmake --build "$tmp/proj/build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "build with the package"; }
(cd "$tmp/run" && "$tmp/proj/build/example" roads.gr.xz) >"$tmp/out" 2>&1 ||
  { cat "$tmp/out"; fail "the package's example ran badly"; }
grep -q '^reached ' "$tmp/out" || { cat "$tmp/out"; fail "the package's example printed no result"; }
echo "install: pkg-config and find_package builds of the README example ran"
