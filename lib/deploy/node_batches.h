#pragma once
// The node batch runner: a maintenance plan's batches run on a cluster, node by
// node, through the master (kubectl with the admin kubeconfig over SSH, as node
// remove drains and deletes) and each node's own SSH session. Used by `upgrade`
// (the nodes' Kubernetes packages) and `node maintain` (a driver, packages, a
// reboot): the use case gives the per-node action and its verification.
//
// Per node, in this order:
//   1. annotate the Node `paictl.io/maintenance: OPERATION RUN-ID`, then cordon
//      it (annotated first: a run killed between the two leaves a node a re-run
//      finds; cordoned first, it could leave one cordoned and forgotten);
//   2. wait until none of the groups the plan waits for runs on it (polled with
//      the clock, up to `wait_for_groups_s`), or drain it (`kubectl drain
//      --ignore-daemonsets --delete-emptydir-data --timeout`) when the plan
//      evicts its groups;
//   3. the action (on the node's host), 4. the verification;
//   5. uncordon (unless the node was cordoned before the run), then remove the
//      annotation.
// Nodes of a batch run at once, batches in order. A wait or a drain that times
// out stops the run: that node is left as it was found (uncordoned unless it was
// cordoned before, the annotation removed), named in the outcome; the other nodes
// of its batch finish. A failed action or verification stops the run too, but
// leaves its node cordoned and annotated: a re-run finishes it.
//
// Resume: before the first batch, every Node annotated with this operation
// (whichever run) is finished first: a node of the plan runs its steps again
// (actions must be idempotent: installing the version that is installed changes
// nothing), or only uncordon and unannotate when the journal says its
// verification passed; a node the plan does not hold is uncordoned and
// unannotated (its change is the operator's to repeat). Each step is journaled
// (journal.h) in CLUSTER_DIR/.paictl/OPERATION.journal.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "deploy/phase.h"
#include "deploy/usecase.h"
#include "remote/transport.h"
#include "util/clock.h"
#include "util/result.h"

namespace pai::hived {
class Client;
}

namespace pai::hived {
struct MaintenancePlan;
}

namespace pai::deploy {

// The Node annotation a maintenance run leaves while it holds a node.
inline constexpr const char* kMaintenanceAnnotation = "paictl.io/maintenance";
// The Node annotation a quarantine leaves (deploy/quarantine.h).
inline constexpr const char* kQuarantineAnnotation = "paictl.io/quarantine";

// One node of a batch, as the planner decided it.
struct BatchNode {
  std::string name{};                   // the Node's (layout.yaml's) name
  std::vector<std::string> wait_for{};  // running groups on it to wait for
  bool drain = false;                   // the plan evicts its groups: kubectl drain
};

struct NodeBatch {
  std::vector<BatchNode> nodes{};
};

// A maintenance plan's batches as the runner takes them: per node, the groups
// the plan waits for and whether it drains (the plan evicts a group there).
std::vector<NodeBatch> node_batches_of(const hived::MaintenancePlan& plan);

struct NodeBatchRequest {
  std::string operation;  // "maintain", "upgrade": the annotation's first word, the journal's name
  std::string run_id;     // "" : made from the time and the pid
  std::vector<NodeBatch> batches;
  double wait_for_groups_s = 0;  // how long a node's groups are waited for
  int drain_timeout_s = 300;     // kubectl drain --timeout
  double poll_s = 5;             // between two looks at the running groups
  std::string state_dir;         // CLUSTER_DIR/.paictl ("" : no journal)
};

// The steps of a node, as the journal and the events name them.
enum class NodeStep { Cordon, Wait, Drain, Action, Verify, Uncordon, Resume };
const char* to_string(NodeStep s);

// A node step's progress (UseCaseEvent::Kind::NodeStep, `node_step`).
struct NodeStepEvent {
  size_t batch = 0;  // 0-based; resumed nodes: SIZE_MAX
  std::string node;
  NodeStep step = NodeStep::Cordon;
  enum class State { Started, Done, Failed, Skipped } state = State::Started;
  std::string message;  // what happened ("waiting for admin~mnist (40 s left)")
};

// What the runner talks through.
struct NodeBatchDeps {
  remote::Transport* transport = nullptr;  // the master's and the nodes' SSH
  HostSpec master;
  std::map<std::string, remote::Target> nodes;  // each node's host
  util::Clock clock = util::Clock::real();
  // The running groups on a node now (their names). Null: the nodes' groups
  // are not waited for (nothing known of them). See hived_groups_on_node.
  std::function<util::Result<std::vector<std::string>>(const std::string& node)> groups_on_node;
  // The change on a node, over its own kept SSH connection. Must be idempotent.
  std::function<util::Result<void>(const std::string& node, remote::Connection& host)> action;
  // Whether the change took (Ready, versions, GPUs allocatable); it may wait
  // (a reboot). Null: nothing verified. `master` runs kubectl.
  std::function<util::Result<void>(const std::string& node, remote::Connection& host,
                                   remote::Connection& master)>
      verify;
};

// The groups on a node from HiveD's inspect API (the affinity groups whose
// physical placement names it, Allocated or being preempted).
std::function<util::Result<std::vector<std::string>>(const std::string& node)> hived_groups_on_node(
    std::shared_ptr<hived::Client> client);

struct NodeResult {
  std::string node;
  size_t batch = 0;  // SIZE_MAX: resumed from an earlier run
  enum class End {
    Done,          // changed, verified, uncordoned
    NotReached,    // its batch never started
    WaitTimedOut,  // its groups still ran at the wait's end: left as found
    DrainFailed,   // the drain failed or timed out: left as found
    ActionFailed,  // left cordoned and annotated
    VerifyFailed,  // left cordoned and annotated
    Failed,        // kubectl or SSH failed (message)
    Released,      // resumed, not in the plan: uncordoned and unannotated
  } end = End::NotReached;
  std::string message;
};
const char* to_string(NodeResult::End e);

struct NodeBatchOutcome {
  std::string run_id;
  bool ok = false;                    // every node Done (or Released)
  std::optional<UseCaseError> error;  // why the run stopped, naming the node
  std::vector<NodeResult> nodes;      // resumed first, then in the plan's order
  std::vector<std::string> resumed;   // nodes an earlier run had left annotated
};

// Runs the batches. Reads the Nodes first (kubectl get nodes -o json); stops
// before any change when that fails or the journal cannot be written.
NodeBatchOutcome run_node_batches(const NodeBatchRequest& request, const NodeBatchDeps& deps,
                                  const Callbacks& callbacks);

// The kubectl line the master runs (admin kubeconfig).
std::string master_kubectl();

// Why a remote command failed, in one line: the transport's error, else its
// stderr, else its stdout, else its exit status.
std::string exec_failure(const remote::ExecResult& x);

// A Node as the runner (and quarantine) reads it from `kubectl get nodes -o json`.
struct NodeState {
  bool unschedulable = false;
  std::string maintenance;                // the paictl.io/maintenance annotation, "" when none
  std::optional<std::string> quarantine;  // the paictl.io/quarantine annotation
};
util::Result<std::map<std::string, NodeState>> parse_node_states(const std::string& nodes_json);

}  // namespace pai::deploy
