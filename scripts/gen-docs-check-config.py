#!/usr/bin/env python3
"""Regenerates the code reference of docs/check-config.md from the case corpus
(tests/data/config/cases/) and the real output of paictl, so that every example
in the docs is one that the tests run.

    scripts/gen-docs-check-config.py build/paictl

rewrites everything after the "## Diagnostic codes" heading of docs/check-config.md.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = os.path.join(ROOT, "tests", "data", "config", "cases")

FIX = {
    "F001": "Fix the YAML at the reported position; the hint says what the reader expected there.",
    "F002": "Keep one of the two keys. PyYAML (OpenPAI) and Go (HiveD) silently keep the last one.",
    "F003": "Fill the file, or leave it out of the cluster directory.",
    "F004": "Remove the `---` separator, or split the documents into separate files.",
    "F005": "Give the value the type the message names; the hint shows how.",
    "F006": "Fix the spelling (the hint suggests the closest known key) or remove the key.",
    "F007": "Add the key.",
    "F008": "Check the path and its permissions. Exit code 2.",
    "F009": "Name the file after its kind (`layout.yaml`, `config.yaml`, `services-configuration.yaml`, `hivedscheduler.yaml`). Exit code 2: the input is not a cluster file.",
    "F010": "Point paictl at the directory that holds the cluster files.",
    "F012": "Add the file the message names (`config.yaml` needs at least `user` and `docker_image_tag`; `layout.yaml` comes from `paictl plan --out DIR`), or let `paictl init DIR` write the directory ([init.md](init.md)). `paictl install DIR` refuses the directory with the same words.",
    "F011": "Quote the value to keep the text (`\"yes\"`, `\"0777\"`), or write what the consumer should see (`true`, `511`). OpenPAI reads its files with PyYAML and HiveD its config with Go's yaml.v2, both YAML 1.1; paictl reads YAML 1.2. HiveD reads the original text into string fields, so for the HiveD config only number and boolean fields are affected.",
    "L001": "Use a lower-case RFC 1123 name: it becomes the Kubernetes node name.",
    "L002": "Write a dotted-quad IPv4 address.",
    "L003": "Give every machine its own hostname.",
    "L004": "Give every machine its own IP address.",
    "L005": "Use a machine-type defined under `machine-sku` (the hint suggests the closest one).",
    "L006": "Mark exactly one machine `pai-master: \"true\"`.",
    "L007": "Keep `pai-master: \"true\"` on one machine only.",
    "L008": "Mark the machines that run jobs `pai-worker: \"true\"`.",
    "L009": "Set `pai-worker: \"false\"` on the master.",
    "L010": "Quote it: `pai-worker: \"true\"`. OpenPAI's schema accepts only the strings.",
    "L011": "Write a Kubernetes quantity: `220Gi` (binary) or `220G` (decimal).",
    "L012": "Convert the layout to the v1.5+ schema, as the hint describes.",
    "L013": "Remove the unused SKU, or assign it to machines.",
    "L014": "Use a positive count; remove `computing-device` for a CPU-only machine.",
    "L015": "Use the device-plugin resource name: `nvidia.com/gpu`, `amd.com/gpu` or `enflame.com/dtu`.",
    "L016": "Give the machine a role, or remove it.",
    "C001": "Rename `docker_cache_htpasswd` to `docker_cache_registry_htpasswd`.",
    "C002": "Remove the key: v1.5+ reads the device type from `layout.yaml`.",
    "C003": "Use one of the accepted values named in the message.",
    "C004": "Remove the quotes: `enable_hived_scheduler: false`. The installer tests `is False`, which a string never is.",
    "C005": "Set the backend's settings (`docker_cache_azure_account_name` and `_key`, or `docker_cache_fs_mount_path`).",
    "C006": "Add `image-pull-progress-deadline: 10m` to `kubelet_custom_flags` to keep OpenPAI's default.",
    "C007": "Keep the host daemon ports at 40000 or above (or move the rest-server's job port range).",
    "C009": "Make the path name an existing file: absolute, or relative to the directory of `config.yaml` (`paictl init --ssh-config FILE` writes an absolute path). An absolute `ssh_key_file_path` is OpenPAI's, read where install runs, and is not checked.",
    "C008": "Give `password`, or allow passwordless sudo for `user` on every host. `password` is optional: key-only SSH as root needs none (OpenPAI's inventory then has an empty `ansible_ssh_pass`). `paictl check hosts` shows whether sudo asks for a password (`Privileges`).",
    "A001": "Remove `client-secret`; put the secret in a file of mode 0600 and name it with `client-secret-file`, or set `AZURE_CLIENT_SECRET` (docs/azure.md).",
    "A002": "Use the id Azure shows: `az account list -o table` (subscription, tenant), `az ad sp list` (client id), `az account list-locations` (location).",
    "A003": "Use IPv4 CIDRs; keep `subnet` inside `address-space`, and keep the Azure range apart from the on-prem network and from `kube_pods_subnet`/`kube_service_addresses`.",
    "A004": "Admit only the operator's address (`allowed-ssh-from: [203.0.113.10/32]`); the cluster's own traffic between sites needs no SSH rule.",
    "A005": "Name pools with lower-case letters, digits and `-`; use an Azure size (`Standard_…`); keep InfiniBand pools at 100 VMs or fewer, one placement group; a pool with `role: master` has `count: 1`, and only one pool has it.",
    "A006": "Keep one master: the Azure pool's VM (drop `pai-master: \"true\"` from the on-prem host) or the on-prem host (drop `role: master` from the pool). Install writes the master pool's VM into layout.yaml marked `# azure pool NAME`; that entry is the master and no finding.",
    "S001": "Write the HiveD config as a block string: `config: |` with the config indented below it.",
    "S002": "Use a port number between 1 and 65535.",
    "S003": "Make `schedule-port-start` smaller than `schedule-port-end`.",
    "S004": "Use a lower-case RFC 1123 name for `cluster-id`.",
    "H001": "Define the cell type under `cellTypes`, or fix the name (the hint suggests the closest one).",
    "H002": "Mark the cell type that is one machine `isNodeLevel: true`; list cells at node level or above.",
    "H003": "Set that `pinnedCellId` on the physical cell to pin, or fix the ID.",
    "H004": "Use the GPU index (an integer) as a leaf cell's address.",
    "H005": "Lower `cellNumber`, or add physical cells to the chain. HiveD applies the same rule at start-up and refuses to start.",
    "H006": "Start the VC's cell type with the top type of a `physicalCells` entry.",
    "H007": "Break the cycle: a chain ends in a leaf type that is not defined under `cellTypes`.",
    "H008": "A warning: HiveD runs the config with a leaf type of that name (its own design example has `IB-DGX2-V100-V100`). If it is a typo, fix the spelling; if it is a leaf type, declare it under `skuTypes` to say so.",
    "H009": "List at most `childCellNumber` children, or raise `childCellNumber`.",
    "H010": "Describe a machine with a missing device with its own cell type, so the capacity checks stay right.",
    "H011": "Give each cell a distinct address, and each machine one node-level cell per chain.",
    "H012": "Give every pinned cell its own ID.",
    "H013": "Pin a cell in one VC only, once.",
    "H014": "Write the path from the chain's top type down, with the chain's own types.",
    "H015": "A warning: HiveD accepts any VC name (its design example uses `VC1`); OpenPAI's manual asks for lower-case RFC 1123 labels (at most 63 characters).",
    "H016": "Use a positive `childCellNumber`, and a `cellNumber` of 0 or more.",
    "H017": "Set `isNodeLevel: true` only on the type that is one machine.",
    "H018": "Remove `cellType` from child cells, or fix the parent's `childCellType`.",
    "H019": "Set `cellAddress` of node-level cells to the node's hostname.",
    "H020": "Rename `gpuTypes` to `skuTypes`.",
    "H021": "Declare the leaf type under `skuTypes` with `gpu`, `cpu` and `memory` per leaf cell.",
    "H022": "Use a positive number for `cpu`, 0 or 1 for `gpu`, and a quantity such as `54Gi` for `memory`.",
    "H023": "Remove the type, or add physical cells that use it.",
    "H024": "Nothing to fix: an info. Give the capacity to a VC if it should be guaranteed.",
    "H025": "Add `virtualClusters`.",
    "H026": "A warning: HiveD accepts `cellNumber: 0` (its own tests use it) and guarantees nothing. Remove the entry or give the number of cells the VC needs.",
    "X001": "Use the machine's `layout.yaml` hostname as the node-level `cellAddress`.",
    "X002": "Match the node's leaf cells to its SKU's `computing-device` count (or, for CPU SKUs, at most its vcores).",
    "X003": "Lower `skuTypes` cpu or memory per leaf so that a full node fits its machine SKU. The finding is reported once, at the value to edit; the machine SKU and every node it affects follow as `note:` lines (`related` in JSON, `relatedLocations` in SARIF).",
    "X004": "Add a node-level cell for the worker, or drop `pai-worker: \"true\"`.",
    "X005": "Remove the master from the HiveD cells.",
    "X006": "Enable the HiveD scheduler, or keep one kind of worker.",
    "X007": "Use a machine type of `machine-sku` in layout.yaml (`paictl plan --profile azure-nd96asr-v4` writes one for that size).",
}


def run(paictl, args):
    p = subprocess.run([paictl] + args, capture_output=True, text=True, cwd=ROOT)
    return p.stdout


def main():
    paictl = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "paictl")
    rules = json.loads(run(paictl, ["check", "config", "--list-rules", "-o", "json"]))
    if isinstance(rules, dict):
        rules = rules["items"]
    cases = sorted(os.listdir(CASES))
    out = ["<!-- Generated by scripts/gen-docs-check-config.py from tests/data/config/cases; do not edit"
           " below this line. -->", ""]
    for r in rules:
        code = r["code"]
        out.append("### %s %s" % (code, r["name"]))
        out.append("")
        out.append("*%s.* %s" % (r["severity"].capitalize(), r["summary"] + "."))
        out.append("")
        case = next((c for c in cases if c.startswith(code + "-")), None)
        if case:
            d = os.path.join(CASES, case)
            rel = os.path.relpath(d, ROOT)
            j = json.loads(run(paictl, ["check", "config", "-o", "json", rel]))
            diag = next((x for x in j["diagnostics"] if x["code"] == code), None)
            if diag:
                fname = diag["file"]
                lines = open(os.path.join(ROOT, fname)).read().split("\n")
                lo = max(1, diag["line"] - 3)
                hi = min(len(lines), diag["line"] + 2)
                out.append("Wrong (`%s`, %s):" % (fname, open(os.path.join(d, "README")).read().strip()))
                out.append("")
                out.append("```yaml")
                for n in range(lo, hi + 1):
                    out.append("%4d  %s" % (n, lines[n - 1]))
                out.append("```")
                out.append("")
                out.append("paictl says:")
                out.append("")
                out.append("```")
                out.append("%s:%d:%d: %s[%s]: %s" % (os.path.basename(fname), diag["line"], diag["column"],
                                                     diag["severity"], code, diag["message"]))
                if diag["hint"]:
                    out.append("  hint: " + diag["hint"])
                for r in diag.get("related", []):
                    out.append("%s:%d:%d: note: %s" % (os.path.basename(r["file"]), r["line"], r["column"],
                                                       r["message"]))
                out.append("```")
                out.append("")
        out.append("Fix: " + FIX.get(code, "see the hint."))
        out.append("")
    doc = os.path.join(ROOT, "docs", "check-config.md")
    head = open(doc).read().split("## Diagnostic codes")[0]
    open(doc, "w").write(head + "## Diagnostic codes\n\n" + "\n".join(out))


if __name__ == "__main__":
    main()
