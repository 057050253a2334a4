#!/usr/bin/env bash
# The router against its peer, RoutingKit (CH and CCH), on one weighted
# graph, in the same call (issue 22's comparisons).
#
#   WG_ROUTINGKIT_DRIVER=/path/to/rk_driver bench/route_peer.sh GRAPH [N] [THREADS]
#
# GRAPH is anything wattgraph loads (FLA: the shared PACE file; its weights
# are drawn in [1, 255] with seed 1 as every wattgraph bench does).
# wattgraph converts it to DIMACS text with those weights (`wattgraph
# convert --weights auto`), the peer reads that file, so both run on the
# same weighted graph. N random pairs (default 100000), THREADS for the
# peer's parallel runs (default: all cores).
#
# The peer is NOT part of wattgraph and nothing here builds it: the driver
# is a small C++ program over RoutingKit (github RoutingKit/RoutingKit)
# built outside the repository, given by path. Without it this script
# prints "peer missing" and still runs wattgraph's side. The driver prints
# "rk KEY VALUE ..." lines, each time already the median of its --reps runs.
#
# Environment: WG_BIN (wattgraph, default build/wattgraph), WG_ROUTE_REPS
# (repetitions of each wattgraph run, default 3; medians printed),
# WG_ROUTE_BACKENDS (default "cpu cuda"), WG_ROUTE_PATH_FLAGS (the route
# command's flags for a batch with full paths; unset: distance runs only),
# WG_PEER_TMP (folder for the DIMACS copy, default /tmp), WG_ROUTINGKIT_ORDER
# (an order file, raw uint32 order[rank] = vertex, as bench_route_gpu's
# WG_BENCH_ROUTE_ORDER_OUT writes it: the peer's CCH is then built on
# wattgraph's order instead of its own inertial flow, which took minutes
# on FLA; needs a driver with --order), WG_ROUTINGKIT_ARGS (more driver
# flags, e.g. "--no-ch 1" or "--paths 0" where the driver has them).
# WG_ROUTE_BACKENDS=none runs the peer only. WG_PEER_GR=FILE.gr: the peer
# reads this DIMACS file of the same weighted graph instead of a conversion
# (the 20M-arc row, where converting costs a minute). WG_ROUTE_ONE_CORE=C
# adds the one-core comparison pinned to core C (below).
set -u
GRAPH=${1:?usage: WG_ROUTINGKIT_DRIVER=... bench/route_peer.sh GRAPH [N] [THREADS]}
N=${2:-100000}
THREADS=${3:-$(nproc)}
BIN=${WG_BIN:-build/wattgraph}
REPS=${WG_ROUTE_REPS:-3}
BACKENDS=${WG_ROUTE_BACKENDS:-cpu cuda}
TMPD=${WG_PEER_TMP:-/tmp}
DRIVER=${WG_ROUTINGKIT_DRIVER:-}

median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "-"}'; }

echo "# route_peer: $(basename "$GRAPH"), $N random pairs, peer threads $THREADS, host $(hostname), $(nproc) cores"
echo "# wattgraph $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%FT%TZ)"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name --format=csv,noheader | sed 's/^/# gpu /'

# ---- the peer ------------------------------------------------------------
if [ -z "$DRIVER" ] || [ ! -x "$DRIVER" ]; then
  echo "peer missing: set WG_ROUTINGKIT_DRIVER to a built RoutingKit driver (see docs/route-cuda.md)"
else
  GR=$TMPD/route_peer.$$.gr
  trap 'rm -f "$GR"' EXIT
  if [ -n "${WG_PEER_GR:-}" ]; then
    # the 20M-arc row: a DIMACS file already holding GRAPH's weighted arcs
    # (`wattgraph gen road N --model regions -o FILE.gr`), read as it is
    GR=$WG_PEER_GR
    trap - EXIT
  elif ! "$BIN" convert "$GRAPH" "$GR" --weights auto --quiet >/dev/null; then
    echo "convert failed: $BIN convert $GRAPH $GR --weights auto" >&2
    exit 1
  fi
  ORDER_ARGS=()
  [ -n "${WG_ROUTINGKIT_ORDER:-}" ] && ORDER_ARGS=(--order "$WG_ROUTINGKIT_ORDER")
  # shellcheck disable=SC2086
  RK=$("$DRIVER" "$GR" --queries "$N" --threads "$THREADS" --reps "$REPS" ${ORDER_ARGS[@]+"${ORDER_ARGS[@]}"} ${WG_ROUTINGKIT_ARGS:-})
  rc=$?
  echo "$RK"
  [ $rc -eq 0 ] || echo "peer driver exit $rc (3: CH and CCH distances differ)"
  get() { echo "$RK" | awk -v k="$1" '{for (i = 2; i < NF; i++) if ($i == k) {print $(i + 1); exit}}'; }
  printf '%-40s %14s\n' "RoutingKit (median of $REPS)" value
  printf '%-40s %14s\n' "CH build s" "$(get ch_build_s)"
  printf '%-40s %14s\n' "CH query us, distance, 1 core" "$(get ch_query_dist_us)"
  printf '%-40s %14s\n' "CH query us, node path, 1 core" "$(get ch_query_path_us)"
  printf '%-40s %14s\n' "CH queries/s, distance, $THREADS threads" "$(get ch_qps_dist_T)"
  printf '%-40s %14s\n' "CH queries/s, node path, $THREADS threads" "$(get ch_qps_path_T)"
  printf '%-40s %14s\n' "CCH order s" "$(get cch_order_s)"
  printf '%-40s %14s\n' "CCH build s" "$(get cch_build_s)"
  printf '%-40s %14s\n' "CCH customise ms, 1 core" "$(get cch_customise_1_ms)"
  printf '%-40s %14s\n' "CCH customise ms, $THREADS threads" "$(get cch_customise_T_ms)"
  printf '%-40s %14s\n' "CCH query us, distance, 1 core" "$(get cch_query_dist_us)"
  printf '%-40s %14s\n' "peak RSS MiB" "$(get rss_mib_peak)"
