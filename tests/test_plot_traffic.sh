#!/usr/bin/env bash
# The pictures of a traffic run (issue 24, "What a run shows"): a short
# Monaco simulation with --out, then `wattgraph plot congestion` and
# `wattgraph plot fd` of its folder. Checks the files the run writes for the
# pictures (arcs.csv: one row per arc of the map, every series arc in it;
# model.csv), that each picture is the format its extension says, that
# --time picks the period, hostile folder names, output names and titles
# stay text, and that a folder missing a file or holding a bad one gives
# one line naming it. Skips (7) only when gnuplot is absent.
set -u
bin=${WG_BIN:?WG_BIN not set}
repo=${WG_REPO:?WG_REPO not set}
command -v gnuplot >/dev/null || { echo "gnuplot not installed: skipped"; exit 7; }
. "$(dirname "$0")/support/cli_check.sh"
is_png() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = "211PNG" ]; }
is_svg() { head -c 300 "$1" | grep -q '<svg'; }
is_pdf() { [ "$(head -c 4 "$1")" = "%PDF" ]; }

map=$repo/data/monaco.osm.pbf
[ -f "$map" ] || { echo "FAIL: $map missing"; exit 1; }
run=$tmp/run
check run 0 "$bin" traffic "$map" --vehicles 600 --walkers 400 --duration 300 \
  --aggregate 60 --reroute 120 --fcd-share 0 -t 1 -q --json --out "$run"
cp "$tmp/out" "$tmp/run.json"
expect_in arcs-header "$run/arcs.csv" \
  "from,to,from_lon,from_lat,to_lon,to_lat,length_m,lanes,free_speed_ms"
expect_in model "$run/model.csv" "triangular,142.857143,18.000000,0.05,60,1"
# arcs.csv: one row per arc; every series row's arc is in it; free speeds
# equal the speed limits (speed factor 1) within the printed rounding
python3 - "$tmp/run.json" "$run" <<'PY' || { echo "FAIL arcs.csv content"; failures=$((failures + 1)); }
import csv, json, sys
j = json.load(open(sys.argv[1]))
arcs = list(csv.DictReader(open(sys.argv[2] + "/arcs.csv")))
assert len(arcs) == j["graph"]["arcs"], (len(arcs), j["graph"]["arcs"])
keys = {(a["from"], a["to"]) for a in arcs}
for a in arcs:
    assert float(a["length_m"]) > 0 and int(a["lanes"]) >= 1, a
    v = float(a["free_speed_ms"]) * 3.6
    assert 5 <= v <= 131 and abs(v - round(v)) < 0.01, a
    assert 7.3 < float(a["from_lon"]) < 7.6 and 43.6 < float(a["from_lat"]) < 43.9, a
rows = list(csv.DictReader(open(sys.argv[2] + "/series.csv")))
assert rows, "no series rows"
times = sorted({float(r["time"]) for r in rows})
assert times == [60, 120, 180, 240, 300], times
for r in rows:
    assert (r["from"], r["to"]) in keys, r
PY

cd "$tmp" || exit 1
check congestion-png 0 "$bin" plot congestion run --time 90 -o c.png
ok congestion-is-png is_png c.png
expect_in congestion-says "$tmp/out" "wrote c.png (congestion map of run)"
check congestion-svg 0 "$bin" plot congestion run --time 90 -o c.svg
ok congestion-is-svg is_svg c.svg
expect_in congestion-period c.svg "congestion over (60 s, 120 s]"
check congestion-last 0 "$bin" plot congestion run -o last.svg
expect_in congestion-last-period last.svg "congestion over (240 s, 300 s]"
check congestion-pdf 0 "$bin" plot congestion run --time 0 -o c.pdf
ok congestion-is-pdf is_pdf c.pdf
check fd-png 0 "$bin" plot fd run -o fd.png
ok fd-is-png is_png fd.png
check fd-svg 0 "$bin" plot fd run -o fd.svg --min-length 20 --title "''q'' x'"
ok fd-is-svg is_svg fd.svg
expect_in fd-title-quotes fd.svg "''q'' x': fundamental diagram"
expect_in fd-model fd.svg "model triangular"
expect_in fd-curve fd.svg "model, 50 km/h"

# Greenshields: the model file says so and the picture follows it
check run-gs 0 "$bin" traffic "$map" --walkers 300 --duration 120 --aggregate 60 --fd greenshields \
  --fcd-share 0 -t 1 -q --out gs
expect_in gs-model gs/model.csv "greenshields,"
check fd-gs 0 "$bin" plot fd gs -o gs.svg --min-length 0
expect_in fd-gs-says gs.svg "model Greenshields"

# hostile names: folder, output and title with shell and gnuplot syntax
evil="r'\$(touch PWNED)\`touch PWNED\`\"; system('touch PWNED')"
cp -r run "$evil"
check hostile-congestion 0 "$bin" plot congestion "$evil" -o "o'\`touch PWNED\`.png" \
  --title "'; system(\"touch PWNED\") #"
