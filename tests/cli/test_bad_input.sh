#!/bin/sh
# End to end: bad input never crashes, hangs or destroys anything, and gets the
# exit code its docs give.
set -eu
. "$(dirname "$0")/lib.sh"
cd "$PAI_SOURCE_DIR"
HET=examples/clusters/heterogeneous

# --- simulate: names that are not UTF-8 ---------------------------------------------
printf 'job_id,submit_time,duration,vc,members\na,0,1h,research,1x1\nb,60,1h,r\377\033[2Jx,1x1\n' >"$TMP/utf8.csv"
run simulate --config "$HET" --trace "$TMP/utf8.csv" -o json
expect_rc 0 "a VC name with invalid UTF-8 and -o json"
if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$OUT" 2>/dev/null; then
  pass "-o json is valid JSON"
else
  fail "-o json is not valid JSON"
fi
run simulate --config "$HET" --trace "$TMP/utf8.csv" --report "$TMP/utf8-report" -o yaml
expect_rc 0 "a VC name with invalid UTF-8 and --report"
for f in metrics.json jobs.csv report.html; do
  if [ -s "$TMP/utf8-report/$f" ]; then pass "report has $f"; else fail "report lacks $f"; fi
done
run simulate --config "$HET" --trace "$TMP/utf8.csv"
expect_rc 0 "the table with an escape sequence in a VC name"
if grep -q "$(printf '\033')" "$OUT"; then fail "an escape character reached the terminal"; else pass "no raw escape in the table"; fi

# --- simulate: a FIFO, a missing file --------------------------------------------------
mkfifo "$TMP/fifo"
cat examples/traces/sharing-anomaly.csv >"$TMP/fifo" &
writer=$!
run simulate --config "$HET" --trace "$TMP/fifo"
wait "$writer" || true
expect_rc 0 "a trace from a FIFO, format detected from what was read"
expect_out "(csv)" "FIFO trace detected as csv"

run simulate --config "$HET" --trace "$TMP/nope.csv"
expect_rc 2 "a missing trace file"
expect_err "No such file or directory" "the OS error is given"
if grep -q -- "--trace-format" "$ERR"; then fail "a missing file should not suggest --trace-format"; else pass "no --trace-format hint for a missing file"; fi

printf 'job_id,submit_time,duration,vc,members\na,0,1e300,research,1x1\n' >"$TMP/huge.csv"
run simulate --config "$HET" --trace "$TMP/huge.csv"
expect_rc 2 "a 1e300-second duration"
expect_err "huge.csv:2:5: duration \"1e300\" is more than ten years" "duration bound with position"

# --- simulate generate --out never replaces what is not a regular file -------------------
if mknod "$TMP/null" c 1 3 2>/dev/null; then
  run simulate generate --jobs 10 --out "$TMP/null"
  expect_rc 0 "generate into a character device"
  if [ -c "$TMP/null" ]; then pass "the device node is still a device"; else fail "the device node was replaced"; fi
else
  echo "skip: mknod needs root"
fi
mkfifo "$TMP/gen-fifo"
run simulate generate --jobs 10 --out "$TMP/gen-fifo"
expect_rc 2 "generate into a FIFO without a reader"
expect_err "FIFO with no reader" "FIFO without a reader is named"
if [ -p "$TMP/gen-fifo" ]; then pass "the FIFO is still a FIFO"; else fail "the FIFO was replaced"; fi
mkdir -p "$TMP/real"
: >"$TMP/real/t.json"
ln -s real/t.json "$TMP/link.json"
run simulate generate --jobs 10 --out "$TMP/link.json"
expect_rc 0 "generate through a symlink"
if [ -L "$TMP/link.json" ] && [ -s "$TMP/real/t.json" ]; then
  pass "the link stays and its target has the trace"
else
  fail "the symlink was replaced or its target not written"
fi
if [ "$(ls "$TMP/real" | wc -l)" -eq 1 ]; then pass "no temporary file left"; else fail "files left in $TMP/real"; fi

# --- check config: not a cluster file --------------------------------------------------
printf 'hello: world\n' >"$TMP/notes.yaml"
run check config "$TMP/notes.yaml"
expect_rc 2 "a file that is not a cluster file is bad input"
expect_out "error[F009]" "F009 names it"

