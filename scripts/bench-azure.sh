#!/bin/sh
# bench-azure.sh [PAICTL]: the Azure provider against the ARM test server
# (tests/integration/azure/arm_server.py, HTTPS on loopback): for 1, 4 and 16
# pools, the ARM requests per resource and the wall time of install and reset
# next to the waits no client can avoid (the servers' Retry-After on the
# critical path: creation runs in 3 levels, the group synchronously; deletion in
# 3 rounds). Prints a Markdown table (docs/benchmarks.md).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PAICTL=${1:-$ROOT/build/paictl}
PY=$(command -v /usr/bin/python3 || command -v python3)
POLLS=${POLLS:-2}
RETRY=${RETRY:-1}
T=$(mktemp -d "${TMPDIR:-/tmp}/paictl-bench-azure.XXXXXX")
PID=""
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$T"' EXIT INT TERM
sh "$ROOT/tests/integration/azure/make_certs.sh" "$T/certs"
echo "bench-secret-value" >"$T/secret"
"$PY" "$ROOT/tests/integration/azure/arm_server.py" --port-file "$T/port" --control-port-file "$T/ctl" \
  --tls-cert "$T/certs/server.pem" --tls-key "$T/certs/server.key" --client-id 11111111-2222-3333-4444-555555555555 \
  --client-secret-file "$T/secret" --polls "$POLLS" --retry-after "$RETRY" >"$T/server.log" 2>&1 &
PID=$!
while [ ! -s "$T/port" ] || [ ! -s "$T/ctl" ]; do sleep 0.05; done
ARM="https://127.0.0.1:$(cat "$T/port")"
CTL="http://127.0.0.1:$(cat "$T/ctl")"
echo "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBench bench" >"$T/id.pub"
echo "| pools | resources | install: ARM requests (per resource) | polls | wall | unavoidable waits | reset: requests | wall | unavoidable waits |"
echo "|---|---|---|---|---|---|---|---|---|"
for pools in 1 4 16; do
  C="$T/c$pools"
  mkdir -p "$C"
  cp "$ROOT/tests/data/config/cases/valid/layout.yaml" "$C/"
  cp "$T/secret" "$C/secret"
  {
    printf 'user: openpai\npassword: x\ndocker_image_tag: v1.8.0\nazure:\n'
    printf '  subscription: 00000000-0000-0000-0000-0000000000%02d\n' "$pools"
    printf '  tenant: t.onmicrosoft.com\n  client-id: 11111111-2222-3333-4444-555555555555\n'
    printf '  client-secret-file: secret\n  location: eastus\n  resource-group: bench-rg\n'
    printf '  ssh-public-key-file: %s\n  pools:\n' "$T/id.pub"
    i=0
    while [ $i -lt "$pools" ]; do
      printf '    - {name: p%d, sku: Standard_ND96asr_v4, count: 2, machine-type: k80-machine}\n' $i
      i=$((i + 1))
    done
  } >"$C/config.yaml"
  "$PY" -c "import urllib.request as u; u.urlopen(u.Request('$CTL/__control/clear-requests', data=b'{}', method='POST'))"
  s=$("$PY" -c 'import time; print(time.monotonic())')
  "$PAICTL" install "$C" --azure-only --yes -q -o json --arm-endpoint "$ARM" --authority-host "$ARM" \
    --ca-file "$T/certs/ca.pem" >"$T/install.json"
  e=$("$PY" -c 'import time; print(time.monotonic())')
  "$PY" -c "import urllib.request as u; u.urlopen(u.Request('$CTL/__control/clear-requests', data=b'{}', method='POST'))"
  "$PAICTL" reset "$C" --azure --yes -q --arm-endpoint "$ARM" --authority-host "$ARM" --ca-file "$T/certs/ca.pem" >/dev/null
  e2=$("$PY" -c 'import time; print(time.monotonic())')
  reset_reqs=$("$PY" -c "import json,urllib.request as u; print(len([r for r in json.load(u.urlopen('$CTL/__control/requests')) if r['kind'] not in ('token','msi')]))")
  "$PY" - "$T/install.json" "$s" "$e" "$e2" "$pools" "$POLLS" "$RETRY" "$reset_reqs" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))["azure"]
s, e, e2 = map(float, sys.argv[2:5])
pools, polls, retry, reset_reqs = map(int, sys.argv[5:9])
res = len(d["resources"])
req = d["requests"]
# install: the group is synchronous; the NSG+VNet level and the scale set level
# each wait `polls` Retry-Afters. reset: scale sets, then VNet+NSG, then the group.
unavoid_install = 2 * polls * retry
unavoid_reset = 3 * polls * retry
print("| %d | %d | %d (%.1f) | %d | %.2f s | %d s | %d | %.2f s | %d s |" % (
    pools, res, req["total"], req["total"] / res, req["polls"], e - s, unavoid_install,
    reset_reqs, e2 - e, unavoid_reset))
PYEOF
done
