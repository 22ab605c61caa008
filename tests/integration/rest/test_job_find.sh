#!/bin/sh
# Finding jobs through the real binary and a REST test server (scenarios/jobs.json):
# tag filters, --since, --order, paging (--limit, --offset, --all), TAGS and AGE
# columns, -o name, job tag list, star/unstar and --starred in the registry.
set -eu
. "$(dirname "$0")/lib.sh"
cd "$PAI_SOURCE_DIR"

TOKEN=$("$PY" -c "import json; print(json.load(open('tests/integration/rest/scenarios/jobs.json'))['users']['alice']['tokens'][0])")
printf '%s\n' "$TOKEN" | "$PAICTL" cluster add lab --uri "$LAB_URI" --token-stdin >/dev/null 2>&1 ||
  { fail "cluster add"; finish; }

# names: the job names of `-o name` output, sorted, on one line.
names() { sed 's/^alice~//' "$OUT" | sort | tr '\n' ' '; }

# --- tags -------------------------------------------------------------------------------------
reset_requests "$LAB_URI"
run job list --tag baseline -o name
expect_rc 0 "list --tag"
[ "$(names)" = "old-baseline sweep-00 sweep-01 sweep-02 " ] && pass "--tag baseline: the four jobs with the tag" || fail "--tag baseline: $(names)"
check_requests "$LAB_URI" "any(r['query'].get('tagsContain') == 'baseline' for r in reqs if r['path'].endswith('/api/v2/jobs'))" \
  "--tag goes to the server as tagsContain"
run job list --tag sweep-lr --no-tag baseline --no-tag best -o name --all
[ "$(names)" = "sweep-03 sweep-05 sweep-06 sweep-07 sweep-08 sweep-09 sweep-10 sweep-11 " ] &&
  pass "--tag with --no-tag (twice)" || fail "--tag/--no-tag: $(names)"
check_requests "$LAB_URI" "any(r['query'].get('tagsNotContain') == 'baseline,best' for r in reqs)" \
  "--no-tag goes to the server as tagsNotContain (comma list)"
run job list --tag best --tag baseline -o name
[ "$(names)" = "old-baseline sweep-00 sweep-01 sweep-02 sweep-04 " ] && pass "--tag twice: jobs with any of them" || fail "--tag twice: $(names)"
run job list --tag 'a,b'
expect_rc 2 "a tag with a comma is bad usage"

# --- since, state, vc -------------------------------------------------------------------------
run job list --tag sweep-lr --since 3h30m -o name
expect_rc 2 "--since with two units is refused"
run job list --tag sweep-lr --since 210m -o name
[ "$(names)" = "sweep-00 sweep-01 sweep-02 " ] && pass "--since 210m: the jobs of the last 3.5 hours" || fail "--since: $(names)"
run job list --tag sweep-lr --state failed --vc research -o name --all
[ "$(names)" = "sweep-01 sweep-07 " ] && pass "--state and --vc with --tag" || fail "--state/--vc: $(names)"
run job list --since soon
expect_rc 2 "a bad --since"
expect_err "is not a duration" "and says what a duration is"

# --- paging and order -------------------------------------------------------------------------
reset_requests "$LAB_URI"
run job list --tag sweep-lr --limit 5 -o name
[ "$(wc -l <"$OUT")" -eq 5 ] && pass "--limit 5: one page of five" || fail "--limit: $(wc -l <"$OUT") lines"
expect_err "lab: 5 of 12 jobs shown; --all lists every page" "says that pages were left"
reset_requests "$LAB_URI"
run job list --tag sweep-lr --limit 5 --all -o name
[ "$(names)" = "sweep-00 sweep-01 sweep-02 sweep-03 sweep-04 sweep-05 sweep-06 sweep-07 sweep-08 sweep-09 sweep-10 sweep-11 " ] &&
  pass "--all: every page" || fail "--all: $(names)"
check_requests "$LAB_URI" "[r['query'].get('offset', '0') for r in reqs if r['path'].endswith('/api/v2/jobs')] == ['0', '5', '10'] and all(r['query'].get('limit') == '5' for r in reqs if r['path'].endswith('/api/v2/jobs'))" \
  "--all asks pages at offsets 0, 5, 10 and stops at the total"
reset_requests "$LAB_URI"
run job list --tag sweep-lr --limit 5 --all --since 5h30m -o name
expect_rc 2 "(two units again)"
run job list --tag sweep-lr --limit 3 --all --since 330m -o name
[ "$(names)" = "sweep-00 sweep-01 sweep-02 sweep-03 sweep-04 " ] && pass "--all --since: the recent jobs of every page" || fail "--all --since: $(names)"
check_requests "$LAB_URI" "len([r for r in reqs if r['path'].endswith('/api/v2/jobs')]) == 2" \
  "newest first, paging stops at the first page older than --since"
