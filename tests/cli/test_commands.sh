# The command table end to end: help, "did you mean", version, the exit-code
# rule, and the README's command table against the commands paictl has. POSIX sh.
set -eu
. "$PAI_SOURCE_DIR/tests/cli/lib.sh"
export PAICTL_LAYOUTS=$PAI_SOURCE_DIR/layouts
export PAICTL_CONFIG=$TMP/clusters.yaml

# --- did you mean: commands and subcommands ----------------------------------------------
run check confg
expect_rc 2 "check confg"
expect_err 'did you mean "paictl check config"?' "check confg: did you mean"
expect_err "Commands of paictl check: config, hosts, job, cluster" "check confg: the choices"
expect_err "Run 'paictl check --help'" "check confg: the right --help"
run job sumbit x.yaml
expect_rc 2 "job sumbit"
expect_err 'did you mean "paictl job submit"?' "job sumbit: did you mean"
run cluster lst
expect_err 'did you mean "paictl cluster list"?' "cluster lst: did you mean"
run plna
expect_rc 2 "plna"
expect_err 'did you mean "paictl plan"?' "plna: did you mean"
run job tag ad run-1 x
expect_err 'did you mean "paictl job tag add"?' "third level: job tag ad"
run simulate rn --config x
expect_err 'did you mean "paictl simulate run"?' "simulate rn"
run check
expect_rc 2 "a group alone"
expect_err '"paictl check" needs a command: config, hosts, job, cluster' "a group alone lists its commands"
if grep -q "subcommand is required" "$ERR"; then fail "CLI11's message leaked"; else pass "no 'A subcommand is required'"; fi

# --- did you mean: flags --------------------------------------------------------------------
run plan --vcc a=50%
expect_rc 2 "plan --vcc"
expect_err 'unknown flag "--vcc" for "paictl plan"; did you mean "--vc"?' "plan --vcc: did you mean"
expect_err "Run 'paictl plan --help'" "plan --vcc: the right --help"
run check config --fail-on-warning "$PAI_SOURCE_DIR/examples/clusters/quickstart"
expect_err 'did you mean "--fail-on-warn"?' "check config --fail-on-warning"
run cluster add lab --uri http://127.0.0.1:1 --password alice-pass-1
expect_rc 2 "an unknown --password"
expect_err 'unknown flag "--password"' "the unknown --password is named"
if grep -q "alice-pass-1" "$ERR" "$OUT"; then fail "the password was echoed"; else pass "the value of --password is not echoed"; fi
run cluster add lab --uri http://127.0.0.1:1 --token=s3cr3t-tok
if grep -q "s3cr3t-tok" "$ERR" "$OUT"; then fail "the token was echoed"; else pass "the value of --token= is not echoed"; fi
run plan -o jsn
expect_rc 2 "-o jsn"
expect_err 'did you mean "json"?' "-o jsn: did you mean"

# --- help -----------------------------------------------------------------------------------
run --help
expect_rc 0 "--help"
expect_out "Plan and check a cluster:" "the top-level help has groups"
expect_out "check config" "the top-level help lists subcommands"
# The tagline names install, HiveD and the OpenPAI services (paictl installs them).
if head -1 "$OUT" | grep -q "install" && head -1 "$OUT" | grep -q "HiveD" && head -1 "$OUT" | grep -q "OpenPAI services"; then
  pass "the tagline names install, HiveD and the OpenPAI services"
else
  fail "the tagline leaves out install, HiveD or the OpenPAI services: $(head -1 "$OUT")"
fi
run install --help
expect_rc 0 "install --help"
expect_out "HiveD scheduler and the OpenPAI services" "install --help names HiveD and the OpenPAI services"
expect_out "--register" "install --help lists --register"
expect_no_out "--hosts-file" "install --help does not list --hosts-file (refused)"
expect_no_out "  --hosts " "install --help does not list --hosts (refused)"
# --hosts takes one value: the cluster directory after it stays the cluster directory.
run install --hosts 10.0.0.9 "$PAI_SOURCE_DIR/examples/clusters/quickstart"
expect_rc 2 "install --hosts X DIR"
expect_err "--hosts and --hosts-file are for check hosts and facts collect" "install --hosts X DIR: --hosts is refused"
if grep -q "needs the cluster directory" "$ERR"; then fail "--hosts swallowed the cluster directory"; else pass "--hosts does not swallow the cluster directory"; fi
# --print-script prints the pre-install checks' script and reaches no host (the
# quickstart's hosts do not exist: contacting them would fail or hang).
QS="$TMP/qs"
cp -r "$PAI_SOURCE_DIR/examples/clusters/quickstart" "$QS"
run install "$QS" --print-script --ssh-config none --connect-timeout 0.1
expect_rc 0 "install --print-script"
expect_out "# paictl fact script" "install --print-script prints the script"
[ ! -e "$QS/.paictl" ] && pass "install --print-script starts no run" || fail "install --print-script made $QS/.paictl"
run reset "$QS" --print-script
expect_rc 2 "reset --print-script is refused"
run install "$QS" --dry-run --register lab
expect_rc 2 "install --dry-run --register"
expect_err "--register registers an installed cluster, not a dry run" "install --dry-run --register: why"
expect_no_out "__complete" "hidden commands are not listed"
run help check config
expect_rc 0 "help check config"
expect_out "paictl check config" "help check config: usage line"
expect_out "--fail-on-warn" "help check config: its flags"
expect_out "EXAMPLES:" "help check config: examples"
"$PAICTL" check config --help >"$TMP/h1"
if cmp -s "$TMP/h1" "$OUT"; then pass "help COMMAND is COMMAND --help"; else fail "help COMMAND differs from COMMAND --help"; fi
run help chek
expect_rc 2 "help chek"
expect_err 'did you mean "paictl check"?' "help chek: did you mean"
run help
expect_rc 0 "help alone"
expect_out "Use clusters and jobs:" "help alone is the top-level help"
run simulate run --help
expect_out "--trace" "simulate run --help lists the simulate flags"
run facts collect --help
expect_out "Gather hardware and software facts" "facts collect --help says what it does"
expect_no_out "Check every host" "facts collect --help is not check hosts'"

