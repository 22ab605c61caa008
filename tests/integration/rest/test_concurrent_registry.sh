#!/bin/sh
# Several paictl processes change the registry at the same time: every change
# survives (the file is locked, re-read and replaced atomically).
set -eu
. "$(dirname "$0")/lib.sh"

# Eight `cluster add` at once, alternating between the two servers.
i=0
pids=""
while [ $i -lt 8 ]; do
  if [ $((i % 2)) -eq 0 ]; then uri=$LAB_URI; pw=alice-pass-1; else uri=$CLOUD_URI; pw=cloud-pass-1; fi
  (echo "$pw" | "$PAICTL" cluster add "c$i" --uri "$uri" --user alice --password-stdin -q >"$TMP/add$i.out" 2>&1; echo $? >"$TMP/add$i.rc") &
  pids="$pids $!"
  i=$((i + 1))
done
for p in $pids; do wait "$p"; done
i=0
while [ $i -lt 8 ]; do
  rc=$(cat "$TMP/add$i.rc")
  [ "$rc" = 0 ] && pass "add c$i" || { fail "add c$i exited $rc"; cat "$TMP/add$i.out" >&2; }
  i=$((i + 1))
done
run cluster list -o json --no-probe
json_check "sorted(c['name'] for c in d['items']) == ['c%d' % i for i in range(8)]" "all eight clusters are registered"
json_check "sum(c['current'] for c in d['items']) == 1" "exactly one is current"
MODE=$(stat -c %a "$REGISTRY")
[ "$MODE" = 600 ] && pass "registry mode stays 600" || fail "registry mode is $MODE"
ls "$(dirname "$REGISTRY")" | grep -q tmp && fail "a temporary file was left" || pass "no temporary file left"

# Concurrent use/prefer/remove while reading.
"$PAICTL" cluster use c3 -q & p1=$!
"$PAICTL" cluster prefer c7 c6 c5 -q & p2=$!
"$PAICTL" cluster remove c0 -q & p3=$!
"$PAICTL" cluster remove c1 -q & p4=$!
"$PAICTL" cluster list --no-probe >/dev/null & p5=$!
for p in $p1 $p2 $p3 $p4 $p5; do wait "$p" || fail "a concurrent command failed"; done
run cluster list -o json --no-probe
json_check "sorted(c['name'] for c in d['items']) == ['c%d' % i for i in range(2, 8)]" "both removals took effect"
json_check "[c['name'] for c in d['items'] if c['current']] == ['c3']" "use took effect"
run cluster prefer -o json
json_check "d['preference'] == ['c7', 'c6', 'c5']" "prefer took effect"

# Commands that only read work while a writer holds the lock for a moment.
run cluster status --all -o json
json_check "len(d['items']) == 6 and all('virtualClusters' in c for c in d['items'])" "status --all over six registrations"

finish
