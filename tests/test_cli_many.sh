#!/usr/bin/env bash
# wattgraph sssp with many sources end to end: --out DIR writes one file per
# distinct source equal to the single-source --out of that source, --sources
# as a list and as a file, --random-sources, --reduce (CSV and JSON, the
# matrix's diagonal), --verify, and the errors (bad ids with file:line,
# exclusive flags, a power cap without NVML naming the missing meter).
set -u
bin=${WG_BIN:?WG_BIN not set}
data=${WG_TEST_DATA:?WG_TEST_DATA not set}
. "$(dirname "$0")/support/cli_check.sh"

g="$data/tiny.gr"
check help 0 "$bin" sssp --help
expect_in help "$tmp/out" "--random-sources"
expect_in help "$tmp/out" "--power-cap"

# one file per distinct source, each equal to the single-source output
check out-dir 0 "$bin" sssp "$g" --sources 1,3,1,2 --out "$tmp/many" -q --backend cpu
for s in 1 2 3; do
  check "single-$s" 0 "$bin" sssp "$g" -s "$s" --out "$tmp/single-$s" -q
  same "file-$s" "$tmp/many/source-$s.dist" "$tmp/single-$s"
done
n=$(ls "$tmp/many" | wc -l)
[ "$n" -eq 3 ] && pass=$((pass + 1)) || { echo "FAIL out-dir: $n files, expected 3"; failures=$((failures + 1)); }

# --out DIR writes through the shared output files, staged until the run
# succeeds: a second run replaces the files of the sources it was given and
# nothing else; a run that fails (here a write error: the file size limit)
# leaves the folder as it was, without temporary or staged files, and a
# folder it created is gone; a target that is a folder, or DIR naming a
# file, fails before the work
printf 'keep me\n' >"$tmp/many/notes.txt"
printf 'old 1\n' >"$tmp/many/source-1.dist"
check out-again 0 "$bin" sssp "$g" --sources 2 --out "$tmp/many" -q --backend cpu
same out-again-2 "$tmp/many/source-2.dist" "$tmp/single-2"
expect_file out-again-1 "$tmp/many/source-1.dist" "old 1"
expect_file out-again-notes "$tmp/many/notes.txt" "keep me"
listing() { (cd "$1" && ls -A | tr '\n' ' '); }
expect_list() { # expect_list NAME DIR "a b c " (ls -A order)
  local got
  got=$(listing "$2")
  [ "$got" = "$3" ] && pass=$((pass + 1)) || { echo "FAIL $1: $2 holds '$got', expected '$3'"; failures=$((failures + 1)); }
}
expect_list out-again-list "$tmp/many" "notes.txt source-1.dist source-2.dist source-3.dist "
check gen-grid 0 "$bin" gen grid --rows 40 --cols 40 -o "$tmp/grid.gr" -q
check out-big 0 "$bin" sssp "$tmp/grid.gr" --sources 1,2,3 --out "$tmp/big" -q --backend cpu -t 2
printf 'old 1\n' >"$tmp/big/source-1.dist"
cp "$tmp/big/source-2.dist" "$tmp/big2.before"
limited() { (trap '' XFSZ; ulimit -f 8; exec "$@"); } # 8 KiB a file: each .dist is ~15 KiB
check out-fail 1 limited "$bin" sssp "$tmp/grid.gr" --sources 1,2,5,9 --out "$tmp/big" -q --backend cpu -t 2
expect_in out-fail "$tmp/err" "--out $tmp/big: "
one_line_error out-fail
expect_list out-fail-list "$tmp/big" "source-1.dist source-2.dist source-3.dist "
expect_file out-fail-1 "$tmp/big/source-1.dist" "old 1"
same out-fail-2 "$tmp/big/source-2.dist" "$tmp/big2.before"
check out-fail-new 1 limited "$bin" sssp "$tmp/grid.gr" --sources 4 --out "$tmp/bignew" -q --backend cpu
ok out-fail-new-gone test ! -e "$tmp/bignew"
mkdir "$tmp/big/source-7.dist"
check out-target-folder 1 "$bin" sssp "$tmp/grid.gr" --sources 3,7 --out "$tmp/big" -q --backend cpu
expect_in out-target-folder "$tmp/err" "source-7.dist"
expect_list out-target-folder-list "$tmp/big" "source-1.dist source-2.dist source-3.dist source-7.dist "
: >"$tmp/notes.file"
check out-not-folder 1 "$bin" sssp "$g" --sources 1 --out "$tmp/notes.file" -q --backend cpu
expect_in out-not-folder "$tmp/err" "not a folder"

