# job submit --cluster auto on HiveD's cells: two REST test servers (lab with a
# HiveD inspect API, cloud without) and the HiveD test server's auto scenario
# (scenarios/auto.json): prod's four V100 nodes are held by alice~prod-a (3)
# and dave~short (1); research holds three V100 nodes and a K80 one, bob~train
# runs on one of its V100 nodes at priority 50. Worked out by hand:
#  * a gang of 5 pods x 4 GPUs in research (priority test = 10) fits research's
#    free GPUs by the VC totals (20 of 28), but not as cells: a group stays in
#    one chain, and research has two free V100 node cells (16 GPUs); it cannot
#    preempt bob~train (50). dave~short ending frees a prod cell, which research
#    cannot use; bob~train ending gives research its third node cell: the
#    estimated start is bob~train's launch plus its expected duration (3 h, the
#    median of bob's finished jobs, or --expected-duration).
#  * a pod of 8 GPUs fits now on research's free node cell.
. "$PAI_SOURCE_DIR/tests/integration/hived/lib.sh"
start_server auto
REST="$TMP/rest"
"$PY" "$PAI_SOURCE_DIR/tests/integration/rest/rest_fixture.py" start "$REST" \
  lab="$SCEN/auto-rest-lab.json" cloud="$SCEN/auto-rest-cloud.json" || exit $?
