#!/bin/sh
# paictl backup and restore on a testbed with a real etcd (its own testbed on
# 127.0.55.x): kubeadm init, ConfigMaps made with kubectl and HiveD's
# StatefulSet (the testbed serves its inspect API on the master), `paictl
# backup` (the archive at mode 0600, its record line), the ConfigMaps deleted,
# `restore --dry-run` (the testbed's state unchanged, HiveD's check announced),
# refused archives (truncated, a tampered member, another cluster: exit 2, the
# state unchanged), `restore --yes` (kubectl sees the ConfigMaps again, HiveD
# answers with the restored config), then kill -9 of restore at
# BACKUP_KILL_POINTS seeded points (default 20), each followed by a re-run: the
# same end state as the uninterrupted restore.
set -eu
: "${RUN:?}" "${TESTBED:?}" "${PYTHON3:?}" "${TB_DIR:?}" "${PAICTL:?}"
# shellcheck disable=SC2034 # read by lib.sh: this test starts its own testbed
TB_OWN=1
. "$(dirname "$0")/lib.sh"
need_etcd
need_kubectl
POINTS=${BACKUP_KILL_POINTS:-20}
SEED=${BACKUP_KILL_SEED:-6}
K="kubectl --kubeconfig /etc/kubernetes/admin.conf --request-timeout 10s"
C="$RUN/cluster"
SSH="--ssh-config $RUN/ssh_config"
# The testbed's state without what moves by itself (times, pids, logs).
fingerprint() {
  "$TESTBED" state "$RUN" | "$PYTHON3" -c '
import json, sys
s = json.load(sys.stdin)
m = s["hosts"]["tb-master"]
keep = {k: m.get(k) for k in ("etcd", "apiserver", "etcd_keys", "files", "kubeadm")}
objs = sorted(o for o in ((s.get("cluster") or {}).get("objects") or {}) if not o.startswith(("Event/", "Lease/")))
print(json.dumps({"master": keep, "objects": objs}, sort_keys=True, default=str))'
}
# What a restore leaves on the master, stamps made alike.
end_state() {
  on tb-master "ls /var/lib | grep etcd; ls /etc/kubernetes | grep -c before-restore; ls /etc/kubernetes/manifests; \
      ls /var/lib/etcd; $K get configmaps -A -o name | sort; $K get namespaces -o name | sort" 2>&1 |
    sed 's/[0-9]\{8\}T[0-9]\{6\}Z/TS/g'
}
until_ok() {
  n=0
  while ! eval "$1" >/dev/null 2>&1; do
    n=$((n + 1))
    [ $n -lt "${3:-100}" ] || fail "$2"
    sleep 0.1
  done
}

T0=$(date +%s)
"$TESTBED" up 2 "$RUN" --base 127.0.55 --rollout-delay 0.2 > "$TMP/up.log" 2>&1 || { cat "$TMP/up.log"; fail "testbed up"; }
on tb-master 'sh -s' < "$TB_DIR/prepare_host.sh" > "$TMP/prep" 2>&1 || { cat "$TMP/prep"; fail "prepare the master"; }
on tb-master 'kubeadm init --skip-token-print' > "$TMP/init" 2>&1 || { cat "$TMP/init"; fail "kubeadm init"; }
on tb-master "$K apply -f -" > "$TMP/apply" 2>&1 <<'EOF' || { cat "$TMP/apply"; fail "kubectl apply"; }
apiVersion: v1
kind: Namespace
metadata: {name: keep}
---
apiVersion: v1
kind: Namespace
metadata: {name: openpai}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: keep}
data: {mode: fast}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: more, namespace: keep}
data: {n: "2"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: hivedscheduler-config, namespace: openpai}
data:
  hivedscheduler.yaml: |
    physicalCluster:
      cellTypes:
        TB-NODE: {childCellType: TB, childCellNumber: 2, isNodeLevel: true}
      physicalCells:
      - {cellType: TB-NODE, cellAddress: tb-worker1}
    virtualClusters:
      default:
        virtualCells:
        - {cellType: TB-NODE, cellNumber: 1}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: hivedscheduler-hs, namespace: openpai}
spec:
  serviceName: hivedscheduler-service
  replicas: 1
  selector: {matchLabels: {app: hivedscheduler-hs}}
  template:
    metadata: {labels: {app: hivedscheduler-hs}}
    spec:
      hostNetwork: true
      tolerations: [{key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}]
      containers:
      - name: hivedscheduler
        image: hivedscheduler:v1.8.0
        ports: [{containerPort: 30096}]
