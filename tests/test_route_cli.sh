#!/usr/bin/env bash
# wattgraph route end to end on a hand-checked graph (distances by hand),
# Monaco (snapping, levels, --verify) and broken inputs: exit statuses,
# one-line errors, the --out/--path/--table formats, the order cache.
set -u
bin=${WG_BIN:?WG_BIN not set}
repo=${WG_REPO:?WG_REPO not set}
. "$(dirname "$0")/support/cli_check.sh"

# 1 -> 2 (3), 2 -> 3 (4), 1 -> 3 (10), 3 -> 4 (1), 3 -> 2 (0); 5 isolated
g=$tmp/hand.gr
printf 'p sp 5 5\na 1 2 3\na 2 3 4\na 1 3 10\na 3 4 1\na 3 2 0\n' >"$g"

check help 0 "$bin" route --help
expect_in help "$tmp/out" "usage: wattgraph route"
expect_in help "$tmp/out" "--order-cache"

check single 0 "$bin" route "$g" --from 1 --to 4 --path "$tmp/p.txt"
expect_in single "$tmp/out" "length     8"
expect_in single "$tmp/out" "arcs       3"
expect_file single-path "$tmp/p.txt" "$(printf '1\n2\n3\n4')"
check single-json 0 "$bin" route "$g" --from 4 --to 1 --json
expect_in single-json "$tmp/out" '"length":null'
check same 0 "$bin" route "$g" --from 3 --to 3 --level 2 --json
expect_in same "$tmp/out" '"length":0'

printf '# pairs\n1 4\n4 1\n\n2 3 # comment\n3 2\n' >"$tmp/q.txt"
check queries 0 "$bin" route "$g" --queries "$tmp/q.txt" --out "$tmp/r.txt" --verify
expect_file queries-out "$tmp/r.txt" "$(printf '1 4 8\n4 1 inf\n2 3 4\n3 2 0')"
expect_in queries "$tmp/out" "PASS"

check table 0 "$bin" route "$g" --table --sources 1,2 --targets 3,4,5 --verify --out "$tmp/t.csv"
expect_file table-csv "$tmp/t.csv" "$(printf 'source,3,4,5\n1,7,8,inf\n2,4,5,inf')"
printf '1\n# two\n2\n' >"$tmp/src.txt"
check table-file 0 "$bin" route "$g" --table --sources "$tmp/src.txt" --targets 4
expect_in table-file "$tmp/out" "2,5"

# the order cache: saved, then loaded; another graph's is refused
check cache-save 0 "$bin" route "$g" --from 1 --to 4 --order-cache "$tmp/hand.cch"
expect_in cache-save "$tmp/out" "order saved to"
check cache-load 0 "$bin" route "$g" --from 1 --to 4 --order-cache "$tmp/hand.cch"
expect_in cache-load "$tmp/out" "order loaded"
expect_in cache-load "$tmp/out" "length     8"
printf 'p sp 5 5\na 1 2 3\na 2 3 4\na 1 4 10\na 3 4 1\na 3 2 0\n' >"$tmp/other.gr"
check cache-other 1 "$bin" route "$tmp/other.gr" --from 1 --to 4 --order-cache "$tmp/hand.cch"
one_line_error cache-other
expect_in cache-other "$tmp/err" "another graph"

# usage errors (2) and failed work (1), each one line
check no-mode 2 "$bin" route "$g"
one_line_error no-mode
check two-modes 2 "$bin" route "$g" --from 1 --to 2 --random 5
one_line_error two-modes
check bad-level 2 "$bin" route "$g" --random 5 --level fast
one_line_error bad-level
check level-range 2 "$bin" route "$g" --random 5 --level 9
one_line_error level-range
check out-is-input 2 "$bin" route "$g" --random 5 --out "$g"
one_line_error out-is-input
check out-dir 1 "$bin" route "$g" --random 5 --out /nonexistent/dir/r.txt
one_line_error out-dir
check no-vertex 1 "$bin" route "$g" --from 1 --to 99
one_line_error no-vertex
check lonlat-no-coords 1 "$bin" route "$g" --from 7.4,43.7 --to 1
one_line_error lonlat-no-coords
expect_in lonlat-no-coords "$tmp/err" "no coordinates"
check geojson-no-coords 2 "$bin" route "$g" --from 1 --to 4 --path "$tmp/p.geojson"
one_line_error geojson-no-coords
printf '1 4\n2 x\n' >"$tmp/bad.txt"
check bad-queries 1 "$bin" route "$g" --queries "$tmp/bad.txt"
one_line_error bad-queries
expect_in bad-queries "$tmp/err" "bad.txt:2:"
check bad-sources 1 "$bin" route "$g" --table --sources 1,77 --targets 2
one_line_error bad-sources
if "$bin" --version | grep -q "CUDA backend: not built"; then
  check cuda-absent 1 "$bin" route "$g" --random 5 --backend cuda
  one_line_error cuda-absent
  expect_in cuda-absent "$tmp/err" "no CUDA support"
fi

# Monaco: snapping, a coarse level, --verify on random pairs
m=$repo/data/monaco.osm.pbf
if [ -f "$m" ]; then
  check monaco-snap 0 "$bin" route "$m" --from 7.4246,43.7384 --to 7.4100,43.7300 \
    --path "$tmp/m.geojson"
  expect_in monaco-snap "$tmp/out" "snapped"
  expect_in monaco-snap "$tmp/m.geojson" '"type": "LineString"'
  check monaco-far 1 "$bin" route "$m" --from 0,0 --to 7.41,43.73
  one_line_error monaco-far
  expect_in monaco-far "$tmp/err" "beyond the limit"
  check monaco-verify 0 "$bin" route "$m" --random 3000 --seed 5 --verify --level 1
  expect_in monaco-verify "$tmp/out" "quality    level 1"
  expect_in monaco-verify "$tmp/out" "PASS"
fi

cli_check_done "route cli"
