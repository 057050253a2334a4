#!/usr/bin/env bash
# The route server's targets (issue 23) on one machine, loopback only, every
# run bounded in requests and seconds, the whole inside about 200 s so that
# it fits one 300 s device call:
#   1. latency: exact single routes (Poisson 200/s, 1000 requests, every
#      request level=0, no admission; the CPU router answers inline, the
#      CUDA one with --max-wait-ms 0): the median end to end, and where the
#      server's time went (GET /metrics phase sums);
#   2. capacity: exact routes, open-loop Poisson far above what is answered,
#      no admission, serve_load's keep-alive connections (CPU: --inline,
#      256 connections; CUDA: batches, 16384): answered per s;
#   3. the experiment (bench/serve_load.sh, EXP_S = 8 s a run): A, twice
#      the measured capacity throughout, with the PI admission controller
#      (each set-point) and without it: the share in time and the steady
#      tardiness; B, the capacity and then a 2x load step, with admission:
#      the control periods it takes tardiness to come back within 5%.
# 1 and 2 run on the CPU router, and on the CUDA router when the build has
# CUDA; 3 on the CUDA router when present, else the CPU one.
#
#   bench/serve_gpu.sh BUILD MAP OUT
#
# BUILD holds wattgraph and serve_load. MAP needs coordinates; when it does
# not exist it is generated there (`wattgraph gen road`, N vertices, 1M by
# default: FLA's size). The router's order is built once and saved as
# MAP.cch (every server start after the first loads it). Environment: N,
# MODEL (gen road's --model, e.g. regions; unset: the generator's default),
# DEADLINE_MS (the experiment's, 200), CUDA_BATCHERS (2), CUDA_MAX_BATCH
# (4096), CUDA_WORKERS (4096), LOAD_S (seconds per load phase, 6), CLIENT_THREADS (serve_load's
# epoll threads, 4). A short table is printed last.
# Since session 5 (the experiment at a truly offered 2x): SERVER_CPUS and
# CLIENT_CPUS (taskset lists, e.g. 0-7 and 8-15) pin every server and every
# serve_load, so the load generator has cores of its own and can offer 2x
# of that server's capacity (measured in the same run with the same
# pinning); BACKENDS (e.g. "cuda": only these); SKIP_LATENCY=1 (no step 1);
# MAX_CONNS (the experiment's open-loop cap on serve_load's connections,
# 1024 an HTTP thread within the open-file limit; the summary says when it
# was reached);
# SETPOINTS (the experiment's set-points with admission, "0.9").
# Since session 6 the server's HTTP loop is poll() (libmicrohttpd 0.9.75's
# epoll loop lost keep-alive requests): its cost grows with the connections
# open, so capacity defaults to 4096 connections and the experiment to 1024
# an HTTP thread (at 8000 the
# CUDA server on 4 cores answered 20.7k/s, at 4096 50.6k/s);
# (Our own epoll loop, tried in session 6, answered 24,669/s against poll's
# 56,582 in the same call and is gone: docs/journal/serve-s6.md.)
# Since session 7 the experiment's server gets `--start-rate CAPACITY
# --max-rate 2xCAPACITY` (the admission controller's first rate and its
# ceiling; FIRST_RATE=none leaves them out). CPU_CAPACITY=batch measures
# the CPU router's capacity with the experiment's batchers, not --inline.
# Since session 10: GPU_WAIT (spin|block, the CUDA servers' --gpu-wait);
# CAPACITY_ONLY=1 (steps 1 and 2 only); EXP_FLAGS (more flags for the
# experiment's servers, e.g. "--integral-band 0.5"). Since session 11
# GPU_SPIN_US (the CUDA servers' --gpu-spin-us, 200) and IDLE_HOST=0
# (--no-idle-host). Since session 12
# SKIP_A=1: experiment B alone (with CAPACITY=N: variants of gains or
# options on one offered load, without the capacity's spread between calls).
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
  model=()
  [ -n "${MODEL:-}" ] && model=(--model "$MODEL")
  "$W" gen road -n "${N:-1000000}" "${model[@]}" -o "$map" -q || { echo "serve_gpu: cannot make $map"; exit 1; }
