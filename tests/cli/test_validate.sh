# Every command validates its flags before it reads a cluster or reaches a host,
# and reports every usage error at once (exit 2), so a bad flag combination
# with an unreachable cluster or host is a usage error, not a connection error. POSIX sh.
set -eu
. "$PAI_SOURCE_DIR/tests/cli/lib.sh"
export PAICTL_LAYOUTS=$PAI_SOURCE_DIR/layouts
own_home

# A registered cluster nobody listens on (port 9 on loopback: refused at once).
REG="$XDG_CONFIG_HOME/paictl/clusters.yaml"
mkdir -p "$(dirname "$REG")"
printf 'apiVersion: paictl/v1\nkind: ClusterRegistry\ncurrent: dead\nclusters:\n- name: dead\n  uri: http://127.0.0.1:9\n  user: alice\n  token: t\n' >"$REG"
chmod 600 "$REG"
no_connection() {
  if grep -qiE "connect|refused|unreachable|timed out" "$ERR"; then fail "$1: tried to connect"; sed 's/^/  | /' "$ERR" >&2
  else pass "$1: no connection attempted"; fi
}

run plan --count 3 --dry-run --reserve-memory lots
expect_rc 2 "plan: bad usage"
expect_err "nothing to plan" "plan: nothing to plan"
expect_err "--count must follow the --profile" "plan: --count before --profile"
expect_err "--dry-run compares with the files in --out" "plan: --dry-run without --out"
expect_err "--reserve-memory lots is not a memory quantity" "plan: all four errors at once"
expect_err "Run 'paictl plan --help' for usage." "plan: how to get help"

EX=$PAI_SOURCE_DIR/examples/clusters/quickstart
run hived diff "$EX" "$EX" --live --snapshot "$TMP/none.json" --hived not-a-url --cluster dead
expect_rc 2 "hived diff: bad flags with an unreachable cluster"
expect_err "--live and --snapshot" "hived diff: --live with --snapshot"
expect_err "cannot read the snapshot" "hived diff: a missing snapshot"
expect_err "--hived not-a-url is not an http" "hived diff: a bad --hived"
no_connection "hived diff"
run hived status --hived 10.0.0.1:30096 --cluster dead
expect_rc 2 "hived status: --hived without a scheme"
no_connection "hived status"

run check hosts --hosts 127.0.0.1:9 --ignore-check-errors Swapp,Nope --min-disk-free much
expect_rc 2 "check hosts: bad flags"
expect_err "no check is named \"Swapp\"" "check hosts: the first unknown check"
expect_err "no check is named \"Nope\"" "check hosts: the second unknown check"
expect_err "--min-disk-free \"much\"" "check hosts: a bad size, in the same run"
no_connection "check hosts"

: >"$TMP/a-file"
run facts collect --hosts 127.0.0.1:9 --out "$TMP/a-file" --registry "bad name"
expect_rc 2 "facts collect: --out is a file"
expect_err "exists and is not a directory" "facts collect: --out"
expect_err "registry \"bad name\" is not a host name" "facts collect: --registry, in the same run"
no_connection "facts collect"

printf 'apiVersion: paictl.sweep/v1\n' >"$TMP/sweep.yaml"
run simulate sweep "$TMP/sweep.yaml" -j 2 --vc research
expect_rc 2 "simulate sweep: --vc without --cluster"
expect_err "--vc goes with --cluster" "simulate sweep: the error"
run simulate sweep "$TMP/sweep.yaml" -j 2 --cluster dead
expect_rc 2 "simulate sweep: -j on a cluster"
expect_err "-j is for local sweeps" "simulate sweep: -j"
no_connection "simulate sweep"

run check config
expect_rc 2 "check config without a PATH"
expect_err "needs at least one PATH" "check config: the error"
finish
