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

# install, reset, node add|remove, config push|pull|diff: the flags are checked
# before layout.yaml is read or a host or an Azure endpoint is reached.
run install "$EX" gpu-1 --hosts 127.0.0.1:9 --ignore-check-errors Swapp,CPU,Nope --arm-endpoint 127.0.0.1:9 --yes
expect_rc 2 "install: bad flags"
expect_err "install takes one cluster directory, not 2 paths" "install: a host where the directory goes"
expect_err "  hint: hosts of the cluster are chosen with --limit HOST,..." "install: its hint"
expect_err "--hosts and --hosts-file are for check hosts" "install: --hosts"
expect_err "no check is named \"Swapp\"" "install: the first unknown check"
expect_err "no check is named \"Nope\"" "install: the second unknown check"
expect_err "--arm-endpoint 127.0.0.1:9 is not an http:// or https:// URL" "install: a bad --arm-endpoint, in the same run"
expect_err "Run 'paictl install --help' for usage." "install: how to get help"
no_connection "install"
run reset --ca-file "$TMP/none.pem" --yes
expect_rc 2 "reset: no directory, a missing --ca-file"
expect_err "reset needs the cluster directory" "reset: the directory"
expect_err "--ca-file $TMP/none.pem is not a file" "reset: --ca-file, in the same run"
run node add "$EX" --count 2 --ignore-check-errors Nope
expect_rc 2 "node add: --count without --azure"
expect_err "--count goes with --azure POOL" "node add: --count"
expect_err "node add needs at least one host" "node add: no host"
expect_err "no check is named \"Nope\"" "node add: an unknown check, in the same run"
run node add "$EX" gpu-1 --azure gpu --authority-host 127.0.0.1:9
expect_rc 2 "node add --azure: hosts named"
expect_err "takes the cluster directory only" "node add --azure: the hosts"
expect_err "--authority-host 127.0.0.1:9 is not an http" "node add --azure: a bad --authority-host"
no_connection "node add"
run node remove "$EX" --hived 127.0.0.1:9 </dev/null
expect_rc 2 "node remove: bad flags, no terminal"
expect_err "node remove needs at least one host" "node remove: no host"
expect_err "--hived 127.0.0.1:9 is not an http" "node remove: a bad --hived"
expect_err "not a terminal: pass --yes" "node remove: --yes, before HiveD is asked"
no_connection "node remove"
run config push "$EX" "$EX"
expect_rc 2 "config push: two directories"
expect_err "config push takes one cluster directory, not 2 paths" "config push: the error"
run config pull "$EX" --out "$TMP/a-file" --hosts-file - --password-stdin
expect_rc 2 "config pull: --out is a file"
expect_err "--out $TMP/a-file exists and is not a directory" "config pull: --out"
expect_err "--hosts-file - and --password-stdin both want stdin" "config pull: stdin twice, in the same run"
run config diff "$EX/layout.yaml"
expect_rc 2 "config diff: a file"
expect_err "$EX/layout.yaml is not a directory" "config diff: the error"

# version --cluster without a name asks the current cluster (dead: exit 3).
run version --cluster -o json
expect_rc 3 "version --cluster: the current cluster, unreachable"
expect_err "dead" "version --cluster: the current cluster is named"
expect_out '"apiVersion": "paictl.version/v1"' "version --cluster: the client's version first"

# The job, cluster and simulate commands: flags checked before the registry's
# cluster is asked.
printf 'protocolVersion: 2\nname: j\ntype: job\n' >"$TMP/job.yaml"
run job submit "$TMP/job.yaml" --param nothing --name "bad name" --wait --dry-run --expected-duration soon
expect_rc 2 "job submit: bad flags"
expect_err "--param" "job submit: a --param without =" 
expect_err "--name \"bad name\" may contain only" "job submit: --name"
expect_err "--wait and --dry-run exclude each other" "job submit: --wait with --dry-run"
expect_err "--expected-duration soon: not a duration" "job submit: --expected-duration, in the same run"
no_connection "job submit"
run job list --state running,dozing,napping --all-clusters --cluster dead --tag a,b --since later --order nme --watch -o json
expect_rc 2 "job list: bad flags"
expect_err "unknown state \"dozing\"" "job list: the first unknown state"
expect_err "unknown state \"napping\"" "job list: the second unknown state"
expect_err "give --cluster or --all-clusters, not both" "job list: --cluster with --all-clusters"
expect_err "--tag \"a,b\"" "job list: a tag with a comma"
expect_err "--since \"later\" is not a duration" "job list: --since"
expect_err "did you mean \"name\"?" "job list: --order's did-you-mean"
expect_err "--watch prints a table" "job list: --watch -o json, in the same run"
no_connection "job list"
run job logs alice~j --follow --tail
expect_rc 2 "job logs: --follow --tail"
expect_err "--follow prints the log as it grows" "job logs: the error"
no_connection "job logs"
run job sweep "$TMP/job.yaml" --param lr=0.1,,0.2 --param bs=1 --param bs=2 --param nothing
expect_rc 2 "job sweep: bad --param"
expect_err "--param lr=0.1,,0.2: an empty value" "job sweep: an empty value"
expect_err "--param bs is given twice" "job sweep: a --param twice"
expect_err "--param" "job sweep: a --param without ="
no_connection "job sweep"
run job clone alice~j --param nothing --name "bad name"
expect_rc 2 "job clone: bad flags"
expect_err "--name \"bad name\"" "job clone: --name, with --param"
no_connection "job clone"
run cluster add lab --uri 127.0.0.1:9 --password-stdin --token-file "$TMP/t"
expect_rc 2 "cluster add: two sign-in methods"
expect_err "give exactly one of --password-stdin, --token-stdin or --token-file" "cluster add: the methods"
expect_err "--password-stdin needs --user" "cluster add: --user, in the same run"
expect_err "--uri must start with http:// or https://" "cluster add: --uri, in the same run"
if grep -q "password sign-in needs the user" "$ERR"; then fail "cluster add: the missing --user twice"; else pass "cluster add: the missing --user once"; fi
no_connection "cluster add"
run cluster prefer dead a dead a
expect_rc 2 "cluster prefer: names twice"
expect_err "\"dead\" is listed twice" "cluster prefer: the first"
expect_err "\"a\" is listed twice" "cluster prefer: the second, in the same run"
run simulate --policy hive,nope --priority 2000 --bin 0s --tie-order random
expect_rc 2 "simulate: bad flags"
expect_err "--config is required" "simulate: --config"
expect_err "--trace is required" "simulate: --trace"
expect_err "unknown policy \"hive\" (did you mean \"hived\"?)" "simulate: the first unknown policy"
expect_err "unknown policy \"nope\"" "simulate: the second unknown policy"
expect_err "--priority must be" "simulate: --priority"
expect_err "--bin \"0s\"" "simulate: --bin"
expect_err "--tie-order must be hived or config" "simulate: --tie-order, in the same run"
expect_err "Run 'paictl simulate --help' for usage." "simulate: how to get help"
run simulate generate --jobs 0 --load 0 --cluster-out "$TMP/c" --config "$EX"
expect_rc 2 "simulate generate: bad flags"
expect_err "--jobs must be" "simulate generate: --jobs"
expect_err "--load must be above 0" "simulate generate: --load"
expect_err "--cluster-out writes a Philly-shaped cluster" "simulate generate: --cluster-out with --config"
[ ! -e "$TMP/c" ] && pass "simulate generate: nothing written" || fail "simulate generate wrote $TMP/c"

run check config
expect_rc 2 "check config without a PATH"
expect_err "needs at least one PATH" "check config: the error"
finish
