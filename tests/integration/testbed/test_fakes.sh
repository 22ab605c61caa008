#!/bin/sh
# The fakes keep their state on the host, record every invocation, and fail or
# hang at a named step when told to; kubeadm counts completed runs only.
. "$(dirname "$0")/lib.sh"
P=$TB_DIR/prepare_host.sh
on tb-master 'sh -s' < "$P" > "$TMP/p0" 2>&1 &
a=$!
on tb-worker1 'GPU=1 sh -s' < "$P" > "$TMP/p1" 2>&1 &
b=$!
on tb-worker2 'GPU=1 sh -s' < "$P" > "$TMP/p2" 2>&1 &
c=$!
wait $a || { cat "$TMP/p0"; fail "prepare master"; }
wait $b || { cat "$TMP/p1"; fail "prepare worker1"; }
wait $c || { cat "$TMP/p2"; fail "prepare worker2"; }
state
expect 's["hosts"]["tb-worker1"]["held"]' '["kubeadm", "kubectl", "kubelet"]'
expect 's["hosts"]["tb-worker1"]["swap"]' '{"active": [], "fstab": []}'
expect '{k: s["hosts"]["tb-worker1"]["containerd"]["running"][k] for k in ("SystemdCgroup", "default_runtime", "cri")}' \
  '{"SystemdCgroup": true, "default_runtime": "nvidia", "cri": true}'
expect 's["hosts"]["tb-master"]["containerd"]["running"]["default_runtime"]' '"runc"'
expect 's["hosts"]["tb-worker1"]["services"]["kubelet"]' '{"enabled": true, "active": "activating"}'
expect 's["hosts"]["tb-worker1"]["sysctl"]["net.bridge.bridge-nf-call-iptables"]' '"1"'
expect 's["hosts"]["tb-worker1"]["modules_load_d"]' '{"k8s.conf": ["overlay", "br_netfilter"]}'

# Every invocation is recorded with its argv and exit code.
"$TESTBED" log "$RUN" tb-worker1 > "$TMP/log"
grep '"tool": "apt-get"' "$TMP/log" | grep '"install"' | grep '"kubeadm"' | grep -q '"rc": 0' || fail "apt-get install not recorded"
grep '"tool": "systemctl"' "$TMP/log" | grep -q '"restart", "containerd"' || fail "systemctl restart not recorded"

# Run by the fake server (docs/testbed.md): the recorded pid is the one the caller
# started, the working directory (inside the host's own /etc) and the exit code are the caller's.
on tb-worker1 'cd /etc/apt && { sysctl -p sources.list > /dev/null 2>&1 & echo "$!"; wait $!; echo "rc=$?"; }
cd / && { sysctl -p sources.list > /dev/null 2>&1; echo "rc=$?"; }' > "$TMP/probe"
[ -f "$RUN/lib/tbclient" ] || fail "up did not compile the fakes' client"
[ "$RUN/hosts/tb-worker1/bin/sysctl" -ef "$RUN/lib/tbclient" ] || fail "bin/sysctl is not a hard link to the fakes' client"
# The client finds its host by the path it was started by (PATH), by the host
# name (a bind mount over /usr/sbin/sysctl), or from TB_HOST; each call is
# recorded on its own host.
# (The machine's own sysctl, where it has one, is covered by the host's fake.)
on tb-worker2 'sysctl -n net.ipv4.ip_forward
for p in /usr/sbin/sysctl /sbin/sysctl /usr/bin/sysctl /bin/sysctl; do [ -x "$p" ] && { "$p" -n net.ipv4.ip_forward; break; }; done
TB_HOST='"$RUN"'/hosts/tb-worker2 sysctl -n vm.swappiness' > "$TMP/hostof" 2>&1 || { cat "$TMP/hostof"; fail "the fakes' client on tb-worker2"; }
want=2
for p in /usr/sbin/sysctl /sbin/sysctl /usr/bin/sysctl /bin/sysctl; do [ -x "$p" ] && { want=3; break; }; done
[ "$(wc -l < "$TMP/hostof")" -eq "$want" ] || fail "$want answers expected: $(cat "$TMP/hostof")"
n2=$("$TESTBED" log "$RUN" tb-worker2 | grep '"tool": "sysctl"' | grep -c '"-n", "net.ipv4.ip_forward"')
[ "$n2" -eq $((want - 1)) ] || fail "tb-worker2 recorded $n2 of its $((want - 1)) sysctl -n net.ipv4.ip_forward calls"
"$TESTBED" log "$RUN" tb-worker1 | grep '"tool": "sysctl"' | grep -q '"net.ipv4.ip_forward"' && fail "tb-worker2's calls were recorded on tb-worker1"
"$TESTBED" log "$RUN" tb-worker2 | grep '"tool": "sysctl"' | grep -q '"vm.swappiness"' || fail "the call with TB_HOST was not recorded on tb-worker2"
ppid=$(head -n 1 "$TMP/probe")
"$TESTBED" log "$RUN" tb-worker1 | grep '"tool": "sysctl"' | grep '"-p", "sources.list"' > "$TMP/probelog"
grep -q "\"pid\": $ppid," "$TMP/probelog" || fail "the recorded pid is not the caller's $ppid: $(cat "$TMP/probelog")"
grep '"event": "end"' "$RUN/hosts/tb-worker1/invocations.jsonl" | grep -q "\"id\": \"$ppid-" || fail "no end record for $ppid"
[ "$(sed -n 2,3p "$TMP/probe" | tr '\n' ' ')" = "rc=0 rc=255 " ] || fail "sysctl -p of a relative path, in /etc/apt and in /: $(cat "$TMP/probe")"

