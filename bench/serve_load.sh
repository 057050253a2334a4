#!/usr/bin/env bash
# The route server's experiment (issue 23): a Poisson stream of route requests
# on loopback, a spike at request 800 in which most requests ask for the
# finest level, with the PI admission controller and without it. Writes
# OUT/with.csv, OUT/without.csv (serve_load's bins), OUT/profile.csv, the
# servers' summaries, and OUT/serve_load.png (wattgraph plot serve) when
# gnuplot is there.
#
#   bench/serve_load.sh BUILD MAP OUT [RATE] [COUNT] [DEADLINE_MS]
#
# With admission each server also writes OUT/control-MODE.csv (its control
# periods: tardiness by the server's clock, capacity estimate, rate).
# Defaults: RATE 2000/s, COUNT 4000, DEADLINE_MS 50. Loopback only; every run
# is bounded (serve_load --max-seconds, wattgraph serve --duration-s).
# Environment: ORDER (the router's order file, built and saved when missing),
# MAX_S (serve_load's time bound per run, 60), SERVE_FLAGS (more flags for
# wattgraph serve, e.g. "--batchers 2 --max-batch 1024"), WORKERS (serve_load's
# keep-alive connections, 64), THREADS (its epoll threads, 4), SPIKE_AT (800),
# SPIKE_LEN (800), SPIKE_RATE (1: the spike's rate multiplier, 2 for a 2x load
# step), SPIKE_FINE (0.8), BIN_MS (250), MAX_CONNS (serve_load's open-loop cap
# on connections, default WORKERS), SETPOINTS (the admission set-points to
# run, "0.9": the first writes OUT/with.csv, each other OUT/with-SP.csv; an
# entry SP:noprobe runs wattgraph serve --no-probe, OUT/with-SP-noprobe.csv),
# SERVER_CPUS and CLIENT_CPUS (taskset core lists for the server and
# serve_load), BACKEND (cpu or cuda: the router; cuda when built with it),
# NO_BASELINE=1 (no run without admission), PROFILE (a profile.csv an
# earlier call measured on the same map and router: copied, not measured).
set -euo pipefail
build=${1:?usage: bench/serve_load.sh BUILD MAP OUT [RATE] [COUNT] [DEADLINE_MS]}
map=${2:?map}
out=${3:?out folder}
rate=${4:-2000}
count=${5:-4000}
deadline=${6:-50}
mkdir -p "$out"
order_flag=()
[ -n "${ORDER:-}" ] && order_flag=(--order "$ORDER")
max_s=${MAX_S:-60}
read -r -a extra <<<"${SERVE_FLAGS:-}"
spin=() cpin=()
[ -n "${SERVER_CPUS:-}" ] && spin=(taskset -c "$SERVER_CPUS")
[ -n "${CLIENT_CPUS:-}" ] && cpin=(taskset -c "$CLIENT_CPUS")
read -r -a setpoints <<<"${SETPOINTS:-0.9}"
modes=(with)
for sp in "${setpoints[@]:1}"; do modes+=("with-${sp/:/-}"); done
[ -n "${NO_BASELINE:-}" ] || modes+=(without)
# BACKEND (cpu or cuda) chooses the router; by default cuda when the build
# has it (a CUDA build on a machine without a GPU needs BACKEND=cpu)
router=${BACKEND:-}
if [ -z "$router" ]; then
  router=cpu
  if "$build/wattgraph" --version | grep -q "CUDA backend: built"; then router=cuda; fi
fi
case $router in
  cpu) backend=cpu ;;
  cuda) backend=auto ;; # wattgraph serve's name for the GPU router
  *) echo "serve_load.sh: BACKEND must be cpu or cuda, not '$router'" >&2; exit 2 ;;
esac
if [ -n "${PROFILE:-}" ] && [ -f "$PROFILE" ]; then # measured by an earlier call
  cp "$PROFILE" "$out/profile.csv"
else
  "$build/serve_load" --map "$map" --profile-out "$out/profile.csv" "${order_flag[@]}" \
    --backend "$router" 2>"$out/profile.log"
fi
port=$((20000 + RANDOM % 12000)) # below the ephemeral ports (32768-): thousands of client connections hold those
for mode in "${modes[@]}"; do
  flags=()
  case $mode in
    without) flags+=(--no-admission) ;;
    with) e=${setpoints[0]} ;;
    with-*) e=${mode#with-} ;;
  esac
  if [ "$mode" != without ]; then
    flags+=(--setpoint "${e%%[-:]*}" --control-log "$out/control-$mode.csv")
    [[ $e == *noprobe ]] && flags+=(--no-probe)
  fi
  "${spin[@]}" "$build/wattgraph" serve "$map" --port "$port" --backend "$backend" \
    --profile "$out/profile.csv" --deadline-ms "$deadline" --period-ms "$deadline" \
    --duration-s $((max_s + 60)) --json "${order_flag[@]}" "${extra[@]}" "${flags[@]}" \
    >"$out/server-$mode.json" 2>"$out/server-$mode.log" &
  pid=$!
  for _ in $(seq 1 900); do
    grep -q "serving" "$out/server-$mode.log" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if ! grep -q "serving" "$out/server-$mode.log" 2>/dev/null; then
    echo "serve_load.sh: the server ($mode) did not start: $(tail -1 "$out/server-$mode.log")"
    kill -TERM "$pid" 2>/dev/null || true # set -e: it may have exited
    wait "$pid" 2>/dev/null || true
    port=$((port + 1))
    continue
  fi
  "${cpin[@]}" "$build/serve_load" --port "$port" --map "$map" --rate "$rate" --count "$count" \
    --deadline-ms "$deadline" --max-seconds "$max_s" --workers "${WORKERS:-64}" \
    --max-conns "${MAX_CONNS:-${WORKERS:-64}}" \
    --threads "${THREADS:-4}" --spike-at "${SPIKE_AT:-800}" --spike-len "${SPIKE_LEN:-800}" \
    --spike-rate "${SPIKE_RATE:-1}" --spike-fine "${SPIKE_FINE:-0.8}" --bin-ms "${BIN_MS:-250}" \
    --out "$out/$mode.csv" 2>"$out/load-$mode.log"
  kill -TERM "$pid"
  wait "$pid" || true
  cat "$out/load-$mode.log"
  port=$((port + 1))
done
# the plot through `wattgraph plot serve`: every run of this call beside the
# others, the first set-point drawn
if command -v gnuplot >/dev/null; then
  runs=()
  for mode in "${modes[@]}"; do [ -f "$out/$mode.csv" ] && runs+=("$out/$mode.csv"); done
  sp=${setpoints[0]%%[-:]*}
  [ "${#runs[@]}" -gt 0 ] && "$build/wattgraph" plot serve -o "$out/serve_load.png" --setpoint "$sp" \
    --title "route server: Poisson $rate/s, deadline $deadline ms, spike at request ${SPIKE_AT:-800} (x${SPIKE_RATE:-1})" \
    "${runs[@]}" || echo "serve_load.sh: no plot"
fi
