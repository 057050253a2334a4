#!/usr/bin/env bash
# No function of ours may replace one of a shared library's: a global symbol
# of the executable with the name of one a linked library exports is put in
# the executable's dynamic table and wins over the library's own, also for
# the library's internal calls. That is how the CLI's JSON writer
# json_null() replaced jansson's and every polyline answer of `wattgraph
# serve` crashed (ad3fffa). Here: the executable's exported names against
# every linked library's exports; the names found in both are listed.
# Sanitizer builds export their runtime's interceptors (malloc, free, ...)
# by design: skipped there (exit 7), checked in the plain build.
set -u
bin=${WG_BIN:?WG_BIN not set}
for tool in nm ldd; do
  command -v "$tool" >/dev/null || { echo "skip: no $tool"; exit 7; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# versioned names (stdout@GLIBC_2.2.5) are copy relocations of library
# data, placed in the executable by the linker, not definitions of ours
nm -D --defined-only "$bin" | awk '{print $NF}' | grep -v '@' | sort -u >"$tmp/exe"
if grep -qE '^__(asan|ubsan|tsan|msan)_' "$tmp/exe"; then
  echo "skip: a sanitizer build (its runtime interposes by design)"
  exit 7
fi
: >"$tmp/libs"
libs=$(ldd "$bin" | awk '$3 ~ /^\// {print $3}')
[ -n "$libs" ] || { echo "FAIL: ldd listed no shared library of $bin"; exit 1; }
for lib in $libs; do
  nm -D --defined-only "$lib" 2>/dev/null | awk -v l="$lib" '{sub(/@.*/, "", $NF); print $NF " " l}'
done | sort -u >"$tmp/libs"
bad=$(awk 'NR == FNR {ours[$1] = 1; next} ($1 in ours) {print "  " $1 " (also in " $2 ")"}' \
  "$tmp/exe" "$tmp/libs" | sort -u)
n_libs=$(echo "$libs" | wc -l)
if [ -n "$bad" ]; then
  echo "FAIL: $bin defines names its shared libraries export (they would replace the libraries' own):"
  echo "$bad"
  exit 1
fi
echo "ok: $(wc -l <"$tmp/exe") exported names of $bin, none shadows the $n_libs shared libraries' exports"