# A failure knob: kubeadm init fails after writing the manifests, as an interrupted init would.
"$TESTBED" knob "$RUN" tb-master 'kubeadm init fail'
on tb-master 'kubeadm init --pod-network-cidr 10.244.0.0/16' > "$TMP/init1" 2>&1 && fail "kubeadm init succeeded despite the knob"
grep -q 'injected failure at kubeadm init' "$TMP/init1" || fail "no injected failure: $(cat "$TMP/init1")"
state
expect 's["hosts"]["tb-master"]["kubeadm"]' '{"init": 0, "join": 0}'
expect 's["hosts"]["tb-master"]["kubeadm_interrupted"]' '["init"]'
expect '"/etc/kubernetes/manifests/kube-apiserver.yaml" in s["hosts"]["tb-master"]["files"]' 'true'
"$TESTBED" knob "$RUN" tb-master --clear
# Like the real one, a second init refuses the leftovers; reset cleans them.
on tb-master 'kubeadm init' > "$TMP/init2" 2>&1 && fail "kubeadm init ran over an interrupted one"
grep -q 'ERROR FileAvailable--etc-kubernetes-manifests-kube-apiserver.yaml' "$TMP/init2" || fail "preflight: $(cat "$TMP/init2")"
on tb-master 'kubeadm reset -f' > /dev/null
on tb-master 'kubeadm init --pod-network-cidr 10.244.0.0/16 --skip-token-print' > "$TMP/init3" 2>&1 || { cat "$TMP/init3"; fail "kubeadm init"; }
state
expect 's["hosts"]["tb-master"]["kubeadm"]' '{"init": 1, "join": 0}'
expect 's["hosts"]["tb-master"]["kubeadm_interrupted"]' '[]'
expect 's["hosts"]["tb-master"]["files"]["/etc/kubernetes/admin.conf"]' '"0600"'
expect 's["hosts"]["tb-master"]["apiserver"]' '"running"'
eventually 's["cluster"]["objects"]["Node/tb-master"]["ready"]' '"True"'
# The CA pin the fake kubeadm checks at a join, read from the certificate's DER, is openssl's.
"$PYTHON3" -c '
import sys; sys.path.insert(0, sys.argv[1]); import kubeadm_fake as k
pem = open(sys.argv[2]).read(); a, b = k.spki_hash(pem), k.spki_hash_openssl(pem)
sys.exit(0 if a == b and a.startswith("sha256:") else "CA pin %s, openssl %s" % (a, b))' \
  "$(dirname "$0")" "$RUN/hosts/tb-master/fs/etc/kubernetes/pki/ca.crt" || fail "the CA pin"

