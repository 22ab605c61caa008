#!/bin/sh
# End to end: `paictl check hosts` and `paictl facts collect` without SSH servers:
# usage, input validation, dry run, the script, and unreachable hosts. The runs
# against real sshd test hosts are in tests/integration/hosts.
set -eu
. "$(dirname "$0")/lib.sh"
EX="$PAI_SOURCE_DIR/examples/clusters"
cd "$PAI_SOURCE_DIR"

run check hosts --help
expect_rc 0 "check hosts --help"
expect_out "--host-key-policy" "help lists --host-key-policy"
expect_out "--ignore-check-errors" "help lists --ignore-check-errors"
expect_out "EXAMPLES:" "help has examples"
run facts collect --help
expect_rc 0 "facts collect --help"
expect_out "EXAMPLES:" "facts collect help has examples"

run check hosts
expect_rc 2 "no hosts"
expect_err "no hosts to check" "says there is nothing to check"
run check hosts "$EX/quickstart" --hosts 10.0.0.9
expect_rc 2 "cluster and --hosts together"
run check hosts "$EX/broken"
expect_rc 2 "invalid cluster files stop before any connection"
expect_err "must be valid before hosts are checked" "says why"
expect_err "error[L005]" "prints the config errors"
run check hosts --hosts "a b"
expect_rc 2 "bad --hosts entry"
expect_err "bad host \"a b\"" "names the bad entry"
printf '# from stdin\nroot@10.0.0.7:2222 10.0.0.8\n' | "$PAICTL" check hosts --hosts-file - --dry-run --ssh-config none >"$TMP/out" 2>&1 \
  && grep -q "root@10.0.0.7:2222" "$TMP/out" && grep -q "10.0.0.8" "$TMP/out" \
  && pass "--hosts-file - reads stdin" || fail "--hosts-file -"
run check hosts --hosts-file "$TMP/missing.txt"
expect_rc 2 "missing hosts file"
run check hosts --hosts h --host-key-policy yes
expect_rc 2 "bad host-key policy"
run check hosts --hosts h --ignore-check-errors Swop
expect_rc 2 "unknown check name"
expect_err "did you mean \"Swap\"?" "suggests the check"
run check hosts --hosts h --min-disk-free lots
expect_rc 2 "bad size"
run check hosts --hosts h --registry 'bad;name' --dry-run
expect_rc 2 "unsafe registry name"
run check hosts --hosts-file - --password-stdin --hosts h
expect_rc 2 "stdin asked for twice"
printf 'Host *\n  User "unterminated\n' > "$TMP/bad_ssh_config"
run check hosts --hosts h --ssh-config "$TMP/bad_ssh_config"
expect_rc 2 "bad ssh config"
expect_err "bad_ssh_config:2" "the ssh config error has its line"

# Dry run: every host, how it would be reached, no secret.
run check hosts "$EX/quickstart" --dry-run --ssh-config none
expect_rc 0 "dry run"
expect_out "pai-worker2" "lists the hosts"
expect_out "connect   openpai@10.0.0.3:22 (k80-machine, worker)" "user from config.yaml, address from hostip"
expect_out "password (config.yaml)" "says where the password comes from"
expect_no_out "change-me" "never shows the password"
run check hosts "$EX/quickstart" --dry-run --ssh-config none -o json
expect_rc 0 "dry run as JSON"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["dry_run"] and len(d["hosts"]) == 3, d' "$OUT" \
  && pass "dry-run JSON lists 3 hosts" || fail "dry-run JSON"
expect_no_out "change-me" "JSON dry run never shows the password"
export PAICTL_SSH_PASSWORD=from-the-env-42
run check hosts --hosts root@10.0.0.9 --dry-run --ssh-config none
expect_rc 0 "dry run with a password in the environment"
expect_out "password (PAICTL_SSH_PASSWORD)" "names the variable"
expect_no_out "from-the-env-42" "not its value"
unset PAICTL_SSH_PASSWORD

# The catalogue, and its documentation: every check has its line in docs/check-hosts.md.
run check hosts --list-checks -o json
expect_rc 0 "--list-checks"
python3 - "$OUT" "$PAI_SOURCE_DIR/docs/check-hosts.md" <<'PY' && pass "every check is documented" || fail "undocumented checks"
import json, sys
checks = [c["name"] for c in json.load(open(sys.argv[1]))["items"]]
doc = open(sys.argv[2]).read()
missing = [c for c in checks if "| `%s` |" % c not in doc]
assert len(checks) > 40 and not missing, missing
PY

# The script run on every host: POSIX sh, printed for review.
run check hosts --print-script
expect_rc 0 "--print-script"
expect_out "@@paictl-facts 1" "prints the fact script"
if sh -n "$OUT"; then pass "the script parses with sh -n"; else fail "the script does not parse"; fi

# A host where nothing listens: Reachable fails, exit 3, the others would go on.
run check hosts --hosts 127.0.0.1:1,127.0.0.1:2 --ssh-config none --connect-timeout 2 -o json
expect_rc 3 "unreachable hosts exit 3"
python3 - "$OUT" <<'PY' && pass "both hosts reported as unreachable" || fail "unreachable report"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["summary"]["hosts"] == 2 and d["summary"]["unreachable"] == 2, d["summary"]
r = [x for x in d["results"] if x["check"] == "Reachable"]
assert all(x["status"] == "fail" and "refused" in x["message"] for x in r), r
PY
run check hosts --hosts 127.0.0.1:1 --ssh-config none --connect-timeout 2 --ignore-check-errors Reachable
expect_rc 0 "an ignored Reachable error is a warning"
printf 'Host *\n  ProxyCommand nc %%h %%p\n' > "$TMP/proxycommand"
run check hosts --hosts 127.0.0.1:1 --ssh-config "$TMP/proxycommand" -o json
expect_rc 3 "ProxyCommand is refused"
expect_out "ProxyCommand" "and says so"

# facts collect
run facts collect --hosts 127.0.0.1:1 --ssh-config none --connect-timeout 2 --out "$TMP/facts"
expect_rc 3 "facts collect: unreachable host"
expect_err "refused" "facts collect says why"
touch "$TMP/not-a-dir"
run facts collect --hosts 127.0.0.1:1 --ssh-config none --out "$TMP/not-a-dir"
expect_rc 2 "facts collect: --out is a file"
run facts collect --print-script
expect_rc 0 "facts collect --print-script"
finish
