#!/bin/sh
# Ways in (scenarios/access.conf): ProxyJump, password authentication from
# stdin, the environment or config.yaml, ssh-agent, and --hosts-file.
# (sudo: test_sudo.sh)
. "$(dirname "$0")/lib.sh"
PW=$(cat "$RUN/password")
base="--connect-timeout 2 --command-timeout 4 --min-disk-free 1Gi --registry registry.paictl.test"

# --- ProxyJump: "hidden" is behind.internal.test, a name only the bastion resolves.
if getent hosts behind.internal.test >/dev/null 2>&1; then fail "this machine resolves behind.internal.test"; fi
cp "$RUN/known_hosts" "$TMP/known_hosts"
printf '[behind.internal.test]:%s %s\n' "$PORT" "$(cut -d' ' -f1,2 "$RUN/hosts/behind/ssh_host_ed25519_key.pub")" >> "$TMP/known_hosts"
cat > "$TMP/ssh_config" <<CFG
Host hidden
  Hostname behind.internal.test
  ProxyJump root@127.0.3.2
Host *
  Port $PORT
  User root
  IdentityFile $RUN/id_ed25519
  UserKnownHostsFile $TMP/known_hosts
CFG
run_paictl 0 check hosts --hosts hidden --ssh-config "$TMP/ssh_config" $base -o json
$ASSERT host "$TMP/out" hidden reached=true address=behind.internal.test
$ASSERT message "$TMP/out" hidden UniqueHostname "behind"
run_paictl 0 check hosts --hosts hidden --ssh-config "$TMP/ssh_config" $base --dry-run
grep -q "via       root@127.0.3.2:$PORT (ProxyJump)" "$TMP/out" || fail "dry run does not show the jump"
# A jump host that refuses us is reported as the jump host's failure.
sed "s|ProxyJump root@127.0.3.2|ProxyJump root@127.0.3.7|" "$TMP/ssh_config" > "$TMP/ssh_config.bad"
run_paictl 3 check hosts --hosts hidden --ssh-config "$TMP/ssh_config.bad" $base -o json
$ASSERT host "$TMP/out" hidden failure=jump
$ASSERT message "$TMP/out" hidden Reachable "jump host root@127.0.3.7"

S="--ssh-config $RUN/ssh_config $base"

# --- password authentication (the client key is not authorized on pw-only)
run_paictl 3 check hosts --hosts "root@127.0.3.7" $S -o json
$ASSERT host "$TMP/out" 127.0.3.7 failure=auth
$ASSERT message "$TMP/out" 127.0.3.7 Reachable "the server accepts: publickey, password"
printf '%s\n' "$PW" > "$TMP/pw"
run_paictl 0 check hosts --hosts "root@127.0.3.7" $S --password-stdin -o json < "$TMP/pw"
$ASSERT host "$TMP/out" 127.0.3.7 reached=true auth_method=password
export PAICTL_SSH_PASSWORD="$PW"
run_paictl 0 check hosts --hosts "root@127.0.3.7" $S -o json
unset PAICTL_SSH_PASSWORD
$ASSERT host "$TMP/out" 127.0.3.7 auth_method=password
# config.yaml's password (the fixture wrote the run's password there)
run_paictl 0 check hosts "$RUN/cluster" $S --limit pw-only -o json
$ASSERT host "$TMP/out" pw-only auth_method=password
if grep -qF "$PW" "$TMP/out" "$TMP/err"; then fail "the password appeared in the output"; fi

# --- ssh-agent: no key file anywhere, only the agent holds the key.
eval "$(ssh-agent -s -a "$TMP/agent.sock")" > /dev/null
agent_pid=$SSH_AGENT_PID
trap 'kill "$agent_pid" 2>/dev/null || true; rm -rf "$TMP"' EXIT INT TERM
ssh-add -q "$RUN/id_ed25519" 2>/dev/null
real_home=$HOME
export HOME="$TMP"
run_paictl 0 check hosts --hosts "root@127.0.3.2:$PORT" --ssh-config none --known-hosts "$RUN/known_hosts" $base -o json
$ASSERT host "$TMP/out" "127.0.3.2:$PORT" auth_method="publickey (ssh-agent)"
run_paictl 3 check hosts --hosts "root@127.0.3.2:$PORT" --ssh-config none --no-agent --known-hosts "$RUN/known_hosts" $base -o json
$ASSERT host "$TMP/out" "127.0.3.2:$PORT" failure=auth
export HOME="$real_home"
kill "$agent_pid"

# --- ~/.ssh/config and ~/.ssh/known_hosts by default (no --ssh-config, no --known-hosts):
# the address, User, Port and IdentityFile come from there; the agent is not used.
mkdir -p "$TMP/home/.ssh"
cp "$RUN/known_hosts" "$TMP/home/.ssh/known_hosts"
cat > "$TMP/home/.ssh/config" <<CFG
Host bastion-by-name
  Hostname 127.0.3.2
Host bastion-by-name 127.0.3.*
  Port $PORT
  User root
  IdentityFile $RUN/id_ed25519
  IdentitiesOnly yes
CFG
export HOME="$TMP/home"
run_paictl 0 check hosts --hosts bastion-by-name $base -o json
$ASSERT host "$TMP/out" bastion-by-name reached=true address=127.0.3.2 port="$PORT" user=root
$ASSERT host "$TMP/out" bastion-by-name auth_method="publickey ($RUN/id_ed25519)"
# Without the config's Port, the host is looked for on port 22, where nothing listens.
sed -i '/^  Port /d' "$TMP/home/.ssh/config"
run_paictl 3 check hosts --hosts bastion-by-name $base -o json
$ASSERT host "$TMP/out" bastion-by-name reached=false port=22
export HOME="$real_home"

# --- --hosts-file: comments, blank lines, one or several hosts per line.
cat > "$TMP/hosts.txt" <<HOSTS
# bastion and the sudo host
127.0.3.2

paiops@127.0.3.4   # sudo -n
HOSTS
run_paictl 0 check hosts --hosts-file "$TMP/hosts.txt" $S -o json
$ASSERT summary "$TMP/out" hosts=2 unreachable=0
printf 'root@:22\n' > "$TMP/bad.txt"
run_paictl 2 check hosts --hosts-file "$TMP/bad.txt" $S
grep -q "bad.txt:1" "$TMP/err" || fail "a bad hosts file line is not located"
echo "ok: login"
