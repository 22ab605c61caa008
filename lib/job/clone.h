#pragma once
// Copying jobs as a use case (`paictl job clone`, `job resubmit`, `job sweep`):
// a request -> plan_clone / plan_resubmit / plan_sweep, which change nothing:
// the job's stored config read from the server (or the sweep's file), the
// overrides applied, every job checked as the server would check it, the
// target cluster asked whether it can take them -> apply_clone(plan, deps,
// on_event): the jobs posted, at most `max_parallel` unfinished at a time, and
// tagged.
//
//   auto plan = plan_clone(request, deps, print_findings);  // reads, asks; sends nothing
//   ...print the plan; a dry run stops here...
//   auto outcome = apply_clone(*plan, deps, on_event);
//
// The clusters are what the front end opens (its registry, the credentials,
// the HTTP settings): the source job's cluster is given, the target is opened
// through CloneDeps::open_target once the job is read.

#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/client.h"
#include "diag/diagnostic.h"
#include "job/job_file.h"
#include "job/placement.h"
#include "job/sweep.h"
#include "util/clock.h"
#include "util/result.h"

namespace pai::job {

// One cluster as the front end opened it.
struct CloneCluster {
  std::string name;  // its registry name
  std::string user;  // who submits
  std::shared_ptr<api::Client> api;
};

struct CloneDeps {
  // The cluster the job is read from (clone, resubmit).
  CloneCluster source;
  // Opens the named cluster the copy goes to (clone with another target, and
  // sweep with "" for the current one). An error means the front end could not
  // and has told the user why.
  std::function<util::Result<CloneCluster>(const std::string& name)> open_target;
  std::function<std::time_t()> now;   // for generated names; empty: the system clock
  util::Clock clock;                  // apply's waits; empty: the real clock
  std::function<bool()> interrupted;  // apply stops waiting when it says so; empty: never
};

// `paictl job clone`: a job's stored config to a cluster, changed by `overrides`.
struct CloneRequest {
  std::string user;            // the job's owner
  std::string name;            // the job's name on deps.source
  std::string target_cluster;  // "" or the source's name: the same cluster
  Overrides overrides;         // no name: NAME-clone-<UTC time>
  bool dry_run = false;        // the plan keeps the body with its secrets masked
};

// `paictl job resubmit`: a failed or stopped job again, on its cluster.
struct ResubmitRequest {
  std::string user;
  std::string name;
  Overrides overrides;  // no name: NAME-r1, NAME-r2, ... the first free one
  bool force = false;   // a job that did not fail or stop too
  bool dry_run = false;
};

// `paictl job sweep`: one file, one job per combination of the axes' values.
struct SweepRequest {
  std::string file;
  std::string cluster;  // "": the current one
  std::vector<SweepAxis> axes;
  std::string vc;          // "": the file's
  std::string sweep_id;    // "": the UTC time
  int max_parallel = 0;    // at most this many jobs unfinished at a time; 0: no limit
  double interval_s = 10;  // with max_parallel: between two looks at the running jobs
  bool dry_run = false;
};

struct CloneError {
  enum class Kind {
    Input,       // `message`: the file cannot be read, has errors (`findings`), is too large,
                 // or the sweep's names collide
    NotOpened,   // CloneDeps::open_target failed; the front end has said why
    Remote,      // a cluster could not be asked: `api`, about `cluster`, while `message`
    BadConfig,   // the stored config is not a job document (`message`)
    HasSecrets,  // the stored config's secrets are masked (`message`); it cannot be copied
    Refused,     // the target cannot take the job (`message`, `evaluation`'s failed checks)
    NotEnded,    // resubmit: the job is `state`, not failed or stopped
    NoFreeName,  // resubmit: `base`-r1 ... -r100 are taken
    NameTaken,   // sweep: the target already has job `job_id`
  };
  Kind kind = Kind::Input;
  std::string message;
  std::string cluster;
  std::optional<api::Error> api;
  diag::List findings;
  std::optional<Evaluation> evaluation;
  std::string state;   // NotEnded
  std::string base;    // NoFreeName
  std::string job_id;  // NameTaken
};

// One job to post.
struct PlannedJob {
  std::string name;
  std::string job_id;  // USER~NAME on the target
  std::string label;   // sweep: its values ("lr0.1-bs32")
  Overrides overrides;
  std::string body;         // what is sent
  std::string masked_body;  // dry run (clone, resubmit): the body with secrets masked
  std::vector<std::string> tags;
};

struct ClonePlan {
  bool sweep = false;
  CloneCluster target;
  JobRequest job;         // what the (first) job asks for
  Evaluation evaluation;  // the target's checks of the (first) job; eligible
  diag::List findings;    // the (first) job's warnings
  std::string tag;        // sweep: every job's tag
  int max_parallel = 0;
  double interval_s = 10;
  bool dry_run = false;
  std::vector<PlannedJob> jobs;  // in the order they are posted
};

using ClonePlanResult = util::Result<ClonePlan, CloneError>;
using CheckedFn = std::function<void(const diag::List& findings)>;

// Reads the job's config from deps.source, opens the target, names the copy,
// checks it (its findings go to `on_checked`, with or without errors) and asks
// the target whether it can take it. Sends no job.
ClonePlanResult plan_clone(const CloneRequest& request, const CloneDeps& deps,
                           const CheckedFn& on_checked = {});
// Reads the job from deps.source (refused unless it failed or stopped, or
// force), its config, finds a free name; then as plan_clone on the same cluster.
ClonePlanResult plan_resubmit(const ResubmitRequest& request, const CloneDeps& deps,
                              const CheckedFn& on_checked = {});
// Reads the file, opens the target, expands the axes into jobs, checks the
// file with the first job's values and asks the target about it, and that no
// other job's name is taken.
ClonePlanResult plan_sweep(const SweepRequest& request, const CloneDeps& deps,
                           const CheckedFn& on_checked = {});

struct CloneEvent {
  enum class Kind {
    Submitted,  // `job` was posted (and tagged)
    TagFailed,  // `job` was posted but tagging it failed (`api`); the jobs go on
  };
  Kind kind = Kind::Submitted;
  const PlannedJob* job = nullptr;
  std::string tag;                // TagFailed
  std::optional<api::Error> api;  // TagFailed
  std::string message;            // Submitted: the server's answer
};

struct CloneFailure {
  enum class Kind {
    Submit,       // posting `job_id` failed
    Poll,         // reading the running job `name` failed
    Interrupted,  // CloneDeps::interrupted said so while waiting
  };
  Kind kind = Kind::Submit;
  std::string name;
  std::string job_id;
  std::optional<api::Error> api;
};

struct CloneOutcome {
  std::vector<std::string> submitted;   // the job ids posted, in order
  std::vector<std::string> messages;    // the server's answer to each
  std::optional<CloneFailure> failure;  // the jobs after it were not posted
};

// Posts the plan's jobs in order and tags them; with max_parallel, first waits
// (CloneDeps::clock, interval_s) until fewer jobs of the plan are unfinished.
// Stops at the first failure. Sends nothing for a dry run's plan.
CloneOutcome apply_clone(const ClonePlan& plan, const CloneDeps& deps,
                         const std::function<void(const CloneEvent&)>& on_event = {});

// Whether a job state is final (SUCCEEDED, FAILED, STOPPED).
bool job_state_final(const std::string& state);

}  // namespace pai::job