fi
order="${map%.*}.cch"
backends=cpu
"$W" --version 2>/dev/null | grep -q "CUDA backend: built" && backends="cpu cuda"
if [ -n "${BACKENDS:-}" ]; then
  want=
  for be in $BACKENDS; do [[ " $backends " == *" $be "* ]] && want="$want $be"; done
  backends=${want# }
fi
spin=() cpin=()
if { [ -n "${SERVER_CPUS:-}" ] || [ -n "${CLIENT_CPUS:-}" ]; } && ! command -v taskset >/dev/null; then
  echo "serve_gpu: no taskset here: nothing is pinned"
  SERVER_CPUS= CLIENT_CPUS=
fi
[ -n "${SERVER_CPUS:-}" ] && spin=(taskset -c "$SERVER_CPUS")
[ -n "${CLIENT_CPUS:-}" ] && cpin=(taskset -c "$CLIENT_CPUS")

start_server() { # start_server NAME BACKEND FLAGS... -> $pid, $port
  local name=$1 be=$2
  shift 2
  port=$((20000 + RANDOM % 12000)) # below the ephemeral ports (32768-): thousands of client connections hold those
  "${spin[@]}" "$W" serve "$map" --port "$port" --backend "$be" --order "$order" --duration-s 120 --json \
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
    median_sent) sed -n 's/.*from the actual send: median \([0-9.]*\),.*/\1/p' "$1" ;;
    p99) sed -n 's/.*p99 \([0-9.]*\) ms.*/\1/p' "$1" ;;
    rate) sed -n 's/.*, \([0-9]*\) answered\/s.*/\1/p' "$1" ;;
    inside) sed -n 's/.*answered (\([0-9.]*\)% of them within.*/\1/p' "$1" ;;
    answered) sed -n 's/^serve_load: [0-9.]* s, \([0-9]*\) answered.*/\1/p' "$1" ;;
    late) sed -n 's/.*opened, \([0-9]*\) sent over.*/\1/p' "$1" ;;
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

declare -A lat latp p99 phase cap
# IDLE_HOST=0: the CUDA servers batch every request (--no-idle-host)
idle_flag=
[ "${IDLE_HOST:-1}" = 0 ] && idle_flag=--no-idle-host
# CAPACITY=N: skip 1 and 2, run the experiment at 2 x N (a capacity measured
# before on the same machine and map)
run_be=$backends
if [ -n "${CAPACITY:-}" ]; then
  run_be=
  for be in $backends; do cap[$be]=$CAPACITY; done
