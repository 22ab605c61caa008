#pragma once
// paictl backup CLUSTER_DIR [--out FILE] as a use case (usecase.h; docs/backup.md):
// one archive (backup_archive.h) of the cluster's etcd snapshot (`etcdctl
// snapshot save` on the master with etcd's client certificates, streamed back
// over SSH stdout), its PKI (/etc/kubernetes/pki, keys included), the cluster
// files of CLUSTER_DIR, the HiveD ConfigMap and OpenPAI's database dump when
// there is one; written atomically at mode 0600, then recorded as one line of
// CLUSTER_DIR/.paictl/backups.jsonl.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "deploy/backup_archive.h"
#include "deploy/host_plan.h"
#include "deploy/prepare.h"

namespace pai::deploy {

struct BackupRequest {
  std::string cluster_dir;
  std::string out;  // "": CLUSTER_DIR/backups/CLUSTER-YYYYMMDDTHHMMSSZ.tar.gz
  bool dry_run = false;
  int wait_s = 300;
  std::string templates_dir;
};

struct BackupDeps {
  InstallDeps install;
  std::function<double()> now;  // epoch seconds; null: the system clock
  // A line of progress (a step's name and what it did), for the front end.
  std::function<void(const std::string& step, const std::string& detail)> on_progress;
};

// What the master told about its cluster (read-only).
struct ClusterInspection {
  EtcdSettings etcd;
  std::string kubernetes_version;                   // the API server's /version gitVersion
  std::vector<std::string> namespaces, configmaps;  // sorted, "NS/NAME" for ConfigMaps
  std::string hived_configmap;  // `kubectl get configmap hivedscheduler-config -o json`; "" none
  std::string database;         // "daemonset.apps/postgresql" when OpenPAI's database runs; ""
};

// The script that prints what inspect_cluster reads (sections "@@paictl NAME@@").
std::string inspect_script(const std::string& ns);
// Parses that script's output; `master` gives the etcd defaults when the
// static pod's manifest is missing.
util::Result<ClusterInspection> parse_inspection(const std::string& out, const HostSpec& master);
// etcd's flags from its static pod manifest (kubeadm's `- --name=...` lines);
// what is missing is kubeadm's default for `master`.
EtcdSettings parse_etcd_manifest(const std::string& yaml, const HostSpec& master);
// The shell lines that set $E to etcdctl with the endpoint and etcd's client
// certificates (healthcheck-client, else apiserver-etcd-client), ETCDCTL_API=3,
// giving up after `timeout_s` (etcdctl waits that long for an etcd that is down).
std::string etcdctl_prelude(const std::string& endpoint, int timeout_s = 60);
// The backup's record line (no newline): {"time", "path", "sha256", "bytes", "cluster"}.
std::string backup_record_line(double time, const std::string& path, const std::string& sha256,
                               uint64_t bytes, const std::string& cluster);

struct BackupPlan {
  BackupRequest request;
  BackupDeps deps;
  std::shared_ptr<const PreparedCluster> cluster;
  std::string out;  // absolute
  std::string cluster_name;
  double time = 0;
  ClusterInspection inspection;
  // What the archive will hold, in words, one line each.
  std::vector<std::string> contents;
};
// Reads the cluster directory and asks the master what it holds; changes nothing.
UseCaseResult<BackupPlan> plan_backup(const BackupRequest& request, const BackupDeps& deps);

struct BackupOutcome {
  std::optional<UseCaseError> error;
  std::string path;
  uint64_t bytes = 0;
  std::string sha256;
  BackupManifest manifest;
  std::string record;  // the line appended to backups.jsonl
};
// Takes the snapshot, the PKI and the rest, writes the archive (temp + rename,
// 0600) and appends its record line.
BackupOutcome apply_backup(const BackupPlan& plan);

}  // namespace pai::deploy