# --- simulate: endless input is bounded, negative counts refused ------------------------
run simulate --config "$HET" --trace /dev/zero --trace-format csv
expect_rc 2 "--trace /dev/zero as csv ends (no line end in the first MiB)"
expect_err "longer than 1 MiB" "the endless line is named"
run simulate --config "$HET" --trace examples/traces/sharing-anomaly.csv --faults /dev/zero
expect_rc 2 "--faults /dev/zero ends"
expect_err "longer than 1 MiB" "the endless fault line is named"
for flag in --limit --backfill; do
  run simulate --config "$HET" --trace examples/traces/sharing-anomaly.csv $flag -1
  expect_rc 2 "$flag -1 is refused"
  expect_err "$flag must be 0" "$flag names its range"
done
printf 'job_id,submit_time,duration,vc,members\na,0,1h,research,1x1\nb,0,1h,research,1x1\na,60,1h,research,1x1\n' >"$TMP/dup.csv"
run simulate --config "$HET" --trace "$TMP/dup.csv"
expect_rc 2 "a job_id given twice"
expect_err 'dup.csv:4:1: job_id "a" is given twice (lines 2 and 4)' "both lines are named"
printf '[{"jobid": "j1", "vc": "v", "jobid": "j2", "submitted_time": "2017-10-03 06:47:47", "attempts": []}]' >"$TMP/dup.json"
run simulate --config "$HET" --trace "$TMP/dup.json" --trace-format philly
expect_rc 2 "a Philly job with a key given twice"
expect_err '"jobid" is given twice' "the repeated key is named"

# --- files that are no regular files: named, never "no file" or a hang -----------------
CL="$TMP/cluster"
cp -r examples/clusters/quickstart "$CL"
rm "$CL/services-configuration.yaml"
mkfifo "$CL/services-configuration.yaml"
run check config "$CL"
expect_rc 2 "check config: a FIFO services-configuration.yaml"
expect_out "FIFO" "the FIFO is named"
rm "$CL/services-configuration.yaml"
mkdir "$CL/services-configuration.yaml"
run check config "$CL"
expect_rc 2 "check config: a directory in place of services-configuration.yaml"
expect_out "is a directory" "the directory is named"
rmdir "$CL/services-configuration.yaml"
ln -s "$TMP/nowhere.yaml" "$CL/services-configuration.yaml"
run check config "$CL"
expect_rc 2 "check config: a dangling symbolic link services-configuration.yaml"
expect_out "broken symbolic link" "the broken link is named"
rm "$CL/services-configuration.yaml"
mv "$CL/layout.yaml" "$CL/layout.real"
ln -s "$CL/layout.loop" "$CL/layout.yaml"
ln -s "$CL/layout.yaml" "$CL/layout.loop"
run check config "$CL"
expect_rc 2 "check config: layout.yaml is a loop of links"
expect_out "loop of symbolic links" "the loop is named"
run hived diff examples/clusters/quickstart examples/clusters/quickstart --snapshot "$TMP"
expect_rc 2 "hived diff --snapshot DIR"
expect_err "is a directory" "the snapshot directory is named"

# Control characters from a file never reach the terminal raw.
printf 'user: root\nssh_key_file_path: /k\ndocker_image_tag: v1.8.0\n"\033]0;owned\007\033[2J": 1\n' >"$TMP/config.yaml"
run check config "$TMP/config.yaml"
if grep -q "$(printf '\033')" "$OUT" "$ERR"; then fail "an escape character from the file was printed raw"; else pass "escape characters are escaped"; fi
expect_out '\x1b]0;owned\x07' "the escaped key is shown"

# --- plan: only the master ---------------------------------------------------------------
mkdir -p "$TMP/facts"
cp -r examples/facts/pai-master "$TMP/facts/"
run plan --facts "$TMP/facts"
expect_rc 2 "plan with only the master host is bad input"
expect_err "hint:" "plan says what to do"

# --- check hosts --limit with an unknown host --------------------------------------------
run check hosts examples/clusters/quickstart --limit pai-worker9 --dry-run
expect_rc 2 "--limit names a host that is not in layout.yaml"
expect_err "error[I004]" "inventory findings have their own code"
expect_err "did you mean" "--limit did-you-mean"
if grep -q "must be valid" "$ERR"; then fail "the cluster files are valid; do not say otherwise"; else pass "no false claim about the cluster files"; fi

finish
