#!/bin/sh
# Fresh hosts as scripts/testbed.sh up gives a new operator (swap on, no
# container runtime, no NVIDIA container runtime, no modules, no sysctls): by
# default check hosts holds nothing against them that install sets up itself,
# shows it as "install", and --for install (install's own checks) agrees; the
# strict view (--for running) finds the same things as errors.
. "$(dirname "$0")/lib.sh"
TESTBED=${TESTBED:-$HOSTS_DIR/../../../scripts/testbed.sh}
set +e
reason=$("$TESTBED" can-run)
rc=$?
set -e
if [ $rc -ne 0 ]; then echo "$reason"; exit 77; fi
BED=$TMP/bed
trap '"$TESTBED" down "$BED" >/dev/null 2>&1 || true; rm -rf "$TMP"' EXIT INT TERM
"$TESTBED" up 3 "$BED" --base 127.0.33 --rollout-delay 0.3 > "$TMP/up.log" 2>&1 || { cat "$TMP/up.log"; fail "testbed up"; }
"$PAICTL" check hosts --list-checks -o json > "$TMP/checks.json"
flags="--ssh-config $BED/ssh_config --connect-timeout 5 --command-timeout 20"

# verdict PURPOSE OUT: check hosts --for PURPOSE, JSON to OUT; exit 0 or 1 only.
verdict() {
  set +e
  # shellcheck disable=SC2086
  "$PAICTL" check hosts "$BED/cluster" $flags --for "$1" -o json > "$2" 2> "$TMP/err"
  rc=$?
  set -e
  [ $rc -le 1 ] || { cat "$TMP/err"; fail "check hosts --for $1 exited $rc"; }
  echo $rc > "$2.rc"
}
verdict auto "$TMP/auto.json"
verdict install "$TMP/install.json"
verdict running "$TMP/running.json"

python3 - "$TMP/checks.json" "$TMP/auto.json" "$TMP/install.json" "$TMP/running.json" <<'PY'
import json, sys
cat = {c["name"]: c["install"] for c in json.load(open(sys.argv[1]))["items"]}
def kind(check):
    return cat["Port-<N>"] if check.startswith("Port-") else cat[check]
auto, inst, running = (json.load(open(p)) for p in sys.argv[2:5])
def errors(doc):
    return sorted((r["host"], r["check"]) for r in doc["results"] if r["status"] == "fail")
# Nothing install sets up itself is an error on fresh hosts.
bad = [(h, c) for h, c in errors(auto) if kind(c) == "sets-up"]
assert not bad, bad
# It is shown as left to install: swap on the workers, the runtimes.
left = {(r["host"], r["check"]) for r in auto["results"] if r["status"] == "install"}
assert ("tb-worker1", "Swap") in left, sorted(left)
assert ("tb-worker1", "NvidiaRuntime") in left, sorted(left)
assert all(kind(c) in ("sets-up", "keeps") for _, c in left), sorted(left)
assert auto["summary"]["install"] == len(left) and auto["summary"]["fail"] == len(errors(auto))
# Fresh hosts: the default is install's own view.
assert errors(auto) == errors(inst), (errors(auto), errors(inst))
# What is an error stays one whatever the purpose; the strict view adds what install sets up.
strict = set(errors(running))
assert set(errors(auto)) <= strict, (errors(auto), sorted(strict))
assert ("tb-worker1", "Swap") in strict, sorted(strict)
assert left <= strict | {(r["host"], r["check"]) for r in running["results"] if r["status"] == "warn"}
assert running["summary"]["install"] == 0
print("errors before install:", errors(auto) or "none", "; left to install:", len(left))
PY
# Exit 0 when nothing but what install sets up is wrong.
if [ "$(cat "$TMP/auto.json.rc")" -eq 1 ]; then
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["summary"]["fail"] > 0 else "exit 1 without an error")' "$TMP/auto.json"
fi
[ "$(cat "$TMP/running.json.rc")" -eq 1 ] || fail "the strict view of fresh hosts passed"
echo "ok: fresh hosts"
