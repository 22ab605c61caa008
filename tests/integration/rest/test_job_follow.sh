#!/bin/sh
# Following and watching jobs through the real binary and a REST test server
# (scenarios/jobs.json): logs -f on growing logs (one task, all tasks, a dropped
# connection), status --watch and list --watch without a terminal and their
# Ctrl-C, job events in time order, status --attempts.
set -eu
. "$(dirname "$0")/lib.sh"
cd "$PAI_SOURCE_DIR"

TOKEN=$("$PY" -c "import json; print(json.load(open('tests/integration/rest/scenarios/jobs.json'))['users']['alice']['tokens'][0])")
printf '%s\n' "$TOKEN" | "$PAICTL" cluster add lab --uri "$LAB_URI" --token-stdin >/dev/null 2>&1 ||
  { fail "cluster add"; finish; }

# lines FILE PREFIX: the lines of FILE that start with PREFIX, without it.
lines() { sed -n "s/^$2//p" "$1" | tr '\n' ' '; }

# --- logs -f: one task, until it ends -------------------------------------------------------
run job logs follow-one -f --interval 0.05
expect_rc 0 "logs -f ends when the job has succeeded"
GOT=$(cat "$OUT" | tr '\n' ' ')
[ "$GOT" = "w0 step 1 w0 step 2 w0 step 3 w0 step 4 w0 step 5 w0 step 6 w0 step 7 w0 step 8 " ] &&
  pass "logs -f printed task 0's whole log once, in order, without a prefix" || fail "logs -f printed: $GOT"
expect_err "alice~follow-one SUCCEEDED" "logs -f says how the job ended"
check_requests "$LAB_URI" "any(r['headers'].get('range', '').startswith('bytes=') and r['headers']['range'] != 'bytes=0-' for r in reqs if r['path'].startswith('/log-manager/'))" \
  "logs -f reads on from the last offset (Range: bytes=N-)"
check_requests "$LAB_URI" "len([r for r in reqs if r['path'].startswith('/log-manager/') and '/worker/1/' in r['path']]) == 0" \
  "logs -f without --all-tasks reads only the chosen task"

# --- logs -f --all-tasks: a waiting job, three tasks interleaved, a failed end --------------------
run job logs follow-all -f --all-tasks --interval 0.05
expect_rc 1 "logs -f --all-tasks exits 1 when the job failed"
expect_err "has no log yet" "a waiting task is said once on stderr"
for t in 0 1 2; do
  GOT=$(lines "$OUT" "task-$t | ")
  [ "$GOT" = "w$t step 1 w$t step 2 w$t step 3 w$t step 4 w$t step 5 w$t step 6 " ] &&
    pass "task-$t: every line once, in order, prefixed 'task-$t | '" || fail "task-$t lines: $GOT"
done
if grep -qv '^task-[0-2] | w[0-2] step [1-6]$' "$OUT"; then fail "a line without its prefix"; sed 's/^/  | /' "$OUT" >&2; else pass "every line has its task prefix"; fi
# Interleaved: task 1 printed lines before task 0 had printed all of its own.
"$PY" - "$OUT" <<'PY' && pass "the tasks' lines are interleaved as they arrive" || fail "not interleaved"
import sys
lines = open(sys.argv[1]).read().splitlines()
last0 = max(i for i, l in enumerate(lines) if l.startswith("task-0 | "))
first1 = min(i for i, l in enumerate(lines) if l.startswith("task-1 | "))
sys.exit(0 if first1 < last0 else 1)
PY

# --- logs -f: the connection drops twice in the middle ---------------------------------------------
reset_requests "$LAB_URI"
inject "$LAB_URI" '{"path": "^/log-manager/alice~follow-drop/main/0/all", "close": true, "after": 3, "count": 2}'
run job logs follow-drop -f --interval 0.05
expect_rc 0 "logs -f survives dropped connections"
GOT=$(cat "$OUT" | tr '\n' ' ')
[ "$GOT" = "epoch step 1 epoch step 2 epoch step 3 epoch step 4 epoch step 5 epoch step 6 epoch step 7 epoch step 8 epoch step 9 epoch step 10 " ] &&
  pass "after the drops no line is lost or repeated" || fail "after the drops: $GOT"
