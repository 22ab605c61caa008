#pragma once
// paictl hived quarantine|release as a use case (usecase.h; docs/hived.md):
// bad GPUs taken out of HiveD's hands. Quarantine cordons each node (HiveD then
// counts its cells as bad) and annotates it with who, when and why; the plan
// says first what that does (hived/quarantine.h: the VCs that get doomed bad
// cells, the running groups on the nodes, which keep running unless drained).
// Release undoes exactly what quarantine did: it uncordons a node only when
// the quarantine cordoned it, and removes only its annotation.
//
// Everything goes through the master (kubectl with the admin kubeconfig over
// SSH, as node maintain does). A node that someone else cordoned, or that
// another user quarantined, is shown and left alone (the plan refuses it); a
// node Kubernetes does not know is an input error (About::UnknownHost).

#include <optional>
#include <string>
#include <vector>

#include "deploy/host_plan.h"
#include "deploy/install_json.h"
#include "deploy/node_batches.h"
#include "deploy/prepare.h"
#include "deploy/usecase.h"
#include "hived/quarantine.h"
#include "http/client.h"

namespace pai::deploy {

// The Node annotation a quarantine leaves (kQuarantineAnnotation,
// node_batches.h): a JSON object
// {"by": "USER@HOST", "at": RFC3339, "reason": TEXT, "cordoned": BOOL}.

struct QuarantineMark {
  std::string by, at, reason;
  bool cordoned = false;  // the quarantine cordoned the node (release uncordons it)
};
std::string to_annotation(const QuarantineMark& m);
// nullopt when the value is not such an object.
std::optional<QuarantineMark> parse_quarantine_mark(const std::string& value);

struct QuarantineRequest {
  std::string cluster_dir;
  std::vector<std::string> nodes;  // Kubernetes node names (duplicates dropped)
  bool release = false;            // release instead of quarantine
  std::string reason;
  bool drain = false;  // kubectl drain after the cordon (the running groups' pods go)
  std::string by;      // who: USER@HOST
  std::string at;      // when: RFC3339
  std::string hived;   // HiveD's inspect API, "" : no preview of the effect
  bool dry_run = false;
  int drain_timeout_s = 300;
};

struct QuarantineDeps {
  InstallDeps install;
  http::Client* hived_http = nullptr;  // null: a CurlClient (30 s a request)
};

// A Node as quarantine reads it.
struct QuarantineNodeState {
  std::string name;
  bool unschedulable = false;
  std::optional<QuarantineMark> mark;  // its quarantine annotation
  std::string maintenance;             // paictl.io/maintenance, "" when none
};
// From `kubectl get nodes -o json` (parse_node_states, in name order).
util::Result<std::vector<QuarantineNodeState>> parse_quarantine_nodes(const std::string& json);

struct QuarantineNode {
  std::string node;
  QuarantineNodeState state;
  enum class Action {
    Quarantine,  // cordon (unless already) and annotate
    Release,     // uncordon (when the quarantine cordoned it) and remove the annotation
    Nothing,     // already as asked (quarantined by the same user; release: not quarantined)
    Refused,     // cordoned by someone else, or quarantined by another user (`why`)
  } action = Action::Nothing;
  bool cordon = false;  // Quarantine: cordon it; Release: uncordon it
  std::string why;      // one line
};
std::string_view to_string(QuarantineNode::Action a);

struct QuarantinePlan {
  QuarantineRequest request;
  QuarantineDeps deps;
  std::shared_ptr<const PreparedCluster> cluster;
  std::vector<QuarantineNode> nodes;  // in the request's order
  std::optional<hived::QuarantineEffect> effect;
  std::string hived_source;  // "the live HiveD at URL", or why there is no preview
  bool refused() const;
  bool changes() const;
  // The script the master runs for one node (kubectl).
  std::string node_script(const QuarantineNode& n) const;
};

UseCaseResult<QuarantinePlan> plan_quarantine(const QuarantineRequest& request,
                                              const QuarantineDeps& deps,
                                              const Callbacks& callbacks);

struct QuarantineOutcome {
  enum class End {
    DryRun,   // nothing changed
    Refused,  // a node is refused: nothing changed (`error`)
    Applied,  // the nodes changed (`error`: the one that failed, the others went on)
  } end = End::DryRun;
  std::optional<UseCaseError> error;
  std::vector<std::string> changed;  // nodes changed
};
QuarantineOutcome apply_quarantine(const QuarantinePlan& plan, const Callbacks& callbacks);

// -o json (paictl.hivedQuarantine/v1): {"apiVersion", "kind", "cluster", "release",
// "dryRun", "by", "at", "reason", "drain", "effectFrom", "nodes": [{"node", "action",
// "cordon", "why", "unschedulable", "quarantine"?: {"by", "at", "reason", "cordoned"}}],
// "effect"?: {"nodes", "unknownNodes", "alreadyBad", "leaves", "doomed": [{"vc",
// "chain", "cellType", "cellsBefore", "cellsAfter", "leavesBefore", "leavesAfter",
// "guaranteedLeaves"}], "groups": [{"name", "vc", "priority", "state", "nodes",
// "leaves", "gpus", "keepsRunning"}]}, "outcome"?: {"end", "changed", "error"?}}
DocJson quarantine_json(const QuarantinePlan& plan, const QuarantineOutcome* outcome);
const char* to_string(QuarantineOutcome::End e);

}  // namespace pai::deploy
