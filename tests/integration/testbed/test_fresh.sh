#!/bin/sh
# A fresh testbed: every host's state is what docs/testbed.md promises, the same
# for another fresh testbed of the same size, and paictl accepts its cluster
# files and reaches its hosts.
. "$(dirname "$0")/lib.sh"
state
cp "$TMP/state.json" "$TMP/fresh.json"
expect 'sorted(s["hosts"])' '["tb-master", "tb-worker1", "tb-worker2"]'
expect '[s["hosts"][h]["role"] for h in sorted(s["hosts"])]' '["master", "worker", "worker"]'
expect '[s["hosts"][h]["gpus"] for h in sorted(s["hosts"])]' '[0, 4, 4]'
expect 's["cluster"]' 'null'
expect '{h: v["kubeadm"] for h, v in s["hosts"].items()}' \
  '{"tb-master": {"init": 0, "join": 0}, "tb-worker1": {"init": 0, "join": 0}, "tb-worker2": {"init": 0, "join": 0}}'
expect 's["hosts"]["tb-worker1"]["swap"]' '{"active": ["/swapfile"], "fstab": ["/swapfile"]}'
expect '"kubeadm" in s["hosts"]["tb-worker1"]["packages"] or "containerd" in s["hosts"]["tb-worker1"]["packages"]' 'false'
expect '"nvidia-driver-535" in s["hosts"]["tb-worker1"]["packages"]' 'true'
expect 'sorted(s["hosts"]["tb-worker1"]["services"])' '["cron", "ssh", "systemd-journald", "systemd-timesyncd"]'
expect 's["hosts"]["tb-worker1"]["files"]' '{}'
expect '"br_netfilter" in s["hosts"]["tb-master"]["modules"]' 'false'
expect 's["hosts"]["tb-master"]["sysctl"]["net.ipv4.ip_forward"]' '"0"'

# Each host has its own identity and OS files, over real SSH.
ids=$(for h in tb-master tb-worker1 tb-worker2; do on $h 'cat /etc/machine-id'; done | sort -u | wc -l)
[ "$ids" -eq 3 ] || fail "the hosts share a machine-id"
[ "$(on tb-worker2 hostname)" = tb-worker2 ] || fail "hostname"
on tb-master '. /etc/os-release; [ "$ID-$VERSION_ID" = ubuntu-22.04 ]' || fail "os-release"
# Before any package, kubeadm and kubectl are not there.
on tb-worker1 'command -v kubeadm' && fail "kubeadm is on a fresh host"
on tb-worker1 'kubectl version --client' 2>/dev/null && fail "kubectl runs on a fresh host"

# The cluster files are valid and name the hosts; check hosts reaches them all.
"$PAICTL" check config "$RUN/cluster" > "$TMP/cc.txt" 2>&1 || { cat "$TMP/cc.txt"; fail "check config"; }
grep -q '^0 errors' "$TMP/cc.txt" || fail "check config: $(cat "$TMP/cc.txt")"
set +e
"$PAICTL" check hosts "$RUN/cluster" --ssh-config "$RUN/ssh_config" --connect-timeout 5 --command-timeout 20 -o json > "$TMP/ch.json" 2>"$TMP/ch.err"
rc=$?
set -e
[ $rc -le 1 ] || { cat "$TMP/ch.err"; fail "check hosts exited $rc"; }
"$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); r=[h["name"] for h in d["hosts"] if h["reached"]]; sys.exit(0 if sorted(r)==["tb-master","tb-worker1","tb-worker2"] else "reached: %s" % r)' "$TMP/ch.json"

# Reproducible: another fresh testbed of 3 hosts has the same state (its own addresses aside).
"$TESTBED" up 3 "$TMP/other" --base 127.0.32 --rollout-delay 0.3 >/dev/null
"$TESTBED" state "$TMP/other" | sed 's/127\.0\.32\./127.0.31./g' > "$TMP/other.json"
"$TESTBED" down "$TMP/other" >/dev/null
cmp -s "$TMP/fresh.json" "$TMP/other.json" || { diff "$TMP/fresh.json" "$TMP/other.json" | head -20; fail "two fresh testbeds differ"; }
echo "ok: fresh testbed"