run job list --tag sweep-lr --order name,asc --limit 3 -o name
[ "$(cat "$OUT" | tr '\n' ' ')" = "alice~sweep-00 alice~sweep-01 alice~sweep-02 " ] && pass "--order name,asc" || fail "--order name: $(cat "$OUT")"
check_requests "$LAB_URI" "any(r['query'].get('order') == 'name,ASC' for r in reqs)" "--order goes to the server as order=name,ASC"
run job list --tag sweep-lr --order submitted,asc --limit 2 --offset 1 -o name
[ "$(cat "$OUT" | tr '\n' ' ')" = "alice~sweep-10 alice~sweep-09 " ] && pass "--order submitted,asc with --offset" || fail "--offset: $(cat "$OUT")"
run job list --order size
expect_rc 2 "an unknown --order field"

# --- columns and formats ------------------------------------------------------------------------
run job list --tag best
expect_out "AGE" "the AGE column"
expect_out "TAGS" "the TAGS column"
"$PY" - "$OUT" <<'PY' && pass "AGE and TAGS of a job" || { fail "AGE/TAGS"; sed 's/^/  | /' "$OUT" >&2; }
import re, sys
lines = open(sys.argv[1]).read().splitlines()
head = re.split(r"\s{2,}", lines[0].strip())
row = dict(zip(head, re.split(r"\s{2,}", lines[1].strip())))
assert row["JOB"] == "alice~sweep-04" and re.fullmatch(r"4h 59m|5h( [0-9]m)?", row["AGE"]) and row["TAGS"] == "sweep-lr,best", row
PY
run job list --tag best -o wide
expect_out "SUBMITTED" "-o wide adds SUBMITTED"
run job list --tag best -o json
schema_check jobList "list --tag -o json"
json_check "d['items'][0]['tags'] == ['sweep-lr', 'best']" "-o json has the tags"
run job list --tag best -o yaml
expect_out "- sweep-lr" "-o yaml"

# --- tag list ------------------------------------------------------------------------------------
run job tag list sweep-04
expect_rc 0 "tag list"
[ "$(cat "$OUT" | tr '\n' ' ')" = "sweep-lr best " ] && pass "tag list: one tag a line" || fail "tag list: $(cat "$OUT")"
run job tag list sweep-04 -o json
schema_check jobTags "tag list -o json"
json_check "d['tags'] == ['sweep-lr', 'best'] and d['job'] == 'alice~sweep-04'" "tag list -o json"
run job tag list no-such
expect_rc 2 "tag list of an unknown job"

# --- star, unstar, --starred ----------------------------------------------------------------------
run job star sweep-07 bob~bobs-run
expect_rc 0 "star two jobs"
expect_out "alice~sweep-07: starred" "star says what it did"
grep -q "alice~sweep-07" "$REGISTRY" && pass "the star is in the registry" || fail "no star in the registry"
[ "$(stat -c %a "$REGISTRY")" = 600 ] && pass "the registry stays at mode 600" || fail "registry mode $(stat -c %a "$REGISTRY")"
run job star sweep-07
expect_out "was already starred" "starring twice"
[ "$(grep -c 'alice~sweep-07' "$REGISTRY")" -eq 1 ] && pass "a job is stored once" || fail "stored twice"
run job star no-such-job
expect_rc 2 "starring an unknown job"
run job list --starred -o name
[ "$(sort "$OUT" | tr '\n' ' ')" = "alice~sweep-07 bob~bobs-run " ] && pass "--starred lists the starred jobs (of any user)" || fail "--starred: $(cat "$OUT")"
run job list --starred --state RUNNING -o name
[ "$(cat "$OUT" | tr '\n' ' ')" = "bob~bobs-run " ] && pass "--starred with --state" || fail "--starred --state: $(cat "$OUT")"
run job unstar bob~bobs-run
expect_out "bob~bobs-run: unstarred" "unstar"
run job list --starred -o name
[ "$(cat "$OUT" | tr '\n' ' ')" = "alice~sweep-07 " ] && pass "unstarred jobs are gone from --starred" || fail "after unstar: $(cat "$OUT")"
# A starred job the server no longer has is said, not fatal.
"$PY" - "$REGISTRY" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read().replace("alice~sweep-07", "alice~deleted-job", 1)
open(p, "w").write(s)
PY
chmod 600 "$REGISTRY"
run job list --starred
expect_rc 0 "a starred job that is gone"
expect_err "starred job alice~deleted-job no longer exists" "is said on stderr"
finish