ok hostile-nothing-ran test ! -e PWNED
ok hostile-png is_png "o'\`touch PWNED\`.png"
check hostile-fd 0 "$bin" plot fd "$evil" -o "f\$(touch PWNED).svg" --title "\`touch PWNED\`"
ok hostile-fd-nothing-ran test ! -e PWNED
ok hostile-fd-svg is_svg "f\$(touch PWNED).svg"

# bad command lines
check no-dir 2 "$bin" plot congestion -o x.png
check two-dirs 2 "$bin" plot fd run run -o x.png
one_line_error two-dirs
check time-on-fd 2 "$bin" plot fd run --time 10 -o x.png
one_line_error time-on-fd
check min-length-on-congestion 2 "$bin" plot congestion run --min-length 10 -o x.png
check bad-ext 2 "$bin" plot fd run -o x.jpg
one_line_error bad-ext
check not-a-folder 1 "$bin" plot fd run/series.csv -o x.png
one_line_error not-a-folder
check time-past-end 1 "$bin" plot congestion run --time 301 -o x.png
one_line_error time-past-end
expect_in time-past-end "$tmp/err" "no period ends at or after --time 301 s (the last ends at 300 s)"

# folders missing a file, or holding a bad one: one line naming it, no picture
for f in series.csv arcs.csv model.csv; do
  rm -rf miss && cp -r run miss && rm "miss/$f"
  for kind in congestion fd; do
    check "missing-$f-$kind" 1 "$bin" plot "$kind" miss -o "miss-$kind.png"
    one_line_error "missing-$f-$kind"
    expect_in "missing-$f-$kind" "$tmp/err" "miss: cannot read $f"
    ok "missing-$f-$kind-no-picture" test ! -e "miss-$kind.png"
  done
done
mkdir empty
check empty-folder 1 "$bin" plot fd empty -o x.png
one_line_error empty-folder
bad_copy() { rm -rf bad && cp -r run bad; }
bad_copy && sed -i '3s/.*/60,1,2,nan,1,1/' bad/series.csv
check series-nan 1 "$bin" plot fd bad -o x.png
one_line_error series-nan
expect_in series-nan "$tmp/err" "bad/series.csv:3: expected time,from,to"
bad_copy && sed -i '2s/^[0-9]*,[0-9]*,[0-9]*,/60,1,2,/' bad/series.csv
check series-unknown-arc 1 "$bin" plot congestion bad --time 60 -o x.png
one_line_error series-unknown-arc
expect_in series-unknown-arc "$tmp/err" "bad/series.csv:2: arc 1 -> 2 is not in bad/arcs.csv"
bad_copy && { head -1 run/series.csv; grep '^120,' run/series.csv | head -3; grep '^60,' run/series.csv | head -3; } >bad/series.csv
check series-time-back 1 "$bin" plot fd bad -o x.png
one_line_error series-time-back
expect_in series-time-back "$tmp/err" "bad/series.csv:5: time 60 comes after 120"
bad_copy && head -1 run/series.csv >bad/series.csv
check series-empty 1 "$bin" plot fd bad -o x.png
one_line_error series-empty
expect_in series-empty "$tmp/err" "no rows"
bad_copy && printf 'time,from,to\n' >bad/series.csv
check series-header 1 "$bin" plot fd bad -o x.png
expect_in series-header "$tmp/err" "bad/series.csv:1: not a wattgraph traffic series"
bad_copy && sed -i '7s/,[0-9]*,[0-9.]*$/,0,13.9/' bad/arcs.csv
check arcs-lanes 1 "$bin" plot fd bad -o x.png
one_line_error arcs-lanes
expect_in arcs-lanes "$tmp/err" "bad/arcs.csv:7: expected from,to"
bad_copy && sed -i '2s/.*/triangular,-1,18,0.05,60,1/' bad/model.csv
check model-bad 1 "$bin" plot fd bad -o x.png
one_line_error model-bad
expect_in model-bad "$tmp/err" "bad/model.csv:2:"
# a map without coordinates: fd still draws, congestion says why not
bad_copy && python3 - bad/arcs.csv <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
out = [lines[0]]
for l in lines[1:]:
    f = l.split(",")
    out.append(",".join(f[:2] + ["", "", "", ""] + f[6:]))
open(sys.argv[1], "w").write("\n".join(out) + "\n")
PY
check no-coords-congestion 1 "$bin" plot congestion bad -o x.png
one_line_error no-coords-congestion
expect_in no-coords-congestion "$tmp/err" "the map has no coordinates"
check no-coords-fd 0 "$bin" plot fd bad -o nc.png
ok no-coords-fd-png is_png nc.png
ok no-stray-picture test ! -e x.png

cli_check_done "plot traffic"
