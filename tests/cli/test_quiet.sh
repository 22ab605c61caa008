# -q/--quiet leaves out what a script does not need, never an error: a command that
# fails under -q still says why. POSIX sh.
set -eu
. "$PAI_SOURCE_DIR/tests/cli/lib.sh"
cd "$PAI_SOURCE_DIR"

run -q job validate examples/jobs/broken.yaml
expect_rc 1 "-q job validate of a broken job"
if grep -q "error\[J" "$OUT" "$ERR"; then pass "-q job validate shows the errors"; else fail "-q job validate printed no error"; fi
if grep -q "warning\[" "$OUT" "$ERR"; then fail "-q job validate shows warnings"; else pass "-q job validate leaves out warnings"; fi
run job validate --quiet examples/jobs/broken.yaml
expect_rc 1 "job validate --quiet (after the command)"
if grep -q "error\[J" "$OUT" "$ERR"; then pass "--quiet after the command shows the errors"; else fail "--quiet after the command printed no error"; fi

run -q check config examples/clusters/broken
expect_rc 1 "-q check config of a broken cluster"
if grep -q "error\[L005\]" "$OUT" "$ERR"; then pass "-q check config shows the errors"; else fail "-q check config printed no error"; fi

run -q check job examples/jobs/broken.yaml
expect_rc 1 "-q check job"
if grep -q "error\[J" "$OUT" "$ERR"; then pass "-q check job shows the errors"; else fail "-q check job printed no error"; fi

run -q job validate "$TMP/missing.yaml"
expect_rc 2 "-q job validate of a missing file"
if [ -s "$OUT" ] || [ -s "$ERR" ]; then pass "-q: an unreadable file is reported"; else fail "-q: an unreadable file is silent"; fi

run -q plan --profile no-such-profile --count 2
expect_rc 2 "-q plan of an unknown profile"
if grep -q "P109" "$OUT" "$ERR"; then pass "-q plan shows its error"; else fail "-q plan printed no error"; fi
finish
