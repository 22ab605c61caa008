# paictl hived apply against the reconf scenario on a test server that restarts
# for real: on SIGHUP it re-reads $LIVE (what the push wrote), is down, comes up
# with every node bad for a while, then healthy, with the groups restored.
. "$PAI_SOURCE_DIR/tests/integration/hived/lib.sh"
OLD="$SCEN/reconf-hived.yaml"
LIVE="$TMP/live.yaml"
cp "$OLD" "$LIVE"
start_server reconf "$LIVE"
H="--hived $URL --poll-interval 0.05 --wait 20"

# The default push: the ConfigMap through kubectl (a fake one that keeps what it
# is given and, on rollout restart, puts the ConfigMap's config where HiveD's pod
# reads it and restarts it).
cat >"$TMP/kubectl" <<KUBECTL
#!/bin/sh
echo "\$*" >>"$TMP/kubectl.log"
case "\$*" in
  *"get configmap hivedscheduler-config"*) cat "$LIVE" ;;
  *"apply -f -"*) cat >"$TMP/applied.yaml" ;;
  *"rollout restart statefulset/hivedscheduler-hs"*)
    "$PY" -c "
import sys, yaml
cm = yaml.safe_load(open(sys.argv[1]))
assert cm['kind'] == 'ConfigMap' and cm['metadata']['name'] == 'hivedscheduler-config'
open(sys.argv[2], 'w').write(cm['data']['hivedscheduler.yaml'])
" "$TMP/applied.yaml" "$LIVE" && kill -HUP $SERVER_PID ;;
  *) exit 9 ;;
esac
KUBECTL
chmod +x "$TMP/kubectl"

# Refusals change nothing.
run hived apply "$SCEN/reconf-shrunk.yaml" --current "$OLD" --yes $H --push-command "cp \$PAICTL_HIVED_CONFIG $LIVE" --restart-command "kill -HUP $SERVER_PID"
expect_rc 1 "a change that lazily preempts a running guaranteed group is refused"
expect_err "refusing: 1 running guaranteed group(s) would be lazily preempted: a-big" "the refusal names a-big"
if cmp -s "$OLD" "$LIVE"; then pass "nothing was pushed"; else fail "the config was pushed"; fi
run hived apply "$SCEN/reconf-grown.yaml" --current "$OLD" $H </dev/null
expect_rc 2 "not on a terminal and no --yes"
expect_err "give --yes" "the error asks for --yes"
run hived apply "$SCEN/reconf-grown.yaml" --kubectl "$TMP/kubectl" $H --dry-run
expect_rc 0 "--dry-run"
expect_err "would push the config with: $TMP/kubectl apply -f -" "--dry-run names the push"
if [ -e "$TMP/applied.yaml" ]; then fail "--dry-run applied"; else pass "--dry-run applied nothing"; fi
run hived apply "$SCEN/reconf-broken.yaml" --current "$OLD" --yes $H
expect_rc 1 "a new config with errors is not applied"

# Grown by a node through the ConfigMap: nothing is preempted, HiveD comes back with n6.
run hived apply "$SCEN/reconf-grown.yaml" --kubectl "$TMP/kubectl" --yes $H -o json
expect_rc 0 "apply through kubectl"
schema_check hivedApply "hived apply -o json"
json_check "d['apiVersion'] == 'paictl.hivedApply/v1' and d['applied'] and d['nodesAdded'] == ['n6'] and d['result']['notAsPlanned'] == 0" "applied: n6 added, every group as planned"
if grep -q "get configmap hivedscheduler-config" "$TMP/kubectl.log" && grep -q "rollout restart statefulset/hivedscheduler-hs" "$TMP/kubectl.log"; then pass "the current config came from the ConfigMap, the restart from kubectl"; else fail "kubectl calls"; cat "$TMP/kubectl.log" >&2; fi
# As paictl install writes it: HiveD's web server and scheduling knobs first.
grep -v "^#" "$SCEN/reconf-grown.yaml" >"$TMP/want" && grep -v -e "^#" -e "^webServerAddress: " -e "^waitingPodSchedulingBlockMilliSec: " "$LIVE" >"$TMP/got"
if cmp -s "$TMP/want" "$TMP/got"; then pass "the ConfigMap carries the new config exactly"; else fail "the ConfigMap's config differs"; diff "$TMP/want" "$TMP/got" >&2; fi
if grep -q '^webServerAddress: ":30096"' "$LIVE" && grep -q "paictl.io/config-hash" "$TMP/applied.yaml" && grep -q "namespace: openpai" "$TMP/applied.yaml"; then pass "the ConfigMap is install's (namespace openpai, config hash, web server address)"; else fail "not install's ConfigMap"; cat "$TMP/applied.yaml" >&2; fi
if grep -q "restart on" "$TMP/server-reconf.log"; then pass "the server restarted"; else fail "no restart"; fi
run hived status --hived "$URL" -o json
json_check "[n['healthy'] for n in d['nodes'] if n['name'] == 'n6'] == [True]" "HiveD lists n6, healthy"
json_check "{(v['vc'], v['sku']): v['guaranteed'] for v in d['virtualClusters']}[('b', 'V100')] == 24" "b has 2 V100 node cells and the pinned one"

