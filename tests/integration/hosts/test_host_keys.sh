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
# (run_paictl sets $want: the host's key is kept as $key.)
key=$(cut -d' ' -f2 "$RUN/hosts/gpu-ok/ssh_host_ed25519_key.pub")
# A file hashed by OpenSSH's own ssh-keygen -H (Debian's default HashKnownHosts) holds
# the host as well.
cp "$TMP/known_hosts" "$TMP/hashed"
ssh-keygen -q -H -f "$TMP/hashed" >/dev/null 2>&1 || fail "ssh-keygen -H failed"
grep -q '^|1|' "$TMP/hashed" || fail "ssh-keygen -H did not hash the file"
grep -q '127.0.2.3' "$TMP/hashed" && fail "the hashed file still names the host"
run_paictl 0 check hosts "$RUN/cluster" $flags --limit gpu-ok --known-hosts "$TMP/hashed" -o json
# So does a wildcard pattern, unless a negated pattern excludes the host.
printf '[127.0.2.?]:%s %s\n' "$PORT" "$(cut -d' ' -f1,2 "$RUN/hosts/gpu-ok/ssh_host_ed25519_key.pub")" > "$TMP/wild"
run_paictl 0 check hosts "$RUN/cluster" $flags --limit gpu-ok --known-hosts "$TMP/wild" -o json
printf '[127.0.2.?]:%s,![127.0.2.3]:%s %s\n' "$PORT" "$PORT" "$(cut -d' ' -f1,2 "$RUN/hosts/gpu-ok/ssh_host_ed25519_key.pub")" > "$TMP/wild"
run_paictl 3 check hosts "$RUN/cluster" $flags --limit gpu-ok --known-hosts "$TMP/wild" -o json
$ASSERT host "$TMP/out" gpu-ok reached=false failure=host-key-unknown
# A key that an @revoked line names is refused even where a line for the host holds it,
# under accept-new too.
cp "$TMP/known_hosts" "$TMP/revoked"
printf '@revoked * ssh-ed25519 %s\n' "$key" >> "$TMP/revoked"
run_paictl 3 check hosts "$RUN/cluster" $flags --limit gpu-ok --known-hosts "$TMP/revoked" --host-key-policy accept-new -o json
$ASSERT host "$TMP/out" gpu-ok reached=false failure=host-key-changed
$ASSERT message "$TMP/out" gpu-ok Reachable "REVOKED HOST KEY"
# accept-new appends on a line of its own to a file whose last line has no newline,
# and creates a missing file readable by its owner only.
printf 'other.example.org ssh-ed25519 %s' "$key" > "$TMP/no-newline"
run_paictl 0 check hosts "$RUN/cluster" $flags --limit gpu-ok --known-hosts "$TMP/no-newline" --host-key-policy accept-new -o json
[ "$(wc -l < "$TMP/no-newline")" = 2 ] || fail "accept-new joined the last line: $(cat "$TMP/no-newline")"
grep -q "^\[127.0.2.3\]:$PORT ssh-ed25519 $key\$" "$TMP/no-newline" || fail "accept-new wrote: $(cat "$TMP/no-newline")"
run_paictl 0 check hosts "$RUN/cluster" $flags --limit gpu-ok --known-hosts "$TMP/new/dir/known_hosts" --host-key-policy accept-new -o json
[ "$(stat -c %a "$TMP/new/dir/known_hosts")" = 600 ] || fail "a new known_hosts is not 0600"
[ "$(stat -c %a "$TMP/new/dir")" = 700 ] || fail "a new known_hosts directory is not 0700"
# accept-new never accepts a changed key.
run_paictl 3 check hosts "$RUN/cluster" $flags --limit key-changed --host-key-policy accept-new -o json
$ASSERT host "$TMP/out" key-changed failure=host-key-changed
$ASSERT message "$TMP/out" key-changed Reachable "HOST KEY CHANGED"
# off connects anyway, and says so loudly.
run_paictl 0 check hosts "$RUN/cluster" $flags --limit key-changed --host-key-policy off -o json
grep -q "host key checking is OFF" "$TMP/err" || fail "no warning for --host-key-policy off"
$ASSERT message "$TMP/out" key-changed Reachable "NOT verified"
echo "ok: host keys"