EOF
MASTER_IP=$(awk '/^Host tb-master /{print $3}' "$RUN/ssh_config")
until_ok 'curl -sf "http://$MASTER_IP:30096/v1/inspect/clusterstatus"' "HiveD's inspect API did not answer on $MASTER_IP:30096" 300
pass "kubeadm init, ConfigMaps and HiveD made with kubectl ($(($(date +%s) - T0)) s)"

# The backup.
"$PAICTL" backup "$C" $SSH > "$TMP/backup.out" 2> "$TMP/backup.err" || { cat "$TMP/backup.out" "$TMP/backup.err"; fail "paictl backup"; }
A=$(ls "$C"/backups/testbed-*.tar.gz)
[ "$(stat -c %a "$A")" = 600 ] || fail "the archive's mode is $(stat -c %a "$A")"
"$PYTHON3" - "$C/.paictl/backups.jsonl" "$A" <<'EOF' || fail "the record line: $(cat "$C/.paictl/backups.jsonl")"
import hashlib, json, os, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
r = json.loads(lines[0])
a = sys.argv[2]
assert sorted(r) == ["bytes", "cluster", "path", "sha256", "time"], r
assert r["path"] == os.path.abspath(a) and r["cluster"] == "testbed", r
assert r["bytes"] == os.path.getsize(a), r
assert r["sha256"] == hashlib.sha256(open(a, "rb").read()).hexdigest(), r
EOF
"$PYTHON3" - "$A" <<'EOF' || fail "the archive's members"
import json, sys, tarfile
t = tarfile.open(sys.argv[1], "r:gz")
names = t.getnames()
assert names[0] == "manifest.json", names
m = json.load(t.extractfile("manifest.json"))
assert m["cluster"] == "testbed" and m["database"] == "none found", m
assert m["etcd_version"].startswith("3.4"), m
assert "keep/settings" in m["objects"]["configmaps"], m["objects"]
for n in ("etcd/snapshot.db", "pki/ca.key", "pki/etcd/healthcheck-client.key", "cluster/layout.yaml",
          "hived/hivedscheduler-config.json"):
    assert n in names, (n, names)
assert sorted(names[1:]) == sorted(x["name"] for x in m["members"])
EOF
grep -q "wrote $A" "$TMP/backup.out" || fail "backup's output: $(cat "$TMP/backup.out")"
pass "backup: $(stat -c %s "$A") bytes at mode 0600, its record line, every member in the manifest"

# A deliberate loss.
on tb-master "$K delete namespace keep" > /dev/null || fail "kubectl delete"
on tb-master "$K get configmaps -A -o name" | grep -q settings && fail "the ConfigMap outlived its namespace"
"$TESTBED" snapshot "$RUN" lost
cp -a "$C/.paictl" "$TMP/paictl-state"
BEFORE=$(fingerprint)

# A dry run changes nothing.
"$PAICTL" restore "$C" --from "$A" --dry-run $SSH > "$TMP/dry.out" 2>&1 || { cat "$TMP/dry.out"; fail "restore --dry-run"; }
grep -q "dry run: nothing was changed" "$TMP/dry.out" || fail "dry run: $(cat "$TMP/dry.out")"
grep -q "/var/lib/etcd/member replaced by the snapshot" "$TMP/dry.out" || fail "dry run: $(cat "$TMP/dry.out")"
grep -q "HiveD: checked after the restore at http://$MASTER_IP:30096: /v1/inspect/clusterstatus must answer" "$TMP/dry.out" || fail "dry run: $(cat "$TMP/dry.out")"
[ "$(fingerprint)" = "$BEFORE" ] || fail "restore --dry-run changed the testbed"
[ -e "$C/.paictl/restore.json" ] && fail "restore --dry-run wrote a journal"
[ -z "${DOC_OUT:-}" ] || cp "$TMP/dry.out" "$DOC_OUT/restore-dry-run.txt"
pass "restore --dry-run says what it would replace and that it would check HiveD, and changes nothing"

# Refused archives: exit 2, the member or the cluster named, nothing changed.
head -c $(($(stat -c %s "$A") * 2 / 3)) "$A" > "$TMP/truncated.tar.gz"
"$PYTHON3" - "$A" "$TMP/tampered.tar.gz" "$TMP/other.tar.gz" <<'EOF'
import io, json, sys, tarfile
src = tarfile.open(sys.argv[1], "r:gz")
members = [(m, src.extractfile(m).read()) for m in src.getmembers()]
def write(path, change):
    with tarfile.open(path, "w:gz") as out:
        for m, data in members:
            data = change(m.name, data)
            info = tarfile.TarInfo(m.name)
            info.size, info.mode = len(data), 0o600
            out.addfile(info, io.BytesIO(data))