# run_tty ANSWER ARGS...: paictl on a terminal (script(1) gives it one) that
# answers the question with ANSWER; stdout and stderr both in $OUT.
run_tty() {
  ans=$1; shift
  cmd="'$PAICTL'"
  for a in "$@"; do cmd="$cmd '$a'"; done
  OUT="$TMP/out" ERR="$TMP/err"
  set +e
  printf '%s\n' "$ans" | script -qec "$cmd" /dev/null >"$OUT" 2>"$ERR"
  RC=$?
  set -e
}
# Shrunk with --allow-preemption, through the hooks, confirmed on a terminal: "n"
# changes nothing, "y" applies, and a-big is lazily preempted for real.
if command -v script >/dev/null 2>&1; then
  cp "$LIVE" "$TMP/live-before"
  run_tty n hived apply "$SCEN/reconf-shrunk.yaml" --current "$SCEN/reconf-grown.yaml" --allow-preemption --hived "$URL" --poll-interval 0.05 --wait 20 --push-command "cat >$LIVE" --restart-command "kill -HUP $SERVER_PID"
  expect_rc 1 "answered no on a terminal"
  expect_out "Push the new config and restart HiveD? [y/N] Not applied." "the question, and nothing applied"
  if cmp -s "$TMP/live-before" "$LIVE"; then pass "no means nothing is pushed"; else fail "pushed after no"; fi
  run_tty y hived apply "$SCEN/reconf-shrunk.yaml" --current "$SCEN/reconf-grown.yaml" --allow-preemption --hived "$URL" --poll-interval 0.05 --wait 20 --push-command "cat >$LIVE" --restart-command "kill -HUP $SERVER_PID"
else
  pass "no script(1): the terminal's question is not tried"
  run hived apply "$SCEN/reconf-shrunk.yaml" --current "$SCEN/reconf-grown.yaml" --yes --allow-preemption $H --push-command "cat >$LIVE" --restart-command "kill -HUP $SERVER_PID"
fi
expect_rc 0 "apply with --allow-preemption"
expect_out "a-big  lazilyPreempted  lazily preempted" "the report: a-big planned and now lazily preempted"
expect_out "HiveD runs $SCEN/reconf-shrunk.yaml" "the report says HiveD runs the new config"
run hived groups --hived "$URL" -o json
json_check "[g['name'] for g in d['items'] if g['lazyPreemption']] == ['a-big']" "HiveD shows a-big lazily preempted"

# Failures: a push that fails, a restart that does not happen.
run hived apply "$SCEN/reconf-grown.yaml" --current "$SCEN/reconf-shrunk.yaml" --yes $H --push-command "exit 7" --restart-command true
expect_rc 3 "a failed push"
expect_err "pushing the config failed (exit 7)" "the push's exit status is shown"
run hived apply "$SCEN/reconf-grown.yaml" --current "$SCEN/reconf-shrunk.yaml" --yes --hived "$URL" --poll-interval 0.05 --wait 1 --push-command "cat >/dev/null" --restart-command true
expect_rc 3 "HiveD never runs the new config: the wait times out"
expect_err "HiveD does not run the new config yet" "the timeout says why"
finish
