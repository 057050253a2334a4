#!/usr/bin/env bash
# The route server's targets (issue 23) on one machine, loopback only, every
# run bounded in requests and seconds, the whole inside about 200 s so that
# it fits one 300 s device call:
#   1. latency: exact single routes (Poisson 200/s, 1000 requests, every
#      request level=0, no admission, --max-wait-ms 0): the median end to
#      end, and where the server's time went (GET /metrics phase sums);
#   2. capacity: exact routes from 256 concurrent clients (open-loop
#      Poisson far above what is answered, no admission): answered per s;
#   3. the experiment (bench/serve_load.sh) at twice the measured capacity,
#      with the PI admission controller and without it (8 s each).
# 1 and 2 run on the CPU router, and on the CUDA router when the build has
# CUDA; 3 on the CUDA router when present, else the CPU one.
#
#   bench/serve_gpu.sh BUILD MAP OUT
#
# BUILD holds wattgraph and serve_load. MAP needs coordinates; when it does
# not exist it is generated there (`wattgraph gen road`, N vertices, 1M by
# default: FLA's size). The router's order is built once and saved as
# MAP.cch (every server start after the first loads it). Environment: N,
# DEADLINE_MS (the experiment's, 200), CPU_BATCHERS (4), CUDA_BATCHERS (2),
# CUDA_MAX_BATCH (4096), LOAD_S (seconds per load phase, 6). A short table
# is printed last.
set -u
build=${1:?usage: bench/serve_gpu.sh BUILD MAP OUT}
map=${2:?map}
out=${3:?out folder}
W=$build/wattgraph
L=$build/serve_load
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
# thousands of connections at once on both sides
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null
load_s=${LOAD_S:-6}
t_start=$SECONDS
if [ ! -f "$map" ]; then
  "$W" gen road -n "${N:-1000000}" -o "$map" -q || { echo "serve_gpu: cannot make $map"; exit 1; }
fi
order="${map%.*}.cch"
backends=cpu
"$W" --version 2>/dev/null | grep -q "CUDA backend: built" && backends="cpu cuda"

start_server() { # start_server NAME BACKEND FLAGS... -> $pid, $port
  local name=$1 be=$2
  shift 2
  port=$((20000 + RANDOM % 20000))
  "$W" serve "$map" --port "$port" --backend "$be" --order "$order" --duration-s 120 --json \
    --http-threads "${HTTP_THREADS:-16}" --connections 20000 "$@" >"$out/server-$name.json" \
    2>"$out/server-$name.log" &
  pid=$!
  for _ in $(seq 1 1200); do # the first start builds the order: up to 2 min
    grep -q "serving" "$out/server-$name.log" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
stop_server() { kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
metrics() { # the server's /metrics, without curl
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  printf 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3
  cat <&3
  exec 3<&-
}
field() { # field LOG NAME: a number from serve_load's summary line
  case $2 in
    median) sed -n 's/.*median response \([0-9.]*\) ms.*/\1/p' "$1" ;;
    p99) sed -n 's/.*p99 \([0-9.]*\) ms.*/\1/p' "$1" ;;
    rate) sed -n 's/.*, \([0-9]*\) answered\/s.*/\1/p' "$1" ;;
    inside) sed -n 's/.*answered (\([0-9.]*\)% of them within.*/\1/p' "$1" ;;
    answered) sed -n 's/^serve_load: [0-9.]* s, \([0-9]*\) answered.*/\1/p' "$1" ;;
    refused) sed -n 's/.*, \([0-9]*\) refused.*/\1/p' "$1" ;;
  esac
}
phases() { # per-request milliseconds of each server phase from a /metrics dump
  awk '/^wattgraph_phase_seconds_total/ { split($1, a, "\""); s[a[2]] = $2 }
       /^wattgraph_phase_requests_total/ { n = $2 }
       END { if (n > 0) printf "queue %.3f, snap %.3f, route %.3f, encode %.3f, respond %.3f ms/request",
             1e3 * s["queue"] / n, 1e3 * s["snap"] / n, 1e3 * s["route"] / n,
             1e3 * s["encode"] / n, 1e3 * s["respond"] / n }' "$1"
}