# --sources FILE with comments; the near-far engine per source; verify
printf '# two sources\n2\n\n3  # the third\n' >"$tmp/src.txt"
check sources-file 0 "$bin" sssp "$g" --sources "$tmp/src.txt" --algo nearfar --verify --backend cpu
expect_in sources-file "$tmp/out" "PASS (2 sources"
printf '2\n7x\n' >"$tmp/bad.txt"
check bad-id 1 "$bin" sssp "$g" --sources "$tmp/bad.txt"
expect_in bad-id "$tmp/err" "bad.txt:2: '7x' is not a vertex id"
check no-vertex 1 "$bin" sssp "$g" --sources 1,999999
expect_in no-vertex "$tmp/err" "999999 is not a vertex"
check missing-file 1 "$bin" sssp "$g" --sources "$tmp/none.txt"
expect_in missing-file "$tmp/err" "cannot read"

# reductions: CSV (matrix diagonal 0) and JSON
check reduce 0 "$bin" sssp "$g" --sources 1,2 --reduce ecc,closeness,matrix --reduce-out "$tmp/red.csv" -q
expect_in reduce "$tmp/red.csv" "index,source,reached,ecc,dist_sum,closeness"
expect_in reduce "$tmp/red.csv" "from\\to,1,2"
awk -F, '/^1,/ && NF == 3 && $2 != 0 {bad=1} /^2,/ && NF == 3 && $3 != 0 {bad=1} END {exit bad}' "$tmp/red.csv" \
  && pass=$((pass + 1)) || { echo "FAIL matrix diagonal"; failures=$((failures + 1)); }
check json 0 "$bin" sssp "$g" --random-sources 2 --source-seed 4 --reduce ecc --json -q
expect_in json "$tmp/out" '"distinct":2'
expect_in json "$tmp/out" '"ecc":['

# errors
check too-many 1 "$bin" sssp "$g" --random-sources 100000
expect_in too-many "$tmp/err" "has only"
check bad-reduce 2 "$bin" sssp "$g" --sources 1 --reduce nope
check both 2 "$bin" sssp "$g" --sources 1 --random-sources 2
check with-s 2 "$bin" sssp "$g" --sources 1 -s 2
check reduce-alone 2 "$bin" sssp "$g" --reduce ecc
check trace-alone 2 "$bin" sssp "$g" --sources 1 --power-trace "$tmp/p.csv"
check cap-on-cpu 1 "$bin" sssp "$g" --sources 1 --power-cap 100 --backend cpu
# a set-point schedule: needs a first set-point, W@T steps, times increasing
check help-sched 0 "$bin" sssp --help
expect_in help-sched "$tmp/out" "--power-schedule"
check sched-alone 2 "$bin" sssp "$g" --sources 1 --power-schedule 200@5
expect_in sched-alone "$tmp/err" "give the first set-point with --power-cap"
check sched-no-sources 2 "$bin" sssp "$g" --power-cap 100 --power-schedule 200@5
check sched-bad 2 "$bin" sssp "$g" --sources 1 --power-cap 100 --power-schedule 200
expect_in sched-bad "$tmp/err" "step 1: want W@T"
check sched-bad-time 2 "$bin" sssp "$g" --sources 1 --power-cap 100 --power-schedule 200@x
expect_in sched-bad-time "$tmp/err" "the time after '@'"
check sched-order 2 "$bin" sssp "$g" --sources 1 --power-cap 100 --power-schedule 200@5,300@5
expect_in sched-order "$tmp/err" "step 2: time 5 s is not after the step before"
check sched-cpu 1 "$bin" sssp "$g" --sources 1 --power-cap 100 --power-schedule 200@5,300@9 --backend cpu
if ! ldconfig -p 2>/dev/null | grep -q libnvidia-ml.so.1; then
  check cap-without-nvml 1 "$bin" sssp "$g" --sources 1 --power-cap 100
  expect_in cap-without-nvml "$tmp/err" "NVML GPU energy meter"
fi

# wattgraph plot power: the trace's header is checked; gnuplot draws it
printf 't,watts,setpoint,knob\n0.25,300,250,400\n0.5,260,250,340\n' >"$tmp/power.csv"
printf 't,watts\n1,2\n' >"$tmp/notpower.csv"
check plot-bad 1 "$bin" plot power -o "$tmp/p.png" "$tmp/notpower.csv"
expect_in plot-bad "$tmp/err" "notpower.csv:1: not a wattgraph power trace"
printf 't,watts,setpoint,knob\n0.25,300,x,400\n' >"$tmp/badrow.csv"
check plot-bad-row 1 "$bin" plot power -o "$tmp/p.png" "$tmp/badrow.csv"
expect_in plot-bad-row "$tmp/err" "badrow.csv:2: expected four numbers"
if command -v gnuplot >/dev/null; then
  check plot-power 0 "$bin" plot power -o "$tmp/p.png" "$tmp/power.csv" --title "it's 250 W"
  [ -s "$tmp/p.png" ] && pass=$((pass + 1)) || { echo "FAIL plot-power: no picture"; failures=$((failures + 1)); }
fi

cli_check_done "cli many"
