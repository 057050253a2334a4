#!/usr/bin/env bash
# `wattgraph serve` end to end: help, exit statuses, then a real server on the
# Monaco map (shared data; skipped when missing) asked through curl on
# loopback: /health, a route, a bad request, /metrics, and a clean stop on
# SIGTERM with its summary. Every wait is bounded.
set -u
bin=${WG_BIN:?WG_BIN not set}
shared=${WG_SHARED_DATA:-}
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

"$bin" serve --help >"$tmp/out" 2>&1 || fail "--help exits non-zero"
grep -q -- "--deadline-ms" "$tmp/out" || fail "--help lacks --deadline-ms"
"$bin" serve >/dev/null 2>&1; [ $? -eq 2 ] || fail "no FILE: expected exit 2"
"$bin" serve x.gr --port 70000 >/dev/null 2>"$tmp/err"; [ $? -eq 2 ] || fail "--port 70000: expected exit 2"
grep -q "wattgraph: error: serve: --port" "$tmp/err" || fail "--port error message"
"$bin" serve x.gr --backend gpu >/dev/null 2>&1; [ $? -eq 2 ] || fail "--backend gpu: expected exit 2"
"$bin" serve x.gr --gpu-wait yield >/dev/null 2>"$tmp/err"; [ $? -eq 2 ] || fail "--gpu-wait yield: expected exit 2"
grep -q -- "--gpu-wait expects spin or block, got 'yield'" "$tmp/err" || fail "--gpu-wait error message: $(cat "$tmp/err")"
"$bin" serve x.gr --max-rate 0 >/dev/null 2>"$tmp/err"; [ $? -eq 2 ] || fail "--max-rate 0: expected exit 2"
grep -q -- "--max-rate" "$tmp/err" || fail "--max-rate error message: $(cat "$tmp/err")"
"$bin" serve x.gr --max-rate 1000 --start-rate 5000 >/dev/null 2>"$tmp/err"; [ $? -eq 2 ] || fail "--start-rate above --max-rate: expected exit 2"
grep -q -- "--start-rate 5000 is above --max-rate 1000" "$tmp/err" || fail "--start-rate error message: $(cat "$tmp/err")"
"$bin" serve /nonexistent.gr --port 0 >/dev/null 2>"$tmp/err"; [ $? -eq 1 ] || fail "missing file: expected exit 1"
printf 'level,batch\n' >"$tmp/bad.csv"
"$bin" serve "$tmp/bad.csv" --control-log "$tmp/bad.csv" >/dev/null 2>"$tmp/err"; [ $? -eq 2 ] || fail "--control-log naming the input: expected exit 2"
grep -q "names the input file; refusing to overwrite it" "$tmp/err" || fail "--control-log over the input: $(cat "$tmp/err")"
"$bin" serve x.gr --order "$tmp/o" --control-log "$tmp/o" >/dev/null 2>"$tmp/err"; [ $? -eq 2 ] || fail "--control-log naming --order: expected exit 2"
"$bin" serve /nonexistent.gr --profile "$tmp/bad.csv" >/dev/null 2>"$tmp/err"; [ $? -eq 1 ] || fail "bad profile: expected exit 1"
grep -q "bad.csv:1:" "$tmp/err" || fail "bad profile message lacks file:line: $(cat "$tmp/err")"

map="$shared/osm-monaco.osrm-test.osm.pbf"
if [ ! -f "$map" ] || ! command -v curl >/dev/null; then
  echo "skipping the live part: $map or curl missing"
  [ "$failures" -eq 0 ] || exit 1
  exit 7
fi
"$bin" serve "$map" --port 0 --duration-s 300 --max-rate 5000 --json \
  --period-ms 100 --control-log "$tmp/control.csv" >"$tmp/summary" 2>"$tmp/log" &
pid=$!
port=
for _ in $(seq 1 1200); do # up to 2 min: a sanitizer build loads and builds the router slowly
  port=$(grep -o '127.0.0.1:[0-9]*' "$tmp/log" | head -1 | cut -d: -f2)
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$port" ] || { fail "server did not start: $(cat "$tmp/log")"; exit 1; }
url="http://127.0.0.1:$port"
c() { curl -s -m 10 -o "$tmp/body" -w '%{http_code}' "$@"; }
[ "$(c "$url/health")" = 200 ] || fail "/health"
[ "$(c "$url/route/v1/driving/7.4166,43.7318;7.4246,43.7384?overview=full&geometries=geojson")" = 200 ] || fail "route status"
grep -q '"code":"Ok"' "$tmp/body" || fail "route body: $(head -c 200 "$tmp/body")"
grep -q '"LineString"' "$tmp/body" || fail "route geometry"
# OSRM's default geometry (polyline) and none: the server answers through
# jansson's json_null(), which a same-named writer in the CLI once replaced
# (every such request crashed the server)
[ "$(c "$url/route/v1/driving/7.4166,43.7318;7.4246,43.7384")" = 200 ] || fail "route, polyline"
grep -q '"geometry":"' "$tmp/body" || fail "polyline geometry: $(head -c 200 "$tmp/body")"
[ "$(c "$url/route/v1/driving/7.4166,43.7318;7.4246,43.7384?overview=false")" = 200 ] ||
  fail "route, overview=false"
