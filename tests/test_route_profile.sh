#!/usr/bin/env bash
# Route profiles (issue 23): `wattgraph route FILE --profile OUT` measures a
# batch's seconds and the routes' quality per level and batch size, writes
# the CSV of docs/contract.md (reloaded by serve), and `wattgraph serve
# --profile P` plans its levels from it. Checks: the file is a full grid
# that reloads (serve), equals the --json rows, level 0 is exact, the coarse
# level's quality is measured (below 1 on a graph where it is, close to an
# independent --random run's mean), scores replace it when given, bad
# command lines and bad profile files give one clear line, and a live server
# started with a profile picks the level the profile says (and exact
# without one).
set -u
bin=${WG_BIN:?WG_BIN not set}
. "$(dirname "$0")/support/cli_check.sh"
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

cd "$tmp" || exit 1
"$bin" gen road --vertices 20000 -o road.wgc -q >/dev/null || { echo "FAIL gen road"; exit 1; }

check help 0 "$bin" route --help
expect_in help "$tmp/out" "--profile-sizes"
check profile 0 "$bin" route road.wgc --profile p.csv --profile-sizes 1,16,64 --profile-reps 3 \
  --json -t 1 -q
cp "$tmp/out" p.json
expect_in profile-header p.csv "level,batch,seconds,quality"
expect_in profile-notes p.csv "# measured by wattgraph route --profile on road.wgc: 20,000 vertices"
check random-l3 0 "$bin" route road.wgc --random 4000 --level 3 --seed 9 --json -t 1 -q
cp "$tmp/out" l3.json
python3 - p.csv p.json l3.json <<'PY' || { echo "FAIL profile content"; failures=$((failures + 1)); }
import csv, json, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if not l.startswith("#"))]
assert rows[0] == ["level", "batch", "seconds", "quality"], rows[0]
grid = {(int(l), int(b)): (float(s), float(q)) for l, b, s, q in rows[1:]}
j = json.load(open(sys.argv[2]))
levels = j["router"]["levels"]
assert levels >= 2, levels
assert set(grid) == {(l, b) for l in range(levels) for b in (1, 16, 64)}, sorted(grid)
for r in j["rows"]:
    s, q = grid[(r["level"], r["batch"])]
    assert abs(s - r["seconds"]) <= 1e-6 * s and abs(q - r["quality"]) <= 1e-6, (r, s, q)
    assert abs(r["seconds_per_query"] * r["batch"] - s) <= 1e-6 * s, r
for (l, b), (s, q) in grid.items():
    assert 0 < s < 10 and 0 < q <= 1, (l, b, s, q)
    if l == 0:
        assert q == 1, (l, b, q)
    else:
        assert next(r for r in j["rows"] if r["level"] == l and r["batch"] == b)["quality_pairs"] >= 256
# the coarsest level loses quality on this graph, and the profile says how
# much: close to an independent run of 4000 other random pairs
top = levels - 1
ref = next(x["quality_mean"] for x in json.load(open(sys.argv[3]))["levels"] if x["level"] == top)
assert ref < 0.995, ref
for b in (1, 16, 64):
    q = grid[(top, b)][1]
    assert q < 1 and abs(q - ref) < 0.03, (b, q, ref)
PY

# scores instead of the measured quality, divided by the largest
check scores 0 "$bin" route road.wgc --profile s.csv --profile-sizes 4 --profile-reps 1 \
  --profile-scores 6,4,2,1 -t 1 -q
expect_in scores-l1 s.csv "1,4,"
python3 - s.csv <<'PY' || { echo "FAIL scores"; failures=$((failures + 1)); }
import sys
rows = [l.strip().split(",") for l in open(sys.argv[1]) if l[0].isdigit()]
q = {int(r[0]): float(r[3]) for r in rows}
assert q == {0: 1.0, 1: 4 / 6, 2: 2 / 6, 3: 1 / 6}, q
PY
check scores-count 2 "$bin" route road.wgc --profile s2.csv --profile-scores 6,4 -q
one_line_error scores-count
expect_in scores-count "$tmp/err" "--profile-scores: 2 scores for 4 levels"
check scores-bad 2 "$bin" route road.wgc --profile s2.csv --profile-scores 6,-1,2,1 -q
one_line_error scores-bad
check scores-nan 2 "$bin" route road.wgc --profile s2.csv --profile-scores 6,nan,2,1 -q
check scores-inf 2 "$bin" route road.wgc --profile s2.csv --profile-scores inf,4,2,1 -q

# bad command lines: one line, exit 2, nothing written
for sizes in "8,1" "0" "1,,2" "1," "-1" "abc" "1,2000000" "4,4"; do
  check "sizes-$sizes" 2 "$bin" route road.wgc --profile x.csv --profile-sizes "$sizes"
  one_line_error "sizes-$sizes"
done
check sizes-too-many 2 "$bin" route road.wgc --profile x.csv \
  --profile-sizes "$(seq -s, 1 25)"
