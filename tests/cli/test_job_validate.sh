#!/bin/sh
# End to end: `paictl check job` / `paictl job validate` through the real binary (offline).
set -eu
. "$(dirname "$0")/lib.sh"
cd "$PAI_SOURCE_DIR"
EX=examples/jobs
BAD=tests/data/jobs/invalid

run check job --help
expect_rc 0 "check job --help"
expect_out "EXAMPLES:" "help has examples"
run job validate --help
expect_out "--fail-on-warn" "job validate --help lists --fail-on-warn"

run check job $EX/pytorch-mnist.yaml $EX/distributed-tensorflow.yaml $EX/private-registry.yaml
expect_rc 0 "the examples are valid"
expect_out "0 errors, 0 warnings in 3 files" "summary for three files"

run job validate $EX/broken.yaml
expect_rc 1 "the broken example has errors"
expect_out "examples/jobs/broken.yaml:4:7: error[J014]: name \"my job\" may contain only letters, digits, '_' and '-'" "J014 with file:line:col"
expect_out "hint: for example \"my_job\"" "name hint"
expect_out "error[J021]" "memory instead of memoryMB"
expect_out "hint: write memoryMB: 8192 (8Gi)" "the memoryMB value is computed"
expect_out "warning[J044]" "lower-case hivedscheduler"
expect_out "hint: did you mean \$parameters.epochs?" "unresolved parameter with a guess"
expect_out "5 errors, 5 warnings in 1 file" "broken summary"
expect_no_out "hunter2" "a password in the file is never quoted"

# A cluster's layout.yaml given as a job: one finding that says so.
for cmd in "job validate" "check job"; do
  run $cmd examples/clusters/quickstart/layout.yaml
  expect_rc 1 "$cmd layout.yaml"
  expect_out "error[J009]: this is a cluster file (layout.yaml: machine-sku, machine-list), not a job" "$cmd: layout.yaml is a cluster file"
  expect_no_out "J010" "$cmd: no missing-key findings for a cluster file"
  expect_out "1 error, 0 warnings" "$cmd: one finding"
done

run job validate -o json $BAD/J021-memory.yaml
expect_rc 1 "json output exit code"
expect_out '"code": "J021"' "json has the code"
expect_out '"line": 11' "json has the line"

run -q job validate $EX/broken.yaml
expect_no_out "warning[" "-q shows errors only"
expect_no_out "in 1 file" "-q has no summary"
run -v job validate tests/data/jobs/invalid/J060-J066-pitfalls.yaml
expect_out "info[J065]" "-v shows info findings"

run job validate --fail-on-warn $BAD/J050-J054-templates.yaml
expect_rc 1 "warnings fail with --fail-on-warn"
run job validate tests/data/jobs/valid/full.yaml --fail-on-warn
expect_rc 0 "a clean file passes --fail-on-warn"

run job validate --junit "$TMP/r.xml" --sarif "$TMP/r.sarif" $EX/broken.yaml $EX/pytorch-mnist.yaml
expect_rc 1 "reports written"
grep -q '<testsuite' "$TMP/r.xml" && pass "JUnit report" || fail "no JUnit report"
grep -q '"ruleId": "J021"' "$TMP/r.sarif" && pass "SARIF result" || fail "no SARIF J021 result"
grep -q '"id": "J021"' "$TMP/r.sarif" && pass "SARIF rule metadata" || fail "no SARIF rule"
grep -q "hunter2" "$TMP/r.xml" "$TMP/r.sarif" && fail "a secret in a report" || pass "no secret in the reports"

# --param, --vc and --name are checked as if they were in the file.
run job validate $BAD/J050-J054-templates.yaml --param learning_rate=0.1 -o json
expect_no_out "learning_rate %> in taskRoles" "a --param resolves a reference"
run job validate $EX/pytorch-mnist.yaml --name "bad name"
expect_rc 2 "a bad --name is bad usage"
run job validate $EX/pytorch-mnist.yaml --param novalue
expect_rc 2 "a --param without '=' is bad usage"

# stdin, missing files.
set +e
"$PAICTL" job validate - <"$EX/pytorch-mnist.yaml" >"$TMP/out" 2>"$TMP/err"
RC=$?
set -e
OUT="$TMP/out" ERR="$TMP/err"
expect_rc 0 "a job on stdin"
run job validate "$TMP/does-not-exist.yaml"
expect_rc 2 "a missing file is bad input"
expect_out "error[J005]" "J005 for an unreadable file"
run job validate - -
expect_rc 2 "stdin twice"

# stdin is capped like files (16 MiB): an endless producer ends with an error, not a hang.
set +e
yes 'k: v' | "$PAICTL" job validate - >"$TMP/out" 2>"$TMP/err"
RC=$?
set -e
OUT="$TMP/out" ERR="$TMP/err"
expect_rc 2 "an endless stdin is refused"
expect_out "stdin is larger than 16 MiB" "the cap is named"

# Integers wider than 32 bits (and infinities) are errors with their position,
# and render refuses the job instead of showing "0 instances".
run job validate "$PAI_SOURCE_DIR/tests/data/jobs/invalid/J018-huge-integers.yaml"
expect_rc 1 "huge integers are findings"
expect_out "J018-huge-integers.yaml:9:16: error[J018]: taskRoles.a.instances must be a whole number" "instances: 1e400 with its position"
expect_out "found 0x7fffffffffffffff" "the hex value as written"
run job render "$PAI_SOURCE_DIR/tests/data/jobs/invalid/J018-huge-integers.yaml"
expect_rc 2 "render refuses it"
expect_no_out "0 instances" "no zero instances shown"

finish
