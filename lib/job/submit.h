#pragma once
// Submitting a job as a use case (`paictl job submit`): a request ->
// plan_submit(request, deps, on_checked), which changes nothing: the job file
// checked as the server would check it, the body built, the clusters opened
// and asked at once, ranked (placement.h), and the target chosen ->
// apply_submit(plan): POST /api/v2/jobs to the target, and the server's answer.
//
//   auto plan = plan_submit(request, deps, print_findings);  // reads, asks; sends no job
//   ...print the decision; a dry run stops here...
//   auto outcome = apply_submit(*plan);
//
// The clusters are what the front end opens (its registry, the credentials,
// the HTTP settings) through SubmitDeps::open, called once the file is
// checked; the use case talks to them through their api::Client and, when it
// ranks every registered cluster, their HiveD's inspect API (cell_verdict.h).

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/client.h"
#include "diag/diagnostic.h"
#include "hived/inspect.h"
#include "http/client.h"
#include "job/cell_verdict.h"
#include "job/job_file.h"
#include "job/placement.h"
#include "util/result.h"

namespace pai::job {

struct SubmitRequest {
  std::string file;        // the job protocol v2 file; "-" reads stdin
  Overrides overrides;     // name, virtual cluster, parameters, export_params
  std::string cluster;     // the cluster's registry name; "": the current one
  bool automatic = false;  // every registered cluster, ranked, instead of `cluster`
  // How long running jobs run, to estimate when HiveD frees their cells
  // (automatic); none: each user's median run time of finished jobs.
  std::optional<double> expected_duration_s;
  bool dry_run = false;  // the plan keeps the body with its secrets masked
};

// HiveD's inspect API of a cluster: where it answers, and how it is reached.
struct HivedEndpoint {
  std::shared_ptr<http::Client> http;
  std::string base;        // hived::Client's base
  std::string token;       // sent to `token_host` only
  std::string token_host;  // the registered cluster's host
};

// One cluster the front end opened.
struct SubmitCluster {
  std::string name;  // its registry name
  std::string user;  // who submits
  std::shared_ptr<http::Client> http;
  std::shared_ptr<api::Client> api;  // over `http`
  // With automatic: its HiveD, for the cell verdict; none: HiveD is not asked.
  std::optional<HivedEndpoint> hived;
};

// What the front end opened for a request.
struct OpenedClusters {
  std::vector<SubmitCluster> clusters;
  // Registered clusters that could not be opened (their credentials cannot be
  // used; the front end said why). Automatic only: they are ranked as
  // unreachable.
  std::vector<std::string> unusable;
  std::vector<std::string> preference;  // the user's preference order of clusters
};

struct SubmitDeps {
  // Opens the cluster the request names (or the current one), or with
  // automatic every registered cluster. Called once the file is checked. An
  // error means the front end could not and has told the user why.
  std::function<util::Result<OpenedClusters>(const SubmitRequest&)> open;
  std::function<double()> now_s;  // epoch seconds; empty: the system clock
};

struct SubmitError {
  enum class Kind {
    Input,      // the file cannot be read, has errors (`findings`), or is too large
    NotOpened,  // SubmitDeps::open failed; the front end has said why
    NoCluster,  // automatic: no cluster is registered
    Remote,     // the one cluster could not be asked: `api`, about `cluster`
  };
  Kind kind = Kind::Input;
  std::string message;  // Remote: what was being done ("checking the job against the cluster")
  std::string cluster;
  std::optional<api::Error> api;
  diag::List findings;
};

// -v: how long the clusters' answers and the verdicts on them took.
struct SubmitTiming {
  std::chrono::steady_clock::time_point asked{};  // when the clusters were asked
  std::vector<VerdictTiming> clusters;            // one per opened cluster
};

// The clusters work at the same time, so what counts is from the last
// cluster's answers to the last verdict; each cluster's own share is there too.
struct VerdictTimes {
  size_t clusters = 0;  // clusters whose verdict was judged on HiveD's answers
  size_t bytes = 0;     // of HiveD's answers
  std::chrono::steady_clock::time_point last_arrived{};
  double answers_ms = 0;  // from asking to the last cluster's answers
  double slowest_ms = 0;  // the longest verdict after its own answers
  double cpu_ms = 0;      // CPU time of all verdicts
};
VerdictTimes verdict_times(const SubmitTiming& t);

struct SubmitPlan {
  SubmitRequest request;
  diag::List findings;                  // the file's warnings (errors refuse the plan)
  std::string body;                     // what is sent: the file with the overrides
  JobRequest job;                       // what the job asks for
  std::vector<SubmitCluster> clusters;  // opened, in the front end's order
  std::vector<Evaluation> evaluations;  // ranked: eligible first (rank_clusters)
  std::optional<SubmitCluster> target;  // the first eligible cluster; none: none can take it
  std::string job_id;                   // USER~NAME on the target
  std::string url;                      // where the job is posted on the target
  std::string masked_body;              // dry run: the body with secrets masked
  SubmitTiming timing;
  // The chosen cluster's evaluation, or nullptr.
  const Evaluation* chosen() const { return target ? &evaluations.front() : nullptr; }
};

// Checks the file (its findings go to `on_checked` before any cluster is
// opened, with or without errors), builds the body, opens the clusters and
// asks them at once: gather_facts, and with automatic HiveD's cell verdict;
// ranks them. Sends no job. With one cluster that cannot be asked, a Remote
// error.
util::Result<SubmitPlan, SubmitError> plan_submit(
    const SubmitRequest& request, const SubmitDeps& deps,
    const std::function<void(const diag::List& findings)>& on_checked = {});

struct SubmitOutcome {
  std::string cluster;
  std::string user;
  std::string name;
  std::string job_id;  // USER~NAME
  std::string virtual_cluster;
  std::string message;  // the server's answer
};

// POSTs the plan's body to its target. Only for a plan with a target.
util::Result<SubmitOutcome, api::Error> apply_submit(const SubmitPlan& plan);

// --- the decision, as its table shows it ------------------------------------------

// HiveD's verdict and the estimated start of one evaluation: the verdict, or
// "no HiveD" for an eligible cluster HiveD did not judge, else "-"; "now", the
// start as RFC 3339 UTC, "unknown", or "-".
struct DecisionCells {
  std::string cells;
  std::string start;
};
DecisionCells decision_cells(const Evaluation& e);

// An epoch time as RFC 3339 UTC ("2024-05-01T12:03:04Z").
std::string utc_time(double epoch_s);

}  // namespace pai::job