for p in "$REST"/*.pid; do SERVER_PIDS="$SERVER_PIDS $(cat "$p")"; done
. "$REST/env.sh"

set +e
echo alice-pass-1 | "$PAICTL" cluster add lab --uri "$LAB_URI" --user alice --password-stdin --hived "$URL" >"$TMP/out" 2>"$TMP/err"
RC=$?
echo cloud-pass-1 | "$PAICTL" cluster add cloud --uri "$CLOUD_URI" --user alice --password-stdin >>"$TMP/out" 2>>"$TMP/err"
RC=$((RC + $?))
set -e
OUT="$TMP/out" ERR="$TMP/err"
expect_rc 0 "cluster add lab --hived and cloud"
grep -q "hived: $URL" "$XDG_CONFIG_HOME/paictl/clusters.yaml" && pass "the registry keeps lab's HiveD" || fail "no hived in the registry"

job() {  # job NAME INSTANCES GPUS: a research job file of INSTANCES pods of GPUS GPUs
  cat >"$TMP/$1.yaml" <<YAML
protocolVersion: 2
name: $1
type: job
prerequisites:
  - {name: image, type: dockerimage, uri: "ubuntu:22.04"}
taskRoles:
  worker:
    instances: $2
    dockerImage: image
    resourcePerInstance: {gpu: $3, cpu: $(($3 * 4)), memoryMB: $(($3 * 16384))}
    commands: [sleep 600]
defaults:
  virtualCluster: research
extras:
  hivedScheduler:
    taskRoles:
      worker: {skuType: GPU}
YAML
}
job gang 5 4
job single 1 8
run job list --cluster lab --user bob -o json
BOB_LAUNCHED=$("$PY" -c "import json,sys; print([j['launchedTime'] for j in json.load(open(sys.argv[1]))['items'] if j['name'] == 'train'][0])" "$OUT")
# start_at HOURS: bob~train's launch plus HOURS, as job submit prints it (UTC, seconds).
start_at() { "$PY" -c "import sys, datetime; print(datetime.datetime.fromtimestamp(int(int(sys.argv[1]) / 1000 + float(sys.argv[2]) * 3600), datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ'))" "$BOB_LAUNCHED" "$1"; }

run job submit "$TMP/gang.yaml" --cluster auto --dry-run -o json
expect_rc 0 "auto dry run of the 5x4 gang"
schema_check jobSubmission "job submit --cluster auto -o json"
json_check "[e['cluster'] for e in d['decision']] == ['cloud', 'lab'] and d['target'] == 'cloud'" "cloud (fits by its totals) ranks before lab (waits as cells)"
json_check "[e for e in d['decision'] if e['cluster'] == 'lab'][0]['hived']['verdict'] == 'waits' and not [e for e in d['decision'] if e['cluster'] == 'lab'][0]['fitsNow']" "on lab the gang waits as cells although research's totals have 20 free GPUs"
json_check "[e for e in d['decision'] if e['cluster'] == 'lab'][0]['hived']['estimatedStart'] == '$(start_at 3)'" "lab's estimate: bob~train's launch + 3 h (bob's median run time)"
json_check "'when bob~train/default ends' in [e for e in d['decision'] if e['cluster'] == 'lab'][0]['hived']['estimate']" "the estimate names the group it waits for"
json_check "[e for e in d['decision'] if e['cluster'] == 'cloud'][0]['hived']['known'] is False and 'no HiveD inspect API' in [e for e in d['decision'] if e['cluster'] == 'cloud'][0]['hived']['reason']" "cloud has no HiveD: ranked by VC totals, and it says so"

run job submit "$TMP/gang.yaml" --cluster auto --dry-run --expected-duration 2h -o json
expect_rc 0 "auto dry run with --expected-duration"
json_check "[e for e in d['decision'] if e['cluster'] == 'lab'][0]['hived']['estimatedStart'] == '$(start_at 2)'" "--expected-duration 2h: bob~train's launch + 2 h"
json_check "'3 running groups' in [e for e in d['decision'] if e['cluster'] == 'lab'][0]['hived']['estimate']" "alice~prod-a and dave~short end earlier and are released first"

run job submit "$TMP/gang.yaml" --cluster auto --dry-run
expect_rc 0 "auto dry run as a table"
expect_out "CELLS" "the table has HiveD's verdict"
expect_out "$(start_at 3)" "and the estimated start"
expect_out "no HiveD" "cloud is marked as ranked without HiveD"

run cluster prefer lab cloud
run job submit "$TMP/single.yaml" --cluster auto --dry-run -o json
expect_rc 0 "auto dry run of one 8-GPU pod"
json_check "d['target'] == 'lab' and [e for e in d['decision'] if e['cluster'] == 'lab'][0]['hived']['verdict'] == 'fits'" "one 8-GPU pod fits lab now as cells; preference picks lab"

run job submit "$TMP/gang.yaml" --cluster auto --explain
expect_rc 0 "auto submit with --explain"
expect_err "--cluster auto chose cloud" "the gang goes to cloud"
expect_err "CELLS" "--explain prints the ranking"
# hived why JOB: a job HiveD holds no group for is judged from its config on the
# cluster, as the rest-server asks HiveD for it: the gang alice~gang/default of
# 5 pods x 4 GPUs in research at priority 10 (test) waits as the dry runs said.
run job submit "$TMP/gang.yaml" --cluster lab
expect_rc 0 "the gang submitted to lab (it waits there)"
run hived why gang --cluster lab -o json
expect_rc 0 "why of a waiting job, from its config"
schema_check hivedWhy "hived why JOB -o json"
json_check "d['name'] == 'alice~gang/default' and d['running'] is False and d['verdict'] == 'waits'" "the job's gang waits"
json_check "d['request']['members'] == [{'podNumber': 5, 'leafCellNumber': 4}] and d['request']['priority'] == 10 and d['request']['virtualCluster'] == 'research'" "the request as the rest-server makes it: 5 pods of 4 leaf cells, priority 10, in research"
json_check "'alice~gang' in d['request']['source'] and 'WAITING' in d['request']['source']" "it says where the request came from"
json_check "[h['group'] for h in d['heldBy']] == ['bob~train/default']" "research's bound cell is bob~train's"
run hived why gang --cluster lab
expect_rc 0 "why of a waiting job as text"
expect_out "alice~gang/default waits" "the text names the job's group"
run hived why bob~train --cluster lab
expect_rc 0 "why of a running job by its name"
expect_out "bob~train/default is Allocated in VC research at priority 50" "the job's group, where it runs"
run hived why bob~old --cluster lab
expect_rc 0 "why of a finished job"
expect_out "has finished (SUCCEEDED)" "a finished job holds nothing"
run hived why alice~nope --cluster lab
expect_rc 2 "why of a job that does not exist"
expect_err "has no such job" "neither HiveD nor the cluster knows it"
# simulate --from-live: lab's live state played forward with no arrivals. bob~train
# ends at its launch + 3 h (bob's median run time), and the waiting alice~gang,
# which why says waits for research's cell bob~train holds, starts right then.
run simulate --from-live lab --horizon 12h -o json
expect_rc 0 "forecast from lab's live state"
schema_check simulationForecast "simulate --from-live -o json"
json_check "d['runningGroups'] == 3 and d['waitingGroups'] == 1 and len(d['configs']) == 1" "3 running groups and the waiting gang"
json_check "[w['startsInSeconds'] for w in d['configs'][0]['waitingGroups']] == [r['endsInSeconds'] for r in d['configs'][0]['runningGroups'] if r['name'] == 'bob~train/default']" "the gang starts when bob~train ends"
json_check "abs([r['endsInSeconds'] for r in d['configs'][0]['runningGroups'] if r['name'] == 'bob~train/default'][0] - ($BOB_LAUNCHED / 1000 + 3 * 3600 - __import__('time').time())) < 120" "bob~train ends at its launch + 3 h"
run simulate --from-live lab --horizon 12h
expect_rc 0 "forecast as text"
expect_out "alice~gang/default" "the text lists the waiting gang"
run simulate --from-live lab --horizon 0
expect_rc 2 "a horizon of 0"
expect_err "--horizon must be above 0" "says why"
run simulate --from-live lab --horizon 36600d
expect_rc 2 "a horizon of 100 years"
expect_err "more than a year ahead" "says why"
printf 'job_id,submit_time,duration,vc,gpus\nx,0,600,research,1\ny,60,600,vision,8\n' >"$TMP/other.csv"
run simulate --from-live lab --arrivals "$TMP/other.csv"
expect_rc 2 "arrivals of another cluster's VCs"
expect_err "virtual clusters the cluster does not have: vision" "the unknown VC is named"
run simulate --from-live lab --replay-last 7d -o json
expect_rc 0 "forecast with the last 7 days replayed"
json_check "d['arrivalsSource'].startswith('the last 7d of lab')" "the arrivals are lab's own submissions"
run hived diff "$SCEN/auto-hived.yaml" "$SCEN/auto-hived.yaml" --live --forecast --horizon 6h --cluster lab -o json
expect_rc 0 "hived diff --live --forecast"
json_check "len(d['forecast']['configs']) == 2 and d['forecast']['horizonSeconds'] == 21600" "the diff carries the forecast under both configs"
finish
