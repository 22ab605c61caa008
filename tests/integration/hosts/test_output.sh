#!/bin/sh
# The text report end to end: findings grouped by host, then the table of
# hosts x outcome; the progress line only when stderr is a terminal (never on
# stdout, never with -q); colour only on a terminal and never with NO_COLOR.
. "$(dirname "$0")/lib.sh"
# The strict view (--for running): swap-on's swap is a failure.
# shellcheck disable=SC2046
set -- check hosts "$RUN/cluster" $(host_flags) --for running --limit gpu-ok,swap-on,silent

# --- not a terminal: plain text, no progress, no colour
run_paictl 3 "$@"
grep -q '^swap-on (127.0.2.8)$' "$TMP/out" || fail "no block for swap-on"
grep -q '^silent (127.0.2.11)$' "$TMP/out" || fail "no block for silent"
grep -q '^  FAIL  Swap ' "$TMP/out" || fail "swap-on's finding is not under its host"
# The table: a header, one row per host in layout order, then the totals.
python3 - "$TMP/out" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
head = [i for i, l in enumerate(lines) if l.split() == ["HOST", "PASS", "WARN", "FAIL", "SKIP", "INST", "RESULT"]]
assert len(head) == 1, lines
rows = [l.split() for l in lines[head[0] + 1:head[0] + 4]]
assert [r[0] for r in rows] == ["gpu-ok", "swap-on", "silent"], rows
assert [r[6] for r in rows] == ["warnings", "errors", "unreachable"], rows
assert all(r[5] == "0" for r in rows), rows                                # INST: none when running
assert rows[1][3] == "1" and rows[2][3] == "1" and rows[0][3] == "0", rows  # FAIL column
assert int(rows[2][1]) == 0 and int(rows[2][4]) > 0, rows                  # unreachable: all skipped
assert re.match(r"3 hosts: 0 ok, 1 with warnings, 1 with errors, 1 unreachable \(", lines[-1]), lines[-1]
PY
if grep -q "hosts done" "$TMP/out" "$TMP/err"; then fail "progress printed without a terminal"; fi

# --- the default view of these fresh hosts: swap-on's swap is left to install.
# shellcheck disable=SC2046
run_paictl 3 check hosts "$RUN/cluster" $(host_flags) --limit gpu-ok,swap-on,silent
grep -q '^  INST  Swap ' "$TMP/out" || fail "swap-on's swap is not left to install"
grep -q 'install will do this: turns swap off' "$TMP/out" || fail "no word of what install does"
python3 - "$TMP/out" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
head = [i for i, l in enumerate(lines) if l.split()[:7] == ["HOST", "PASS", "WARN", "FAIL", "SKIP", "INST", "RESULT"]]
rows = {l.split()[0]: l.split() for l in lines[head[0] + 1:head[0] + 4]}
assert rows["swap-on"][3] == "0" and int(rows["swap-on"][5]) >= 1, rows
assert rows["swap-on"][6] in ("ok", "warnings"), rows
assert any(l.startswith("INST: ") and "paictl install sets right itself" in l for l in lines), lines
PY
if grep -q "$(printf '\033')" "$TMP/out" "$TMP/err"; then fail "colour without a terminal"; fi

# --- stderr on a terminal (script(1) gives the command a pty): a progress line there only.
# (Two hosts that answer: no wait for the silent one.)
# shellcheck disable=SC2046
set -- check hosts "$RUN/cluster" $(host_flags) --for running --limit gpu-ok,swap-on
if ! command -v script >/dev/null 2>&1; then
  skip_part "output: the terminal part: script(1) from bsdutils is not installed"
  exit 0
fi
# on_tty OUTFILE ARGS...: paictl ARGS with stdout to OUTFILE and stderr on a pty,
# whose text ends up in $TMP/tty.
on_tty() {
  out=$1; shift
  q=""
  for a in "$@"; do q="$q '$a'"; done
  set +e
  TERM=xterm SHELL=/bin/sh script -qec "'$PAICTL' $q > '$out'" /dev/null < /dev/null > "$TMP/tty" 2>&1
  set -e
}
on_tty "$TMP/out.tty" "$@"
grep -q "checking hosts: 2/2 hosts done" "$TMP/tty" || fail "no progress line on the terminal: $(cat "$TMP/tty")"
if grep -q "hosts done" "$TMP/out.tty"; then fail "progress went to stdout"; fi
# The line names the hosts still running: the silent one keeps it waiting.
# shellcheck disable=SC2046
on_tty "$TMP/out.tty" check hosts "$RUN/cluster" $(host_flags) --limit gpu-ok,silent
grep -q "checking hosts: 1/2 hosts, waiting for silent" "$TMP/tty" || fail "the progress line does not name the host it waits for: $(cat "$TMP/tty")"
grep -q "HOST " "$TMP/out.tty" || fail "the report is missing when stderr is a terminal"
on_tty "$TMP/out.tty" -q "$@"
if grep -q "hosts done" "$TMP/tty"; then fail "-q still shows progress"; fi

# --- stdout on a terminal: colour, unless NO_COLOR or --no-color
TERM=xterm SHELL=/bin/sh script -qec "'$PAICTL' $* 2>/dev/null" /dev/null < /dev/null > "$TMP/tty" 2>&1 || true
grep -q "$(printf '\033')\[" "$TMP/tty" || fail "no colour on a terminal"
NO_COLOR=1 TERM=xterm SHELL=/bin/sh script -qec "'$PAICTL' $* 2>/dev/null" /dev/null < /dev/null > "$TMP/tty" 2>&1 || true
grep -q "FAIL  Swap" "$TMP/tty" || fail "no report under NO_COLOR: $(head -c 500 "$TMP/tty")"
if grep -q "$(printf '\033')\[" "$TMP/tty"; then fail "colour despite NO_COLOR"; fi
TERM=xterm SHELL=/bin/sh script -qec "'$PAICTL' $* --no-color 2>/dev/null" /dev/null < /dev/null > "$TMP/tty" 2>&1 || true
if grep -q "$(printf '\033')\[" "$TMP/tty"; then fail "colour despite --no-color"; fi
echo "ok: output"
