#!/usr/bin/env bash
# The route server's CPU a request against its open keep-alive connections
# (issue 23: libmicrohttpd's poll() loop walks every connection): refusals
# (admission at --max-rate 50, nearly every request refused) and answers
# (--no-admission, CPU router), at each of CONNS connections; the server on
# core SERVER_CPU with one HTTP thread, serve_load on core CLIENT_CPU, both
# on loopback, each load bounded (8 s of requests, 12 s at most).
# Server CPU = its utime + stime over the load (/proc), requests from
# /metrics.
#   bench/serve_conn_cost.sh [BUILD_DIR] [MAP]
#   env: CONNS ("32 512"), REFUSE_RATE (8000), ANSWER_RATE (3000), REPS (2),
#        PORT (5077), SERVER_CPU (0), CLIENT_CPU (1)
set -u
B=${1:-build}
MAP=${2:-data/monaco.osm.pbf}
W=$B/wattgraph; L=$B/serve_load
PORT=${PORT:-5077}
if [ ! -x "$W" ] || [ ! -x "$L" ]; then
  echo "serve_conn_cost.sh: build first ($W, $L)" >&2
  exit 2
fi
run() { # label conns rate extra...
  local label=$1 conns=$2 rate=$3; shift 3
  taskset -c "${SERVER_CPU:-0}" "$W" serve "$MAP" --host 127.0.0.1 --port "$PORT" --http-threads 1 --connections 4096 "$@" > /dev/null 2>&1 &
  local pid=$!
  local up=0
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/health" && { up=1; break; }; sleep 0.2; done
  if [ $up = 0 ]; then
    echo "serve_conn_cost.sh: the server did not come up on port $PORT" >&2
    kill "$pid" 2>/dev/null
    exit 1
  fi
  local t0 m0 t1 m1
  t0=$(awk '{print $14+$15}' "/proc/$pid/stat")
  m0=$(curl -s http://127.0.0.1:$PORT/metrics | awk '/^wattgraph_requests_total/{print $2}')
  taskset -c "${CLIENT_CPU:-1}" timeout 30 "$L" --port "$PORT" --map "$MAP" --rate "$rate" \
    --count $((rate * 8)) --max-seconds 12 --workers "$conns" --max-conns "$conns" --threads 1 > /dev/null 2>&1
  t1=$(awk '{print $14+$15}' "/proc/$pid/stat")
  m1=$(curl -s http://127.0.0.1:$PORT/metrics | awk '/^wattgraph_requests_total/{print $2}')
  kill "$pid"
  wait "$pid" 2>/dev/null
  python3 -c "t=($t1-$t0)/float($(getconf CLK_TCK)); r=float('$m1')-float('$m0'); print('%-12s conns %5d rate %6d: requests %8.0f server CPU %.2f s -> %.1f us/request' % ('$label',$conns,$rate,r,t,1e6*t/max(r,1)))"
}
for _ in $(seq "${REPS:-2}"); do
  for c in ${CONNS:-32 512}; do
    run refuse "$c" "${REFUSE_RATE:-8000}" --max-rate 50
    run answer "$c" "${ANSWER_RATE:-3000}" --no-admission
  done
done
