#!/bin/sh
# End to end: the cluster registry commands that need no server, and the usage
# errors of the ones that do.
set -eu
. "$(dirname "$0")/lib.sh"
own_home
REG="$XDG_CONFIG_HOME/paictl/clusters.yaml"

run cluster list
expect_rc 0 "list with no registry"
expect_err "No cluster is registered" "says how to add one"
run job list
expect_rc 2 "job list with no cluster"
expect_err "no cluster is registered" "explains"

# Secrets only from stdin or a file, one way at a time.
run cluster add lab --uri http://127.0.0.1:1 --user alice
expect_rc 2 "no credentials"
expect_err "exactly one of --password-stdin, --token-stdin or --token-file" "credential choice"
run cluster add lab --uri http://127.0.0.1:1 --password-stdin --token-stdin
expect_rc 2 "two credentials"
run cluster add lab --uri http://127.0.0.1:1 --password hunter2
expect_rc 2 "there is no --password flag"
run cluster add lab --uri ftp://x --token-file /tmp/t
expect_rc 2 "a non-HTTP URI"
run cluster add auto --uri http://x --token-file /tmp/t
expect_rc 2 "'auto' is not a cluster name"
run cluster add lab --uri http://127.0.0.1:1 --token-file relative/path
expect_rc 2 "a relative token file"
printf 'tok\n' >"$TMP/token"
run cluster add lab --uri http://127.0.0.1:1 --token-file "$TMP/token" --user alice --request-timeout 2
expect_rc 3 "an unreachable cluster"
expect_err "127.0.0.1:1" "the address is in the message"
[ -f "$REG" ] && fail "registry written after a failed add" || pass "nothing stored"

# A registry written by hand (the format is documented in docs/clusters.md).
mkdir -p "$(dirname "$REG")"
cat >"$REG" <<EOT
apiVersion: paictl/v1
kind: ClusterRegistry
current: lab
clusters:
- name: lab
  uri: https://pai.lab.example.com
  user: alice
  token: secret-token-1
- name: cloud
  uri: https://pai.cloud.example.com
  user: alice
  tokenFile: $TMP/token
EOT
chmod 644 "$REG"
run cluster list --no-probe
expect_rc 0 "list"
expect_err "mode is 0644" "loose permissions are reported"
expect_out "*        lab" "current marker"
expect_out "token file" "token-file clusters"
expect_no_out "secret-token-1" "no token shown"
run cluster use cloud
expect_rc 0 "use"
MODE=$(stat -c %a "$REG")
[ "$MODE" = 600 ] && pass "the write made it 600" || fail "mode $MODE after a write"
run cluster list --no-probe -o json
expect_out '"current": true' "json current"
run cluster use nope
expect_rc 2 "use an unknown cluster"
run cluster use clod
expect_err "did you mean \"cloud\"" "did you mean"
run cluster prefer cloud lab
expect_rc 0 "prefer"
run cluster prefer
expect_out "1. cloud" "prefer shows the order"
run cluster prefer cloud cloud
expect_rc 2 "a cluster twice"
run cluster prefer nope
expect_rc 2 "an unknown cluster in prefer"
run cluster remove lab
expect_rc 0 "remove"
run cluster prefer -o yaml
expect_out "- cloud" "removed from the preference"
grep -q secret-token-1 "$REG" && fail "the removed token stays" || pass "the removed token is gone"
run cluster remove lab
expect_rc 2 "remove twice"

# Several files, kubeconfig style: the first file wins, writes go where the entry is.
cat >"$TMP/team.yaml" <<EOT
clusters:
- name: shared
  uri: https://pai.shared.example.com
  user: team
  token: t
EOT
chmod 600 "$TMP/team.yaml"
export PAICTL_CONFIG="$REG:$TMP/team.yaml"
run cluster list --no-probe -o json
expect_out '"name": "shared"' "the second file's cluster"
run cluster use shared
expect_rc 0 "use a cluster of the second file"
grep -q "current: shared" "$REG" && pass "current is written to the first file" || fail "current not in the first file"
run cluster remove shared
grep -q "pai.shared" "$TMP/team.yaml" && fail "entry not removed from its file" || pass "removed from the file that held it"
unset PAICTL_CONFIG

# A broken registry is reported with its position and never overwritten.
printf 'clusters:\n- name: a\n  uri: [\n' >"$REG"
run cluster list
expect_rc 2 "broken registry"
expect_err "clusters.yaml:3:" "position of the problem"
run cluster use a
expect_rc 2 "no write over a broken registry"
[ "$(sed -n 3p "$REG")" = "  uri: [" ] && pass "the broken file is untouched" || fail "the broken file changed"

finish
