#!/bin/sh
# Repeating jobs through the real binary and two REST test servers (lab:
# scenarios/jobs.json, cloud: scenarios/cloud.json): clone from the server's
# config (same cluster, another cluster after its checks), resubmit a failed job,
# sweep parameters into tagged jobs (dry run, all at once, one at a time).
set -eu
. "$(dirname "$0")/lib.sh"
cd "$PAI_SOURCE_DIR"

token() { "$PY" -c "import json; print(json.load(open('tests/integration/rest/scenarios/$1.json'))['users']['alice']['tokens'][0])"; }
token jobs | "$PAICTL" cluster add lab --uri "$LAB_URI" --token-stdin >/dev/null 2>&1 || { fail "cluster add lab"; finish; }
token cloud | "$PAICTL" cluster add cloud --uri "$CLOUD_URI" --token-stdin >/dev/null 2>&1 || { fail "cluster add cloud"; finish; }
"$PAICTL" cluster use lab -q

# posted URI: the YAML bodies POSTed to /api/v2/jobs, as JSON, one per line.
bodies() {
  ctl "$1" GET /__control/requests | "$PY" -c "
import json, sys, yaml
for r in json.load(sys.stdin):
    if r['method'] == 'POST' and r['path'].endswith('/api/v2/jobs'):
        print(json.dumps(yaml.safe_load(r['body'])))
"
}

# --- clone on the same cluster ------------------------------------------------------------------
reset_requests "$LAB_URI"
run job clone flaky --name flaky-copy --param lr=0.5
expect_rc 0 "clone on the same cluster"
expect_out "alice~flaky-copy submitted to lab (VC default)" "clone says where the copy went"
check_requests "$LAB_URI" "any(r['path'].endswith('/jobs/alice~flaky/config') for r in reqs)" "clone reads the job's config from the server"
bodies "$LAB_URI" >"$TMP/b"
"$PY" - "$TMP/b" <<'PY' && pass "the copy has the new name and parameter, the rest as stored" || { fail "clone body"; cat "$TMP/b" >&2; }
import json, sys
b = [json.loads(l) for l in open(sys.argv[1])]
assert len(b) == 1 and b[0]["name"] == "flaky-copy" and b[0]["parameters"]["lr"] == 0.5, b
assert b[0]["extras"]["storages"] == [{"name": "team-nfs"}] and b[0]["taskRoles"]["train"]["commands"] == ["python train.py --lr <% $parameters.lr %>"]
PY
run job clone flaky --name flaky-copy
expect_rc 2 "a clone whose name is taken is refused before sending"
expect_err "lab cannot take alice~flaky-copy" "and says why"

# --- clone to another cluster: checked there first --------------------------------------------------
reset_requests "$CLOUD_URI"
run job clone flaky --cluster cloud --dry-run
expect_rc 0 "clone --cluster cloud --dry-run"
expect_out "would submit alice~flaky-clone-" "dry run names the copy"
expect_out "to cloud (VC default)" "dry run names the target"
expect_out "storages" "dry run shows the target's checks"
check_requests "$CLOUD_URI" "not any(r['method'] == 'POST' for r in reqs) and any(r['path'].endswith('/api/v2/storages') for r in reqs) and any(r['path'].endswith('/cluster/sku-types') for r in reqs)" \
  "the dry run asks cloud for storages and SKUs and sends nothing"
run job clone flaky --cluster cloud --name flaky-on-cloud
expect_rc 0 "clone to cloud"
expect_out "alice~flaky-on-cloud submitted to cloud" "the copy is on cloud"
run job list --cluster cloud -o name
expect_out "alice~flaky-on-cloud" "cloud lists the copy"
reset_requests "$CLOUD_URI"
run job clone lab-only --cluster cloud
expect_rc 2 "a job cloud cannot take"
expect_err "cloud cannot take" "says that cloud cannot take it"
expect_err "research" "names the missing VC"
check_requests "$CLOUD_URI" "not any(r['method'] == 'POST' for r in reqs)" "nothing was sent to cloud"
run job clone secretive
expect_rc 2 "a job with (masked) secrets cannot be cloned"
expect_err "has secrets" "says why"
run job clone no-such-job
expect_rc 2 "clone of an unknown job"

# --- resubmit -----------------------------------------------------------------------------------------
run job resubmit flaky
expect_rc 0 "resubmit a failed job"
expect_out "alice~flaky-r1 submitted to lab" "the first free name NAME-r1"
run job tag list flaky-r1
expect_out "resubmit-of-flaky" "the new job is tagged with where it came from"
run job resubmit flaky
expect_out "alice~flaky-r2 submitted" "then NAME-r2"
run job resubmit done-ok
expect_rc 2 "a job that succeeded is not resubmitted"
expect_err "is SUCCEEDED" "and says its state"
run job resubmit done-ok --force --dry-run
expect_rc 0 "--force --dry-run"
expect_out "would submit alice~done-ok-r1 to lab" "the dry run shows the new job"

