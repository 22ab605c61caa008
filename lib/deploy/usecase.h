#pragma once
// What the deploy use cases share (install, reset, node add|remove, config
// push|pull|diff): their error, the events they report while they run, and the
// questions they ask. Each use case is a request -> plan_X(request, deps,
// callbacks), which changes nothing and returns a value a front end prints (as
// text, or as its -o json document through X_json.h) -> apply_X(plan,
// callbacks), which makes the changes and returns what happened (a value too,
// with the failure, if any, inside). The deps are what it talks through (the
// hosts as the front end reads them, an SSH transport, HTTP clients for ARM and
// HiveD, a clock), so tests drive it with tests/support's doubles. Nothing here
// prints or reads a terminal: progress, plans ready to show and the end of each
// stage leave through UseCaseEvent; a confirmation is a Question the front end
// answers.

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "diag/diagnostic.h"
#include "util/result.h"

namespace pai::http {
class Client;
}

namespace pai::deploy {

struct Event;
struct RunResult;
struct HivedEdit;
struct AzureMachines;
struct AzureInstallPlan;
struct HostStage;
struct InstallPlan;
struct InstallOutcome;
struct NodeStepEvent;

// What a run of the install engine over the cluster's hosts does: install,
// reset, push the cluster files (config push), or push the HiveD config and the
// cluster files (the last step of node add|remove).
enum class HostOperation { Install, Reset, ConfigPush, HivedPush };

// Why a use case stopped. `error` says it in the library's words and with its
// kind (Input: the cluster files or the request; Remote: SSH, HTTP, Azure;
// Other: what was found refuses it). `about` names the few failures a front end
// words in its own terms (they concern what it asked for, or it reported them).
struct UseCaseError {
  enum class About {
    Other,
    // message: "NAME is not a host of LAYOUT": a name the request's hosts
    // (limit, nodes) hold is not in layout.yaml.
    UnknownHost,
    // The front end's HostsLoader failed; it has told the user why.
    HostsNotLoaded,
    // HiveD's inspect API did not answer (no connection, TLS, timeout).
    HivedUnreachable,
    // Running groups use the cells of nodes to remove (the message names them).
    RunningGroups,
    // `findings`: config.yaml's errors that stop the Azure part, each a line.
    AzureConfig,
    // `findings` (of `files` files read): a HiveD config with errors.
    HivedConfig,
  };
  UseCaseError() = default;
  UseCaseError(util::Error e, About a = About::Other)  // NOLINT: implicit on purpose
      : error(std::move(e)), about(a) {}