fi

# ---- wattgraph ---------------------------------------------------------------
# The route command's --json summary, REPS times per backend; every numeric
# field's median is printed, so the table follows whatever the command
# reports (queries/s, customise time, joules per 1000 routes, ...).
# ---- one core: the CPU router against RoutingKit CH -----------------------
# WG_ROUTE_ONE_CORE=C pins both to core C (taskset) and answers the same N
# pairs (bench_route -P rk draws them as the driver does) on one thread:
# bench_route's exact distance query (kept arcs, and the basic words beside
# it), build and customisation, then the driver's CH and its CCH on our
# order (bench_route -R). WG_BENCH_ROUTE: bench_route (default
# build/bench_route). Numbers of 2026-11-28 in docs/route.md.
if [ -n "${WG_ROUTE_ONE_CORE:-}" ]; then
  BR=${WG_BENCH_ROUTE:-build/bench_route}
  PIN=(taskset -c "$WG_ROUTE_ONE_CORE")
  command -v taskset >/dev/null || { PIN=(); echo "taskset missing: not pinned"; }
  ORD=$TMPD/route_peer.$$.order
  echo "# one core ($WG_ROUTE_ONE_CORE): wattgraph bench_route"
  "${PIN[@]}" "$BR" -f "$GRAPH" -q "$N" -n "$REPS" -x 2 -v 50 -P rk -R "$ORD" ||
    echo "bench_route failed: exit $?"
  if [ -z "$DRIVER" ] || [ ! -x "$DRIVER" ]; then
    echo "peer missing: set WG_ROUTINGKIT_DRIVER for the one-core RoutingKit run"
  elif [ -s "$ORD" ]; then
    GR1=$TMPD/route_peer.$$.1.gr
    if "$BIN" convert "$GRAPH" "$GR1" --weights auto --quiet >/dev/null; then
      echo "# one core ($WG_ROUTE_ONE_CORE): RoutingKit driver, --threads 1"
      "${PIN[@]}" "$DRIVER" "$GR1" --queries "$N" --threads 1 --reps "$REPS" --paths 0 \
        --cch-queries "$N" --order "$ORD" | grep -E "ch_build|ch_query|cch_build|cch_customise|cch_query|rss"
    else
      echo "convert failed: $BIN convert $GRAPH $GR1 --weights auto" >&2
    fi
    rm -f "$GR1"
  fi
  rm -f "$ORD"
fi

[ "$BACKENDS" = none ] && exit 0
if ! "$BIN" route --help >/dev/null 2>&1; then
  echo "wattgraph route missing in $BIN"
  exit 0
fi
for be in $BACKENDS; do
  for mode in distance path; do
    extra=""
    if [ "$mode" = path ]; then
      [ -n "${WG_ROUTE_PATH_FLAGS:-}" ] || continue
      extra=$WG_ROUTE_PATH_FLAGS
    fi
    J=$TMPD/route_peer.$$.$be.$mode.json
    : >"$J"
    for r in $(seq "$REPS"); do
      # shellcheck disable=SC2086
      "$BIN" route "$GRAPH" --random "$N" --seed "$r" --backend "$be" $extra --json >>"$J" 2>/dev/null ||
        echo "wattgraph route ($be, $mode) failed: exit $?"
    done
    echo "wattgraph route, backend $be, $mode (median of $REPS):"
    python3 - "$J" <<'EOF'
import json, sys, statistics
rows = []
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith("{"):
        try:
            rows.append(json.loads(line))
        except ValueError:
            pass
def flat(d, pre=""):
    for k, v in d.items():
        if isinstance(v, dict):
            yield from flat(v, pre + k + ".")
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            yield pre + k, v
vals = {}
for r in rows:
    for k, v in flat(r):
        vals.setdefault(k, []).append(v)
for k, v in vals.items():
    print(f"  {k:<38} {statistics.median(v):>14.6g}")
if not rows:
    print("  (no JSON output)")
EOF
    rm -f "$J"
  done
done
