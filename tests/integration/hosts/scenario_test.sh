#!/bin/sh
# One scenario of scenarios/catalogue.conf, end to end through the CLI:
#   scenario_test.sh HOST EXIT [--for PURPOSE] CHECK=STATUS...
# checks HOST alone (--limit) from the cluster files the fixture wrote (judged
# for PURPOSE, default check hosts' own: the test hosts are fresh), expects
# the exit code, the listed statuses, and no other failing check.
. "$(dirname "$0")/lib.sh"
host=$1 want=$2
shift 2
purpose=""
if [ "${1:-}" = "--for" ]; then
  purpose="--for $2"
  shift 2
fi
# shellcheck disable=SC2046,SC2086
run_paictl "$want" check hosts "$RUN/cluster" $(host_flags) $purpose --limit "$host" -o json
$ASSERT results "$TMP/out" "$host" "$@"
# The text report of the same host names every failed check with a hint, and
# every finding left to install with what install does.
# shellcheck disable=SC2046,SC2086
run_paictl "$want" check hosts "$RUN/cluster" $(host_flags) $purpose --limit "$host" --no-color
for kv in "$@"; do
  case $kv in
    *=fail) grep -q "FAIL  ${kv%=fail}" "$TMP/out" || fail "text report lacks FAIL ${kv%=fail}" ;;
    *=install) grep -q "INST  ${kv%=install}" "$TMP/out" || fail "text report lacks INST ${kv%=install}"
      grep -q "install will do this: " "$TMP/out" || fail "text report does not say what install does" ;;
  esac
done
echo "ok: $host"
