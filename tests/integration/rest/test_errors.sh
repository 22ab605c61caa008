#!/bin/sh
# What a user sees when the REST API says no: 400/401/403/404/409/429/5xx,
# slow and unreachable clusters. Exit codes: 2 for refused input, 3 for remote
# failures; messages are one readable line each, with a hint.
set -eu
. "$(dirname "$0")/lib.sh"
cd "$PAI_SOURCE_DIR"
JOB=examples/jobs/pytorch-mnist.yaml

add() {  # add NAME URI PASSWORD
  set +e
  echo "$3" | "$PAICTL" cluster add "$1" --uri "$2" --user alice --password-stdin -q >"$TMP/out" 2>"$TMP/err"
  RC=$?
  set -e
  OUT="$TMP/out" ERR="$TMP/err"
}

# --- registering ------------------------------------------------------------------------
add lab "$LAB_URI" wrong-password
expect_rc 2 "a wrong password"
expect_err "400 IncorrectPasswordError: Password is incorrect." "the server's message"
[ -f "$REGISTRY" ] && fail "a failed add wrote the registry" || pass "nothing stored after a failed add"

add lab "$LAB_URI/api/v9" alice-pass-1
expect_rc 3 "an address that is not an OpenPAI REST server"
expect_err "answers like OpenPAI" "the probe explains"

add lab "$LAB_URI" alice-pass-1
expect_rc 0 "add lab"
add cloud "$CLOUD_URI" cloud-pass-1
expect_rc 0 "add cloud"
add lab "$LAB_URI" alice-pass-1
expect_rc 2 "adding the same name twice needs --force"
expect_err "pass --force" "the hint names --force"

# --- 404 ----------------------------------------------------------------------------------
run job status nope
expect_rc 2 "an unknown job"
expect_err "lab: reading job alice~nope: 404 NoJobError: Job alice~nope is not found." "404 message"
expect_err "hint: check the name with 'paictl job list'" "404 hint"
run job status nope --cluster nowhere
expect_rc 2 "an unknown cluster"
expect_err "no cluster named \"nowhere\"" "unknown cluster message"

# --- 403 ----------------------------------------------------------------------------------
run job stop bob~bob_job
expect_rc 2 "stopping another user's job"
expect_err "403 ForbiddenUserError: User alice is not allowed to execute job bob~bob_job." "403 message"
run job submit "$JOB" --vc gpu-only
expect_rc 2 "a VC that does not exist is caught before sending"
expect_err "no virtual cluster gpu-only (has default, research)" "the VCs are listed"
run job tag add bob~bob_job mine
expect_rc 2 "tagging another user's job"

# --- 409 (the name was taken between the check and the submission) ------------------------
inject "$LAB_URI" '{"path": "/api/v2/jobs$", "method": "POST", "status": 409, "code": "ConflictJobError", "message": "Job alice~pytorch_mnist already exists."}'
run job submit "$JOB"
expect_rc 2 "409 conflict"
expect_err "409 ConflictJobError: Job alice~pytorch_mnist already exists." "409 message"
expect_err "pick another name with --name" "409 hint"

# --- 400 InvalidProtocolError: the AJV list becomes one line per error ----------------------
inject "$LAB_URI" '{"path": "/api/v2/jobs$", "method": "POST", "status": 400, "code": "InvalidProtocolError", "message": "[{\"keyword\":\"additionalProperties\",\"dataPath\":\".taskRoles[\u0027train\u0027]\",\"schemaPath\":\"#/additionalProperties\",\"params\":{\"additionalProperty\":\"gpus\"},\"message\":\"should NOT have additional properties\"},{\"keyword\":\"required\",\"dataPath\":\"\",\"schemaPath\":\"#/required\",\"params\":{\"missingProperty\":\"type\"},\"message\":\"should have required property \u0027type\u0027\"}]"}'
run job submit "$JOB" --name newer
expect_rc 2 "400 from the server"
expect_err "400 InvalidProtocolError: the server's schema refused the job (2 errors)" "400 summary"
expect_err "  - taskRoles['train']: should NOT have additional properties (additionalProperty \"gpus\")" "first schema error on its own line"
expect_err "  - (top level): should have required property 'type' (missingProperty \"type\")" "second schema error"

# --- 401 --------------------------------------------------------------------------------------
cp "$REGISTRY" "$TMP/registry.bak"
"$PY" - "$REGISTRY" <<'PYEOF'
import re, sys
p = sys.argv[1]
s = open(p).read()
s = re.sub(r"token: .*", "token: expired-token", s, count=1)
open(p, "w").write(s)
PYEOF
chmod 600 "$REGISTRY"
run job list
expect_rc 3 "a refused token"
expect_err "401 UnauthorizedUserError: Your token is invalid." "401 message"
expect_err "log in again" "401 hint"
expect_no_out "expired-token" "the token is not printed"
if grep -q "expired-token" "$ERR"; then fail "the token is in stderr"; else pass "the token is not in stderr"; fi
cp "$TMP/registry.bak" "$REGISTRY"