[ "$(c "$url/route/v1/driving/7.4166,43.7318")" = 400 ] || fail "one coordinate: expected 400"
grep -q '"code":"InvalidQuery"' "$tmp/body" || fail "InvalidQuery body"
[ "$(c "$url/table/v1/driving/7.4166,43.7318;7.4246,43.7384")" = 200 ] || fail "table"
[ "$(c "$url/nearest/v1/driving/7.42,43.73")" = 200 ] || fail "nearest"
[ "$(c "$url/metrics")" = 200 ] || fail "/metrics"
grep -q '^wattgraph_answered_total 5' "$tmp/body" || fail "metrics: $(grep answered "$tmp/body")"
# --max-rate bounds the admitted rate from the start (the capacity assumed
# until a control period measures one; the library's default is 1e6)
rate=$(awk '/^wattgraph_admitted_rate /{print $2}' "$tmp/body")
awk -v r="$rate" 'BEGIN {exit !(r > 0 && r <= 5000)}' || fail "--max-rate 5000: admitted rate '$rate'"
sleep 0.5 # a few 100 ms control periods after the last answer
[ ! -e "$tmp/control.csv" ] || fail "--control-log: the file appeared before the stop"
kill -TERM "$pid"
for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
wait "$pid"; rc=$?
pid=
[ "$rc" -eq 0 ] || fail "serve exit $rc after SIGTERM"
# the control log: its header, 16 fields a line, and the five answers above
# counted in its periods (the last, unfinished period is not written)
head -1 "$tmp/control.csv" | grep -q '^t,seconds,answered,refused,tardiness,' ||
  fail "control log header: $(head -1 "$tmp/control.csv")"
awk -F, 'NR > 1 { if (NF != 16) bad++; n++; a += $3; if ($2 < 0.09) short++ }
  END { exit !(bad == 0 && n >= 5 && a == 5 && short == 0) }' "$tmp/control.csv" ||
  fail "control log: $(wc -l <"$tmp/control.csv") lines, answered $(awk -F, 'NR > 1 {a += $3} END {print a}' "$tmp/control.csv")"
grep -q '"command":"serve"' "$tmp/summary" || fail "summary JSON: $(cat "$tmp/summary")"
grep -q '"answered":5' "$tmp/summary" || fail "summary counts: $(cat "$tmp/summary")"
# serve_load (bench/serve_load.c) against an --inline server: keep-alive
# connections (at most --workers opened), then one connection per request;
# every request answered (Ok or NoRoute), none failed, and the server's
# summary counts the same answers
load=${WG_BUILD:-}/serve_load
if [ -x "$load" ]; then
  "$bin" serve "$map" --port 0 --inline --no-admission --duration-s 300 --json \
    >"$tmp/summary2" 2>"$tmp/log2" &
  pid=$!
  port=
  for _ in $(seq 1 1200); do
    port=$(grep -o '127.0.0.1:[0-9]*' "$tmp/log2" | head -1 | cut -d: -f2)
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$port" ] || { fail "inline server did not start: $(cat "$tmp/log2")"; exit 1; }
  total=0
  for mode in "--close 0" "--close 1"; do
    # shellcheck disable=SC2086
    timeout 120 "$load" --port "$port" --map "$map" --rate 200 --count 150 --max-seconds 60 \
      --deadline-ms 10000 --workers 4 --threads 2 $mode --out "$tmp/load.csv" 2>"$tmp/load.log"
    line=$(grep '^serve_load:' "$tmp/load.log")
    ok=$(sed -n 's/.*, \([0-9]*\) answered (.*/\1/p' <<<"$line")
    nr=$(sed -n 's/.*, \([0-9]*\) NoRoute.*/\1/p' <<<"$line")
    opened=$(sed -n 's/.*; \([0-9]*\) connections opened.*/\1/p' <<<"$line")
    grep -q " 0 refused, [0-9]* NoRoute, 0 other errors, 0 not sent" <<<"$line" ||
      fail "serve_load $mode: $line"
    [ $((ok + nr)) -eq 150 ] || fail "serve_load $mode: $ok answered + $nr NoRoute != 150: $line"
    [ "$ok" -ge 100 ] || fail "serve_load $mode: only $ok routes: $line"
    if [ "$mode" = "--close 0" ]; then
      [ "$opened" -ge 1 ] && [ "$opened" -le 4 ] || fail "keep-alive opened $opened connections"
    else
      [ "$opened" -eq 150 ] || fail "--close 1 opened $opened connections, not 150"
    fi
    total=$((total + ok + nr))
  done
  kill -TERM "$pid"
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  wait "$pid"; rc=$?
  pid=
  [ "$rc" -eq 0 ] || fail "inline serve exit $rc after SIGTERM"
  grep -q '"inline":true' "$tmp/summary2" || fail "summary lacks inline: $(cat "$tmp/summary2")"
  grep -q "\"answered\":$total," "$tmp/summary2" ||
    fail "summary answered is not $total: $(grep -o '"answered":[0-9]*' "$tmp/summary2")"
  echo "serve_load: $total answers over keep-alive and per-request connections, inline"
else
  echo "serve_load not built: skipping its part"
fi
[ "$failures" -eq 0 ] && echo "serve CLI: all checks passed" && exit 0
exit 1
