// The catalogue's N family: what check hosts, install's pre-install checks and
// hived health find on a host (an offline bundle that does not fit it, GPUs in
// bad health), reported by the checks of lib/check/runner.cc and by
// lib/facts/gpu_findings.h.
#include "diag/codes_tables.h"

namespace pai::diag::codes_detail {

const std::vector<CodeInfo>& hosts_codes() {
  static const std::vector<CodeInfo> kCodes = {
      {.code = "N001",
       .name = "bundle-platform-mismatch",
       .severity = Severity::Error,
       .reporter = "check hosts, install",
       .title = "The offline bundle does not carry the host's OS and architecture",
       .meaning = "config.yaml's kube_offline_bundle is a bundle (manifest.json) whose platforms "
                  "(OS as ID-VERSION_ID of /etc/os-release, and the Debian architecture) do not "
                  "include this host's: its .debs would not install there. The pre-install check "
                  "OfflineBundle reports it, and install stops at its checks before it changes "
                  "any host.",
       .fix = "Build the bundle (paictl bundle build) on a connected machine with every host of "
              "layout.yaml, so that it carries each host's platform.",
       .example = "config.yaml names a bundle built for Ubuntu 20.04; the host runs Ubuntu 22.04 "
                  "on x86_64.\n\npaictl check hosts says:\n  FAIL  OfflineBundle  [N001] the "
                  "offline bundle carries ubuntu-20.04-amd64, not this host's "
                  "ubuntu-22.04-amd64\n  hint: build a bundle for ubuntu-22.04-amd64 (paictl "
                  "bundle build on a connected machine, with this host in layout.yaml)"},
      {.code = "N002",
       .name = "bundle-driver-mismatch",
       .severity = Severity::Error,
       .reporter = "check hosts, install",
       .title = "A GPU host runs another NVIDIA driver branch than the offline bundle's",
       .meaning = "The offline bundle was built for one NVIDIA driver branch (its manifest's "
                  "driver); a GPU host runs a driver of another branch, so the bundle's NVIDIA "
                  "packages were not chosen for it.",
       .fix = "Build the bundle for the hosts' driver branch, or move the host to the bundle's "
              "branch (paictl node maintain).",
       .example = "A bundle with \"driver\": \"535\"; a GPU host runs 550.127.05.\n\npaictl check "
                  "hosts says:\n  FAIL  OfflineBundle  [N002] the host runs NVIDIA driver "
                  "550.127.05, the offline bundle was built for branch 535\n  hint: build the "
                  "bundle for the hosts' driver branch, or move the host to 535 (paictl node "
                  "maintain)"},
      {.code = "N010",
       .name = "gpus-dropped",
       .severity = Severity::Error,
       .reporter = "hived health",
       .title = "A GPU worker lists fewer GPUs than its SKU",
       .meaning = "nvidia-smi on a GPU worker lists fewer GPUs than its machine SKU's "
                  "computing-device count (or fails). A GPU that fell off the bus leaves the "
                  "node Ready, and HiveD keeps placing pods on its cells: every pod placed on the "
                  "missing GPU fails. A quarantine candidate of paictl hived health (check hosts "
                  "reports it as GPUCount).",
       .fix = "Quarantine the node (paictl hived quarantine CLUSTER NODE), then look at the "
              "kernel log's XID lines and nvidia-smi -q; reset or replace the GPU, then paictl "
              "hived release CLUSTER NODE.",
       .example = "facts of tb-worker1: nvidia-smi lists 7 GPUs, its SKU gpu8-machine has 8\n\n"
                  "paictl hived health says:\ntb-worker1  gpu8-machine  [N010] gpusDropped  "
                  "nvidia-smi lists 7 of the SKU's 8 GPUs"},
      {.code = "N011",
       .name = "ecc-uncorrectable",
       .severity = Severity::Error,
       .reporter = "check hosts, hived health",
       .title = "A GPU has uncorrectable ECC errors",
       .meaning = "nvidia-smi -q -d ECC,PAGE_RETIREMENT counts uncorrectable ECC errors (double "
                  "bit, or SRAM and DRAM uncorrectable) since the driver loaded, or a row "
                  "remapping that failed. Jobs on that GPU fail or compute wrong results. "
                  "OpenPAI's alert manager cordoned such nodes (NvidiaSmiEccError).",
       .fix = "Quarantine the node (paictl hived quarantine), reset the GPU (or reboot) and "
              "watch the counter; a GPU that keeps them is replaced.",
       .example = "facts of tb-worker1: GPU 00000000:06:00.0, Volatile Double Bit Total : 2\n\n"
                  "paictl check hosts says (GPUEcc):\n[N011] uncorrectable ECC errors: GPU0 "
                  "(00000000:06:00.0): 2 uncorrectable since the driver loaded"},
      {.code = "N012",
       .name = "retired-pages",
       .severity = Severity::Warning,
       .reporter = "check hosts, hived health",
       .title = "A GPU's memory has a retirement pending, or too many retired pages",
       .meaning = "A page retirement (before Ampere) or a row remapping (Ampere and later) is "
                  "pending until the GPU is reset, or a GPU has retired more than 60 pages "
                  "(OpenPAI's NvidiaRetiredPage alert threshold): its memory is wearing out.",
       .fix = "Reset the GPU (or reboot the node) to apply a pending retirement; replace a GPU "
              "whose retirement table fills up.",
       .example = "facts of tb-worker1: GPU 00000000:06:00.0, Pending Page Blacklist : Yes\n\n"
                  "paictl check hosts says (GPURetiredPages):\n[N012] retired or remapped "
                  "memory: GPU0 (00000000:06:00.0): a page retirement pending until the GPU is "
                  "reset"},
      {.code = "N013",
       .name = "xid-error",
       .severity = Severity::Warning,
       .reporter = "check hosts, hived health",
       .title = "The kernel log has hardware XID errors",
       .meaning = "The NVIDIA driver logged an XID error that means failing hardware (48 double "
                  "bit ECC, 61-64, 74 NVLink, 79 fallen off the bus, 92, 94, 95, 119, 120, 140) "
                  "among the kernel log's last 50 XID lines (dmesg, else journalctl -k). XIDs of "
                  "a program's own faults (13, 31, 43) are not reported.",
       .fix = "Look the code up in NVIDIA's XID catalogue; quarantine the node, reset the GPU "
              "(79: reboot), and replace it when the error comes back.",
       .example = "facts of tb-worker1: [ 8811.524310] NVRM: Xid (PCI:0000:06:00): 79, pid=0, "
                  "name=, GPU has fallen off the bus.\n\npaictl check hosts says (GPUXid):\n"
                  "[N013] hardware XID errors in the kernel log (dmesg): Xid 79 on GPU0 "
                  "(00000000:06:00.0) (GPU has fallen off the bus.)"},
      {.code = "N014",
       .name = "driver-mismatch",
       .severity = Severity::Warning,
       .reporter = "hived health",
       .title = "A GPU worker runs another driver than its SKU's hosts",
       .meaning = "The NVIDIA driver nvidia-smi reports is not the SKU's: the one given for the "
                  "SKU, else the one most of the SKU's hosts run. A host left behind by an "
                  "upgrade may fail jobs built for the other driver.",
       .fix = "Change its driver with paictl node maintain, or quarantine the node until then.",
       .example = "facts of tb-worker2: driver 535.104.05; the other gpu8-machine hosts run "
                  "550.127.05\n\npaictl hived health says:\ntb-worker2  gpu8-machine  [N014] "
                  "driverMismatch  driver 535.104.05, the SKU's hosts run 550.127.05"},
  };
  return kCodes;
}

}  // namespace pai::diag::codes_detail
