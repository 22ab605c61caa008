#!/bin/sh
# SSH keepalives while the script is quiet: the host `slow` (nvidia-smi takes
# 30 s) runs sshd with LogLevel DEBUG, which logs every keepalive@openssh.com
# request it gets. --keepalive 1 sends one per quiet second; --keepalive 0 none.
. "$(dirname "$0")/lib.sh"
LOG=$RUN/hosts/slow/sshd.log
flags="--ssh-config $RUN/ssh_config --connect-timeout 2 --command-timeout 3 --min-disk-free 1Gi --limit slow -o json"
count() { grep -c 'keepalive@openssh.com' "$LOG" || true; }
# The lines sshd writes when a connection ends.
ends() { grep -cE 'Connection closed by|Disconnected from|Received disconnect from|Connection reset by|Timeout, client not responding' "$LOG" || true; }

before=$(count)
# shellcheck disable=SC2086
run_paictl 3 check hosts "$RUN/cluster" $flags --keepalive 1
$ASSERT host "$TMP/out" slow reached=true failure=command-timeout
after=$(count)
[ "$after" -gt "$before" ] || fail "no keepalive reached the host ($before before, $after after; $LOG)"

before=$after
ends_before=$(ends)
# shellcheck disable=SC2086
run_paictl 3 check hosts "$RUN/cluster" $flags --keepalive 0
# sshd logs the session's last requests and then its end after paictl has gone:
# count the keepalives once the end is in the log (5 s at most).
i=0
while [ "$(ends)" -le "$ends_before" ]; do
  i=$((i + 1)); [ $i -lt 100 ] || fail "sshd logged no end of the --keepalive 0 session within 5 s ($LOG)"
  sleep 0.05
done
after=$(count)
[ "$after" -eq "$before" ] || fail "--keepalive 0 still sent $((after - before)) keepalives"
echo "ok: keepalive ($before keepalives logged with --keepalive 1)"
