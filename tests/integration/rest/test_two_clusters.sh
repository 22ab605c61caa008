#!/bin/sh
# The user story end to end, through the real binary and two REST test servers:
# register two clusters, see their capacity, validate, render, submit (to one,
# then with --cluster auto), follow, stop.
set -eu
. "$(dirname "$0")/lib.sh"
cd "$PAI_SOURCE_DIR"
JOBS=examples/jobs

# --- register two clusters -------------------------------------------------------
set +e
echo alice-pass-1 | "$PAICTL" cluster add lab --uri "$LAB_URI" --user alice --password-stdin >"$TMP/out" 2>"$TMP/err"
RC=$?
set -e
OUT="$TMP/out" ERR="$TMP/err"
expect_rc 0 "cluster add lab with a password"
expect_out "cluster lab added" "add reports the cluster"
expect_out "virtual clusters you may use: default, research" "add shows the user's VCs"
expect_out "current cluster: lab" "the first cluster becomes current"
check_requests "$LAB_URI" "[r['method'] + ' ' + r['path'] for r in reqs] == ['GET /rest-server/api/v2/info', 'POST /rest-server/api/v2/authn/basic/login', 'GET /rest-server/api/v2/users/alice'] and reqs[1]['body'] == 'username=alice&password=alice-pass-1&expiration=604800' and reqs[1]['headers']['content-type'] == 'application/x-www-form-urlencoded' and reqs[2]['headers']['authorization'].startswith('Bearer ')" \
  "add probes /info, logs in with a form, checks the token"

# The cloud cluster with a token on stdin; the user comes from the token.
CLOUD_TOKEN=$("$PY" -c "import json; print(json.load(open('tests/integration/rest/scenarios/cloud.json'))['users']['alice']['tokens'][0])")
set +e
printf '%s\n' "$CLOUD_TOKEN" | "$PAICTL" cluster add cloud --uri "$CLOUD_URI/" --token-stdin >"$TMP/out" 2>"$TMP/err"
RC=$?
set -e
expect_rc 0 "cluster add cloud with a token"
expect_out "user alice" "the user is read from the token"

# The registry: 0600, a token, never the password.
MODE=$(stat -c %a "$REGISTRY")
[ "$MODE" = 600 ] && pass "registry mode is 600" || fail "registry mode is $MODE"
grep -q "alice-pass-1" "$REGISTRY" && fail "the password is in the registry" || pass "no password in the registry"
grep -q "login: password" "$REGISTRY" && pass "the registry records how the token was obtained" || fail "no login field"
grep -q "uri: $CLOUD_URI\$" "$REGISTRY" && pass "trailing slash of --uri dropped" || fail "uri not normalised"

run cluster list
expect_rc 0 "cluster list"
expect_out "*        lab" "lab is current"
expect_out "v1.8.1" "cloud's version"
expect_no_out "eyJ" "cluster list never shows tokens"
run cluster list -o json
json_check "[c['name'] for c in d['items']] == ['lab', 'cloud'] and all(c['reachable'] for c in d['items']) and d['items'][0]['current'] and not any('token' in c for c in d['items'])" \
  "cluster list -o json: both reachable, no token"
run cluster list -o yaml --no-probe
expect_rc 0 "cluster list -o yaml"
expect_out "- name: lab" "yaml list"

# --- capacity ----------------------------------------------------------------------
run cluster status --all
expect_rc 0 "cluster status --all"
expect_out "lab      default   yes     2/6/8" "lab default: 2 free of 8, 6 used"
expect_out "cloud    default   yes     28/4/32" "cloud default: 28 free"
expect_out "research  yes     14/2/16" "lab research"
run cluster status --all -o json
json_check "d['items'][0]['virtualClusters'][0]['free']['gpu'] == 2 and {s['name'] for s in d['items'][1]['skuTypes']} == {'GPU', 'CPU'}" \
  "cluster status -o json"
schema_check clusterStatus "cluster status -o json"

run version --cluster cloud -o json
expect_rc 0 "version --cluster cloud"
json_check "d['server']['cluster'] == 'cloud' and d['server']['version'] == 'v1.8.1' and d['version']" \
  "version --cluster: the client's and the server's versions"
schema_check version "version --cluster -o json"
run version --cluster nosuch
expect_rc 2 "version --cluster of an unregistered cluster"
if grep -Eq '"(gpu|cpu|memoryMB)": -?[0-9]+\.0\b' "$OUT"; then fail "whole GPU/CPU/memory figures printed as 32.0"; else pass "GPU/CPU/memory figures are integers"; fi
run cluster list -o json
schema_check clusterList "cluster list -o json"
run cluster list -o wide
expect_out "REST SERVER" "cluster list -o wide"
run cluster status --all -o wide
expect_out "CAPACITY %" "cluster status -o wide"
run cluster status cloud -o yaml
expect_out "name: cloud" "cluster status NAME -o yaml"

