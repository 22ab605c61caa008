#!/bin/sh
# paictl certs check|renew on a testbed of its own (127.0.51.x): a master
# initialised by the fake kubeadm (kubeadm's whole PKI as real certificates)
# and a joined worker (its kubelet's client certificate). A clean check exits
# 0; an apiserver certificate aged to 10 days makes it exit 1 naming it (text,
# JSON, SARIF); renew runs kubeadm certs renew once, restarts the API server
# (it serves the new certificate), fetches admin.conf (0600; kubectl works
# with it); the check is clean again. A renewal that failed is finished by the
# next run.
set -eu
: "${RUN:?}" "${PAICTL:?}" "${TESTBED:?}" "${PYTHON3:?}" "${TB_DIR:?}"
# shellcheck disable=SC2034 # read by lib.sh: this test starts its own testbed
TB_OWN=1
. "$(dirname "$0")/lib.sh"
need_kubectl

"$TESTBED" up 2 "$RUN" --base 127.0.51 > "$TMP/up.log" 2>&1 || { cat "$TMP/up.log"; fail "testbed up"; }
C="$RUN/cluster"
SSH="--ssh-config $RUN/ssh_config"
# The cluster: kubeadm init on the master, worker1 joined (as install leaves them).
on tb-master 'sh -s' < "$TB_DIR/prepare_host.sh" > "$TMP/p0" 2>&1 || { cat "$TMP/p0"; fail "prepare master"; }
on tb-worker1 'GPU=1 sh -s' < "$TB_DIR/prepare_host.sh" > "$TMP/p1" 2>&1 || { cat "$TMP/p1"; fail "prepare worker1"; }
on tb-master 'kubeadm init --pod-network-cidr 10.244.0.0/16 --skip-token-print' > "$TMP/init" 2>&1 || { cat "$TMP/init"; fail "kubeadm init"; }
line=$(on tb-master 'kubeadm token create --ttl 10m --print-join-command')
token=$(echo "$line" | sed 's/.*--token \([^ ]*\).*/\1/')
hash=$(echo "$line" | sed 's/.*--discovery-token-ca-cert-hash \([^ ]*\).*/\1/')
printf 'apiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\ndiscovery:\n  bootstrapToken:\n    apiServerEndpoint: 127.0.51.2:6443\n    token: %s\n    caCertHashes: ["%s"]\n' "$token" "$hash" |
  on tb-worker1 'kubeadm join --config /dev/stdin' > "$TMP/join" 2>&1 || { cat "$TMP/join"; fail "kubeadm join"; }

# A fresh cluster: nothing expires within 30 days (its CAs have ten years).
run certs check "$C" $SSH
expect_rc 0 "certs check of a fresh cluster"
grep -q 'tb-master.*apiserver ' "$TMP/out" || fail "the table names no apiserver certificate: $(cat "$TMP/out")"
grep -q 'tb-worker1.*kubelet-client' "$TMP/out" || fail "the table names no kubelet certificate of tb-worker1"
run certs check "$C" $SSH -o json
check 'len([c for c in d["certificates"] if c["host"] == "tb-master"]) == 15' "15 certificates on the master (10 in pki/ and etcd/, 5 kubeconfigs)"
check 'any(c["name"] == "apiserver" and "IP:127.0.51.2" in c["sans"] and 364 <= c["daysLeft"] <= 365 for c in d["certificates"])' "the apiserver's SANs and days left"
check '[c["isCA"] for c in d["certificates"] if c["name"] == "ca" and c["host"] == "tb-master"] == [True]' "the CA is a CA"
"$PYTHON3" -c 'import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' \
  "$TMP/out" "$(dirname "$0")/../../../docs/schemas/certsCheck.schema.json" || fail "certs check -o json does not match docs/schemas/certsCheck.schema.json"
pass "paictl.certsCheck/v1 matches its schema"

# The apiserver certificate aged to 10 days: an error naming it, in each format.
"$TESTBED" age-certs "$RUN" 10 tb-master apiserver > /dev/null
run certs check "$C" $SSH --sarif "$TMP/certs.sarif"
expect_rc 1 "certs check with the apiserver certificate 10 days from expiry"
# (9 days and some hours, or 10 when it is read in the second it was aged)
grep -Eq 'tb-master:/etc/kubernetes/pki/apiserver.crt: error\[K101\]: certificate apiserver expires in (9|10) days' "$TMP/out" \
  || fail "no K101 naming apiserver.crt: $(cat "$TMP/out")"
"$PYTHON3" -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"][0]["results"]; sys.exit(0 if [x["ruleId"] for x in r] == ["K101"] and "apiserver.crt" in json.dumps(r) else r)' "$TMP/certs.sarif" \
  || fail "the SARIF report: $(cat "$TMP/certs.sarif")"
pass "SARIF: K101 on apiserver.crt"
run certs check "$C" $SSH -o json --warn-within 5
expect_rc 0 "--warn-within 5: 10 days left is no finding"
run certs check "$C" $SSH -o json
check '[(x["code"], x["file"]) for x in d["diagnostics"]] == [("K101", "tb-master:/etc/kubernetes/pki/apiserver.crt")]' "JSON: one K101 on tb-master's apiserver.crt"

# A renewal whose kubeadm fails: nothing counted, the run says where it stopped.
"$TESTBED" knob "$RUN" tb-master 'kubeadm certs-renew fail-once'
run certs renew "$C" $SSH --yes
expect_rc 3 "certs renew with kubeadm failing"
grep -q 'kubeadm certs renew all on tb-master' "$TMP/err" || fail "the failed step is not named: $(cat "$TMP/err")"
state
expect 'm["kubeadm"].get("certsRenew", 0)' 0  # a failed renewal is not counted

# The next run finishes it: kubeadm certs renew once, the API server restarted.
t0=$(date +%s)
run certs renew "$C" $SSH --yes
expect_rc 0 "certs renew"
grep -q 'renewed and verified' "$TMP/out" || fail "not verified: $(cat "$TMP/out" "$TMP/err")"
grep -q 'PRIVATE KEY\|client-key-data' "$TMP/out" "$TMP/err" && fail "a key was printed"
state
expect 'm["kubeadm"].get("certsRenew")' 1  # kubeadm certs renew ran exactly once
left=$(py '(calendar.timegm(time.strptime(m["certs"]["/etc/kubernetes/pki/apiserver.crt"], "%Y-%m-%dT%H:%M:%SZ")) - time.time()) // 86400')
[ "${left%.*}" -ge 364 ] && [ "${left%.*}" -le 365 ] || fail "the apiserver certificate has $left days left"
pass "apiserver.crt: $left days left after the renewal"
end=$(echo | openssl s_client -connect 127.0.51.2:6443 2>/dev/null | openssl x509 -noout -enddate | cut -d= -f2)
[ "$(( ($(date -d "$end" +%s) - t0) / 86400 ))" -ge 364 ] || fail "the API server still serves the old certificate (until $end)"
pass "the restarted API server serves the new certificate"
[ "$(stat -c %a "$C/.paictl/admin.conf")" = 600 ] || fail "admin.conf is not 0600"
"$KUBECTL" --kubeconfig "$C/.paictl/admin.conf" get nodes > "$TMP/nodes" 2>&1 || { cat "$TMP/nodes"; fail "kubectl with the fetched admin.conf"; }
grep -q tb-worker1 "$TMP/nodes" || fail "kubectl: $(cat "$TMP/nodes")"
pass "kubectl works with the fetched admin.conf"
run certs check "$C" $SSH
expect_rc 0 "certs check after the renewal"