check_requests "$LAB_URI" "(lambda logs: len(logs) >= 6 and logs[3] == logs[4] and logs[3] not in ('', 'bytes=0-'))([r['headers'].get('range', '') for r in reqs if r['path'].startswith('/log-manager/')])" \
  "the read after a drop asks for the same offset again"
expect_no_out "log-secret" "the log URL's token is never printed"
if grep -q "log-secret" "$ERR"; then fail "the log token is on stderr"; else pass "no log token on stderr"; fi

run job logs follow-drop -f -o json
expect_rc 2 "logs -f -o json is bad usage"

# --- status --watch without a terminal: one line per change, ends with the job -----------------------
run job status watch-status --watch --interval 0.05
expect_rc 0 "status --watch ends when the job ends"
"$PY" - "$OUT" <<'PY' && pass "status --watch: one line per change of the job and of its task" || { fail "status --watch lines"; sed 's/^/  | /' "$OUT" >&2; }
import re, sys
lines = open(sys.argv[1]).read().splitlines()
job = [re.sub(r"^\S+ \S+  ", "", l) for l in lines if "  main-0  " not in l]
task = [re.sub(r"^.*  main-0  ", "", l) for l in lines if "  main-0  " in l]
assert job == ["alice~watch-status  WAITING (attempt 0, retries 0)",
               "alice~watch-status  RUNNING (attempt 0, retries 0)",
               "alice~watch-status  SUCCEEDED (attempt 0, retries 0) exit 0"], job
assert task == ["WAITING (attempt 0)", "RUNNING (attempt 0) on worker-1", "SUCCEEDED (attempt 0) on worker-1"], task
PY

# --- list --watch without a terminal, stopped with Ctrl-C --------------------------------------------
"$PAICTL" job list --watch --interval 0.1 --state RUNNING,FAILED >"$TMP/watch" 2>"$TMP/watch.err" &
WPID=$!
# Waits (at most 30 s: a loaded machine, a sanitized build) for the first listing,
# then for the change, instead of fixed sleeps.
i=0
while ! grep -q "alice~sweep-02" "$TMP/watch" 2>/dev/null && [ $i -lt 300 ]; do i=$((i + 1)); sleep 0.1; done
ctl "$LAB_URI" POST /__control/jobs/alice~sweep-02 '{"plan": ["FAILED"]}' >/dev/null
i=0
while ! grep -q "alice~sweep-02  RUNNING -> FAILED$" "$TMP/watch" && [ $i -lt 300 ]; do i=$((i + 1)); sleep 0.1; done
kill -INT "$WPID"
set +e
wait "$WPID"
WRC=$?
set -e
[ "$WRC" -eq 0 ] && pass "list --watch ends cleanly on Ctrl-C (exit 0)" || fail "list --watch exit $WRC"
grep -q "alice~sweep-02  RUNNING -> FAILED$" "$TMP/watch" && pass "list --watch prints the change" ||
  { fail "list --watch: no change line"; sed 's/^/  | /' "$TMP/watch" >&2; }
N=$(grep -c "alice~sweep-02" "$TMP/watch" || true)
[ "$N" -eq 2 ] && pass "list --watch: a job that does not change is not printed again" || fail "sweep-02 printed $N times"
grep -q "alice~sweep-01  FAILED$" "$TMP/watch" && pass "list --watch starts with every job" || fail "no first listing"