# --- version --------------------------------------------------------------------------------
run version
expect_rc 0 "version"
expect_out "paictl " "version: name"
expect_out "libcurl:" "version: library versions"
run version --help
expect_rc 0 "version --help"
run version -o json
expect_rc 0 "version -o json"
python3 - "$OUT" <<'PY' && pass "version -o json: apiVersion, version, commit, libraries" || fail "version -o json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["apiVersion"] == "paictl.version/v1", d
assert d["version"] and d["gitCommit"] and d["buildType"], d
for lib in ("libcurl", "libssh", "nlohmann_json", "CLI11"):
    assert d["libraries"][lib], lib
PY
cp "$OUT" "$TMP/version.json"
run version -o yaml
expect_rc 0 "version -o yaml"
python3 - "$OUT" "$TMP/version.json" <<'PY' && pass "version -o yaml: the same document as -o json" || fail "version -o yaml"
import json, sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
assert d["apiVersion"] == "paictl.version/v1", d
assert d == json.load(open(sys.argv[2])), d
PY
run -o json version
expect_out '"apiVersion": "paictl.version/v1"' "the global -o before the command"

# --- exit codes under --detailed-exitcode ------------------------------------------------------
run plan --bogus --detailed-exitcode
expect_rc 1 "detailed-exitcode: an unknown flag is an error (1), not changes"
run plan -o jsn --detailed-exitcode
expect_rc 1 "detailed-exitcode: a bad -o is 1"
run plan --profile dgx-a100 --count 2 --odd-hosts foo --detailed-exitcode
expect_rc 1 "detailed-exitcode: a bad --odd-hosts is 1"
run plan --detailed-exitcode --profile no-such-profile --count 2
expect_rc 1 "detailed-exitcode: a plan error is 1"
run plan --bogus
expect_rc 2 "without it: bad usage is 2"

# --- smaller defects -----------------------------------------------------------------------
run plan --profile dgx-a100 --count 2 --out "$TMP/c/"
expect_rc 0 "plan --out DIR/"
expect_err "wrote $TMP/c/layout.yaml" "one slash in the message"
if grep -q "$TMP/c//" "$ERR"; then fail "a double slash"; else pass "no double slash"; fi
run facts collect --help
expect_no_out "Hosts to check" "facts collect --help does not speak of checking hosts"

# --- the README's command table lists exactly paictl's commands ----------------------------------
"$PAICTL" __commands >"$TMP/commands"
python3 - "$PAI_SOURCE_DIR/README.md" "$TMP/commands" <<'PY' && pass "README command table = the command table" || fail "README command table"
import re, sys
# Every command that runs (a group that runs by itself, like simulate, too).
table = set(l.strip() for l in open(sys.argv[2]) if l.strip())
readme, inside = set(), False
for line in open(sys.argv[1]):
    if line.startswith("## "):
        inside = line.strip() == "## Commands"
        continue
    if not inside or not line.startswith("| `paictl"):
        continue
    cell = line.split(" | ")[0]
    for code in re.findall(r"`(paictl[^`]*)`", cell):
        code = code.replace("\\|", "|")
        words = [w for w in code.split() if re.match(r"^[a-z_|-]+$", w)]
        # paictl job submit|list: alternatives of the last word
        stem, last = words[:-1], words[-1]
        for alt in last.split("|"):
            readme.add(" ".join(stem + [alt]))
missing, extra = table - readme, readme - table
if missing or extra:
    print("missing from README:", sorted(missing), "not commands:", sorted(extra))
    sys.exit(1)
PY
finish
