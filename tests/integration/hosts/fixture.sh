#!/bin/sh
# ctest fixture: starts the hosts of a scenario, or records why this machine
# cannot (then every test of the fixture skips with that reason).
#   fixture.sh start SCENARIO RUNDIR | stop RUNDIR
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
case $1 in
  start)
    rm -f "$3.skipped"
    set +e
    reason=$(sh "$HERE/testhosts.sh" can-run)
    rc=$?
    set -e
    if [ $rc -ne 0 ]; then
      echo "$reason" >"$3.skipped"
      . "$HERE/../../skip.sh"
      skip_test "$reason"
    fi
    exec sh "$HERE/testhosts.sh" start "$2" "$3" ;;
  stop)
    exec sh "$HERE/testhosts.sh" stop "$2" ;;
esac