check reps-0 2 "$bin" route road.wgc --profile x.csv --profile-reps 0
check with-random 2 "$bin" route road.wgc --profile x.csv --random 5
one_line_error with-random
check with-out 2 "$bin" route road.wgc --profile x.csv --out y.txt
one_line_error with-out
check stdout 2 "$bin" route road.wgc --profile -
one_line_error stdout
check over-input 2 "$bin" route road.wgc --profile road.wgc
one_line_error over-input
check no-folder 1 "$bin" route road.wgc --profile /nonexistent/dir/p.csv
one_line_error no-folder
[ ! -e x.csv ] && pass=$((pass + 1)) || { echo "FAIL x.csv written by a refused command"; failures=$((failures + 1)); }

# bad profile files: serve refuses them before loading the map
printf 'level,batch,seconds,quality\n0,1,0.001,1\n0,8,0.002,1\n1,1,0.0005,0.9\n' >missing.csv
check serve-missing-row 1 "$bin" serve road.wgc --profile missing.csv --port 0
one_line_error serve-missing-row
expect_in serve-missing-row "$tmp/err" "missing.csv: no row for level 1 batch 8"
printf '# ok\nlevel,batch,seconds,quality\n0,1,0.001,1.5\n' >q.csv
check serve-quality 1 "$bin" serve road.wgc --profile q.csv --port 0
expect_in serve-quality "$tmp/err" "q.csv:3:"
printf 'level,batch,seconds,quality\n0,1,nan,1\n' >nan.csv
check serve-nan 1 "$bin" serve road.wgc --profile nan.csv --port 0
expect_in serve-nan "$tmp/err" "nan.csv:2:"
check serve-no-file 1 "$bin" serve road.wgc --profile nofile.csv --port 0
one_line_error serve-no-file
expect_in serve-no-file "$tmp/err" "nofile.csv"

# serve starts with the measured profile, says so, and stops cleanly
check serve-measured 0 "$bin" serve road.wgc --profile p.csv --port 0 --duration-s 1 --json
expect_in serve-measured "$tmp/err" "levels from the profile p.csv (4 levels x 3 batch sizes, 1 to 64)"
expect_in serve-measured-json "$tmp/out" '"profile":"p.csv"'
printf 'level,batch,seconds,quality\n0,1,0.001,1\n1,1,0.0005,0.9\n' >two.csv
check serve-fewer-levels 0 "$bin" serve road.wgc --profile two.csv --port 0 --duration-s 1
expect_in serve-fewer-levels "$tmp/err" "warning: the profile has 2 levels and the router 4"

# live: a profile that makes exact routes too slow for the deadline moves
# the answer to the level the profile says fits; without it, exact
if command -v curl >/dev/null; then
  { echo "level,batch,seconds,quality"
    for b in 1 256; do echo "0,$b,5,1"; echo "1,$b,4,0.99"; echo "2,$b,0.000001,0.95"; echo "3,$b,0.000001,0.5"; done
  } >slow.csv
  start_server() { # start_server LOG ARGS...: sets pid and port
    local log=$1
    shift
    "$bin" serve road.wgc --port 0 --duration-s 120 --no-admission "$@" >/dev/null 2>"$log" &
    pid=$!
    port=
    for _ in $(seq 1 1200); do
      port=$(grep -o '127.0.0.1:[0-9]*' "$log" | head -1 | cut -d: -f2)
      [ -n "$port" ] && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  }
  stop_server() { kill -TERM "$pid"; wait "$pid"; pid=; }
  # two vertices of the generated map, by their coordinates
  pts=$("$bin" route road.wgc --from 0 --to 4000 --path "$tmp/p.geojson" -q >/dev/null &&
    python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['geometry']['coordinates']; print('%.7f,%.7f;%.7f,%.7f' % (c[0][0], c[0][1], c[-1][0], c[-1][1]))" "$tmp/p.geojson")
  for mode in profile none; do
    if [ "$mode" = profile ]; then start_server log1 --profile slow.csv; else start_server log2; fi
    if [ -z "$port" ]; then
      echo "FAIL server ($mode) did not start"; failures=$((failures + 1)); continue
    fi
    code=$(curl -s -m 20 -o body.json -w '%{http_code}' \
      "http://127.0.0.1:$port/route/v1/driving/$pts?overview=false&deadline=100")
    stop_server
    want=$([ "$mode" = profile ] && echo 2 || echo 0)
    if [ "$code" = 200 ] && python3 -c "import json,sys; r=json.load(open('body.json'))['routes'][0]; sys.exit(r['level'] != $want)"; then
      pass=$((pass + 1))
    else
      echo "FAIL live $mode: status $code, expected level $want: $(head -c 300 body.json)"
      failures=$((failures + 1))
    fi
  done
else
  echo "note: curl missing; live level check skipped"
fi

cli_check_done "route profile"
