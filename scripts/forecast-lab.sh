#!/bin/sh
# The forecast of docs/simulate.md (`simulate --from-live`), played on servers
# that stand in for a live cluster: the HiveD inspect API test server
# (tests/integration/hived/hived_test_server) serving the lab of
# tests/integration/hived/scenarios/forecast-lab.json (eight running groups, v7
# bad) and the OpenPAI REST test server with its job list
# (forecast-lab-rest.json: when the running jobs were launched, each user's
# finished jobs, two jobs waiting). The proposed config moves one of prod's
# node cells to research (lab-moved.yaml); 40 jobs arrive over the day
# (forecast-lab-arrivals.csv). Prints the forecast and writes its report.
#
#   scripts/forecast-lab.sh REPORT-DIR [PICTURE.svg]
#       the report (report.html, forecast.svg) into REPORT-DIR; with PICTURE.svg
#       forecast.svg is copied there too. The docs' picture:
#       scripts/forecast-lab.sh "$(mktemp -d)" docs/simulate/forecast-lab.svg
#
# PAICTL=path to another paictl; BUILD=dir holding tests/integration/hived/hived_test_server
# (default build). Needs python3 with PyYAML (the REST test server). Everything it
# starts listens on 127.0.0.1 and is stopped at the end.
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: scripts/forecast-lab.sh REPORT-DIR [PICTURE.svg]" >&2; exit 2; }
REPORT=$1
PICTURE=${2:-}
BUILD=${BUILD:-build}
PAICTL=${PAICTL:-$BUILD/paictl}
SERVER=$BUILD/tests/integration/hived/hived_test_server
SCEN=tests/integration/hived/scenarios
[ -x "$PAICTL" ] || { echo "forecast-lab: no $PAICTL (build it, or set PAICTL=path)" >&2; exit 2; }
[ -x "$SERVER" ] || { echo "forecast-lab: no $SERVER (ninja -C $BUILD hived_test_server, or set BUILD=dir)" >&2; exit 2; }
case $PAICTL in /*) ;; *) PAICTL=$PWD/$PAICTL ;; esac
RUN=$(mktemp -d "${TMPDIR:-/tmp}/paictl-forecast-lab.XXXXXX")
PID=""
cleanup() {
  [ -z "$PID" ] || kill "$PID" 2>/dev/null || true
  [ -z "$PID" ] || wait "$PID" 2>/dev/null || true
  python3 tests/integration/rest/rest_fixture.py stop "$RUN/rest" >/dev/null 2>&1 || true
  rm -rf "$RUN"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$SERVER" "$SCEN/forecast-lab.json" "$RUN/port" >"$RUN/server.log" 2>&1 &
PID=$!
i=0
while [ ! -s "$RUN/port" ]; do
  i=$((i + 1))
  [ "$i" -lt 200 ] || { cat "$RUN/server.log" >&2; echo "forecast-lab: the HiveD test server did not start" >&2; exit 1; }
  sleep 0.05
done
python3 tests/integration/rest/rest_fixture.py start "$RUN/rest" lab="$SCEN/forecast-lab-rest.json"
. "$RUN/rest/env.sh"
export XDG_CONFIG_HOME="$RUN/config" HOME="$RUN/home"
unset PAICTL_CONFIG
echo root-pass-1 | "$PAICTL" cluster add lab --uri "$LAB_URI" --user root --password-stdin \
  --hived "http://127.0.0.1:$(cat "$RUN/port")" >/dev/null
# The arrivals and the proposed config under the names the docs show.
cp "$SCEN/forecast-lab-arrivals.csv" "$RUN/arrivals.csv"
cp "$SCEN/lab-moved.yaml" "$RUN/lab-moved.yaml"
echo "\$ paictl simulate --from-live lab --config lab-moved.yaml --arrivals arrivals.csv --report report/"
(cd "$RUN" && "$PAICTL" simulate --from-live lab --config lab-moved.yaml --arrivals arrivals.csv \
  --report report)
mkdir -p "$REPORT"
cp "$RUN/report/report.html" "$RUN/report/forecast.svg" "$REPORT/"
if [ -n "$PICTURE" ]; then
  cp "$RUN/report/forecast.svg" "$PICTURE"
  echo "wrote $PICTURE"
fi
