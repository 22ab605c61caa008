#pragma once
// paictl restore CLUSTER_DIR --from FILE as a use case (usecase.h;
// docs/backup.md). The archive is verified first (backup_archive.h: truncated,
// tampered, unreadable -> refused, the member named) and must be of this
// cluster (name, masters' and nodes' addresses) unless forced; a refusal
// contacts no host. Then, on the master, each step journaled in
// CLUSTER_DIR/.paictl/restore.json and each idempotent on the host, so that a
// re-run after a kill at any point finishes the same restore:
//   upload        the snapshot to SNAP (checked by its SHA-256)
//   etcd-restore  `etcdctl snapshot restore` into a new directory NEW
//   stop          the static pod manifests moved out of /etc/kubernetes/manifests
//                 into STASH; wait until etcd and the API server stop
//   swap          DATA/member -> OLD/member, NEW/member -> DATA/member (two
//                 renames; the host's directories say which of them happened)
//   pki           /etc/kubernetes/pki files that differ from the archive's put back
//   start         the manifests moved back; wait for etcd and the API server
//   database      OpenPAI's database dump restored (when the archive has one)
//   cluster-files CLUSTER_DIR's files that differ from the archive's replaced
//                 (the old ones kept as FILE.before-restore-TS)
//   verify        the namespaces and ConfigMaps the backup recorded are there,
//                 the HiveD ConfigMap is the archive's
//   hived         HiveD's inspect API answers /v1/inspect/clusterstatus within
//                 the wait (HiveD restarts after its ConfigMap changed) with the
//                 restored config's cells, nodes and VCs; skipped when the
//                 archive has no HiveD config
//   cleanup       SNAP and the empty NEW removed (OLD is kept)

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "deploy/backup.h"
#include "deploy/backup_archive.h"
#include "util/clock.h"

namespace pai::http {
class Client;
}

namespace pai::deploy {

struct RestoreRequest {
  std::string cluster_dir;
  std::string from;  // the archive
  bool dry_run = false;
  bool force_other_cluster = false;  // an archive of another cluster or other addresses
  // Restore again from the archive the last finished restore of this cluster
  // directory used (without it, that is done already: a re-run changes nothing).
  bool again = false;
  int wait_s = 300;  // for etcd, the API server and HiveD, each
  std::string templates_dir;
  // HiveD's inspect API; "": the master's HiveD port (the HiveD config's
  // webServerAddress), where HiveD's StatefulSet serves it.
  std::string hived;
};

struct RestoreDeps {
  InstallDeps install;
  std::function<double()> now;         // epoch seconds; null: the system clock
  util::Clock clock;                   // the waits; null members: Clock::real()
  http::Client* hived_http = nullptr;  // null: hived_http_client's (usecase.h)
  std::function<void(const std::string& step, const std::string& detail)> on_progress;
};

// Where one restore (its stamp TS) keeps things on the master. DATA is etcd's
// data directory; NEW and OLD are on DATA's file system so that the swap is
// two renames: siblings (DATA-restore-TS, DATA.before-restore-TS) unless DATA
// is a mount point, then inside it (DATA/restore-TS, DATA/before-restore-TS).
struct RestoreLayout {
  std::string data_dir, new_dir, old_dir, snapshot, stash;
  bool operator==(const RestoreLayout&) const = default;
};
RestoreLayout restore_layout(const std::string& data_dir, const std::string& ts, bool inside);

inline const std::vector<std::string>& restore_steps() {
  static const std::vector<std::string> k = {"upload", "etcd-restore", "stop",     "swap",
                                             "pki",    "start",        "database", "cluster-files",
                                             "verify", "hived",        "cleanup"};
  return k;
}

// What CLUSTER_DIR/.paictl/restore.json records of a restore.
struct RestoreJournal {
  std::string archive;  // its path
  std::string archive_sha256;
  std::string ts;
  RestoreLayout layout;
  EtcdSettings etcd;  // how etcd runs on the master (its manifest, read before the stop)
  std::vector<std::string> done;
  bool finished = false;
};
std::string restore_journal_json(const RestoreJournal& j);
util::Result<RestoreJournal> parse_restore_journal(const std::string& text);

// The host's scripts (exposed for the unit tests).
std::string restore_upload_script(const RestoreLayout& l, const std::string& sha256);
std::string restore_etcd_script(const RestoreLayout& l, const EtcdSettings& e);
std::string restore_stop_script(const RestoreLayout& l);
std::string restore_swap_script(const RestoreLayout& l);
std::string restore_start_script(const RestoreLayout& l);
std::string restore_cleanup_script(const RestoreLayout& l);

struct RestorePlan {
  RestoreRequest request;
  RestoreDeps deps;
  std::shared_ptr<const PreparedCluster> cluster;
  std::shared_ptr<const BackupArchive> archive;
  std::string archive_sha256;
  std::vector<std::string> mismatches;  // how the archive's cluster differs (forced)
  std::vector<std::string> pki_differ;  // archive members (pki/...) that differ or are missing
  std::vector<std::string> cluster_files_differ;  // cluster/NAME members that differ locally
  bool hived_differs = false;
  // Where the `hived` step asks HiveD; "" when the archive has no HiveD config
  // (nothing to check).
  std::string hived_url;
  // What the restore replaces, in words, one line each.
  std::vector<std::string> replaces;
  // An unfinished restore of this archive that a run resumes.
  std::optional<RestoreJournal> resume;
  // The last restore of this cluster directory, finished, was of this archive
  // (and the request does not say `again`): there is nothing to apply.
  std::optional<RestoreJournal> already;
  EtcdSettings etcd;  // the master's etcd now (or the resumed run's)
};
// Verifies the archive and its cluster without contacting a host (a refusal
// changes nothing anywhere, Kind::Input), then reads the master: its PKI's
// checksums, its etcd, the HiveD ConfigMap. Changes nothing.
UseCaseResult<RestorePlan> plan_restore(const RestoreRequest& request, const RestoreDeps& deps);

// One check of what the restore brought back: "objects" (the `verify` step:
// the namespaces, ConfigMaps and HiveD ConfigMap the backup recorded), "hived"
// (HiveD answers with the restored config).
struct RestoreCheck {
  std::string name;
  enum class Result { Verified, Failed, Skipped } result = Result::Verified;
  std::string detail;  // what was found, in words
};
const char* to_string(RestoreCheck::Result r);  // "verified", "failed", "skipped"

struct RestoreOutcome {
  std::optional<UseCaseError> error;
  std::string ts;
  RestoreLayout layout;
  std::vector<std::string> ran;      // steps run this time, in order
  std::vector<std::string> skipped;  // steps an earlier run had done
  std::vector<std::string> pki_restored;
  std::vector<std::string> files_replaced;  // local cluster files
  std::vector<std::string> missing;         // recorded objects not there after the restore
  std::vector<RestoreCheck> checks;         // the checks run this time, in order
  // Every step done (this run or an earlier one): the objects and HiveD
  // checked (HiveD skipped without its config in the archive).
  bool verified = false;
};
RestoreOutcome apply_restore(const RestorePlan& plan);

}  // namespace pai::deploy
