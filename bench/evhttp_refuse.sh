#!/usr/bin/env bash
# Phase 1 of the evhttp port (issue 23): the server CPU of a refusal in
# libevent's evhttp loop (build/evhttp_refuse, a 503 to everything) against
# the route server's libmicrohttpd poll() loop refusing at --max-rate 50, at
# each of CONNS keep-alive connections, alternated, REPS times. Driven as
# bench/serve_conn_cost.sh drives its loads: the server on core SERVER_CPU
# with one HTTP thread, serve_load on CLIENT_CPU, 8 s of requests at RATE.
# CPU = utime + stime over the load (/proc); requests from /metrics (the
# route server) or from the count evhttp_refuse prints at SIGTERM.
#   bench/evhttp_refuse.sh [BUILD_DIR] [MAP]
#   env: CONNS ("32 1024"), RATE (8000), REPS (2), PORT (5077),
#        SERVER_CPU (0), CLIENT_CPU (1)
set -u
B=${1:-build}
MAP=${2:-data/monaco.osm.pbf}
W=$B/wattgraph; L=$B/serve_load; E=$B/evhttp_refuse
PORT=${PORT:-5077}
RATE=${RATE:-8000}
for x in "$W" "$L" "$E"; do
  [ -x "$x" ] || { echo "evhttp_refuse.sh: build first ($x)" >&2; exit 2; }
done
load() { # conns
  taskset -c "${CLIENT_CPU:-1}" timeout 30 "$L" --port "$PORT" --map "$MAP" --rate "$RATE" \
    --count $((RATE * 8)) --max-seconds 12 --workers "$1" --max-conns "$1" --threads 1 > /dev/null 2>&1
}
wait_up() {
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/health" && return 0; sleep 0.2; done
  echo "evhttp_refuse.sh: no server on port $PORT" >&2
  return 1
}
report() { # label conns t0 t1 requests
  python3 -c "t=($4-$3)/float($(getconf CLK_TCK)); r=float('$5'); print('%-8s conns %5d: requests %8.0f server CPU %.2f s -> %.1f us/request' % ('$1',$2,r,t,1e6*t/max(r,1)))"
}
mhd() { # conns
  taskset -c "${SERVER_CPU:-0}" "$W" serve "$MAP" --host 127.0.0.1 --port "$PORT" --http-threads 1 \
    --connections 4096 --max-rate 50 > /dev/null 2>&1 &
  local pid=$! t0 t1 m0 m1
  wait_up || { kill "$pid"; exit 1; }
  t0=$(awk '{print $14+$15}' "/proc/$pid/stat")
  m0=$(curl -s http://127.0.0.1:$PORT/metrics | awk '/^wattgraph_requests_total/{print $2}')
  load "$1"
  t1=$(awk '{print $14+$15}' "/proc/$pid/stat")
  m1=$(curl -s http://127.0.0.1:$PORT/metrics | awk '/^wattgraph_requests_total/{print $2}')
  kill "$pid"; wait "$pid" 2>/dev/null
  report mhd "$1" "$t0" "$t1" "$(python3 -c "print(float('$m1')-float('$m0'))")"
}
ev() { # conns
  local out; out=$(mktemp)
  taskset -c "${SERVER_CPU:-0}" "$E" --port "$PORT" --threads 1 > "$out" 2>&1 &
  local pid=$! t0 t1
  wait_up || { kill "$pid"; exit 1; }
  t0=$(awk '{print $14+$15}' "/proc/$pid/stat")
  load "$1"
  t1=$(awk '{print $14+$15}' "/proc/$pid/stat")
  kill "$pid"; wait "$pid" 2>/dev/null
  # the health probe is one of the counted requests: the CPU window starts after it
  report evhttp "$1" "$t0" "$t1" "$(awk '/^requests/{print $2-1}' "$out")"
  rm -f "$out"
}
for _ in $(seq "${REPS:-2}"); do
  for c in ${CONNS:-32 1024}; do
    mhd "$c"
    ev "$c"
  done
done
