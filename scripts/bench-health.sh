#!/bin/sh
# Benchmark of `paictl hived health` over a facts directory (issue figure: 1,500
# facts files in at most 1 s of paictl CPU).
#
#   scripts/bench-health.sh [N]      hosts (default 1500)
#
#   PAICTL=path   the binary (default build/paictl)
#   REPEAT=3      runs; the median is reported
#
# Makes N DGX A100 hosts with scripts/gen-facts.sh, their cluster with
# `paictl plan --facts` (layout.yaml: N 8-GPU workers), then one
# paictl.facts/v1 file per host as `paictl facts collect --out` writes it (the
# profile's lscpu, meminfo and topology, 8 GPUs, their ECC counters and retired
# pages; 1 host in 100 with a fault: a GPU lost, an uncorrectable ECC error, an
# Xid 79, an older driver), and measures `paictl hived health CLUSTER --facts
# DIR -o json`: wall time and paictl's CPU (user + system).
set -eu
cd "$(dirname "$0")/.."
PAICTL=${PAICTL:-build/paictl}
REPEAT=${REPEAT:-3}
N=${1:-1500}
[ -x "$PAICTL" ] || { echo "bench: build paictl first or set PAICTL" >&2; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/paictl-bench-health.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

scripts/gen-facts.sh dgx-a100 "$N" "$WORK/hosts" 2>/dev/null
"$PAICTL" plan --facts "$WORK/hosts" --master dgx-a100-0001 --out "$WORK/cluster" > "$WORK/plan.log" 2>&1 ||
  { cat "$WORK/plan.log" >&2; echo "bench: paictl plan failed" >&2; exit 1; }
python3 - "$WORK/hosts" "$WORK/facts" <<'PY'
import json, os, sys
hosts, out = sys.argv[1], sys.argv[2]
os.makedirs(out)
prof = "layouts/dgx-a100/"
lscpu, meminfo, topo = (open(prof + f).read() for f in ("lscpu.txt", "meminfo", "topo.txt"))
rows = [l.split(", ") for l in open(prof + "gpus.csv").read().splitlines()[1:] if l.strip()]
for i, name in enumerate(sorted(os.listdir(hosts))):
    fault = i % 100 == 7
    gpus = [{"index": int(r[0]), "name": r[1], "memory_mib": int(r[2].split()[0]), "bus_id": r[3], "uuid": r[4]} for r in rows]
    if fault and i % 400 == 7:
        gpus = gpus[:-1]
    health = [{"bus_id": g["bus_id"], "ecc_mode": "Enabled", "volatile_uncorrectable": 1 if fault and g["index"] == 0 else 0,
               "aggregate_uncorrectable": 0, "volatile_correctable": 177, "retired_single_bit": -1, "retired_double_bit": -1,
               "retirement_pending": False, "remapped_uncorrectable": 0, "remap_pending": False, "remap_failed": False} for g in gpus]
    xids = [{"bus_id": "0000:07:00", "code": 79, "text": "pid=0, GPU has fallen off the bus.", "when": "[ 8811.524310]"}] if fault else []
    doc = {"schema": "paictl.facts/v1", "name": name, "address": "10.100.%d.%d" % (i // 254, i % 254 + 1), "hostname": name,
           "roles": ["worker"], "collected_at": "2026-12-06T12:00:00Z", "privilege": "root",
           "os": {"id": "ubuntu", "id_like": "debian", "version_id": "22.04", "pretty_name": "Ubuntu 22.04.4 LTS"},
           "kernel": "5.15.0-105-generic", "cpu": {"logical": 256, "sockets": 2, "model": "AMD EPYC 7742 64-Core Processor"},
           "memory": {"total_bytes": 1081145491456, "available_bytes": 1000000000000},
           "nvidia": {"smi_present": True, "smi_exit": 0, "smi_error": "",
                      "driver_version": "535.104.05" if not (fault and i % 300 == 7) else "525.125.06",
                      "topo_matrix": topo, "pci_gpus": 8, "health_read": True, "health": health,
                      "kernel_log": "dmesg", "xids": xids},
           "gpus": gpus, "lscpu": lscpu, "meminfo": meminfo,
           "collection": {"complete": True, "stuck_in": "", "sections": ["files", "nvidia", "gpuhealth", "xid"], "notes": []}}
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(doc, f, indent=1)
PY
bytes=$(du -sk "$WORK/facts" | cut -f1)
echo "bench-health: $N facts files ($bytes KiB) in $WORK/facts"
i=0
: > "$WORK/times"
while [ "$i" -lt "$REPEAT" ]; do
  python3 - "$PAICTL" "$WORK/cluster" "$WORK/facts" >> "$WORK/times" <<'PY'
import resource, subprocess, sys, time
paictl, cluster, facts = sys.argv[1:]
t0 = time.monotonic()
rc = subprocess.run([paictl, "hived", "health", cluster, "--facts", facts, "-o", "json"], stdout=subprocess.DEVNULL).returncode
wall = time.monotonic() - t0
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.3f %.3f %d" % (wall, r.ru_utime + r.ru_stime, rc))
PY
  i=$((i + 1))
done
sort -n -k2 "$WORK/times" | awk -v n="$N" '{ a[NR] = $0 } END { split(a[int((NR + 1) / 2)], m, " ");
  printf "hived health over %d facts files: wall %.2f s, paictl CPU %.2f s (median of %d; exit %d)\n", n, m[1], m[2], NR, m[3] }'
"$PAICTL" hived health "$WORK/cluster" --facts "$WORK/facts" | tail -1
