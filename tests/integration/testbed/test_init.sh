#!/bin/sh
# The journey from bare hosts to an install plan with no file written by hand:
# facts collect --hosts-file names the facts by hostname, init writes the cluster
# directory with its SSH settings, check config accepts it, and install --dry-run
# reaches every host with no SSH flag (ssh_config and ignore_check_errors come
# from config.yaml). Nothing on the hosts changes.
. "$(dirname "$0")/lib.sh"
MASTER_IP=$(awk '$1 == "tb-master" {print $2}' "$RUN/hosts.txt")
[ -n "$MASTER_IP" ] || fail "no tb-master in $RUN/hosts.txt"

# Facts by address, named by the hosts' own names; the master marked by its address.
"$PAICTL" facts collect --hosts-file "$RUN/hosts.list" --ssh-config "$RUN/ssh_config" \
  --master "$MASTER_IP" --out "$TMP/facts" --command-timeout 30 >"$TMP/fc.out" 2>&1 ||
  { cat "$TMP/fc.out"; fail "facts collect"; }
for h in tb-master tb-worker1 tb-worker2; do
  [ -f "$TMP/facts/$h.json" ] || { ls "$TMP/facts"; fail "no facts file $h.json"; }
done
"$PYTHON3" - "$TMP/facts" "$MASTER_IP" <<'PY' || fail "the facts' names and roles"
import json, sys
d, ip = sys.argv[1], sys.argv[2]
m = json.load(open(d + "/tb-master.json"))
assert m["name"] == "tb-master" and m["address"] == ip and m["roles"] == ["master"], m["roles"]
w = json.load(open(d + "/tb-worker1.json"))
assert w["name"] == "tb-worker1" and w["roles"] == ["worker"], (w["name"], w["roles"])
PY

# init from those facts, with a role file naming the master instead of --master.
rm "$TMP/facts/tb-master.json"
"$PAICTL" facts collect --hosts "$MASTER_IP" --ssh-config "$RUN/ssh_config" --out "$TMP/facts" \
  --command-timeout 30 >/dev/null 2>&1 || fail "facts collect of the master"
mkdir -p "$TMP/facts/tb-master"
printf 'roles: [master]\n' >"$TMP/facts/tb-master/host.yaml"
C="$TMP/cluster"
# (The testbed's hosts report this machine's few CPUs: nothing would be left after the
# default reserve.)
"$PAICTL" init "$C" --facts "$TMP/facts" --ssh-config "$RUN/ssh_config" --reserve-cpu 0 \
  --reserve-memory 1Gi --ignore-check-errors CPU,DNS,DiskFree >"$TMP/init.out" 2>&1 || { cat "$TMP/init.out"; fail "init"; }
for f in layout.yaml config.yaml services-configuration.yaml; do [ -s "$C/$f" ] || fail "init wrote no $f"; done
[ "$(stat -c %a "$C/services-configuration.yaml")" = 600 ] || fail "services-configuration.yaml is not 0600"
grep -q "ssh_config: $RUN/ssh_config" "$C/config.yaml" || fail "config.yaml lacks ssh_config: $(cat "$C/config.yaml")"
grep -q "hostip: \"$MASTER_IP\"" "$C/layout.yaml" || fail "layout.yaml lacks the master's address"
# A second init into it is refused (exit 2) with a hint.
set +e
"$PAICTL" init "$C" --facts "$TMP/facts" >"$TMP/again.out" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] || fail "init into a non-empty directory exited $rc"
grep -q -- "--force" "$TMP/again.out" || fail "no hint of --force: $(cat "$TMP/again.out")"

"$PAICTL" check config "$C" >"$TMP/cc.txt" 2>&1 || { cat "$TMP/cc.txt"; fail "check config"; }
grep -q '^0 errors' "$TMP/cc.txt" || fail "check config: $(cat "$TMP/cc.txt")"

# install --dry-run with no SSH flag and no --ignore-check-errors: config.yaml's.
set +e
"$PAICTL" install "$C" --dry-run >"$TMP/plan.out" 2>"$TMP/plan.err"
rc=$?
set -e
[ $rc -eq 0 ] || { cat "$TMP/plan.out" "$TMP/plan.err"; fail "install --dry-run exited $rc"; }
for h in tb-master tb-worker1 tb-worker2; do
  grep -q "$h" "$TMP/plan.out" || fail "the plan does not name $h"
done

# init collecting the facts itself, --dry-run: the files on stdout, the password masked.
"$PAICTL" init "$TMP/other" --hosts-file "$RUN/hosts.list" --master "$MASTER_IP" \
  --ssh-config "$RUN/ssh_config" --command-timeout 30 --reserve-cpu 0 --reserve-memory 1Gi --dry-run >"$TMP/dry.out" 2>"$TMP/dry.err" ||
  { cat "$TMP/dry.err"; fail "init --hosts-file --dry-run"; }
[ ! -e "$TMP/other" ] || fail "a dry run wrote $TMP/other"
grep -q "hostname: tb-worker2" "$TMP/dry.out" || fail "the dry run's layout lacks tb-worker2"
grep -q "default-pai-admin-password: (generated" "$TMP/dry.out" || fail "the dry run shows no masked password"
echo "ok: init"
