#!/bin/sh
# check hosts' cross-site checks on a hybrid cluster made of the catalogue's
# test hosts: config.yaml's azure: section puts port-busy and docker-old
# (127.0.2.8/29) on the Azure site, master and gpu-ok on-prem, and one on-prem
# host, "blocked", has the hostip 192.0.2.10 (TEST-NET-1: no route from here)
# while paictl reaches it over SSH as gpu-count. Then:
#  * the on-prem hosts reach the Azure hosts' kubelet port (port-busy listens
#    on 10250: open; docker-old: refused, the path is open) and the Azure hosts
#    reach the master's API server and kubelet: pass;
#  * the Azure hosts cannot reach blocked's kubelet, nor ping it: fail;
#  * the overlay's UDP ports: the reachable hosts answer "port unreachable"
#    (pass); blocked stays silent or unreachable: a warning or a failure;
#  * --cni-mtu 65500: VXLAN packets of 65550 bytes do not fit: CrossSiteMTU fails;
#  * SiteOverlap: a route into kube_pods_subnet seeded on gpu-ok (a wrapper of
#    ip first on its PATH adds it to ip -j -4 route show) fails there, naming
#    both ranges; the Azure hosts are not asked;
#  * without an azure: section, no cross-site check runs.
# The test hosts run this machine's binaries: where it has no ping, every MTU
# probe must be skipped with that reason instead (asserted too).
. "$(dirname "$0")/lib.sh"
C="$TMP/hybrid"
mkdir -p "$C"
python3 - "$RUN/cluster/layout.yaml" "$C/layout.yaml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
head, _, machines = text.partition("machine-list:")
keep = {"master", "gpu-ok", "port-busy", "docker-old"}
items = re.split(r"\n(?=  - )", machines.strip("\n"))
out = [i for i in items if re.search(r"hostname: (\S+)", i).group(1) in keep]
blocked = [i for i in items if "hostname: gpu-ok" in i][0]
blocked = re.sub(r"hostname: gpu-ok", "hostname: blocked", blocked)
blocked = re.sub(r"hostip: \S+", "hostip: 192.0.2.10", blocked)
open(sys.argv[2], "w").write(head + "machine-list:\n" + "\n".join(out + [blocked]) + "\n")
PY
grep -v '^azure' "$RUN/cluster/config.yaml" >"$C/config.yaml"
printf 'secret\n' >"$C/azure-secret"
chmod 600 "$C/azure-secret"
cp "$RUN/id_ed25519.pub" "$C/id.pub"
cat >>"$C/config.yaml" <<'YAML'
azure:
  subscription: 00000000-0000-0000-0000-000000000001
  tenant: contoso.onmicrosoft.com
  client-id: 11111111-2222-3333-4444-555555555555
  client-secret-file: azure-secret
  location: eastus
  resource-group: pai-rg
  address-space: 127.0.2.8/29
  subnet: 127.0.2.8/29
  ssh-public-key-file: id.pub
  pools:
    - name: gpu
      sku: Standard_NC24s_v3
      count: 2
      machine-type: gpu-machine
YAML
# blocked is reached over SSH as gpu-count (127.0.2.4).
{
  printf 'Host blocked 192.0.2.10\n  HostName 127.0.2.4\n'
  cat "$RUN/ssh_config"
} >"$TMP/ssh_config"
HAVE_PING=0
command -v ping >/dev/null 2>&1 && HAVE_PING=1
export HAVE_PING
FLAGS="--ssh-config $TMP/ssh_config --connect-timeout 2 --command-timeout 8 --min-disk-free 1Gi"

# shellcheck disable=SC2086
set +e
"$PAICTL" check hosts "$C" $FLAGS -o json >"$TMP/out" 2>"$TMP/err"
rc=$?
set -e
[ $rc -eq 1 ] || { cat "$TMP/err"; head -c 3000 "$TMP/out"; fail "check hosts of the hybrid cluster exited $rc, want 1"; }
python3 - "$TMP/out" <<'PY' || fail "the cross-site results"
import json, os, sys
ping = os.environ["HAVE_PING"] == "1"
doc = json.load(open(sys.argv[1]))
rows = [r for r in doc["results"] if r["check"].startswith("CrossSite")]
mtu = [r for r in rows if r["check"] == "CrossSiteMTU"]
assert len(mtu) == 12, mtu
if not ping:
    assert all(r["status"] == "skip" and "ping is not installed" in r["message"] for r in mtu), mtu
by = {}
for r in rows:
    by.setdefault((r["host"], r["check"], r["status"]), []).append(r["message"])
def count(host, check, status):
    return len(by.get((host, check, status), []))
# On-prem hosts probe the two Azure hosts: kubelet and MTU each, all pass.
for h in ("master", "gpu-ok", "blocked"):
    assert count(h, "CrossSitePort", "pass") == 2 and count(h, "CrossSitePort", "fail") == 0, (h, by)
    assert not ping or count(h, "CrossSiteMTU", "pass") == 2, (h, by)
# Azure hosts probe the master (API server, kubelet), gpu-ok and blocked (kubelet).
for h in ("port-busy", "docker-old"):
    assert count(h, "CrossSitePort", "pass") == 3, (h, by)
    fails = by.get((h, "CrossSitePort", "fail"), [])
    assert len(fails) == 1 and "cannot reach blocked (192.0.2.10) on TCP 10250 (the kubelet)" in fails[0], (h, fails)
    if ping:
        m = by.get((h, "CrossSiteMTU", "fail"), [])
        assert len(m) == 1 and "reach blocked (192.0.2.10)" in m[0], (h, m)
        assert count(h, "CrossSiteMTU", "pass") == 2, (h, by)
