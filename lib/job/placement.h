#pragma once
// Checks a job against a cluster before it is sent, and picks a cluster for
// `--cluster auto`.
//
// A cluster can take the job when (the checks the webportal's job transfer
// makes, plus the server's own HiveD checks):
//   - it answered (its REST API and the user's token work);
//   - the job's virtual cluster exists and the user may submit to it;
//   - every skuType of the job is a SKU of that virtual cluster, and each task
//     role's resources can be made of that SKU (a SKU without GPUs cannot
//     serve a GPU request);
//   - the whole job fits in the virtual cluster's total resources (unless it is
//     opportunistic, jobPriorityClass: oppo);
//   - the storages the job names exist for the user;
//   - the user has no job of that name yet (names are unique per user, for
//     finished jobs too).
// Where the caller could ask the cluster's HiveD (its inspect API), `cells`
// holds HiveD's verdict on the live state (lib/hived/fit.h): whether the gang
// fits as cells now and, if not, its estimated start. It then decides "fits
// now" instead of the VC's free totals, and a request HiveD rejects drops the
// cluster.
// Ranking of the clusters that can take it:
//   1. those where the job fits now (as cells where HiveD was asked, else by
//      the VC's free resources), before those where it would wait;
//   2. then the earlier estimated start (now for those that fit; known before
//      unknown: clusters without HiveD have no estimate);
//   3. then the user's preference order (`paictl cluster prefer`), listed
//      clusters before the others;
//   4. then the larger headroom (free / requested, on the tightest of GPU,
//      CPU and memory);
//   5. then the name.

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "api/client.h"
#include "hived/reasons.h"
#include "job/job_file.h"

namespace pai::job {

// What a cluster's live HiveD says about the job.
struct CellVerdict {
  bool known = false;             // HiveD answered and judged the job
  std::string why_unknown;        // when not known: "no HiveD inspect API (...)", ...
  std::string verdict;            // fits | preempts | waits | rejected
  std::string reason;             // one line
  std::optional<double> start_s;  // estimated start, epoch seconds
  std::string estimate;           // how the start was estimated, or why it is unknown
  // A verdict other than fits: its reason codes, ranked (lib/hived/reasons.h);
  // and when it would run.
  std::vector<hived::Reason> reasons;
  std::optional<hived::WouldFit> would_fit;
};

// What paictl learned about one cluster for one job.
struct ClusterFacts {
  std::string cluster;  // registry name
  std::string user;
  std::optional<api::Error> error;  // the cluster could not be asked; nothing below is known
  std::vector<api::VirtualCluster> vcs;
  std::optional<api::UserInfo> user_info;  // unknown when the call failed
  std::optional<std::vector<api::SkuType>>
      skus;  // SKU types of the job's VC (unknown when the call failed)
  std::optional<std::vector<api::Storage>> storages;
  std::optional<bool> name_taken;
  std::optional<CellVerdict> cells;  // not asked when empty
};

// Asks one cluster what `evaluate` needs (VCs, user, SKU types of the job's VC,
// storages when the job names some, whether the name is taken).
ClusterFacts gather_facts(api::Client& client, const std::string& cluster, const std::string& user,
                          const JobRequest& job);

struct Check {
  std::string name;  // "reachable", "vc", "permission", "sku", "resources", "storages", "name"
  bool ok = true;
  std::string detail;  // one line
};

struct Evaluation {
  std::string cluster;
  bool eligible = false;
  std::vector<Check> checks;
  api::Resources free;   // of the job's VC
  api::Resources total;  // of the job's VC
  bool fits_now = false;
  std::optional<CellVerdict> cells;  // HiveD's verdict, when HiveD was asked
  std::optional<double> start_s;     // estimated start: HiveD's, or now when it fits by totals
  double headroom = 0;               // min over requested dimensions of free / requested
  int preference = -1;               // position in the preference list, -1 when not listed
  int rank = 0;                      // 1-based among eligible clusters, 0 when dropped
  std::string reason;                // why it was dropped, or how it fits
};

Evaluation evaluate(const JobRequest& job, const ClusterFacts& facts);

// Evaluates every cluster and ranks the eligible ones (see above). The result
// has the eligible clusters first in rank order, then the dropped ones by name.
std::vector<Evaluation> rank_clusters(const JobRequest& job, const std::vector<ClusterFacts>& facts,
                                      const std::vector<std::string>& preference);

// How many SKUs a task role takes on a SKU type, as the HiveD middleware
// computes it: max over GPU, CPU and memory of ceil(request / per-SKU), with a
// request on a dimension the SKU lacks as an error.
util::Result<int64_t> sku_count(const TaskRoleRequest& tr, const api::SkuType& sku);

}  // namespace pai::job