# --- job events -------------------------------------------------------------------------------------
run job events flaky
expect_rc 0 "job events"
expect_out "alice~flaky  (cluster lab): FAILED, retries 2 (user 1, platform 1, resource 0)" "events: the retry details"
"$PY" - "$OUT" <<'PY' && pass "events in time order: attempts, retries, exit specs, task attempts" || { fail "events order"; sed 's/^/  | /' "$OUT" >&2; }
import re, sys
rows = [re.split(r"\s{2,}", l.strip()) for l in open(sys.argv[1]).read().splitlines()[3:]]
got = [(r[1], r[2], r[3] if len(r) > 3 else "") for r in rows]
want = [("job", "Submitted", "-"),
        ("attempt 0", "Started", "-"),
        ("main[0] #0", "Queued", "-"),
        ("main[0] #0", "Launched", "on worker-3"),
        ("attempt 0", "Completed", "FAILED, exit -220 ContainerNodeLost (PLATFORM_FAILURE)"),
        ("main[0] #0", "Completed", "FAILED, exit -220 ContainerNodeLost (PLATFORM_FAILURE)"),
        ("attempt 0", "Retried", "after PLATFORM_FAILURE"),
        ("attempt 1", "Started", "-"),
        ("main[0] #1", "Queued", "-"),
        ("main[0] #1", "Launched", "on worker-1"),
        ("attempt 1", "Completed", "FAILED, exit 1 ContainerNonZeroExitCode (USER_FAILURE)"),
        ("main[0] #1", "Completed", "FAILED, exit 1 ContainerNonZeroExitCode (USER_FAILURE)"),
        ("attempt 1", "Retried", "after USER_FAILURE"),
        ("main[0] #2", "Queued", "-"),
        ("attempt 2", "Started", "-"),
        ("main[0] #2", "Launched", "on worker-1"),
        ("attempt 2", "Completed", "FAILED, exit 1 ContainerNonZeroExitCode (USER_FAILURE)"),
        ("main[0] #2", "Completed", "FAILED, exit 1 ContainerNonZeroExitCode (USER_FAILURE)")]
assert got == want, "\n".join(map(str, got))
PY
run job events flaky -o json
expect_rc 0 "job events -o json"
schema_check jobEvents "job events -o json"
json_check "[e['time'] for e in d['items']] == sorted(e['time'] for e in d['items']) and d['job'] == 'alice~flaky' and sum(1 for e in d['items'] if e['event'] == 'Retried') == 2" \
  "events -o json: sorted by time, two retries"
run job events no-such-job
expect_rc 2 "events of an unknown job"

# --- status --attempts: per task, failures per exit type, queueing and running time -------------------
run job status flaky --attempts
expect_rc 0 "status --attempts"
expect_out "attempts of main[0]: 3 attempts, 3 failed (PLATFORM_FAILURE 1, USER_FAILURE 2)" "failure counts per exit type"
"$PY" - "$OUT" <<'PY' && pass "queueing and running time of each attempt" || { fail "attempt rows"; sed 's/^/  | /' "$OUT" >&2; }
import re, sys
text = open(sys.argv[1]).read()
rows = [re.split(r"\s{2,}", l.strip()) for l in text.split("attempts of main[0]")[1].splitlines()[2:] if l.strip()]
assert rows == [["0", "FAILED", "worker-3", "30s", "1m", "-220 ContainerNodeLost (PLATFORM_FAILURE)"],
                ["1", "FAILED", "worker-1", "1m", "4m", "1 ContainerNonZeroExitCode (USER_FAILURE)"],
                ["2", "FAILED", "worker-1", "1m", "2m", "1 ContainerNonZeroExitCode (USER_FAILURE)"]], rows
PY
# A failed job says why: its exit spec's reason and solution, what triggered the end, the
# container's last words.
run job status flaky
expect_rc 0 "status of a failed job"
expect_out "Exit:        code 1 ContainerNonZeroExitCode (USER_FAILURE)" "the exit code, phrase and type"
expect_out "Trigger:     TaskAttempt main[0] completed with ContainerNonZeroExitCode: exit code 1 (task main[0])" "what triggered the end, and which task"
expect_out "Reason:      " "the exit spec's reason"
expect_out "Solution:    Check the job's stderr log" "the exit spec's solution"
expect_out "Container:   Traceback (most recent call last):   File \"train.py\", line 12 RuntimeError: CUDA out of memory" "the container's last words, on one line"

run job status flaky --attempts -o json
schema_check job "status --attempts -o json"
json_check "d['taskHistory'][0]['failuresByType'] == {'PLATFORM_FAILURE': 1, 'USER_FAILURE': 2} and [a['queuedMs'] for a in d['taskHistory'][0]['attempts']] == [30000, 60000, 60000]" \
  "status --attempts -o json: failures by type and queueing times"
finish
