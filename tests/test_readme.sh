#!/usr/bin/env bash
# The README's library example, exactly as shown: its C snippet (the first
# ```c block of "## Use it as a library") compiled with its link line (the
# ```sh block after it: the first line for a CPU build, the second for a
# CUDA build) against the build tree, then run on the bundled Monaco map;
# its counts must equal the CLI's oracle run and the sentence the README
# prints after the block.
set -u
repo=${WG_REPO:-$(cd "$(dirname "$0")/.." && pwd)}
build=${WG_BUILD:?WG_BUILD not set (run through ctest)}
bin=${WG_BIN:-$build/wattgraph}
readme=$repo/README.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if grep -q '^WG_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null ||
   grep -q '^WG_FUZZ:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "SKIP: sanitizer/fuzzing build; the README's link line is for a plain build"
  exit 7
fi
[ -f "$build/libwattgraph.a" ] || { echo "FAIL: $build/libwattgraph.a missing"; exit 1; }

# the snippet and the link lines, as printed in the README
awk '/^## Use it as a library/ {s=1} s && /^```c$/ {c=1; next} c && /^```$/ {exit} c' \
  "$readme" >"$tmp/example.c"
awk '/^## Use it as a library/ {s=1} s && /^```sh$/ {c=1; next} c && /^```$/ {exit} c' \
  "$readme" >"$tmp/link.txt"
if [ ! -s "$tmp/example.c" ] || [ "$(wc -l <"$tmp/link.txt")" -ne 2 ]; then
  echo "FAIL: README.md: no \`\`\`c snippet or not two link lines under '## Use it as a library'"
  exit 1
fi
if ar t "$build/libwattgraph.a" | grep -q '\.cu\.o$'; then line=2; else line=1; fi
link=$(sed -n "${line}p" "$tmp/link.txt")
case "$link" in
  cc\ *) ;;
  *) echo "FAIL: link line $line does not start with 'cc ': $link"; exit 1 ;;
esac
ln -s "$repo/include" "$tmp/include"
ln -s "$build" "$tmp/build"
cd "$tmp" || exit 1
echo "+ $link"
if ! bash -c "$link" >"$tmp/cc.out" 2>&1; then
  echo "FAIL: the README's snippet does not build with its link line:"
  cat "$tmp/cc.out"
  exit 1
fi
if [ -s "$tmp/cc.out" ]; then
  echo "FAIL: warnings building the README's snippet:"
  cat "$tmp/cc.out"
  exit 1
fi
./example "$repo/data/monaco.osm.pbf" >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out" "$tmp/err"
[ $rc -eq 0 ] || { echo "FAIL: example exited $rc"; exit 1; }

# against the oracle, through the CLI
"$bin" sssp "$repo/data/monaco.osm.pbf" --algo dijkstra --json -q >"$tmp/cli.json" ||
  { echo "FAIL: wattgraph sssp"; exit 1; }
reached=$(grep -o '"reached": *[0-9]*' "$tmp/cli.json" | grep -o '[0-9]*$')
maxd=$(grep -o '"max_distance": *[0-9]*' "$tmp/cli.json" | grep -o '[0-9]*$')
n=$(grep -o '"vertices": *[0-9]*' "$tmp/cli.json" | head -1 | grep -o '[0-9]*$')
want="reached $reached of $n vertices, farthest $maxd,"
grep -qF -- "$want" "$tmp/out" || { echo "FAIL: example printed '$(cat "$tmp/out")', the oracle says '$want'"; exit 1; }
# the README tells the reader what to expect: the same counts
tr '\n' ' ' <"$readme" | grep -qF -- "\`./example\` prints \`$want" ||
  { echo "FAIL: README.md's expected output differs from '$want'"; exit 1; }
echo "PASS: the README's example builds as shown and matches the oracle ($want)"
