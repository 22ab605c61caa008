#!/bin/sh
# Host-key policies: strict (default) refuses unknown and changed keys,
# accept-new records unknown hosts and still refuses changed keys, off warns loudly.
. "$(dirname "$0")/lib.sh"
flags="--ssh-config $RUN/ssh_config --connect-timeout 2 --command-timeout 4 --min-disk-free 1Gi"
: > "$TMP/known_hosts"

# strict + unknown host
run_paictl 3 check hosts "$RUN/cluster" $flags --limit gpu-ok --known-hosts "$TMP/known_hosts" -o json
$ASSERT host "$TMP/out" gpu-ok reached=false failure=host-key-unknown
$ASSERT message "$TMP/out" gpu-ok Reachable "is not in $TMP/known_hosts"
# accept-new records it...
run_paictl 0 check hosts "$RUN/cluster" $flags --limit gpu-ok --known-hosts "$TMP/known_hosts" --host-key-policy accept-new -o json
$ASSERT message "$TMP/out" gpu-ok Reachable "host key added to known_hosts"
grep -q "^\[127.0.2.3\]:$PORT ssh-ed25519 " "$TMP/known_hosts" || fail "accept-new did not write the key"
# ...with the key the host really has
want=$(cut -d' ' -f2 "$RUN/hosts/gpu-ok/ssh_host_ed25519_key.pub")
grep -q "$want" "$TMP/known_hosts" || fail "accept-new wrote another key"
# ...so strict now passes.
run_paictl 0 check hosts "$RUN/cluster" $flags --limit gpu-ok --known-hosts "$TMP/known_hosts" -o json
# accept-new never accepts a changed key.
run_paictl 3 check hosts "$RUN/cluster" $flags --limit key-changed --host-key-policy accept-new -o json
$ASSERT host "$TMP/out" key-changed failure=host-key-changed
$ASSERT message "$TMP/out" key-changed Reachable "HOST KEY CHANGED"
# off connects anyway, and says so loudly.
run_paictl 0 check hosts "$RUN/cluster" $flags --limit key-changed --host-key-policy off -o json
grep -q "host key checking is OFF" "$TMP/err" || fail "no warning for --host-key-policy off"
$ASSERT message "$TMP/out" key-changed Reachable "NOT verified"
echo "ok: host keys"