# --- sweep -------------------------------------------------------------------------------------------------
reset_requests "$LAB_URI"
run job sweep examples/jobs/pytorch-mnist.yaml --param lr=0.1,0.01 --param batchsize=32,64 --sweep-id t1 --dry-run
expect_rc 0 "sweep --dry-run"
expect_out "would submit 4 jobs to lab, tagged sweep-pytorch_mnist-t1" "the dry run counts the jobs and names the tag"
for n in lr0_1-batchsize32 lr0_1-batchsize64 lr0_01-batchsize32 lr0_01-batchsize64; do
  expect_out "alice~pytorch_mnist-t1-$n" "dry run lists $n"
done
check_requests "$LAB_URI" "not any(r['method'] == 'POST' for r in reqs)" "the dry run sends nothing"
run job sweep examples/jobs/pytorch-mnist.yaml --param lr=0.1,0.01 --sweep-id t9 --dry-run -o json
schema_check jobSweep "sweep --dry-run -o json"
json_check "d['tag'] == 'sweep-pytorch_mnist-t9' and [i['parameters'] for i in d['items']] == [{'lr': '0.1'}, {'lr': '0.01'}]" "sweep -o json: the jobs and their parameters"
run job clone flaky --name flaky-json --dry-run -o json
schema_check jobSubmission "clone --dry-run -o json"
json_check "d['dryRun'] and d['job'] == 'alice~flaky-json' and 'flaky-json' in d['body']" "clone --dry-run -o json shows the body"
run job sweep examples/jobs/pytorch-mnist.yaml --param lr=0.1,0.01 --param batchsize=32,64 --sweep-id t1
expect_rc 0 "sweep"
expect_out "4 jobs tagged sweep-pytorch_mnist-t1" "sweep says how to follow the jobs"
bodies "$LAB_URI" >"$TMP/b"
"$PY" - "$TMP/b" <<'PY' && pass "one job per combination, each with its parameters" || { fail "sweep bodies"; cat "$TMP/b" >&2; }
import json, sys
b = [json.loads(l) for l in open(sys.argv[1])]
got = sorted((j["name"], j["parameters"]["lr"], j["parameters"]["batchsize"]) for j in b)
assert got == sorted([("pytorch_mnist-t1-lr0_1-batchsize32", 0.1, 32), ("pytorch_mnist-t1-lr0_1-batchsize64", 0.1, 64),
                      ("pytorch_mnist-t1-lr0_01-batchsize32", 0.01, 32), ("pytorch_mnist-t1-lr0_01-batchsize64", 0.01, 64)]), got
assert all(j["parameters"]["epochs"] == 10 for j in b)
PY
run job list --tag sweep-pytorch_mnist-t1 -o name
[ "$(wc -l <"$OUT")" -eq 4 ] && pass "job list --tag follows the sweep" || fail "list --tag: $(cat "$OUT")"
run job sweep examples/jobs/pytorch-mnist.yaml --param lr=0.1,0.01 --param batchsize=128,64 --sweep-id t1
expect_rc 2 "a sweep where one name is taken is refused before sending"
expect_err "already has a job alice~pytorch_mnist-t1-lr0_1-batchsize64" "and names it"
run job sweep examples/jobs/pytorch-mnist.yaml --param lr=0.1 --param lr=0.2
expect_rc 2 "the same --param twice"
run job sweep examples/jobs/pytorch-mnist.yaml --param lr=0.1,,0.2
expect_rc 2 "an empty value"

# --max-parallel 1: the next job is sent only after the previous one has ended.
reset_requests "$LAB_URI"
run job sweep examples/jobs/pytorch-mnist.yaml --param lr=1,2,3 --sweep-id t2 --max-parallel 1 --interval 0.05
expect_rc 0 "sweep --max-parallel 1"
check_requests "$LAB_URI" "(lambda ev: [e for e in ev if e[0] == 'POST'] == [('POST', 'pytorch_mnist-t2-lr1'), ('POST', 'pytorch_mnist-t2-lr2'), ('POST', 'pytorch_mnist-t2-lr3')] and all(('GET', 'pytorch_mnist-t2-lr%d' % k) in ev[ev.index(('POST', 'pytorch_mnist-t2-lr%d' % k)):ev.index(('POST', 'pytorch_mnist-t2-lr%d' % (k + 1)))] for k in (1, 2)))([(r['method'], __import__('yaml').safe_load(r['body'])['name']) if r['method'] == 'POST' and r['path'].endswith('/api/v2/jobs') else (r['method'], r['path'].split('alice~')[-1]) for r in reqs if r['path'].endswith('/api/v2/jobs') or r['path'].count('/') == 5])" \
  "--max-parallel 1 waits for each job before sending the next"
finish