# --- validate and render (offline) ---------------------------------------------------
run job validate $JOBS/pytorch-mnist.yaml $JOBS/distributed-tensorflow.yaml $JOBS/private-registry.yaml
expect_rc 0 "the examples are valid"
run job render $JOBS/pytorch-mnist.yaml --param epochs=3
expect_rc 0 "render"
expect_out "python main.py --epochs 3 --batch-size 64 --lr 0.010" "render substitutes parameters"

# --- submit to one cluster -------------------------------------------------------------
reset_requests "$LAB_URI"
run job submit $JOBS/pytorch-mnist.yaml --cluster lab --dry-run
expect_rc 0 "dry run"
expect_out "would submit alice~pytorch_mnist to lab: POST $LAB_URI/rest-server/api/v2/jobs" "dry run names the request"
check_requests "$LAB_URI" "not any(r['method'] == 'POST' for r in reqs)" "a dry run sends nothing"

run job submit $JOBS/pytorch-mnist.yaml
expect_rc 0 "submit to the current cluster"
expect_out "alice~pytorch_mnist submitted to lab (VC default)" "submit output"
check_requests "$LAB_URI" "[r for r in reqs if r['method'] == 'POST'][0]['body'] == open('$JOBS/pytorch-mnist.yaml').read() and [r for r in reqs if r['method'] == 'POST'][0]['headers']['content-type'] == 'text/yaml'" \
  "the file is sent byte for byte as text/yaml"

reset_requests "$LAB_URI"
run job submit $JOBS/pytorch-mnist.yaml
expect_rc 2 "the same name again is refused before sending"
expect_err "already exists" "the name check explains"
check_requests "$LAB_URI" "not any(r['method'] == 'POST' for r in reqs)" "nothing was sent for a taken name"

run job submit $JOBS/pytorch-mnist.yaml --name run_2 --param epochs=3 --param "lr='0.5'" -o json
expect_rc 0 "submit with --name and --param"
json_check "d['job'] == 'alice~run_2' and d['cluster'] == 'lab'" "submit -o json"
check_requests "$LAB_URI" "[r for r in reqs if r['method'] == 'POST'][0]['body'].count('name: run_2') == 1 and 'epochs: 3' in [r for r in reqs if r['method'] == 'POST'][0]['body'] and 'lr: \"0.5\"' in [r for r in reqs if r['method'] == 'POST'][0]['body']" \
  "overrides are in the body that was sent"

# --- --cluster auto ------------------------------------------------------------------------
run cluster prefer lab cloud
expect_rc 0 "cluster prefer"
run job submit $JOBS/distributed-tensorflow.yaml --cluster auto --dry-run
expect_rc 0 "auto dry run"
expect_out "1     cloud    default  kept" "cloud is kept and ranked first"
expect_out "-     lab      default  dropped" "lab is dropped"
expect_out "task role ps asks for SKU CPU, not in default (has GPU)" "the reason lab was dropped"
run job submit $JOBS/distributed-tensorflow.yaml --cluster auto --dry-run -o json
json_check "d['target'] == 'cloud' and d['decision'][0]['cluster'] == 'cloud' and d['decision'][0]['rank'] == 1 and d['decision'][1]['decision'] == 'dropped' and d['http']['method'] == 'POST'" \
  "auto dry run as JSON"
# A small job fits both: preference decides between clusters that fit now.
run job submit $JOBS/private-registry.yaml --cluster auto --dry-run --vc default -o json
json_check "d['target'] == 'lab' and [e['cluster'] for e in d['decision']] == ['lab', 'cloud']" "preference order breaks the tie"
run cluster prefer cloud lab
run job submit $JOBS/private-registry.yaml --cluster auto --dry-run -o json
json_check "d['target'] == 'cloud'" "a new preference order changes the choice"

reset_requests "$CLOUD_URI"
run job submit $JOBS/distributed-tensorflow.yaml --cluster auto
expect_rc 0 "auto submit"
expect_err "--cluster auto chose cloud" "the choice is reported"
expect_out "alice~tf_distributed_cifar10 submitted to cloud" "submitted to cloud"
check_requests "$CLOUD_URI" "sum(r['method'] == 'POST' for r in reqs) == 1" "exactly one POST to cloud"

