// The codes of `paictl check cluster` (K001-K099): a running cluster's health as
// the master, its etcd, HiveD and the cluster directory show it. Its certificates'
// findings are `certs check`'s (K100-K149, codes_certs.cc).
// docs/check-cluster.md has the command's real output.
#include "diag/codes_tables.h"

namespace pai::diag::codes_detail {

using diag::Severity;

const std::vector<CodeInfo>& cluster_codes() {
  static const std::vector<CodeInfo> kCodes = {
      {.code = "K001",
       .name = "master-unreachable",
       .severity = Severity::Error,
       .reporter = "check cluster",
       .title = "The master could not be reached over SSH",
       .meaning = "Every read of the cluster goes through the master (kubectl's credentials, "
                  "etcd's certificates): when it cannot be reached nothing else is checked, and "
                  "the command exits 3 as other commands do when a remote system fails.",
       .fix = "Check the address and the SSH settings (--ssh-config, --user, config.yaml's "
              "ssh_* keys); `paictl check hosts CLUSTER_DIR` says more about the host.",
       .example =
           "paictl: error[K001]: [pai-master] the master pai-master (127.0.0.1) could not be "
           "reached: connection to 127.0.0.1:1 refused"},
      {.code = "K002",
       .name = "api-unreadable",
       .severity = Severity::Error,
       .reporter = "check cluster",
       .title = "The API server did not answer the master's reads",
       .meaning = "The master was reached, but its API server did not answer (or there is no "
                  "/etc/kubernetes/admin.conf): the nodes, versions and cluster files are not "
                  "checked.",
       .fix = "Look at the control plane on the master (`kubectl get --raw=/readyz`, the "
              "kubelet's log); `paictl install CLUSTER_DIR` repairs a control plane it set up.",
       .example = "paictl: error[K002]: [pai-master] the API server did not answer on pai-master: "
                  "/api/v1/nodes: HTTP 000"},
      {.code = "K003",
       .name = "node-not-ready",
       .severity = Severity::Error,
       .reporter = "check cluster",
       .title = "A node is not Ready",
       .meaning =
           "The node's Ready condition is False or Unknown: its kubelet or container runtime "
           "is down, or the node cannot reach the API server. Nothing new runs there, and "
           "HiveD counts its cells as bad.",
       .fix = "On the node: `systemctl status kubelet containerd`, `journalctl -u kubelet`.",
       .example = "paictl: error[K003]: [tb-worker1] node tb-worker1 is not Ready (Unknown: "
                  "NodeStatusUnknown: Kubelet stopped posting node status.)"},
      {.code = "K004",
       .name = "node-cordoned",
       .severity = Severity::Warning,
       .reporter = "check cluster",
       .title = "A node is cordoned",
       .meaning = "The node is unschedulable: HiveD counts its cells as bad, so the VCs bound to "
                  "them lose guaranteed cells. A node paictl cordoned for a maintenance carries "
                  "the annotation paictl.io/maintenance (OPERATION RUN-ID): a run in progress, or "
                  "one that was killed before it uncordoned the node.",
       .fix = "`kubectl uncordon NODE` when its maintenance is over; a node a killed run left "
              "cordoned is finished and uncordoned by running that command again.",
       .example = "paictl: warning[K004]: [tb-worker1] node tb-worker1 is cordoned: HiveD counts "
                  "its cells as bad"},
      {.code = "K005",
       .name = "node-not-registered",
       .severity = Severity::Error,
       .reporter = "check cluster",
       .title = "A host of layout.yaml is not a node of the cluster",
       .meaning = "layout.yaml lists the host, but the API server has no Node of that name: it "
                  "never joined, or it was deleted.",
       .fix = "`paictl node add CLUSTER_DIR HOST` (or `paictl install CLUSTER_DIR`) joins it; "
              "`paictl node remove` takes it out of layout.yaml.",
       .example = "paictl: error[K005]: [tb-worker2] tb-worker2 of layout.yaml is not a node of "
                  "the cluster"},
      {.code = "K006",
       .name = "gpus-below-sku",
       .severity = Severity::Error,
       .reporter = "check cluster",
       .title = "A node has fewer GPUs allocatable than its SKU",
       .meaning = "The node's allocatable nvidia.com/gpu is below the computing-device count of "
                  "its machine-type in layout.yaml: a GPU fell off the bus, the driver or the "
                  "device plugin is broken. HiveD still places jobs on the missing GPUs' cells, "
                  "and they fail.",
       .fix = "`nvidia-smi` on the node, and the device plugin's pod there; cordon the node until "
              "it is repaired (HiveD then counts its cells as bad).",
       .example = "paictl: error[K006]: [pai-worker2] node pai-worker2 has 3 GPUs allocatable, its "
                  "SKU k80-machine has 4"},
      {.code = "K010",
       .name = "kubelet-newer-than-api",
       .severity = Severity::Error,
       .reporter = "check cluster",
       .title = "A kubelet is newer than the API server",
       .meaning = "Kubernetes' version skew policy: a kubelet may not be newer than the API "
                  "server it talks to.",
       .fix = "Upgrade the control plane first: `paictl upgrade CLUSTER_DIR --to 1.Y`.",
       .example =
           "paictl: error[K010]: [newer] the kubelet of newer is v1.31.0, newer than the API "
           "server's v1.30.10"},
      {.code = "K011",
       .name = "kubelet-too-old",
       .severity = Severity::Error,
       .reporter = "check cluster",
       .title = "A kubelet is more than 3 minor versions older than the API server",
       .meaning = "Kubernetes' version skew policy: a kubelet may be up to three minor versions "
                  "older than the API server, no more.",
       .fix = "Upgrade the node: `paictl upgrade CLUSTER_DIR --to 1.Y` brings every node to the "
              "control plane's version.",
       .example = "paictl: error[K011]: [four-older] the kubelet of four-older is v1.26.0, 4 minor "
                  "versions older than the API server's v1.30.10 (at most 3 are supported)"},
      {.code = "K012",
       .name = "version-not-kube-version",
       .severity = Severity::Warning,
       .reporter = "check cluster",
       .title = "The API server or a kubelet is not at config.yaml's kube_version",
       .meaning = "config.yaml's kube_version is the release paictl installs and upgrades to; a "
                  "component at another version is an upgrade left half done, or a "
                  "kube_version edited without an upgrade.",
       .fix = "`paictl upgrade CLUSTER_DIR --to KUBE_VERSION`, or set kube_version to the "
              "release the cluster runs.",
       .example = "paictl: warning[K012]: [api-server] the API server is v1.31.2, config.yaml's "
                  "kube_version is 1.30.10"},
      {.code = "K020",
       .name = "etcd-unhealthy",
       .severity = Severity::Error,
       .reporter = "check cluster",
       .title = "etcd on a master is not healthy",
       .meaning = "`etcdctl endpoint health`, run on the master with etcd's certificates, failed: "
                  "etcd is down, has lost its quorum or cannot commit. The API server cannot "
                  "write while it is so.",
       .fix = "Look at etcd's log on the master (its static pod); `paictl restore CLUSTER_DIR "
              "--from ARCHIVE` when its data is lost.",
       .example = "paictl: error[K020]: [pai-master] etcd on pai-master is not healthy: "
                  "https://10.0.0.1:2379 is unhealthy: failed to commit proposal: context deadline "
                  "exceeded; Error: unhealthy cluster"},
      {.code = "K021",
       .name = "etcd-unchecked",
       .severity = Severity::Warning,
       .reporter = "check cluster",
       .title = "etcd's health could not be checked on a master",
       .meaning = "The master has no etcdctl, or no etcd certificates under "
                  "/etc/kubernetes/pki/etcd (an external etcd), or could not be reached: etcd's "
                  "health is unknown.",
       .fix = "Install etcdctl on the master (Debian and Ubuntu: etcd-client); an external etcd "
              "is checked where it runs.",
       .example = "paictl: warning[K021]: [pai-master] etcd's health on pai-master could not be "
                  "checked: no etcdctl on the host"},
      {.code = "K030",
       .name = "no-backup",
       .severity = Severity::Warning,
       .reporter = "check cluster",
       .title = "The cluster has no backup yet",
       .meaning = "CLUSTER_DIR/.paictl/backups.jsonl, where `paictl backup` records every backup, "
                  "is missing or empty: a lost master could not be restored.",
       .fix = "`paictl backup CLUSTER_DIR`.",
       .example = "paictl: warning[K030]: [backups] no backup of this cluster yet (no "
                  "cluster/.paictl/backups.jsonl)"},
      {.code = "K031",
       .name = "backup-too-old",
       .severity = Severity::Warning,
       .reporter = "check cluster",
       .title = "The last backup is older than --backup-max-age",
       .meaning = "The last line of CLUSTER_DIR/.paictl/backups.jsonl is older than "
                  "--backup-max-age (default 7 days): a restore would lose what changed since.",
       .fix = "`paictl backup CLUSTER_DIR`.",
       .example =
           "paictl: warning[K031]: [backups] the last backup is 9 days old (2026-11-26 19:45 "
           "UTC, /var/backups/pai-1.tar), more than --backup-max-age 7 days"},
      {.code = "K032",
       .name = "backup-record-unreadable",
       .severity = Severity::Warning,
       .reporter = "check cluster",
       .title = "The backups record cannot be read",
       .meaning = "CLUSTER_DIR/.paictl/backups.jsonl exists, but its last line is not a JSON "
                  "object with a numeric \"time\" (as `paictl backup` writes it), or the file "
                  "cannot be read: the age of the last backup is unknown.",
       .fix = "Repair or remove the last line; `paictl backup CLUSTER_DIR` appends a good one.",
       .example =
           "cluster/.paictl/backups.jsonl:2: warning[K032]: [backups] the last line is not a "
           "backup record: no numeric \"time\""},
      {.code = "K040",
       .name = "config-drift",
       .severity = Severity::Warning,
       .reporter = "check cluster",
       .title = "A cluster file differs from the cluster's copy",
       .meaning = "The cluster keeps the cluster files it was installed or last pushed with "
                  "(ConfigMap and Secret openpai/pai-configuration); a file of the cluster "
                  "directory differs from that copy, as `paictl config diff` shows.",
       .fix = "`paictl config diff CLUSTER_DIR` shows how; `paictl config push CLUSTER_DIR` makes "
              "the cluster's copy yours, `paictl config pull --force` takes the cluster's.",
       .example = "cluster/config.yaml: warning[K040]: [config.yaml] config.yaml differs from the "
                  "cluster's copy"},
      {.code = "K041",
       .name = "no-cluster-files",
       .severity = Severity::Warning,
       .reporter = "check cluster",
       .title = "The cluster holds no cluster files",
       .meaning = "The ConfigMap and Secret openpai/pai-configuration are missing: the cluster "
                  "was not installed by paictl, or its files were deleted, so config drift "
                  "cannot be checked.",
       .fix = "`paictl config push CLUSTER_DIR`.",
       .example = "paictl: warning[K041]: [openpai/pai-configuration] the cluster holds no "
                  "cluster files: config drift is not checked"},
      {.code = "K050",
       .name = "hived-unreachable",
       .severity = Severity::Warning,
       .reporter = "check cluster",
       .title = "HiveD's inspect API could not be read",
       .meaning = "HiveD drift and its bad and doomed cells are not checked; everything else is.",
       .fix = "Check --hived URL (default: config.yaml's hived_url, else the master's port "
              "30096) and HiveD's pod (`kubectl -n openpai get pods`).",
       .example =
           "paictl: warning[K050]: [hived] HiveD could not be read at http://hived.test:30096: "
           "reading the cluster status: ..."},
      {.code = "K051",
       .name = "hived-node-missing",
       .severity = Severity::Warning,
       .reporter = "check cluster, hived drift",
       .title = "A node of the HiveD config that HiveD does not list",
       .meaning = "HiveD runs another config than the cluster directory's.",
       .fix = "`paictl hived diff` shows what a restart on the directory's config does; `paictl "
              "hived apply` makes it HiveD's.",
       .example = "paictl: warning[K051]: [tb-worker2] in the HiveD config, but HiveD does not "
                  "list it"},
      {.code = "K052",
       .name = "hived-node-unexpected",
       .severity = Severity::Warning,
       .reporter = "check cluster, hived drift",
       .title = "A node HiveD lists that the HiveD config has no cell on",
       .meaning = "HiveD runs another config, or the node left the cluster files.",
       .fix = "`paictl hived diff`, then `paictl hived apply`.",
       .example = "paictl: warning[K052]: [tb-worker9] HiveD lists it, but the HiveD config has "
                  "no cell on it"},
      {.code = "K053",
       .name = "hived-node-bad",
       .severity = Severity::Warning,
       .reporter = "check cluster, hived drift",
       .title = "HiveD sees a node bad that Kubernetes shows Ready and schedulable",
       .meaning = "HiveD counts a node's cells as bad when the node is not Ready or is cordoned; "
                  "a node that is neither yet bad in HiveD's eyes means HiveD has not caught up "
                  "with it. (A node not Ready or cordoned is reported as K003 or K004 instead.)",
       .fix = "`kubectl describe node NODE`; HiveD's log (`kubectl -n openpai logs` of its pod).",
       .example =
           "paictl: warning[K053]: [pai-worker2] HiveD sees it bad, but the node is Ready and "
           "schedulable"},
      {.code = "K054",
       .name = "hived-worker-uncovered",
       .severity = Severity::Warning,
       .reporter = "check cluster, hived drift",
       .title = "A GPU worker of layout.yaml that no HiveD cell covers",
       .meaning = "Nothing HiveD schedules runs on it.",
       .fix = "`paictl plan` regenerates the cells from the layout and the facts.",
       .example = "paictl: warning[K054]: [tb-worker2] a worker of layout.yaml (gpu-machine) that "
                  "no HiveD cell covers: nothing is scheduled on it"},
      {.code = "K055",
       .name = "doomed-cells",
       .severity = Severity::Warning,
       .reporter = "check cluster",
       .title = "A VC's guaranteed cells are bound to bad cells",
       .meaning = "HiveD binds bad physical cells to a VC's virtual cells when its free cells run "
                  "out (doomed bad cells), so the VC sees the failure: jobs of that VC that "
                  "need those cells wait.",
       .fix = "Repair or uncordon the bad nodes (`paictl hived status` shows the cells).",
       .example = "paictl: warning[K055]: [default] VC default has 4 of its 4 guaranteed "
                  "gpu-machine cells bound to bad cells"},
  };
  return kCodes;
}

}  // namespace pai::diag::codes_detail
