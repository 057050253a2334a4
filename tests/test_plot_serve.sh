#!/usr/bin/env bash
# `wattgraph plot serve` (issue 23, the experiment's plots): serve_load's
# bins files (with.csv, without.csv) drawn as PNG and SVG with a set-point;
# bad files give one line naming file:line (wrong header, a negative count,
# nan where a count belongs, t going back, a short row); nan where a bin
# has no answers is fine; a hostile title stays text; --setpoint belongs to
# plot serve only. Skips (7) only when gnuplot is absent.
set -u
bin=${WG_BIN:?WG_BIN not set}
command -v gnuplot >/dev/null || { echo "gnuplot not installed: skipped"; exit 7; }
. "$(dirname "$0")/support/cli_check.sh"
is_png() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = "211PNG" ]; }
is_svg() { head -c 300 "$1" | grep -q '<svg'; }

header=t,sent,answered,refused,noroute,errors,tardiness,misses,admitted_rate,quality,level,spike,tardiness_sent,tardiness_p99
{
  echo "# serve_load: rate 2000/s, deadline 100 ms"
  echo "$header"
  awk 'BEGIN { for (i = 0; i < 10; i++)
    printf "%.3f,200,%d,%d,0,0,0.%d5,%d,%d.0,1.0000,0.000,0,0.%d4,0.9\n", i / 10, 100 + i, 100 - i,
           i % 9 + 1, i % 3, (100 + i) * 10, i % 9 + 1 }'
  echo "1.000,200,0,200,0,0,nan,0,0.0,nan,nan,0,nan,nan" # a bin that answered nothing
} >"$tmp/with.csv"
sed 's/^\([0-9.]*\),200,\([0-9]*\),\([0-9]*\),/\1,200,200,0,/' "$tmp/with.csv" >"$tmp/without.csv"

check png 0 "$bin" plot serve -o "$tmp/s.png" --setpoint 0.5 "$tmp/with.csv" "$tmp/without.csv"
ok png-format is_png "$tmp/s.png"
expect_in png-says "$tmp/out" "wrote $tmp/s.png (2 runs)"
check svg 0 "$bin" plot serve -o "$tmp/s.svg" "$tmp/with.csv"
ok svg-format is_svg "$tmp/s.svg"
# the set-point line is drawn (SVG keeps the key's text)
check svg-sp 0 "$bin" plot serve -o "$tmp/sp.svg" --setpoint 0.25 "$tmp/with.csv"
expect_in svg-setpoint "$tmp/sp.svg" "set-point"

# a title with quotes, a backquote and a system() call stays text
check title 0 "$bin" plot serve -o "$tmp/t.png" --title "it's \`touch $tmp/pwned\` system('touch $tmp/pwned2')" "$tmp/with.csv"
ok title-inert test ! -e "$tmp/pwned" -a ! -e "$tmp/pwned2"

bad() { # bad NAME LINE-REGEX-IN-ERROR: the file $tmp/bad.csv is refused in one line
  check "$1" 1 "$bin" plot serve -o "$tmp/bad.png" "$tmp/bad.csv"
  one_line_error "$1"
  expect_in "$1-where" "$tmp/err" "$2"
  ok "$1-no-picture" test ! -e "$tmp/bad.png"
}
printf 't,sent,answered\n1,2,3\n' >"$tmp/bad.csv"
bad header "bad.csv:1: not serve_load's bins"
{ echo "$header"; echo "0.000,10,5,-5,0,0,0.1,0,50.0,1,0,0,0.1,0.2"; } >"$tmp/bad.csv"
bad negative "bad.csv:2: expected 14 numbers"
{ echo "# c"; echo "$header"; echo "0.000,10,nan,5,0,0,0.1,0,50.0,1,0,0,0.1,0.2"; } >"$tmp/bad.csv"
bad nan-count "bad.csv:3: expected 14 numbers"
{ echo "$header"; echo "0.200,10,5,5,0,0,0.1,0,50.0,1,0,0,0.1,0.2"; echo "0.100,10,5,5,0,0,0.1,0,50.0,1,0,0,0.1,0.2"; } >"$tmp/bad.csv"
bad backwards "bad.csv:3: t 0.1 does not follow 0.2"
{ echo "$header"; echo "0.000,10,5,5,0,0,0.1,0"; } >"$tmp/bad.csv"
bad short "bad.csv:2: expected 14 numbers"
echo "$header" >"$tmp/bad.csv"
bad empty "bad.csv: no bins"

check setpoint-elsewhere 2 "$bin" plot power -o "$tmp/p.png" --setpoint 0.5 "$tmp/with.csv"
one_line_error setpoint-elsewhere
check missing 1 "$bin" plot serve -o "$tmp/m.png" "$tmp/nope.csv"
one_line_error missing
cli_check_done "plot serve"
