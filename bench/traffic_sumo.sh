#!/usr/bin/env bash
# wattgraph traffic against SUMO (Debian's sumo 1.15) on one OSM map with
# comparable demand: N random trips departing uniformly over the first half
# of the run, IDM car-following, 1 s steps, optionally every vehicle
# re-routed every R s. Prints both runs' vehicle updates per second, real-time
# factors and mean trip times side by side, and the ratio.
#
#   bench/traffic_sumo.sh MAP.osm.pbf [VEHICLES=5000] [DURATION=1200] [REROUTE=0]
#
# Needs sumo, netconvert, randomTrips.py (Debian: sumo, sumo-tools) and
# osmium (osmium-tool) to write the map as OSM XML for netconvert; with
# WG_BENCH_INSTALL=1 and root it installs them with apt-get. WG_BIN names the
# wattgraph binary (default build/wattgraph). Both simulators run on one
# thread; on a loaded machine compare the user CPU seconds printed too.
#
# Another machine (the GPU host has no SUMO tools): WG_SUMO_INPUTS=DIR keeps
# SUMO's network and trips in DIR (made there when DIR/net.xml is missing;
# WG_SUMO_PREP_ONLY=1 stops after that), so a machine with only the sumo
# binary (WG_SUMO_BIN, default sumo; its libraries through LD_LIBRARY_PATH)
# runs the same inputs. WG_ARGS adds flags to wattgraph's run (e.g.
# "--backend cuda -t 16"; the default "-t 1" stays first, later flags win).
set -euo pipefail
map=${1:?usage: bench/traffic_sumo.sh MAP.osm.pbf [VEHICLES] [DURATION] [REROUTE]}
vehicles=${2:-5000}
duration=${3:-1200}
reroute=${4:-0}
bin=${WG_BIN:-build/wattgraph}
sumo_bin=${WG_SUMO_BIN:-sumo}
if [ "${WG_SUMO_PREP_ONLY:-0}" != 1 ] && [ ! -x "$bin" ]; then
  echo "traffic_sumo.sh: no wattgraph binary at $bin (WG_BIN)" >&2
  exit 1
fi
inputs=${WG_SUMO_INPUTS:-}
prep=1
[ -n "$inputs" ] && [ -f "$inputs/net.xml" ] && [ -f "$inputs/trips.xml" ] && prep=0
need=()
if [ "$prep" = 1 ]; then
  for tool in netconvert osmium; do command -v "$tool" >/dev/null || need+=("$tool"); done
  rt=/usr/share/sumo/tools/randomTrips.py
  [ -f "$rt" ] || need+=(randomTrips.py)
fi
if [ "${WG_SUMO_PREP_ONLY:-0}" != 1 ]; then
  command -v "$sumo_bin" >/dev/null || need+=(sumo)
