#!/bin/sh
# One scenario of scenarios/catalogue.conf, end to end through the CLI:
#   scenario_test.sh HOST EXIT CHECK=STATUS...
# checks HOST alone (--limit) from the cluster files the fixture wrote, expects
# the exit code, the listed statuses, and no other failing check.
. "$(dirname "$0")/lib.sh"
host=$1 want=$2
shift 2
# shellcheck disable=SC2046
run_paictl "$want" check hosts "$RUN/cluster" $(host_flags) --limit "$host" -o json
$ASSERT results "$TMP/out" "$host" "$@"
# The text report of the same host names every failed check with a hint.
# shellcheck disable=SC2046
run_paictl "$want" check hosts "$RUN/cluster" $(host_flags) --limit "$host" --no-color
for kv in "$@"; do
  case $kv in
    *=fail) grep -q "FAIL  ${kv%=fail}" "$TMP/out" || fail "text report lacks FAIL ${kv%=fail}" ;;
  esac
done
echo "ok: $host"