  util::Error error;
  About about = About::Other;
  std::vector<diag::Diagnostic> findings;
  size_t files = 0;
};

template <class T = void>
using UseCaseResult = util::Result<T, UseCaseError>;

UseCaseError input_error(std::string message, std::string hint = {});
UseCaseError remote_error(std::string message, std::string hint = {});
UseCaseError other_error(std::string message, std::string hint = {});
// `what: message` (ARM's, SSH's...) with the error's hint, as a remote failure.
UseCaseError remote_failure(const std::string& what, const util::Error& e);

// What a use case reports while it runs. `kind` says which fields are set.
struct UseCaseEvent {
  enum class Kind {
    // The hosts' run of `operation`: its plan starts on `count` hosts.
    Observing,
    // An event of the install engine (`engine`) in that run; `planning` while
    // it plans (a dry run), else while it applies.
    Engine,
    // The hosts' plan of `operation` (`plan`).
    HostsPlanned,
    // The hosts' run of `operation` ended (`stage`: failed, up to date, a dry
    // run, not confirmed, or applied).
    HostsEnded,
    // An install (`install_plan`, `install`) ended other than with its hosts'
    // run: refused by the checks before Azure, the Azure part only, Azure's
    // changes not confirmed, a dry run waiting for Azure's master, or an error.
    InstallEnded,
    // The Azure resources are being read.
    ReadingAzure,
    // Azure's plan (`azure`): what would be created, changed or deleted.
    AzurePlanned,
    // The pre-install checks run on `count` hosts before Azure creates anything.
    ChecksBeforeAzure,
    // A line of Azure's progress (`message`).
    AzureProgress,
    // One request to ARM (`message`), for a verbose front end.
    AzureLog,
    // The ARM client waits (`message`: "waiting 30 s for ARM (503 Service
    // Unavailable, Retry-After) before GET /subscriptions/..."), `to` seconds
    // (rounded); `planning`: between polls of a long-running operation.
    AzureWaiting,
    // Azure had nothing to create, change or delete.
    AzureUpToDate,
    // The pools' VMs, as written into layout.yaml (`machines`).
    AzureMachines,
    // The cells of the pools' VMs in the HiveD config (`hived`): written
    // (`planning` false), or planned for VMs Azure will create (`count`
    // placeholder names).
    VmCells,
    // A warning (`message`).
    Warning,
    // node add: the new nodes' cells in the HiveD config (`hived`), planned once
    // Azure has made the VMs.
    CellsPlanned,
    // One request to HiveD's inspect API (`message`), for a verbose front end.
    HivedLog,
    // node add --azure: the scale set `message` grows from `from` to `to` VMs.
    ScaleSet,
    // node add --azure: a new VM (`message`: "NAME (IP), machine-type TYPE").
    NewMachine,
    // node add|remove --azure: config.yaml and layout.yaml (`message`) were
    // written; `to` is the pool's new count for a grown pool, -1 otherwise.
    FilesUpdated,
    // The new HiveD config is pushed; HiveD restarts with it.
    HivedPush,
    // node remove: the node `message` was deleted (and drained, `drained`).
    NodeDeleted,
    // node remove: a master's etcd member was removed (`message`: "NAME (member
    // ID, through MASTER)").
    EtcdMemberRemoved,
    // node remove: no running group uses the nodes (`message`: "NODES
    // (the live HiveD at URL)").
    NoRunningGroups,
    // The node batch runner (node_batches.h): a step of a node (`node_step`).
    NodeStep,
  };
  Kind kind = Kind::Warning;
  HostOperation operation = HostOperation::Install;  // Observing, Engine, HostsPlanned
  bool planning = false;
  size_t count = 0;
  long long from = 0, to = 0;
  bool drained = false;
  std::string message;
  const Event* engine = nullptr;
  const RunResult* plan = nullptr;
  const HivedEdit* hived = nullptr;
  const AzureMachines* machines = nullptr;
  const AzureInstallPlan* azure = nullptr;
  const HostStage* stage = nullptr;
  const InstallPlan* install_plan = nullptr;
  const InstallOutcome* install = nullptr;
  const NodeStepEvent* node_step = nullptr;
};

// The answer to a confirmation: yes, no, or none could be asked (no terminal).
enum class Answer { Yes, No, NoTerminal };

// What a use case is asked to do about a change before making it.
struct Question {
  enum class Kind {
    ApplyHosts,   // apply the hosts' plan of `operation`
    ApplyAzure,   // create, change or delete the Azure resources of the plan
    GrowPool,     // add `count` VMs to the scale set `subject`
    RemoveNodes,  // remove `nodes` from the cluster (`azure`: and delete their VMs)
    ResetAzure,   // delete the cluster's Azure resources
  };
  Kind kind = Kind::ApplyHosts;
  HostOperation operation = HostOperation::Install;
  size_t count = 0;
  std::string subject;
  std::vector<std::string> nodes;
  bool azure = false;
};

struct Callbacks {
  std::function<void(const UseCaseEvent&)> on_event;  // may be null
  // Asked only when the request was not confirmed in advance; null: No.
  std::function<Answer(const Question&)> confirm;
  void emit(const UseCaseEvent& e) const {
    if (on_event) on_event(e);
  }
  Answer ask(const Question& q) const { return confirm ? confirm(q) : Answer::No; }
};

// The HTTP client a use case reads HiveD's inspect API with: `injected` when
// given (tests; not owned), else a libcurl client with HiveD's timeouts (30 s a
// request, 10 s to connect, `attempts` tries when not 0) whose request lines
// reach `cb` (when given) as HivedLog events.
std::shared_ptr<http::Client> hived_http_client(http::Client* injected, const Callbacks* cb,
                                                int attempts = 0);

}  // namespace pai::deploy