# --- follow ------------------------------------------------------------------------------
run job list --all-clusters
expect_rc 0 "job list --all-clusters"
expect_out "lab      alice~pytorch_mnist" "lab's job"
expect_out "cloud    alice~tf_distributed_cifar10" "cloud's job"
expect_no_out "bob~bob_job" "only your jobs by default"
run job list --all-clusters --all-users --state running -o json
json_check "len(d['items']) >= 1 and all(j['state'] == 'RUNNING' for j in d['items']) and 'bob_job' in [j['name'] for j in d['items']] and 'old_job' not in [j['name'] for j in d['items']]" "state filter"
schema_check jobList "job list -o json"
check_requests "$LAB_URI" "any(r['path'] == '/rest-server/api/v2/jobs' and r['query'].get('state') == 'RUNNING' for r in reqs)" \
  "the state filter goes to the server"

run job status pytorch_mnist
expect_rc 0 "job status"
expect_out "alice~pytorch_mnist  (cluster lab)" "status header"
expect_out "TASK ROLE" "task table"
run job status pytorch_mnist -o json
json_check "d['cluster'] == 'lab' and 'train' in d['taskRoles']" "status -o json"
schema_check job "job status -o json"

run job logs pytorch_mnist --tail
expect_rc 0 "job logs --tail"
expect_out "done" "log text"
run job logs pytorch_mnist --stream stderr -o json
json_check "d['stream'] == 'stderr' and d['content'].startswith('warning:') and d['taskRole'] == 'train'" "logs -o json"
run job logs pytorch_mnist --urls
expect_out "token=***" "log URLs are redacted"
expect_no_out "log-secret" "no log token in the output"

run job wait pytorch_mnist --interval 0.05 --timeout 30
expect_rc 0 "job wait: succeeded"
expect_out "alice~pytorch_mnist SUCCEEDED" "wait prints the outcome"

run job tag add pytorch_mnist baseline best
expect_rc 0 "tag add"
run job status pytorch_mnist -o json
json_check "d['tags'] == ['baseline', 'best']" "tags are on the job"
run job tag remove pytorch_mnist best
expect_rc 0 "tag remove"

# A failing job: wait's exit code follows it, status explains it.
run job submit $JOBS/pytorch-mnist.yaml --name will_fail -q
ctl "$LAB_URI" POST /__control/jobs/alice~will_fail '{"plan": ["RUNNING", "FAILED"], "exitCode": 3, "retries": 1}' >/dev/null
run job wait will_fail --interval 0.05
expect_rc 1 "job wait: failed"
expect_out "FAILED (exit code 3)" "the exit code is shown"
run job status will_fail
expect_out "Exit:        code 3 ContainerNonZeroExitCode (USER_FAILURE)" "exit spec"
expect_out "Solution:    Check the job's stderr log" "exit solution"
expect_out "attempts of train[0]: 2 attempts" "retried tasks show their attempt history"

# Submit and wait in one go.
run job submit $JOBS/pytorch-mnist.yaml --name with_wait --wait --wait-interval 0.05
expect_rc 0 "submit --wait follows the job to success"

# Stop.
run job submit $JOBS/pytorch-mnist.yaml --name to_stop -q
reset_requests "$LAB_URI"
run job stop to_stop --wait --wait-interval 0.05
expect_rc 0 "job stop --wait"
expect_out "alice~to_stop: stop requested on lab" "stop output"
expect_out "alice~to_stop STOPPED" "the job ends stopped"
check_requests "$LAB_URI" "any(r['method'] == 'PUT' and r['path'] == '/rest-server/api/v2/jobs/alice~to_stop/executionType' and r['body'] == '{\"value\":\"STOP\"}' for r in reqs)" \
  "stop sends PUT executionType {\"value\":\"STOP\"}"

# --- secrets never show ------------------------------------------------------------------
run -v job submit $JOBS/private-registry.yaml --cluster lab --dry-run
expect_rc 0 "dry run of a job with secrets"
expect_no_out "not-a-real-password" "dry run masks secrets"
expect_out 'secrets: "******"' "the secrets block is masked"
if grep -q "not-a-real-password" "$ERR"; then fail "secret in stderr"; else pass "no secret on stderr"; fi
if grep -q "Bearer" "$ERR"; then fail "token in the -v log"; else pass "no token in the -v log"; fi

# --- forget a cluster ----------------------------------------------------------------------
run cluster remove cloud
expect_rc 0 "cluster remove"
run cluster list -o json --no-probe
json_check "[c['name'] for c in d['items']] == ['lab']" "cloud is gone"
run cluster prefer -o json
json_check "d['preference'] == ['lab']" "and out of the preference order"

finish