declare -A lat p99 phase cap
for be in $backends; do
  name=latency-$be
  if start_server "$name" "$be" --no-admission --max-wait-ms 0; then
    timeout $((load_s + 30)) "$L" --port "$port" --map "$map" --rate 200 --count 1000 \
      --max-seconds "$load_s" --deadline-ms 1000 --spike-at 0 --spike-len 1000 --spike-fine 1 \
      --workers 8 --out "$out/$name.csv" 2>"$out/load-$name.log"
    metrics >"$out/metrics-$name.txt" 2>/dev/null
    stop_server
    lat[$be]=$(field "$out/load-$name.log" median)
    p99[$be]=$(field "$out/load-$name.log" p99)
    phase[$be]=$(phases "$out/metrics-$name.txt")
    echo "latency ($be): median ${lat[$be]:-?} ms, p99 ${p99[$be]:-?} ms; server: ${phase[$be]:-?}"
  else
    echo "latency ($be): the server did not start ($(tail -1 "$out/server-$name.log"))"
  fi
  name=capacity-$be
  # synchronous clients: answers/s <= clients / response time, so the GPU's
  # large batches need thousands of clients at once
  if [ "$be" = cuda ]; then
    flags=(--batchers "${CUDA_BATCHERS:-2}" --max-batch "${CUDA_MAX_BATCH:-4096}" --max-wait-ms 2)
    workers=${CUDA_WORKERS:-4096}
  else
    flags=(--batchers "${CPU_BATCHERS:-4}" --max-batch 256 --max-wait-ms 1)
    workers=${WORKERS:-256}
  fi
  if start_server "$name" "$be" --no-admission "${flags[@]}"; then
    timeout $((load_s + 30)) "$L" --port "$port" --map "$map" --rate 400000 --count 1000000 \
      --max-seconds "$load_s" --deadline-ms 1000 --spike-at 0 --spike-len 1000000 \
      --spike-fine 1 --workers "$workers" --out "$out/$name.csv" 2>"$out/load-$name.log"
    metrics >"$out/metrics-$name.txt" 2>/dev/null
    stop_server
    cap[$be]=$(field "$out/load-$name.log" rate)
    echo "capacity ($be, ${flags[*]}): ${cap[$be]:-?} exact routes/s answered from $workers clients"
  else
    echo "capacity ($be): the server did not start ($(tail -1 "$out/server-$name.log"))"
  fi
done

# the experiment on the GPU router when there is one
xbe=cpu
[[ " $backends " == *" cuda "* ]] && xbe=cuda
c=${cap[$xbe]:-0}
deadline=${DEADLINE_MS:-200}
if [ "${c:-0}" -gt 0 ]; then
  rate=$((2 * c))
  [ "$rate" -gt 1000000 ] && rate=1000000 # serve_load's bound
  count=$((rate * 8))
  [ "$count" -gt 1000000 ] && count=1000000
  # enough clients to keep 2x capacity in flight for a whole deadline
  xw=$((rate * deadline / 1000 + 64))
  [ "$xw" -gt 8192 ] && xw=8192
  if [ "$xbe" = cuda ]; then
    sflags="--batchers ${CUDA_BATCHERS:-2} --max-batch ${CUDA_MAX_BATCH:-4096} --max-wait-ms 2"
  else
    sflags="--batchers ${CPU_BATCHERS:-4}"
  fi
  sflags="$sflags --http-threads ${HTTP_THREADS:-16} --connections 20000"
  ORDER=$order MAX_S=8 SERVE_FLAGS=$sflags WORKERS=$xw timeout 150 bash "$here/serve_load.sh" "$build" \
    "$map" "$out/experiment" "$rate" "$count" "$deadline" >"$out/experiment.log" 2>&1
  echo "experiment ($xbe router, 2 x $c = $rate/s offered, $xw clients, deadline $deadline ms, 8 s each):"
  grep '^serve_load:' "$out/experiment.log" | sed 's/^/  /'
fi

echo
echo "| target | backend | result |"
echo "|---|---|---|"
for be in $backends; do
  echo "| exact single route, median < 1 ms | $be | ${lat[$be]:-?} ms (p99 ${p99[$be]:-?} ms); ${phase[$be]:-} |"
  echo "| >= 100,000 exact routes/s | $be | ${cap[$be]:-?} /s |"
done
for mode in with without; do
  f="$out/experiment/load-$mode.log"
  [ -f "$f" ] || continue
  echo "| 2x capacity, $mode admission: >= 99% of admitted within deadline | $xbe | $(field "$f" inside)% of $(field "$f" answered) answered in time, $(field "$f" refused) refused |"
done
if [ -f "$out/experiment/with.csv" ]; then
  # tardiness in steady state: the bins of the last half of the run
  awk -F, -v sp=0.9 'NR > 0 && $7 != "nan" { t[n++] = $7 }
    END { if (n < 4) exit; s = 0; k = 0
          for (i = int(n / 2); i < n; i++) { s += t[i]; k++ }
          m = s / k; printf "| tardiness in steady state (set-point %.2f, +-5%%) | with admission | mean %.3f over the last %d bins (%+.1f%%) |\n", sp, m, k, 100 * (m - sp) / sp }' \
    "$out/experiment/with.csv"
fi
echo "(serve_gpu: $((SECONDS - t_start)) s)"