fi
for be in $run_be; do
  name=latency-$be
  lflags=(--max-wait-ms 0 --gpu-wait "${GPU_WAIT:-block}" --gpu-spin-us "${GPU_SPIN_US:-200}" $idle_flag)
  [ "$be" = cpu ] && lflags=(--inline)
  if [ -n "${SKIP_LATENCY:-}" ]; then
    :
  elif start_server "$name" "$be" --no-admission "${lflags[@]}"; then
    timeout $((load_s + 30)) "${cpin[@]}" "$L" --port "$port" --map "$map" --rate 200 --count 1000 \
      --max-seconds "$load_s" --deadline-ms 1000 --spike-at 0 --spike-len 1000 --spike-fine 1 \
      --workers 8 --threads 1 --out "$out/$name.csv" 2>"$out/load-$name.log"
    metrics >"$out/metrics-$name.txt" 2>/dev/null
    stop_server
    # from the actual send (what a client waits once it has sent); from the
    # planned send the client's own timer slack counts too
    lat[$be]=$(field "$out/load-$name.log" median_sent)
    latp[$be]=$(field "$out/load-$name.log" median)
    p99[$be]=$(field "$out/load-$name.log" p99)
    phase[$be]=$(phases "$out/metrics-$name.txt")
    echo "latency ($be): median ${lat[$be]:-?} ms from the send (${latp[$be]:-?} ms from the planned send, p99 ${p99[$be]:-?} ms); server: ${phase[$be]:-?}"
  else
    echo "latency ($be): the server did not start ($(tail -1 "$out/server-$name.log"))"
  fi
  name=capacity-$be
  # keep-alive connections, each one request at a time: answers/s <=
  # connections / response time, so the GPU's large batches need thousands
  if [ "$be" = cuda ]; then
    flags=(--batchers "${CUDA_BATCHERS:-2}" --max-batch "${CUDA_MAX_BATCH:-4096}" --max-wait-ms 2
           --gpu-wait "${GPU_WAIT:-block}" --gpu-spin-us "${GPU_SPIN_US:-200}" $idle_flag)
    workers=${CUDA_WORKERS:-4096}
  elif [ "${CPU_CAPACITY:-inline}" = batch ]; then
    # the experiment's own mode (CPU_BATCHERS batching threads): its 2x is
    # then twice what that server answers, not twice the inline answers
    flags=(--batchers "${CPU_BATCHERS:-2}")
    workers=${WORKERS:-1024}
  else
    flags=(--inline)
    workers=${WORKERS:-256}
  fi
  if start_server "$name" "$be" --no-admission "${flags[@]}"; then
    timeout $((load_s + 30)) "${cpin[@]}" "$L" --port "$port" --map "$map" --rate 400000 --count 1000000 \
      --max-seconds "$load_s" --deadline-ms 1000 --spike-at 0 --spike-len 1000000 \
      --spike-fine 1 --workers "$workers" --threads "${CLIENT_THREADS:-4}" \
      --out "$out/$name.csv" 2>"$out/load-$name.log"
    metrics >"$out/metrics-$name.txt" 2>/dev/null
    stop_server
    cap[$be]=$(field "$out/load-$name.log" rate)
    echo "capacity ($be, ${flags[*]}): ${cap[$be]:-?} exact routes/s answered over $workers connections; server: $(phases "$out/metrics-$name.txt")"
  else
    echo "capacity ($be): the server did not start ($(tail -1 "$out/server-$name.log"))"
  fi
done

