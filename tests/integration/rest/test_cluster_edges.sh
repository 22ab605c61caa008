#!/bin/sh
# Registering and using clusters when the input or the server misbehaves:
# endless stdin, credentials in the URI, plain http, relative CA files, failing
# user lookups, escape sequences in server messages, stopping finished jobs,
# removing token-file clusters.
set -eu
. "$(dirname "$0")/lib.sh"
cd "$PAI_SOURCE_DIR"
ESC=$(printf '\033')

# --- endless secrets on stdin -------------------------------------------------------------
set +e
yes x | tr -d '\n' | "$PAICTL" cluster add lab --uri "$LAB_URI" --user alice --password-stdin >"$TMP/out" 2>"$TMP/err"
RC=$?
set -e
OUT="$TMP/out" ERR="$TMP/err"
expect_rc 2 "an endless --password-stdin"
expect_err "stdin is larger than 64 KiB" "the cap is named"
set +e
yes | "$PAICTL" cluster add lab --uri "$LAB_URI" --token-stdin >"$TMP/out" 2>"$TMP/err"
RC=$?
set -e
expect_rc 2 "an endless --token-stdin"
[ -f "$REGISTRY" ] && fail "an endless secret wrote the registry" || pass "nothing stored"
# A token the server refuses is refused credentials (exit 2), not a remote failure.
set +e
printf 'not-a-token\n' | "$PAICTL" cluster add lab --uri "$LAB_URI" --token-stdin >"$TMP/out" 2>"$TMP/err"
RC=$?
set -e
expect_rc 2 "a refused --token-stdin"
[ -f "$REGISTRY" ] && fail "a refused token wrote the registry" || pass "nothing stored for a refused token"

# --- credentials in the URI, passwords over http ------------------------------------------
AUTH_URI=$(printf '%s' "$LAB_URI" | sed 's#^http://#http://alice:SECRET-IN-URI@#')
set +e
echo alice-pass-1 | "$PAICTL" cluster add lab --uri "$AUTH_URI" --user alice --password-stdin --insecure >"$TMP/out" 2>"$TMP/err"
RC=$?
set -e
expect_rc 0 "add with user info in the URI"
expect_err "in --uri are ignored and not stored" "the user info is called out"
expect_err "signing in over plain http://" "a password over http warns"
if grep -q "TLS certificates" "$ERR"; then fail "--insecure warns about TLS on http://"; else pass "no TLS warning on http://"; fi
if grep -q "SECRET-IN-URI" "$OUT" "$ERR" "$REGISTRY"; then fail "the URI's password was printed or stored"; else pass "the URI's password is neither printed nor stored"; fi
expect_out "cluster lab added: $LAB_URI " "the URI is printed without user info"
run cluster list
expect_rc 0 "cluster list"
expect_no_out "SECRET-IN-URI" "cluster list hides it"
# An older registry that holds user info: not shown either.
sed "s#uri: $LAB_URI#uri: $AUTH_URI#" "$REGISTRY" >"$TMP/reg" && cat "$TMP/reg" >"$REGISTRY"
grep -q "SECRET-IN-URI" "$REGISTRY" && pass "the registry now holds user info" || fail "setup: sed did not apply"
run cluster list -o json --no-probe
expect_no_out "SECRET-IN-URI" "user info read from a registry is not printed"

# --- CA files are stored absolute ----------------------------------------------------------
mkdir -p "$TMP/certs"
printf 'not really a certificate\n' >"$TMP/certs/cert.pem"
TOKEN=$("$PY" -c "import json; print(json.load(open('tests/integration/rest/scenarios/cloud.json'))['users']['alice']['tokens'][0])")
set +e
(cd "$TMP/certs" && printf '%s\n' "$TOKEN" | "$PAICTL" cluster add cloud --uri "$CLOUD_URI" --token-stdin --ca-file cert.pem -q) >"$TMP/out" 2>"$TMP/err"
RC=$?
set -e
expect_rc 0 "add with a relative --ca-file"
grep -q "caFile: $TMP/certs/cert.pem" "$REGISTRY" && pass "the CA file is stored as an absolute path" || { fail "caFile is not absolute"; cat "$REGISTRY" >&2; }
# A relative caFile written by an older paictl is refused, not resolved against the cwd.
sed "s#caFile: $TMP/certs/cert.pem#caFile: cert.pem#" "$REGISTRY" >"$TMP/reg" && cat "$TMP/reg" >"$REGISTRY"
run job list --cluster cloud
expect_rc 2 "a relative caFile is refused"
expect_err "is a relative path" "and the message says why"
"$PAICTL" cluster remove cloud -q

