#!/bin/sh
# The executor never runs more hosts at once than the open-file limit allows:
# with a hard limit of 40 descriptors, --parallel 64 becomes 2, and every host
# is still checked.
. "$(dirname "$0")/lib.sh"
set +e
# shellcheck disable=SC2046
(ulimit -n 40 && exec "$PAICTL" check hosts "$RUN/cluster" $(host_flags) --parallel 64 -o json) > "$TMP/limited.json" 2> "$TMP/err"
rc=$?
set -e
# 3: the catalogue's four unreachable hosts (which take precedence over the failed checks' 1).
[ $rc -eq 3 ] || { cat "$TMP/err" >&2; fail "check hosts under a limit of 40 descriptors exited $rc, want 3"; }
$ASSERT summary "$TMP/limited.json" hosts=14 unreachable=4 parallel=2
$ASSERT results "$TMP/limited.json" gpu-ok Reachable=pass
$ASSERT results "$TMP/limited.json" swap-on Swap=install
if grep -qi "too many open files" "$TMP/err" "$TMP/limited.json"; then fail "ran out of file descriptors"; fi
echo "ok: fd limit"
