#!/bin/sh
# paictl facts collect: one paictl.facts/v1 JSON per host, named after the host,
# with what the planner reads; unreachable hosts make exit 3.
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2046
run_paictl 3 facts collect "$RUN/cluster" $(facts_flags) --out "$TMP/facts" -o json
for h in master gpu-ok gpu-count runtime-nodefault runtime-missing etcd-leftover swap-on port-busy docker-old odd-one slow; do
  [ -f "$TMP/facts/$h.json" ] || fail "no facts file for $h"
done
for h in silent key-changed wrong-key; do
  [ ! -e "$TMP/facts/$h.json" ] || fail "facts written for unreachable host $h"
done
$ASSERT facts "$TMP/facts/gpu-ok.json" schema=paictl.facts/v1 hostname=gpu-ok name=gpu-ok \
  'ip_addresses[0]=127.0.2.3' cpu.logical='*nonempty*' memory.total_bytes=68719476736 \
  'gpus[3].index=3' 'gpus[0].name=Tesla V100-SXM2-16GB' 'gpus[0].memory_mib=16160' \
  'gpus[0].bus_id=00000000:06:00.0' 'gpus[0].uuid=*nonempty*' nvidia.driver_version=535.104.05 \
  nvidia.topo_matrix='*nonempty*' lscpu='*nonempty*' meminfo='*nonempty*' os.id=ubuntu \
  docker.default_runtime=nvidia docker.server_version=24.0.7 collection.complete=true
python3 - "$TMP/facts/gpu-ok.json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
assert len(f["gpus"]) == 4
assert "GPU0" in f["nvidia"]["topo_matrix"] and "NV2" in f["nvidia"]["topo_matrix"]
assert "MemTotal:" in f["meminfo"]
assert any(p["path"] == "/var/lib/etcd" for p in f["paths"])
PY
$ASSERT facts "$TMP/facts/swap-on.json" swap.total_bytes=2147479552 'swap.devices[0].name=/swapfile'
$ASSERT facts "$TMP/facts/etcd-leftover.json" 'paths[2].path=/var/lib/etcd' 'paths[2].entries=1'
# The slow host's facts are partial, and say where the script was.
$ASSERT facts "$TMP/facts/slow.json" collection.complete=false collection.stuck_in=nvidia
# Without --out, -o json prints every host's facts.
# shellcheck disable=SC2046
run_paictl 0 facts collect "$RUN/cluster" $(facts_flags) --limit gpu-ok,master -o json
python3 - "$TMP/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert sorted(h["hostname"] for h in d["hosts"]) == ["gpu-ok", "master"], d["hosts"]
assert d["failed"] == []
PY
# The default output is a table.
# shellcheck disable=SC2046
run_paictl 0 facts collect "$RUN/cluster" $(facts_flags) --limit gpu-ok
grep -q "535.104.05" "$TMP/out" || fail "the table lacks the driver version"
echo "ok: facts collect"
