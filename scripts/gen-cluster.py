#!/usr/bin/env python3
"""Writes a large, valid OpenPAI cluster for benchmarks: layout.yaml, config.yaml and
hivedscheduler.yaml with N machines (3/4 8-GPU V100 nodes in racks of 20, 1/4
4-GPU T4 nodes), one master, and 20 virtual clusters that fit exactly.

    scripts/gen-cluster.py 10000 /tmp/cluster-10k

With --mix, N 8-GPU workers of three SKUs instead (45 % V100 and 35 % A100 in racks
of 20, the rest H100 in one pool; 1,500 workers: 12,000 GPUs), one master and 20
VCs that fit exactly. With --services the HiveD config goes into
services-configuration.yaml (hivedscheduler.config), as an installed cluster keeps
it, instead of hivedscheduler.yaml.

    scripts/gen-cluster.py --mix --services 1500 /tmp/cluster-1500
"""
import os
import sys


def ip(i):
    i += 10
    return "10.%d.%d.%d" % (i // 65536 % 256, i // 256 % 256, i % 256)


def write_hived(out, h, services):
    if not services:
        open(os.path.join(out, "hivedscheduler.yaml"), "w").write("\n".join(h) + "\n")
        return
    s = ["cluster:", "  common:", "    cluster-id: pai", "  docker-registry:", "    namespace: openpai",
         "    domain: docker.io", "    tag: v1.8.0", "", "hivedscheduler:", "  config: |"]
    s += ["    " + line for line in h]
    open(os.path.join(out, "services-configuration.yaml"), "w").write("\n".join(s) + "\n")


def mix(n, out, services):
    """N 8-GPU workers: V100 and A100 racks of 20, H100 in one pool; 20 VCs."""
    rack_size = 20
    v_racks = max(1, round(n * 0.45 / rack_size))
    a_racks = max(1, round(n * 0.35 / rack_size))
    h100 = max(1, n - (v_racks + a_racks) * rack_size)
    skus = [("v100", "V100", v_racks), ("a100", "A100", a_racks)]
    lay = ["machine-sku:",
           "  master-machine:", "    mem: 64Gi", "    cpu:", "      vcore: 16"]
    for key, model, cpu, mem in (("v100", "V100", 80, 512), ("a100", "A100", 128, 1024),
                                 ("h100", "H100", 192, 2048)):
        lay += ["  %s-machine:" % key, "    computing-device:", "      type: nvidia.com/gpu",
                "      model: " + model, "      count: 8", "    mem: %dGi" % mem, "    cpu:",
                "      vcore: %d" % cpu]
    lay += ["machine-list:",
            "  - hostname: pai-master", "    hostip: 10.0.0.1", "    machine-type: master-machine",
            '    pai-master: "true"']
    k = 0
    for key, _, racks in skus:
        for r in range(racks):
            for j in range(rack_size):
                lay += ["  - hostname: %s-r%d-n%d" % (key, r, j), "    hostip: " + ip(k),
                        "    machine-type: %s-machine" % key, '    pai-worker: "true"']
                k += 1
    for j in range(h100):
        lay += ["  - hostname: h100-n%d" % j, "    hostip: " + ip(k), "    machine-type: h100-machine",
                '    pai-worker: "true"']
        k += 1
    open(os.path.join(out, "layout.yaml"), "w").write("\n".join(lay) + "\n")
    open(os.path.join(out, "config.yaml"), "w").write(
        "user: openpai\npassword: change-me\ndocker_image_tag: v1.8.0\n")
    h = ["physicalCluster:",
         "  skuTypes:",
         "    V100: {gpu: 1, cpu: 9, memory: 60Gi}",
         "    A100: {gpu: 1, cpu: 15, memory: 120Gi}",
         "    H100: {gpu: 1, cpu: 23, memory: 240Gi}",
         "  cellTypes:",
         "    V100-NVLINK: {childCellType: V100, childCellNumber: 4}",
         "    V100-NODE: {childCellType: V100-NVLINK, childCellNumber: 2, isNodeLevel: true}",
         "    V100-RACK: {childCellType: V100-NODE, childCellNumber: %d}" % rack_size,
         "    A100-NODE: {childCellType: A100, childCellNumber: 8, isNodeLevel: true}",
         "    A100-RACK: {childCellType: A100-NODE, childCellNumber: %d}" % rack_size,
         "    H100-NODE: {childCellType: H100, childCellNumber: 8, isNodeLevel: true}",
         "    H100-POOL: {childCellType: H100-NODE, childCellNumber: %d}" % h100,
         "  physicalCells:"]
    for key, model, racks in skus:
        for r in range(racks):
            h += ["  - cellType: %s-RACK" % model, "    cellAddress: %s-rack%d" % (key, r), "    cellChildren:"]
            h += ["    - cellAddress: %s-r%d-n%d" % (key, r, j) for j in range(rack_size)]
    h += ["  - cellType: H100-POOL", "    cellAddress: h100-pool", "    cellChildren:"]
    h += ["    - cellAddress: h100-n%d" % j for j in range(h100)]
    vcs = 20
    h.append("virtualClusters:")
    for v in range(vcs):
        h.append("  vc%02d:" % (v + 1))
        h.append("    virtualCells:")
        cells = []
        for _, model, racks in skus:
            cnt = racks // vcs + (1 if v < racks % vcs else 0)
            if cnt:
                cells += ["    - cellType: %s-RACK" % model, "      cellNumber: %d" % cnt]
        cnt = h100 // vcs + (1 if v < h100 % vcs else 0)
        if cnt:
            cells += ["    - cellType: H100-POOL.H100-NODE", "      cellNumber: %d" % cnt]
        if not cells:  # more VCs than cells: an empty one would be refused
            cells = ["    - cellType: H100-POOL.H100-NODE", "      cellNumber: 0"]
        h += cells
    write_hived(out, h, services)
    workers = (v_racks + a_racks) * rack_size + h100
    print("%s: %d machines (%d V100 and %d A100 in racks of %d, %d H100), %d GPUs" %
          (out, workers + 1, v_racks * rack_size, a_racks * rack_size, rack_size, h100, workers * 8))


def main():
    args = sys.argv[1:]
    use_mix = "--mix" in args
    services = "--services" in args
    args = [a for a in args if a not in ("--mix", "--services")]
    if len(args) != 2:
        sys.exit(__doc__)
    n = int(args[0])
    out = args[1]
    os.makedirs(out, exist_ok=True)
    if use_mix:
        mix(n, out, services)
        return
    rack_size = 20
    v100_racks = max(1, (n * 3 // 4) // rack_size)
    v100 = v100_racks * rack_size
    t4 = max(1, n - v100)

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
    write_hived(out, h, services)
    print("%s: %d machines (%d V100 in %d racks, %d T4), %d GPUs" %
          (out, v100 + t4 + 1, v100, v100_racks, t4, v100 * 8 + t4 * 4))


if __name__ == "__main__":
    main()