write(sys.argv[2], lambda n, d: d.replace(b"PRIVATE KEY", b"PRIVATE KEz", 1) if n == "pki/ca.key" else d)
def other(n, d):
    if n != "manifest.json": return d
    m = json.loads(d); m["cluster"] = "elsewhere"; return json.dumps(m).encode()
write(sys.argv[3], other)
EOF
for x in truncated:truncated tampered:"member pki/ca.key does not match its checksum" other:'of cluster "elsewhere"'; do
  f=${x%%:*}
  set +e
  "$PAICTL" restore "$C" --from "$TMP/$f.tar.gz" --yes $SSH > "$TMP/$f.out" 2>&1
  rc=$?
  set -e
  [ $rc -eq 2 ] || fail "restore of the $f archive exited $rc: $(cat "$TMP/$f.out")"
  grep -q "${x#*:}" "$TMP/$f.out" || fail "restore of the $f archive: $(cat "$TMP/$f.out")"
done
[ "$(fingerprint)" = "$BEFORE" ] || fail "a refused restore changed the testbed"
pass "truncated, tampered and other-cluster archives: exit 2, the member or cluster named, the testbed unchanged"

# The restore.
T1=$(date +%s)
"$PAICTL" restore "$C" --from "$A" --yes $SSH > "$TMP/restore.out" 2> "$TMP/restore.err" || { cat "$TMP/restore.out" "$TMP/restore.err"; fail "paictl restore"; }
FULL=$(($(date +%s) - T1))
grep -q "^restored: etcd from $A, verified (.*; HiveD answers at http://$MASTER_IP:30096 with the restored config)" "$TMP/restore.out" ||
  fail "restore: $(cat "$TMP/restore.out" "$TMP/restore.err")"
grep -q "^  hived  *http://$MASTER_IP:30096 answers with the restored config (1 top cell, nodes tb-worker1, VCs default)" "$TMP/restore.err" ||
  fail "restore's HiveD check: $(cat "$TMP/restore.err")"
on tb-master "$K get configmap settings -n keep -o jsonpath={.data.mode}" | grep -qx fast || fail "kubectl does not see the restored ConfigMap"
on tb-master "$K get configmap more -n keep -o name" | grep -qx configmap/more || fail "kubectl does not see the second ConfigMap"
WANT=$(end_state)
echo "$WANT" | grep -qx "etcd.before-restore-TS" || fail "the old data directory: $WANT"
[ -z "${DOC_OUT:-}" ] || cat "$TMP/restore.err" "$TMP/restore.out" > "$DOC_OUT/restore.txt"
pass "restore --yes in $FULL s: kubectl sees the ConfigMaps again, HiveD answers with the restored config; the old data kept"

# kill -9 at seeded points, each followed by a re-run.
i=0
while [ $i -lt "$POINTS" ]; do
  i=$((i + 1))
  "$TESTBED" restore "$RUN" lost > /dev/null
  # What the last point's restore made beside the snapshot's files.
  on tb-master 'rm -rf /var/lib/etcd.before-restore-* /var/lib/etcd-restore-* /etc/kubernetes/manifests.before-restore-*'
  rm -rf "$C/.paictl" && cp -a "$TMP/paictl-state" "$C/.paictl"
  until_ok 'on tb-master "$K get namespaces"' "the API server did not come back after testbed.sh restore"
  # A point inside the uninterrupted run's time, in tenths of a second, from the seed.
  d=$("$PYTHON3" -c "import random; r=random.Random($SEED*1000+$i); print('%.1f' % r.uniform(0, max(0.5, $FULL * 0.9)))")
  "$PAICTL" restore "$C" --from "$A" --yes $SSH > "$TMP/k$i.out" 2>&1 &
  pid=$!
  sleep "$d"
  kill -9 $pid 2>/dev/null || true
  wait $pid 2>/dev/null || true
  "$PAICTL" restore "$C" --from "$A" --yes $SSH > "$TMP/r$i.out" 2>&1 || { cat "$TMP/k$i.out" "$TMP/r$i.out"; fail "point $i (${d} s): the re-run failed"; }
  GOT=$(end_state)
  [ "$GOT" = "$WANT" ] || { printf 'want:\n%s\ngot:\n%s\n' "$WANT" "$GOT"; cat "$TMP/r$i.out"; fail "point $i (${d} s): another end state"; }
  echo "  point $i: killed at ${d} s, $(grep -o 'already done: .*)' "$TMP/r$i.out" || echo 'nothing done before')"
done
pass "kill -9 of restore at $POINTS seeded points (seed $SEED), each re-run: the uninterrupted restore's end state"
echo "ok: paictl backup and restore on the testbed ($(($(date +%s) - T0)) s)"