fi
if [ ${#need[@]} -gt 0 ]; then
  if [ "${WG_BENCH_INSTALL:-0}" = 1 ] && [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends sumo sumo-tools osmium-tool
  else
    echo "peer missing: ${need[*]} (apt-get install sumo sumo-tools osmium-tool, or WG_BENCH_INSTALL=1)" >&2
    exit 7
  fi
fi
export SUMO_HOME=${SUMO_HOME:-/usr/share/sumo} # netconvert's type maps live there
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
half=$(python3 -c "print($duration / 2)")
period=$(python3 -c "print($duration / 2 / $vehicles)")

if [ "$prep" = 1 ]; then
  osmium cat "$map" -o "$work/map.osm" -f osm >/dev/null
  netconvert --osm-files "$work/map.osm" -o "$work/net.xml" --keep-edges.by-vclass passenger \
    --remove-edges.isolated --geometry.remove --junctions.join --no-warnings true >/dev/null 2>&1
  python3 "$rt" -n "$work/net.xml" -o "$work/trips.xml" -r "$work/routes.rou.xml" -b 0 -e "$half" -p "$period" --seed 1 \
    --validate >/dev/null 2>&1
  if [ -n "$inputs" ]; then
    mkdir -p "$inputs"
    cp "$work/net.xml" "$work/trips.xml" "$inputs/"
  fi
else
  cp "$inputs/net.xml" "$inputs/trips.xml" "$work/"
fi
[ "${WG_SUMO_PREP_ONLY:-0}" = 1 ] && exit 0
sumo_args=(-n "$work/net.xml" -r "$work/trips.xml" --end "$duration" --step-length 1
  --default.carfollowmodel IDM --no-step-log true --no-warnings true
  --duration-log.statistics true --time-to-teleport 300 --threads 1)
# a host without SUMO's data (the sumo binary alone) cannot load its XML
# schemas: read the inputs without validating them
if [ ! -d "$SUMO_HOME/data/xsd" ]; then
  sumo_args+=(--xml-validation never --xml-validation.net never --xml-validation.routes never)
fi
if [ "$reroute" != 0 ]; then
  sumo_args+=(--device.rerouting.probability 1 --device.rerouting.period "$reroute")
fi
# user CPU seconds through bash's own timer (no /usr/bin/time needed)
TIMEFORMAT=%U
if ! { time "$sumo_bin" "${sumo_args[@]}" >"$work/sumo.log" 2>&1; } 2>"$work/sumo.cpu"; then
  echo "traffic_sumo.sh: sumo failed:" >&2
  tail -n 5 "$work/sumo.log" >&2
  exit 1
fi
[ -n "${WG_SUMO_LOG:-}" ] && cp "$work/sumo.log" "$WG_SUMO_LOG"
sumo_ups=$(grep -o 'UPS: [0-9.]*' "$work/sumo.log" | awk '{print $2}')
sumo_rtf=$(grep -o 'Real time factor: [0-9.]*' "$work/sumo.log" | awk '{print $4}')
sumo_trip=$(grep -A12 'Statistics (avg' "$work/sumo.log" | grep -o 'Duration: [0-9.]*' | head -1 | awk '{print $2}')
sumo_inserted=$(grep -o 'Inserted: [0-9]*' "$work/sumo.log" | awk '{print $2}')

wg_args=("$map" --vehicles "$vehicles" --duration "$duration" --depart-window "$half"
  --reroute "$reroute" --json -q -t 1)
# shellcheck disable=SC2206 # WG_ARGS is a list of flags
wg_args+=(${WG_ARGS:-})
{ time "$bin" traffic "${wg_args[@]}" >"$work/wg.json"; } 2>"$work/wg.cpu"
read -r wg_ups wg_rtf wg_trip wg_dep < <(python3 -c "
import json,sys; j=json.load(open('$work/wg.json'))
print(j['vehicle_updates_per_second'], j['real_time_factor'], j['mean_trip_seconds'], j['departed'])")

read -r sumo_cpu_ups wg_cpu_ups < <(python3 -c "
import json; j = json.load(open('$work/wg.json'))
sumo_updates = $sumo_ups * $duration / $sumo_rtf  # UPS x wall seconds
print(sumo_updates / max(1e-9, float(open('$work/sumo.cpu').read())),
      j['vehicle_updates'] / max(1e-9, float(open('$work/wg.cpu').read())))")
printf '%-10s %12s %10s %10s %10s %8s %12s\n' run "updates/s" "RT factor" "trip (s)" departed "CPU s" \
  "upd/CPU-s"
printf '%-10s %12.4g %10.1f %10s %10s %8s %12.4g\n' sumo "$sumo_ups" "$sumo_rtf" "${sumo_trip:-?}" \
  "${sumo_inserted:-?}" "$(cat "$work/sumo.cpu")" "$sumo_cpu_ups"
printf '%-10s %12.4g %10.1f %10.1f %10s %8s %12.4g\n' wattgraph "$wg_ups" "$wg_rtf" "$wg_trip" \
  "$wg_dep" "$(cat "$work/wg.cpu")" "$wg_cpu_ups"
python3 -c "print('ratio      %.1fx SUMO updates/s, %.1fx per CPU second (%s, %s vehicles, %s s, re-route %s; wattgraph CPU time includes loading the map)' % ($wg_ups / $sumo_ups, $wg_cpu_ups / $sumo_cpu_ups, '$map', $vehicles, $duration, '$reroute'))"
