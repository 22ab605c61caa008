#!/usr/bin/env python3
"""Writes a large, valid OpenPAI cluster for benchmarks: layout.yaml, config.yaml and
hivedscheduler.yaml with N machines (3/4 8-GPU V100 nodes in racks of 20, 1/4
4-GPU T4 nodes), one master, and 20 virtual clusters that fit exactly.

    scripts/gen-cluster.py 10000 /tmp/cluster-10k
"""
import os
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    n = int(sys.argv[1])
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    rack_size = 20
    v100_racks = max(1, (n * 3 // 4) // rack_size)
    v100 = v100_racks * rack_size
    t4 = max(1, n - v100)

    def ip(i):
        i += 10
        return "10.%d.%d.%d" % (i // 65536 % 256, i // 256 % 256, i % 256)

    lay = ["machine-sku:",
           "  master-machine:", "    mem: 64Gi", "    cpu:", "      vcore: 16",
           "  v100-machine:", "    computing-device:", "      type: nvidia.com/gpu", "      model: V100",
           "      count: 8", "    mem: 512Gi", "    cpu:", "      vcore: 80",
           "  t4-machine:", "    computing-device:", "      type: nvidia.com/gpu", "      model: T4",
           "      count: 4", "    mem: 192Gi", "    cpu:", "      vcore: 32",
           "machine-list:",
           "  - hostname: pai-master", "    hostip: 10.0.0.1", "    machine-type: master-machine",
           '    pai-master: "true"']
    k = 0
    for r in range(v100_racks):
        for j in range(rack_size):
            lay += ["  - hostname: v100-r%d-n%d" % (r, j), "    hostip: " + ip(k),
                    "    machine-type: v100-machine", '    pai-worker: "true"']
            k += 1
    for j in range(t4):
        lay += ["  - hostname: t4-n%d" % j, "    hostip: " + ip(k), "    machine-type: t4-machine",
                '    pai-worker: "true"']
        k += 1
    open(os.path.join(out, "layout.yaml"), "w").write("\n".join(lay) + "\n")
    open(os.path.join(out, "config.yaml"), "w").write(
        "user: openpai\npassword: change-me\ndocker_image_tag: v1.8.0\n")

    h = ["physicalCluster:",
         "  skuTypes:",
         "    V100: {gpu: 1, cpu: 9, memory: 60Gi}",
         "    T4: {gpu: 1, cpu: 7, memory: 45Gi}",
         "  cellTypes:",
         "    V100-NVLINK: {childCellType: V100, childCellNumber: 4}",
         "    V100-NODE: {childCellType: V100-NVLINK, childCellNumber: 2, isNodeLevel: true}",
         "    V100-RACK: {childCellType: V100-NODE, childCellNumber: %d}" % rack_size,
         "    T4-SOCKET: {childCellType: T4, childCellNumber: 2}",
         "    T4-NODE: {childCellType: T4-SOCKET, childCellNumber: 2, isNodeLevel: true}",
         "    T4-POOL: {childCellType: T4-NODE, childCellNumber: %d}" % t4,
         "  physicalCells:"]
    for r in range(v100_racks):
        h += ["  - cellType: V100-RACK", "    cellAddress: rack%d" % r, "    cellChildren:"]
        h += ["    - cellAddress: v100-r%d-n%d" % (r, j) for j in range(rack_size)]
    h += ["  - cellType: T4-POOL", "    cellAddress: t4-pool", "    cellChildren:"]
    h += ["    - cellAddress: t4-n%d" % j for j in range(t4)]
    # 20 VCs: split V100 racks and T4 nodes as evenly as the capacity rule allows.
    vcs = 20
    h.append("virtualClusters:")
    for v in range(vcs):
        racks = v100_racks // vcs + (1 if v < v100_racks % vcs else 0)
        nodes = t4 // vcs + (1 if v < t4 % vcs else 0)
        h.append("  vc%d:" % v)
        h.append("    virtualCells:")
        if racks:
            h += ["    - cellType: V100-RACK", "      cellNumber: %d" % racks]
        if nodes:
            h += ["    - cellType: T4-POOL.T4-NODE", "      cellNumber: %d" % nodes]
    open(os.path.join(out, "hivedscheduler.yaml"), "w").write("\n".join(h) + "\n")
    print("%s: %d machines (%d V100 in %d racks, %d T4), %d GPUs" %
          (out, v100 + t4 + 1, v100, v100_racks, t4, v100 * 8 + t4 * 4))


if __name__ == "__main__":
    main()