# Join worker1 with a short-lived token passed on stdin: it never appears in argv.
line=$(on tb-master 'kubeadm token create --ttl 10m --print-join-command')
token=$(echo "$line" | sed 's/.*--token \([^ ]*\).*/\1/')
hash=$(echo "$line" | sed 's/.*--discovery-token-ca-cert-hash \([^ ]*\).*/\1/')
printf 'apiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\ndiscovery:\n  bootstrapToken:\n    apiServerEndpoint: 127.0.31.2:6443\n    token: %s\n    caCertHashes: ["%s"]\n' "$token" "$hash" > "$TMP/join.yaml"
on tb-worker1 'kubeadm join --config /dev/stdin' < "$TMP/join.yaml" > "$TMP/join1" 2>&1 || { cat "$TMP/join1"; fail "join worker1"; }
on tb-master "kubeadm token delete ${token%%.*}" > /dev/null
"$TESTBED" log "$RUN" tb-worker1 | grep '"tool": "kubeadm"' | grep '"join"' > "$TMP/joinlog"
grep -q '"stdin": true' "$TMP/joinlog" || fail "join's stdin not recorded: $(cat "$TMP/joinlog")"
grep -q "$token" "$TMP/joinlog" && fail "the token is in the recorded argv"
# A wrong token is refused by the API server.
sed "s/$token/abcdef.0123456789abcdef/" "$TMP/join.yaml" > "$TMP/bad.yaml"
on tb-worker2 'kubeadm join --config /dev/stdin' < "$TMP/bad.yaml" > "$TMP/bad" 2>&1 && fail "join with a wrong token succeeded"
on tb-worker2 'kubeadm reset -f' > /dev/null

# A hang knob: the join hangs at its step; killed, it leaves an interrupted join that does not count.
"$TESTBED" knob "$RUN" tb-worker2 'kubeadm join hang'
line=$(on tb-master 'kubeadm token create --ttl 10m --print-join-command')
on tb-worker2 "$line" > "$TMP/hang" 2>&1 &
n=0
until "$TESTBED" log "$RUN" tb-worker2 | grep -q '"hung_at": "join"'; do
  n=$((n + 1)); [ $n -lt 100 ] || fail "the join did not reach its hang"; sleep 0.1
done
pid=$("$TESTBED" log "$RUN" tb-worker2 | grep '"hung_at": "join"' | sed 's/.*"pid": \([0-9]*\).*/\1/')
kill -9 "$pid"
wait || true
state
expect 's["hosts"]["tb-worker2"]["kubeadm"]' '{"init": 0, "join": 0}'
expect 's["hosts"]["tb-worker2"]["kubeadm_interrupted"]' '["join"]'
"$TESTBED" knob "$RUN" tb-worker2 --clear
on tb-worker2 "kubeadm reset -f && $line" > "$TMP/join2" 2>&1 || { cat "$TMP/join2"; fail "join worker2 after reset"; }
# A second join of a joined node is refused by kubeadm's preflight.
on tb-worker2 "$line" > "$TMP/join3" 2>&1 && fail "a second join ran"
state
expect '{h: v["kubeadm"] for h, v in s["hosts"].items()}' \
  '{"tb-master": {"init": 1, "join": 0}, "tb-worker1": {"init": 0, "join": 1}, "tb-worker2": {"init": 0, "join": 1}}'
eventually '[s["cluster"]["objects"]["Node/" + n]["ready"] for n in ("tb-worker1", "tb-worker2")]' '["True", "True"]'
# The init token and the hang test's token remain; the deleted one is gone.
expect 's["cluster"]["bootstrap_tokens"]' '2'
# systemctl failure knob with an exit code.
"$TESTBED" knob "$RUN" tb-worker1 'systemctl restart:containerd fail=5'
set +e
on tb-worker1 'systemctl restart containerd' 2>/dev/null
rc=$?
set -e
[ $rc -eq 5 ] || fail "systemctl restart with the knob exited $rc, want 5"
"$TESTBED" knob "$RUN" tb-worker1 --clear
echo "ok: fakes"
