#!/usr/bin/env bash
# The route server's targets (issue 23) on one machine, loopback only, every
# run bounded in requests and seconds:
#   1. latency: exact single routes one at a time-ish (Poisson 200/s, every
#      request level=0, no admission): the median end-to-end response;
#   2. capacity: exact routes from many concurrent clients (open-loop
#      Poisson far above what is answered, no admission): answered per s;
#   3. the experiment (bench/serve_load.sh) at twice the measured capacity,
#      with the PI admission controller and without it.
#
#   bench/serve_gpu.sh BUILD MAP OUT
#
# BUILD holds wattgraph and serve_load; MAP needs coordinates (an OSM map or
# `wattgraph gen road`, about FLA's size by default in bench/gpu.sh).
set -u
build=${1:?usage: bench/serve_gpu.sh BUILD MAP OUT}
map=${2:?map}
out=${3:?out folder}
W=$build/wattgraph
L=$build/serve_load
mkdir -p "$out"
backend=cpu
"$W" --version 2>/dev/null | grep -q "CUDA backend: built" && backend=auto

start_server() { # start_server NAME FLAGS... -> $pid, $port
  shift # NAME is in $name
  port=$((20000 + RANDOM % 20000))
  "$W" serve "$map" --port "$port" --backend "$backend" --duration-s 300 --json -q \
    --http-threads "${HTTP_THREADS:-16}" "$@" >"$out/server-$name.json" 2>"$out/server-$name.log" &
  pid=$!
  for _ in $(seq 1 1800); do # the router is built first: up to 3 min
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0 # listening
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
stop_server() { kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
rate_of() { # answered per second from serve_load's summary line
  sed -n 's/^serve_load: \([0-9.]*\) s, \([0-9]*\) answered.*/\2 \1/p' "$1" |
    awk '{ if ($2 > 0) printf "%.0f", $1 / $2; else print 0 }'
}
median_of() { sed -n 's/.*median response \([0-9.]*\) ms.*/\1/p' "$1"; }

name=latency
if start_server $name --no-admission --max-wait-ms 0; then
  "$L" --port "$port" --map "$map" --rate 200 --count 2000 --max-seconds 30 \
    --deadline-ms 1000 --spike-at 0 --spike-len 2000 --spike-fine 1 --workers 8 \
    --out "$out/latency.csv" 2>"$out/load-latency.log"
  stop_server
  echo "latency: exact single routes, median $(median_of "$out/load-latency.log") ms end to end"
else
  echo "latency: the server did not start ($(tail -1 "$out/server-$name.log"))"
fi

name=capacity
if start_server $name --no-admission; then
  "$L" --port "$port" --map "$map" --rate "${CAP_RATE:-400000}" --count "${CAP_COUNT:-1000000}" \
    --max-seconds 15 --deadline-ms 1000 --spike-at 0 --spike-len 1000000 --spike-fine 1 \
    --workers "${WORKERS:-256}" --out "$out/capacity.csv" 2>"$out/load-capacity.log"
  stop_server
  cap=$(rate_of "$out/load-capacity.log")
  echo "capacity: $cap exact routes/s answered from ${WORKERS:-256} concurrent clients"
else
  cap=0
  echo "capacity: the server did not start ($(tail -1 "$out/server-$name.log"))"
fi

if [ "${cap:-0}" -gt 0 ]; then
  rate=$((2 * cap))
  [ "$rate" -gt 1000000 ] && rate=1000000 # serve_load's bound
  count=$((rate * 10))
  [ "$count" -gt 1000000 ] && count=1000000
  timeout 400 bash "$(dirname "$0")/serve_load.sh" "$build" "$map" "$out/experiment" "$rate" \
    "$count" "${DEADLINE_MS:-50}" >"$out/experiment.log" 2>&1
  echo "experiment at 2x capacity ($rate/s, $count requests, deadline ${DEADLINE_MS:-50} ms):"
  grep '^serve_load:' "$out/experiment.log" | sed 's/^/  /'
fi
