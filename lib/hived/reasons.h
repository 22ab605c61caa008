#pragma once
// Why a group waits, as stable codes (`paictl hived why`, `job status`,
// `job submit --cluster auto --explain`; docs/hived.md#reason-codes).
//
// Each code has a tier: the most actionable reasons first (a request that can
// never fit, then what an operator can fix, then what ends by itself). A
// waiting verdict carries the codes that apply, ranked by tier (then by the
// table's order); the first is *the* reason. Two families are kept apart:
// HiveD's own (from paictl's replay of the HiveD algorithm on the live state)
// and the kube-scheduler's (from the pod's events: it filters the nodes before
// HiveD sees the pod, for taints, node selectors, extended resources).
//
// wouldFit: the earliest moment and event that would let the group run, from
// the running groups' expected ends (release them in that order and replay
// after each), or "never under this config" with what to change.
//
// The codes and tiers are an interface: scripts match on `reason.code`, so a
// code is never renamed or reused; new codes are added to the table.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hived/inspect.h"

namespace pai::hived {

enum class ReasonCode : uint8_t {
  // Tier 1: never under this config (a config or job error).
  NoSuchLeafType,  // the leaf cell type (SKU) is not in the cluster
  NoChainForVC,    // the VC has no cells of a chain the request may use (or no such VC/pinned cell)
  RequestExceedsVC,  // larger than all of the VC's cells of the chain (or a pod than its largest)
  // Tier 2: the kube-scheduler's own reasons (from the pod's events).
  KubeUnschedulable,
  // Tier 3: bad hardware holds the VC's cells.
  BadCellsDoomed,
  // Tier 4: the VC's layout blocks it (HiveD's intra-VC buddy allocation).
  CellSplitBySmallerGroup,
  ChainFragmented,
  // Tier 5: the VC's guarantee is in use.
  VCQuotaExhausted,
  // Tier 6: opportunistic work waits for free cells.
  OpportunisticNoCapacity,
  // Tier 7: it has been placed; its victims are being deleted.
  WaitingForPreemption,
};

struct ReasonInfo {
  ReasonCode code;
  std::string_view name;    // "VCQuotaExhausted"
  std::string_view family;  // "hived" or "kube"
  int32_t tier = 0;         // 1 = most actionable
  bool never = false;       // the request cannot fit under this config
  std::string_view title;   // one line
  // The hint, with {placeholders} filled per verdict (fill_hint).
  std::string_view hint;
};

// Every code, in rank order (tier, then the order above).
const std::vector<ReasonInfo>& reason_table();
const ReasonInfo& reason_info(ReasonCode code);
std::string_view to_string(ReasonCode code);
std::optional<ReasonCode> parse_reason_code(std::string_view name);

// `tmpl` with each {key} replaced by vars[key] (a key not in vars is kept).
std::string fill_hint(std::string_view tmpl, const std::map<std::string, std::string>& vars);

// One reason that applies to a waiting group.
struct Reason {
  ReasonCode code = ReasonCode::VCQuotaExhausted;
  std::string detail;  // what the state shows: cells, groups, nodes named
  std::string hint;    // the table's hint, filled
};

// Sorts by tier, then the table's order; drops repeated codes (the first kept).
void rank_reasons(std::vector<Reason>& reasons);

// {"code","family","tier","title","detail","hint"}
Json to_json(const Reason& r);
// "VCQuotaExhausted: DETAIL\n  hint: HINT" lines as the commands print them.
std::string reason_text(const Reason& r, std::string_view indent);

// When the group would run.
struct WouldFit {
  enum class Kind : uint8_t { Now, At, Never, Unknown };
  Kind kind = Kind::Unknown;
  std::optional<double> at_s;             // At: epoch seconds (Now: the judging time)
  std::string event;                      // "bob~train ends", "v7 is healthy again", ...
  std::string needs;                      // "1 more V100-NODE cell in chain V100-RACK"
  std::string change;                     // Never: what to change
  std::vector<std::string> after_groups;  // At: the groups released first (in order)
  std::string text;                       // one line, as printed
};
std::string_view to_string(WouldFit::Kind k);  // "now", "at", "never", "unknown"
// {"kind","at" (RFC 3339 or null),"event","needs","change","afterGroups","text"}
Json to_json(const WouldFit& w);

// --- the kube-scheduler's reasons -----------------------------------------------------

// One Kubernetes event of a job's pods (REST v2 GET /api/v2/jobs/USER~JOB/events).
struct PodEvent {
  std::string type;     // Normal | Warning
  std::string reason;   // FailedScheduling, Scheduled, ...
  std::string message;  // "0/4 nodes are available: 1 node(s) had untolerated taint ..."
  std::string last_timestamp;
  std::string task_role;
  int32_t task_index = -1;
};

// Reads {"data":[{type, reason, message, lastTimestamp, taskroleName, taskIndex}, ...]}
// (or a bare array); entries that are not objects are skipped.
std::vector<PodEvent> parse_pod_events(const nlohmann::json& j);

// The kube-scheduler's reason from the pods' events: the latest
// FailedScheduling event (the scheduler's "Unschedulable"), unless a later
// event says a pod was scheduled. Its message is split into what it names:
// taints, node selectors / affinity, insufficient resources. nullopt when none.
std::optional<Reason> kube_reason(const std::vector<PodEvent>& events);

}  // namespace pai::hived