# UDP 8472 and 4789: nothing listens on loopback, so each reachable host answers
# "port unreachable" (pass); blocked never does: a warning (no answer) or a
# failure (unreachable), never a pass.
udp = [r for r in rows if r["check"] == "CrossSiteUDP"]
assert len(udp) == 3 * 2 * 2 + 2 * 3 * 2, udp  # hosts x peers on the other site x ports
for h in ("master", "gpu-ok", "blocked"):
    assert count(h, "CrossSiteUDP", "pass") == 4, (h, by)
for h in ("port-busy", "docker-old"):
    assert count(h, "CrossSiteUDP", "pass") == 4, (h, by)
    other = [r for r in udp if r["host"] == h and r["status"] != "pass"]
    assert len(other) == 2 and all(r["status"] in ("warn", "fail") and "blocked (192.0.2.10) on UDP" in r["message"]
                                   for r in other), other
assert any("port unreachable" in m for m in by[("master", "CrossSiteUDP", "pass")]), by
# port-busy listens on the kubelet port (open); nothing listens on docker-old's (refused).
assert sorted(by[("gpu-ok", "CrossSitePort", "pass")]) == [
    "reaches docker-old (127.0.2.10) on TCP 10250 (the kubelet) (refused: nothing listens yet, the path is open)",
    "reaches port-busy (127.0.2.9) on TCP 10250 (the kubelet)"], by
PY
echo "ok: the cross-site ports (and, with ping, the path MTU) between the sites; the blocked host is found"

# SiteOverlap: gpu-ok gets a route into the pods' range (10.244.0.0/16, the default).
SEEDED="$RUN/hosts/gpu-ok/bin/ip"
cat >"$SEEDED" <<'SH'
#!/bin/sh
# test_cross_site.sh: ip with one more route, 10.244.0.0/16 via eth9
real() { PATH=/usr/sbin:/usr/bin:/sbin:/bin ip "$@"; }
if [ "$*" = "-j -4 route show" ]; then
  out=$(real "$@")
  seed='{"dst":"10.244.0.0/16","gateway":"127.0.2.1","dev":"eth9"}'
  case "$out" in "[]" | "") printf '[%s]\n' "$seed" ;; *) printf '[%s,%s\n' "$seed" "${out#[}" ;; esac
else
  real "$@"
fi
SH
chmod 755 "$SEEDED"
trap 'rm -f "$SEEDED"; rm -rf "$TMP"' EXIT INT TERM
# shellcheck disable=SC2086
set +e
"$PAICTL" check hosts "$C" $FLAGS --limit master,gpu-ok,port-busy -o json >"$TMP/out" 2>"$TMP/err"
set -e
rm -f "$SEEDED"
python3 - "$TMP/out" <<'PY' || fail "SiteOverlap with a seeded route"
import json, sys
rows = {r["host"]: r for r in json.load(open(sys.argv[1]))["results"] if r["check"] == "SiteOverlap"}
assert set(rows) == {"master", "gpu-ok"}, rows  # port-busy is on the Azure site
g = rows["gpu-ok"]
assert g["status"] == "fail", g
assert "route 10.244.0.0/16 (dev eth9) overlaps kube_pods_subnet 10.244.0.0/16" in g["message"], g
assert "eth9" not in rows["master"]["message"], rows["master"]
PY
echo "ok: SiteOverlap: the seeded route into the pods' range fails on its host, with both ranges"

# A CNI MTU too large for the path: every MTU probe fails.
# shellcheck disable=SC2086
set +e
"$PAICTL" check hosts "$C" $FLAGS --cni-mtu 65500 --limit master,port-busy -o json >"$TMP/out" 2>"$TMP/err"
set -e
python3 - "$TMP/out" <<'PY' || fail "--cni-mtu 65500"
import json, os, sys
rows = [r for r in json.load(open(sys.argv[1]))["results"] if r["check"] == "CrossSiteMTU"]
assert len(rows) == 2, rows
if os.environ["HAVE_PING"] == "1":
    assert all(r["status"] == "fail" for r in rows), rows
    assert "a packet of 65550 bytes (the CNI's MTU 65500 + 50 of VXLAN)" in rows[0]["message"], rows[0]
else:
    assert all(r["status"] == "skip" for r in rows), rows
PY
echo "ok: --cni-mtu 65500: the pods' VXLAN packets do not fit the path"

# Without the azure: section there is one site: no cross-site check.
grep -v -e '^azure:' -e '^  ' "$C/config.yaml" >"$C/config.tmp" && mv "$C/config.tmp" "$C/config.yaml"
# shellcheck disable=SC2086
set +e
"$PAICTL" check hosts "$C" $FLAGS --limit master,port-busy -o json >"$TMP/out" 2>"$TMP/err"
set -e
python3 -c "
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))['results'] if r['check'].startswith(('CrossSite', 'SiteOverlap'))]
sys.exit(1 if rows else 0)" "$TMP/out" || fail "cross-site checks without an azure: section"
echo "ok: one site, no cross-site checks"