# --- 429 --------------------------------------------------------------------------------------
reset_requests "$LAB_URI"
inject "$LAB_URI" '{"path": "/api/v2/jobs$", "method": "GET", "status": 429, "retryAfter": 1, "text": "Too many requests, please try again later."}'
run job list
expect_rc 0 "a 429 with Retry-After: 1 is waited out"
check_requests "$LAB_URI" "sum(r['path'] == '/rest-server/api/v2/jobs' for r in reqs) == 2" "the list was sent twice"
inject "$LAB_URI" '{"path": "/api/v2/jobs$", "method": "GET", "status": 429, "retryAfter": 3600, "text": "Too many requests, please try again later."}'
run job list
expect_rc 3 "a 429 asking for an hour is reported"
expect_err "429: Too many requests, please try again later." "the limiter's text"
expect_err "it asks to wait 3600 s" "Retry-After in the hint"

# --- 5xx --------------------------------------------------------------------------------------
reset_requests "$LAB_URI"
inject "$LAB_URI" '{"path": "/api/v2/virtual-clusters$", "status": 503, "count": 10}'
run cluster status lab
expect_rc 3 "503 that lasts"
expect_err "503 UnknownError: injected failure" "503 message"
check_requests "$LAB_URI" "sum(r['path'] == '/rest-server/api/v2/virtual-clusters' for r in reqs) == 4" "GET retried up to 4 attempts"
reset_requests "$LAB_URI"
inject "$LAB_URI" '{"path": "/api/v2/jobs$", "method": "POST", "status": 502, "text": "<html><body><h1>502 Bad Gateway</h1></body></html>", "contentType": "text/html"}'
run job submit "$JOB" --name after_502
expect_rc 3 "502 on submit"
expect_err "502: 502 Bad Gateway" "the proxy's page as one line"
check_requests "$LAB_URI" "sum(r['method'] == 'POST' for r in reqs) == 1" "a POST is never sent twice"
inject "$LAB_URI" '{"path": "/api/v2/users/", "status": 500, "code": "UnknownError", "message": "db down"}'
run cluster status lab -o json
expect_rc 3 "a failed user lookup still shows capacity, and fails"
json_check "d['items'][0]['virtualClusters'][0]['mayUse'] is None" "access is unknown, not guessed"

# --- slow and unreachable clusters -------------------------------------------------------------
inject "$CLOUD_URI" '{"path": "/api/v2/info$", "delayMs": 3000, "status": 200}'
run cluster list --request-timeout 0.5 -o json
expect_rc 0 "cluster list with a slow cluster"
json_check "[c['reachable'] for c in d['items']] == [True, False] and 'timed out' in d['items'][1]['error'].lower()" "the slow one is unreachable"

cat >>"$REGISTRY" <<EOF
- name: gone
  uri: http://127.0.0.1:1
  user: alice
  token: t
EOF
run version --cluster gone
expect_rc 3 "version --cluster of a dead cluster"
expect_out "paictl " "the client's version is printed first"
expect_err "gone" "the error names the cluster"
run cluster list
expect_rc 0 "cluster list with a dead cluster"
expect_out "no: 127.0.0.1:1" "the dead cluster says why"
run job submit "$JOB" --name auto_pick --cluster auto --dry-run -o json
expect_rc 0 "auto works around a dead cluster"
json_check "d['target'] == 'cloud' and [e for e in d['decision'] if e['cluster'] == 'gone'][0]['reason'].startswith('unreachable')" \
  "the dead cluster is dropped as unreachable"
run job list --all-clusters
expect_rc 3 "list --all-clusters with a dead cluster"
expect_out "alice~old_job" "the other clusters are still listed"
expect_err "gone: listing jobs" "the dead one is named"

# --- the registry itself ---------------------------------------------------------------------
printf 'clusters: [oops\n' >"$TMP/bad.yaml"
export PAICTL_CONFIG="$TMP/bad.yaml"
run cluster list
expect_rc 2 "a malformed registry"
expect_err "bad.yaml:1:" "the registry problem has a position"
run cluster use lab
expect_rc 2 "nothing is written over a malformed registry"
[ "$(cat "$TMP/bad.yaml")" = "clusters: [oops" ] && pass "the malformed file is untouched" || fail "the malformed file changed"
unset PAICTL_CONFIG

finish