# the experiment on the GPU router when there is one
xbe=cpu
[[ " $backends " == *" cuda "* ]] && xbe=cuda
c=${cap[$xbe]:-0}
deadline=${DEADLINE_MS:-200}
if [ "${c:-0}" -gt 0 ] && [ -z "${CAPACITY_ONLY:-}" ]; then
  # Two experiments of EXP_S (8) seconds a run (since session 10; before,
  # one run held 2x and stepped to 4x for a quarter of it, which these
  # 4 cores cannot even refuse):
  #   A (experiment/): a Poisson stream at 2x the capacity throughout, with
  #     admission (each set-point) and without: the share in time and the
  #     steady tardiness;
  #   B (experiment-step/, STEP=0 skips it): the capacity for 3/8 of the
  #     time, then a 2x load step to the end, with admission at the first
  #     set-point only: the control periods until tardiness is back within
  #     5%.
  exp_s=${EXP_S:-8}
  # open loop: connections opened before the clock for what admission keeps
  # in flight (the capacity for a whole deadline), more opened as requests
  # come, up to MAX_CONNS within the open-file limit (the server needs as
  # many); serve_load says how often the cap was reached
  maxw=$(( $(ulimit -n) - 2000 ))
  # poll() passes over every open connection: about 1024 an HTTP thread
  mc=${MAX_CONNS:-$((1024 * ${HTTP_THREADS:-16}))}
  [ "$maxw" -gt "$mc" ] && maxw=$mc
  if [ "$xbe" = cuda ]; then
    sflags="--batchers ${CUDA_BATCHERS:-2} --max-batch ${CUDA_MAX_BATCH:-4096} --max-wait-ms 2 --gpu-wait ${GPU_WAIT:-block} --gpu-spin-us ${GPU_SPIN_US:-200} $idle_flag"
  else
    sflags="--batchers ${CPU_BATCHERS:-2}" # batches: inline answers would hide the wait before an HTTP thread reads a request from the server's clock
  fi
  sflags="$sflags --http-threads ${HTTP_THREADS:-16} --connections $((maxw + 1000))"
  # the requests' clocks start at serve_load's send (X-Request-Start), so the
  # controller sees the wait in the sockets too
  sflags="$sflags --trust-request-start ${EXP_FLAGS:-}"
  # the controller starts from the capacity just measured (--start-rate,
  # with a ceiling of twice it); without them the first control period
  # admits up to 1e6/s and fills the sockets before the first capacity
  # sample
  [ "${FIRST_RATE:-capacity}" = capacity ] && sflags="$sflags --max-rate $((2 * c)) --start-rate $c"
  experiment() { # experiment DIR RATE COUNT SPIKE_AT SPIKE_LEN SPIKE_RATE [NO_BASELINE]
    local xw=$(($2 * deadline / 2000 + 64))
    [ "$xw" -gt "$maxw" ] && xw=$maxw
    NO_BASELINE=${7:-} BACKEND=$xbe ORDER=$order MAX_S=$exp_s SERVE_FLAGS=$sflags WORKERS=$xw MAX_CONNS=$maxw \
      THREADS=${CLIENT_THREADS:-4} SPIKE_AT=$4 SPIKE_LEN=$5 SPIKE_RATE=$6 SPIKE_FINE=0.8 BIN_MS=100 \
      timeout 150 bash "$here/serve_load.sh" "$build" "$map" "$out/$1" "$2" "$3" "$deadline" \
      >"$out/$1.log" 2>&1
    echo "  $xw connections opened first, up to $maxw (open files $(ulimit -n)), server cores ${SERVER_CPUS:-all}, client cores ${CLIENT_CPUS:-all}, deadline $deadline ms, $exp_s s a run:"
    grep '^serve_load:' "$out/$1.log" | sed 's/^/  /'
  }
  rate=$((2 * c))
  [ "$rate" -gt 500000 ] && rate=500000 # serve_load's bound: 10M requests
  if [ "${SKIP_A:-0}" = 0 ]; then
    echo "experiment A ($xbe router, 2 x $c = $rate/s offered open-loop throughout):"
    experiment experiment "$rate" $((rate * exp_s * 11 / 10)) 0 0 1
  fi
  if [ "${STEP:-1}" != 0 ]; then
    step_at=$((c * exp_s * 3 / 8))
    echo "experiment B ($xbe router, $c/s offered, then a 2x step at $((exp_s * 3 / 8)) s):"
    # the first set-point only: the table reads B's with.csv alone
    first=${SETPOINTS:-0.9}
    # every request from the step on is the spike's: a fixed 1,000,000
    # ended the 2x load before the run did once 2c x (the time left) passed
    # it (at EXP_S=16 and c = 57,704, 1.5 s of 1x at the end, which read as
    # -3..-8% "after the step"; session 12)
    SETPOINTS=${first%% *} PROFILE=${PROFILE:-$out/experiment/profile.csv} experiment experiment-step "$c" $((c * exp_s * 2)) "$step_at" $((c * exp_s * 2)) 2 1
  fi
fi

echo
echo "| target | backend | result |"
echo "|---|---|---|"
for be in $run_be; do
  echo "| exact single route, median < 1 ms | $be | ${lat[$be]:-?} ms from the send (${latp[$be]:-?} ms from the planned send, p99 ${p99[$be]:-?} ms); ${phase[$be]:-} |"
  echo "| >= 100,000 exact routes/s | $be | ${cap[$be]:-?} /s |"
