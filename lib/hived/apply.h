#pragma once
// Changing the config HiveD runs, safely (`paictl hived apply`).
//
// HiveD reads its config only when it starts (and OpenPAI's pod copies it from
// the ConfigMap at start), so a change is: the diff against the live state
// (lib/hived/diff.h), a refusal when running guaranteed groups would be lazily
// preempted, the config pushed, the scheduler restarted, a wait until HiveD's
// inspect API shows the new config with every node healthy, and what happened
// to each group against the plan.
//
//   auto configs = load_apply_configs(request, runner);     // the two configs, checked
//   auto plan = plan_hived_apply(request, *configs, hived);  // the diff; changes nothing
//   ...print it, ask...
//   auto outcome = apply_hived_apply(*plan, hived, runner, clock, on_event);
//
// The commands are shell commands the user gave (or kubectl's, built from
// `kubectl`), run through util::ProcessRunner; the waits go through util::Clock.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hived/config_file.h"
#include "hived/diff.h"
#include "hived/inspect.h"
#include "util/clock.h"
#include "util/process.h"
#include "util/result.h"

namespace pai::hived {

struct ApplyRequest {
  std::string new_path{};  // the new config: a cluster directory or a file
  std::string
      current_path{};  // the config HiveD runs now; "": read from its ConfigMap with `kubectl`
  std::string ns = "openpai";       // HiveD's namespace
  std::string kubectl = "kubectl";  // how to run kubectl, as a shell command
  // The push, as a shell command that gets the new config on its stdin and in
  // the file $PAICTL_HIVED_CONFIG; "": kubectl apply of the ConfigMap
  // hivedscheduler-config as install renders it (from `templates_dir`).
  std::string push_command{};
  // The restart, as a shell command; "": kubectl rollout restart of HiveD's statefulset.
  std::string restart_command{};
  std::string templates_dir{};    // install's templates: install/hived-configmap.yaml
  std::string hived_name{};       // how the diff names the live HiveD ("lab"); "": its address
  bool allow_preemption = false;  // apply even when running guaranteed groups are lazily preempted
  double wait_s = 300;            // for HiveD to run the new config with every node healthy
  double poll_s = 2;              // between two looks at HiveD
};

struct ApplyError {
  enum class Kind {
    Input,          // a file, the temporary directory, the ConfigMap's template
    ConfigErrors,   // a config has errors: `config` says which
    Diff,           // a config cannot be scheduled on
    CurrentConfig,  // the config HiveD runs could not be read from its ConfigMap
    HiveD,          // HiveD could not be read: `hived` says what failed
    Push,           // the push failed: HiveD still runs the old config
    Restart,        // the restart failed: the new config is read at HiveD's next start
    Timeout,        // HiveD did not come back healthy on the new config in time
  };
  Kind kind = Kind::Input;
  std::string message;
  std::string hint;
  std::optional<ConfigLoadError> config;
  std::optional<Error> hived;
  std::vector<std::string> warnings;  // Diff: found while reading the live state before it
};

// A temporary directory of the apply (the current config read from the
// ConfigMap, the new config for the push), removed with the last copy of it.
struct ApplyScratch;

// The two configs, read and checked: the new one first (it is what will run).
struct ApplyConfigs {
  std::string
      current_path{};        // a file (the ConfigMap's config is written to the scratch directory)
  std::string current_name;  // how the diff names it: the path, or "the HiveD ConfigMap"
  std::string new_text;      // the new config's own text (what the ConfigMap carries)
  std::shared_ptr<config::HivedModel> old_model, new_model;
  std::shared_ptr<ApplyScratch> scratch;
};

// Reads the config HiveD runs (request.current_path, else its ConfigMap
// through `kubectl`, whose stderr is this process's) and the new one, and
// checks both as `check config` does.
util::Result<ApplyConfigs, ApplyError> load_apply_configs(const ApplyRequest& request,
                                                          util::ProcessRunner& runner);

struct ApplyPlan {
  ApplyRequest request;
  ApplyConfigs configs;
  DiffInput input;  // the configs and the live HiveD's running groups and bad nodes
  ConfigDiff diff;
  std::vector<std::string> warnings;  // found while reading the live state
  // Running guaranteed groups the change would lazily preempt, when that
  // refuses it (not with allow_preemption).
  bool refused = false;
  std::vector<std::string> refused_groups;
  // The steps, when there is something to apply and it is not refused.
  std::string push_command, restart_command;
  std::string push_input;                 // the push's stdin: the ConfigMap, or the config
  std::string manifest;                   // the ConfigMap, for the default push
  std::optional<util::Error> push_error;  // the ConfigMap could not be rendered
  bool changes() const { return diff.changes(); }
  // There is something to apply, and nothing stops it.
  bool applicable() const { return changes() && !refused && !push_error; }
};

// The diff of the two configs against the live HiveD, and the steps that would
// apply it. Changes nothing.
util::Result<ApplyPlan, ApplyError> plan_hived_apply(const ApplyRequest& request,
                                                     ApplyConfigs configs, Client& hived);
// Both of the above.
util::Result<ApplyPlan, ApplyError> plan_hived_apply(const ApplyRequest& request, Client& hived,
                                                     util::ProcessRunner& runner);

struct ApplyEvent {
  enum class Kind {
    Pushing,     // text: the push command
    Restarting,  // text: the restart command
    Output,      // text: what a command printed (stdout or stderr), as it arrives
    Waiting,     // text: why HiveD is not there yet (after each look but the last)
  };
  Kind kind;
  std::string text;
};

// What happened to one running group, against the plan.
struct GroupOutcome {
  std::string name;
  std::string planned;  // to_string(GroupEffect)
  std::string now;      // "gone", "lazily preempted", "opportunistic", "guaranteed"
  bool as_planned = true;
  bool notable = false;  // not planned to keep running, or not as planned
};

struct ApplyOutcome {
  bool pushed = false;
  bool restarted = false;  // the config is applied: HiveD was restarted on it
  bool waited = false;     // the wait ran
  double waited_s = 0;
  bool healthy = false;  // HiveD runs the new config, every node healthy (bad before may stay bad)
  std::vector<std::string> not_healthy;  // nodes not healthy yet, when the wait timed out
  std::string last;                      // what the last look found, when it timed out
  // When healthy: the live HiveD now.
  int64_t nodes = 0;
  std::vector<std::string> bad_nodes;
  int64_t live_groups = 0;
  std::vector<GroupOutcome> groups;  // in the plan's order
  int64_t not_as_planned = 0;
};

struct ApplyFailure {
  ApplyError error;
  ApplyOutcome so_far;
};

// Pushes, restarts and waits. Only for an applicable() plan.
util::Result<ApplyOutcome, ApplyFailure> apply_hived_apply(
    const ApplyPlan& plan, Client& hived, util::ProcessRunner& runner, const util::Clock& clock,
    const std::function<void(const ApplyEvent&)>& on_event = {});

// The running groups refused: "a-big, b-train, ... (25)".
std::string join_names(const std::vector<std::string>& names, size_t max = 20);

}  // namespace pai::hived
