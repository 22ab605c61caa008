#!/bin/sh
# Root for the fact script when logging in as another user (scenarios/access.conf):
# sudo -n, sudo with the password on the script's stdin, and no sudo at all.
. "$(dirname "$0")/lib.sh"
if ! command -v sudo >/dev/null 2>&1; then
  skip_test "sudo is not installed on this machine (scripts/install-deps.sh installs it)"
fi
PW=$(cat "$RUN/password")
base="--connect-timeout 2 --command-timeout 4 --min-disk-free 1Gi --registry registry.paictl.test"
S="--ssh-config $RUN/ssh_config $base"

# --- sudo
run_paictl 0 check hosts --hosts "paiops@127.0.3.4" $S -o json
$ASSERT results "$TMP/out" 127.0.3.4 Privileges=pass
$ASSERT message "$TMP/out" 127.0.3.4 Privileges "sudo -n"
export PAICTL_SUDO_PASSWORD="$PW"
run_paictl 0 check hosts --hosts "paiops@127.0.3.5" $S -o json
$ASSERT message "$TMP/out" 127.0.3.5 Privileges "sudo with the password"
if grep -qF "$PW" "$TMP/out" "$TMP/err"; then fail "the sudo password appeared in the output"; fi
export PAICTL_SUDO_PASSWORD=wrong-password
run_paictl 0 check hosts --hosts "paiops@127.0.3.5" $S -o json
unset PAICTL_SUDO_PASSWORD
$ASSERT results "$TMP/out" 127.0.3.5 Privileges=warn
run_paictl 0 check hosts --hosts "paiops@127.0.3.6" $S -o json
$ASSERT results "$TMP/out" 127.0.3.6 Privileges=warn Reachable=pass

echo "ok: sudo"