done
sp_of() { # the set-point of a serve_load.sh mode
  local sp=0.9
  case $1 in with-*) sp=${1#with-} ;; with) sp=$(echo "${SETPOINTS:-0.9}" | awk '{print $1}') ;; esac
  echo "${sp%%[-:]*}"
}
modes=$(cd "$out/experiment" 2>/dev/null && ls load-*.log 2>/dev/null | sed 's/^load-//; s/\.log$//' | sort -r)
for mode in $modes; do
  f="$out/experiment/load-$mode.log"
  [ -f "$f" ] || continue
  srv=$(sed -n 's/.*"answered": *\([0-9]*\).*"deadline_misses": *\([0-9]*\).*/\1 \2/p' "$out/experiment/server-$mode.json" 2>/dev/null |
        awk '$1 > 0 { printf "%.2f%% by the server'"'"'s clock", 100 * ($1 - $2) / $1 }')
  echo "| 2x capacity, $mode admission: >= 99% of admitted within deadline | $xbe | $(field "$f" inside)% of $(field "$f" answered) answered in time by the client's clock (${srv:-?}), $(field "$f" refused) refused, $(field "$f" late) sent late |"
done
# bins of 100 ms (column 7 tardiness by the client's clock, 12 requests of
# the step in the bin)
for mode in $modes; do
  [ -f "$out/experiment/$mode.csv" ] || continue
  # A: steady state = the bins from 1 s on; beside it the server's own
  # (its control log: the tardiness the controller saw, answer-weighted)
  # (its clock starts before the load: steady from 1 s after its first answers)
  srv=$(awk -F, 'NR > 1 && $3 > 0 && t0 == "" { t0 = $1 }
                 NR > 1 && t0 != "" && $1 >= t0 + 1 && $5 >= 0 { s += $3 * $5; n += $3; k++; if ($5 >= 0.95 * sp && $5 <= 1.05 * sp) inb++ }
                 END { if (n > 0) printf "%.3f (%+.1f%%), %d of %d periods within", s / n, 100 * (s / n - sp) / sp, inb, k }' \
             sp="$(sp_of "$mode")" "$out/experiment/control-$mode.csv" 2>/dev/null)
  awk -F, -v sp="$(sp_of "$mode")" -v mode="$mode" -v srv="${srv:-?}" '
    /^#/ || $1 == "t" { next }
    $1 >= 1 && $7 != "nan" { s += $7; k++; if ($7 >= 0.95 * sp && $7 <= 1.05 * sp) inb++ }
    END { if (k < 1) exit
          printf "| 2x capacity, tardiness, %s admission (set-point %.2f, +-5%%) | steady mean %.3f (%+.1f%%), %d of %d bins within; server%s clock %s |\n", mode, sp, s / k, 100 * (s / k - sp) / sp, inb, k, "\047s", srv }' \
    "$out/experiment/$mode.csv"
done
f="$out/experiment-step/with.csv"
if [ -f "$f" ]; then
  # B: after the step begins, the first bin within +-5% of the set-point,
  # in control periods (a period is a deadline), and the mean from 10
  # periods after the step on, over the bins of the 2x load (the spike's)
  awk -F, -v sp="$(sp_of with)" -v per="$deadline" '
    /^#/ || $1 == "t" { next }
    { t = $1; td = $7 }
    step == "" && $12 > 0 { step = t }
    step == "" && t >= 1 && td != "nan" { s0 += td; k0++ }
    step != "" && back == "" && td != "nan" && td >= 0.95 * sp && td <= 1.05 * sp { back = t }
    step != "" && t >= step + 10 * per / 1000 && td != "nan" && $12 >= 0.9 * $2 { s1 += td; k1++; if (td >= 0.95 * sp && td <= 1.05 * sp) inb++ }
    END { if (step == "") exit
          printf "| 2x load step (set-point %.2f) | before the step mean %.3f; ", sp, k0 ? s0 / k0 : -1
          if (back != "") printf "back within 5%% after %.0f periods", (back - step) * 1000 / per
          else printf "never back within 5%%"
          if (k1) printf "; from 10 periods after the step mean %.3f (%+.1f%%), %d of %d bins within", s1 / k1, 100 * (s1 / k1 - sp) / sp, inb, k1
          printf " |\n" }' "$f"
  # the same on the server's clock (its control log; the step comes
  # 3/8 of the run after its first answers, and the run's clients stop
  # EXP_S after them)
  awk -F, -v sp="$(sp_of with)" -v end_s="${EXP_S:-8}" '
    BEGIN { step_s = end_s * 3 / 8 }
    NR == 1 { next }
    $3 > 0 && t0 == "" { t0 = $1 }
    t0 == "" { next }
    { t = $1 - t0; td = $5 }
    t >= 1 && t < step_s && td >= 0 { s0 += td; k0++ }
    t >= step_s { n++ }
    t >= step_s && back == "" && td >= 0.95 * sp && td <= 1.05 * sp { back = n }
    t >= step_s && n > 10 && t <= end_s && td >= 0 { s1 += td; k1++; if (td >= 0.95 * sp && td <= 1.05 * sp) inb++ }
    END { if (!n) exit
          printf "| 2x load step, server'"'"'s clock (set-point %.2f) | before the step mean %.3f; ", sp, k0 ? s0 / k0 : -1
          if (back != "") printf "back within 5%% in period %d after the step", back
          else printf "never back within 5%%"
          if (k1) printf "; from 10 periods after the step mean %.3f (%+.1f%%), %d of %d periods within", s1 / k1, 100 * (s1 / k1 - sp) / sp, inb, k1
          printf " |\n" }' "$out/experiment-step/control-with.csv" 2>/dev/null
fi
# the two clocks over the same requests: every answer of a run with
# admission, the clients' time from the send against the server's (the
# control log's periods, answer-weighted); session 12 found the server's
# 8-17% above on the H200 host
for f in "$out"/experiment/with*.csv "$out"/experiment-step/with.csv; do
  [ -f "$f" ] || continue
  ctl="$(dirname "$f")/control-$(basename "$f")"
  [ -f "$ctl" ] || continue
  cli=$(awk -F, '/^#/ || $1 == "t" { next } $3 > 0 && $13 != "nan" { s += $3 * $13; n += $3 } END { if (n) printf "%.4f %d", s / n, n }' "$f")
  srv=$(awk -F, 'NR > 1 && $3 > 0 && $5 >= 0 { s += $3 * $5; n += $3 } END { if (n) printf "%.4f %d", s / n, n }' "$ctl")
  [ -n "$cli" ] && [ -n "$srv" ] || continue
  echo "$cli $srv" | awk -v name="$(basename "$(dirname "$f")")/$(basename "$f" .csv)" -v d="$deadline" \
    '{ printf "| clocks, %s | clients %.4f (%d answers), server %.4f (%d): server/clients %.3f, %+.2f ms a request |\n", name, $1, $2, $3, $4, $3 / $1, d * ($3 - $1) }'
done
# the energy of each experiment's serving window, from the server's JSON
# (the meters present, and the names of those missing)
for js in "$out"/experiment/server-*.json "$out"/experiment-step/server-*.json; do
  [ -f "$js" ] || continue
  meters=$(grep -o '{"name":"[^"]*","kind":"[^"]*","available":[a-z]*[^}]*}' "$js" |
    awk '{ name = $0; sub(/^{"name":"/, "", name); sub(/".*/, "", name)
           if ($0 ~ /"available":true/) {
             j = $0; sub(/.*"joules":/, "", j); sub(/[,}].*/, "", j)
             w = $0; sub(/.*"mean_watts":/, "", w); sub(/[,}].*/, "", w)
             s = s sep sprintf("%s %.0f J at %.0f W", name, j, w); sep = "; "
           } else { miss = miss msep name; msep = ", " } }
         END { printf "%s", s == "" ? "no meter present" : s; if (miss != "") printf "; missing: %s", miss }')
  ans=$(sed -n 's/.*"answered":\([0-9]*\).*/\1/p' "$js")
  ref=$(sed -n 's/.*"refused":\([0-9]*\).*/\1/p' "$js")
  echo "| energy, $(basename "$(dirname "$js")")/$(basename "$js" .json | sed 's/^server-//') | ${meters:-no meter}; ${ans:-?} answers and ${ref:-?} refusals |"
done
echo "(serve_gpu: $((SECONDS - t_start)) s)"