# --- cluster status when the user lookup fails ---------------------------------------------
inject "$LAB_URI" '{"path": "/api/v2/users/", "status": 401, "code": "UnauthorizedUserError", "message": "Your token is invalid."}'
run cluster status lab
expect_rc 3 "a 401 on /users/<you> fails the command"
if grep -Eq '^lab +default +\? ' "$OUT"; then pass "ACCESS is unknown, capacity still shown"; else fail "no 'lab default ?' row"; sed 's/^/  | /' "$OUT" >&2; fi
expect_err "lab: reading user alice (ACCESS is unknown): 401 UnauthorizedUserError" "the failure is reported"
inject "$LAB_URI" '{"path": "/api/v2/users/", "status": 500, "code": "UnknownError", "message": "db down"}'
run cluster status lab -o json
expect_rc 3 "a 500 on /users/<you> fails the command"
json_check "d['items'][0]['virtualClusters'][0]['mayUse'] is None and 'db down' in d['items'][0]['error']" "capacity shown, access unknown, error named"

# --- escape sequences from the server --------------------------------------------------------
inject "$LAB_URI" '{"path": "/api/v2/jobs/", "status": 404, "code": "NoJobError", "message": "Job \u001b[2J\u001b]0;owned\u0007 is not found."}'
run job status nope
expect_rc 2 "a 404 with escape sequences"
if grep -q "$ESC" "$ERR"; then fail "a raw ESC reached the terminal"; else pass "no raw ESC printed"; fi
expect_err 'Job \x1b[2J\x1b]0;owned\x07 is not found.' "the escapes are shown, escaped"
inject "$LAB_URI" '{"path": "/api/v2/jobs/alice~old_job$", "method": "GET", "status": 200, "contentType": "application/json", "text": "{\"name\": \"old_job\", \"username\": \"alice\", \"jobStatus\": {\"state\": \"FAILED\", \"appExitCode\": 1, \"appExitDiagnostics\": \"boom \\u001b[2J\"}, \"taskRoles\": {}}"}'
run job status old_job
expect_rc 0 "job status with escape sequences in its diagnostics"
if grep -q "$ESC" "$OUT"; then fail "job status printed a raw ESC"; else pass "job status escapes server text"; fi
expect_out 'boom \x1b[2J' "the diagnostics are shown, escaped"

# --- job stop on a finished job ---------------------------------------------------------------
reset_requests "$LAB_URI"
run job stop old_job
expect_rc 0 "stopping a finished job"
expect_out "alice~old_job: had already finished (SUCCEEDED)" "it says the job had finished, with its state"
expect_no_out "stop requested" "no false claim"
check_requests "$LAB_URI" "not any(r['method'] == 'PUT' for r in reqs)" "nothing was sent to stop it"

# --- removing a token-file cluster --------------------------------------------------------------
printf '%s\n' "$TOKEN" >"$TMP/token"
run cluster add cloud --uri "$CLOUD_URI" --token-file "$TMP/token"
expect_rc 0 "add with --token-file"
run cluster remove cloud
expect_rc 0 "remove it"
expect_out "its token file $TMP/token is yours and was left as it is" "the message says the file is left alone"
expect_no_out "token is deleted" "no claim that a token was deleted"
[ -s "$TMP/token" ] && pass "the token file is still there" || fail "the token file is gone"
run cluster remove lab
expect_out "its token is deleted from the registry" "a stored token is deleted"

finish
