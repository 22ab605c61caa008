# HiveD reached through a registered cluster: the lab's HiveD test server behind
# a pylon over HTTPS (pylon_proxy.py: /a/<host>:<port>/... to HiveD), with a
# test CA. The cluster's TLS settings apply; its token goes to the cluster's own
# host only, never to another one, and never into the output.
. "$PAI_SOURCE_DIR/tests/integration/hived/lib.sh"
. "$PAI_SOURCE_DIR/tests/skip.sh"
# Only a missing openssl (77) is a skip; any other failure to make the certificates fails.
rc=0
sh "$PAI_SOURCE_DIR/tests/integration/azure/make_certs.sh" "$TMP/certs" || rc=$?
[ "$rc" -ne 77 ] || skip_test "openssl is missing (apt-get install openssl)"
[ "$rc" -eq 0 ] || exit "$rc"
start_server lab
"$PY" "$PAI_SOURCE_DIR/tests/integration/hived/pylon_proxy.py" --upstream "$URL" \
  --port-file "$TMP/pylon.port" --log "$TMP/pylon.log" \
  --tls-cert "$TMP/certs/server.pem" --tls-key "$TMP/certs/server.key" >"$TMP/pylon.err" 2>&1 &
SERVER_PIDS="$SERVER_PIDS $!"
wait_port_file "$TMP/pylon.port" "$TMP/pylon.err" "the pylon"
PORT=$(cat "$TMP/pylon.port")
TOKEN=tok-gateway-3f9c
mkdir -p "$XDG_CONFIG_HOME/paictl" "$HOME"
cat >"$XDG_CONFIG_HOME/paictl/clusters.yaml" <<YAML
apiVersion: paictl/v1
kind: ClusterRegistry
current: lab
clusters:
- {name: lab, uri: "https://127.0.0.1:$PORT", user: alice, token: $TOKEN, caFile: "$TMP/certs/ca.pem"}
- {name: lab-noca, uri: "https://127.0.0.1:$PORT", user: alice, token: $TOKEN}
- {name: lab-insecure, uri: "https://127.0.0.1:$PORT", user: alice, token: $TOKEN, insecure: true}
YAML
chmod 600 "$XDG_CONFIG_HOME/paictl/clusters.yaml"
# seen PATTERN: the pylon's log has a line matching it (grep -x).
seen() { grep -qx -- "$1" "$TMP/pylon.log"; }
no_token_out() {
  if grep -q "$TOKEN" "$OUT" "$ERR"; then fail "$1: the token is in the output"; else pass "$1: the token is not in the output"; fi
}

run hived status --cluster lab -v -o json
expect_rc 0 "status through the cluster's pylon"
json_check "d['hived'] == 'https://127.0.0.1:$PORT/a/127.0.0.1:30096' and d['groups'] == 8" "HiveD behind the pylon at /a/<host>:30096 answered"
if seen "GET /a/127.0.0.1:30096/v1/inspect/clusterstatus Bearer $TOKEN" && seen "GET /a/127.0.0.1:30096/v1/inspect/affinitygroups/ Bearer $TOKEN"; then pass "both reads went through the pylon with the cluster's token"; else fail "the pylon's log"; cat "$TMP/pylon.log" >&2; fi
no_token_out "status -v"

run hived why train-a
expect_rc 0 "why through the current cluster"
expect_out "train-a is Allocated in VC prod at priority 300" "why of a running group"
if seen "GET /a/127.0.0.1:30096/v1/inspect/affinitygroups/train-a Bearer $TOKEN"; then pass "one group's endpoint through the pylon"; else fail "one group's request"; fi

run hived groups --vc nope
expect_rc 2 "an unknown VC through the pylon"
expect_err "400 Bad Request: VC nope not found" "HiveD's bare string comes through the pylon"

# --hived on another host (localhost is not the cluster's 127.0.0.1): the
# cluster's TLS settings, but not its token.
: >"$TMP/pylon.log"
run hived groups --cluster lab --hived "https://localhost:$PORT/a/127.0.0.1:30096" -o json
expect_rc 0 "--hived on another host with --cluster's TLS settings"
if seen "GET /a/127.0.0.1:30096/v1/inspect/affinitygroups/ -"; then pass "no token to another host"; else fail "a token went to another host"; cat "$TMP/pylon.log" >&2; fi
no_token_out "groups --hived"

# TLS: the cluster's CA is required (no caFile: the server's certificate is not
# trusted), insecure skips the check; a wrong path is pylon's own HTML page.
run hived status --cluster lab-noca
expect_rc 3 "no CA: the certificate is not trusted"
expect_err "certificate" "the error is about the certificate"
run hived status --cluster lab-insecure -o json
expect_rc 0 "insecure: true skips the check"
# --hived without --cluster: the system's CAs unless --ca-file or --insecure, and no token.
GW="https://127.0.0.1:$PORT/a/127.0.0.1:30096"
run hived status --hived "$GW"
expect_rc 3 "--hived alone: the test CA is not among the system's"
: >"$TMP/pylon.log"
run hived status --hived "$GW" --ca-file "$TMP/certs/ca.pem" -o json
expect_rc 0 "--hived with --ca-file"
if seen "GET /a/127.0.0.1:30096/v1/inspect/clusterstatus -"; then pass "--hived alone sends no token"; else fail "a token without --cluster"; cat "$TMP/pylon.log" >&2; fi
run hived groups --hived "$GW" --insecure
expect_rc 0 "--hived with --insecure"
run hived status --ca-file "$TMP/certs/ca.pem"
expect_rc 2 "--ca-file without --hived"
run hived status --cluster lab --hived "https://127.0.0.1:$PORT/nowhere"
expect_rc 3 "a path the pylon does not proxy"
expect_err "404 Not Found: 404 Not Found nginx" "the page's text, not its HTML"
finish
