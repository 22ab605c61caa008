#include "hived/reasons.h"

#include <algorithm>
#include <ctime>

#include "util/time.h"

namespace pai::hived {

namespace {

const std::vector<ReasonInfo> kReasonTable = {
    {ReasonCode::NoSuchLeafType, "NoSuchLeafType", "hived", 1, true,
     "the leaf cell type it asks for is not in the cluster",
     "ask for a leaf cell type the cluster has ({types}), or add {type} nodes to HiveD's config"},
    {ReasonCode::NoChainForVC, "NoChainForVC", "hived", 1, true,
     "the VC has no cells the request may use",
     "submit to a VC that has {what}, or give VC {vc} such cells in HiveD's config "
     "(paictl plan, then hived diff and hived apply)"},
    {ReasonCode::RequestExceedsVC, "RequestExceedsVC", "hived", 1, true,
     "the request is larger than all the VC's cells it may use",
     "ask for at most {max} GPUs in pods of at most {pod} GPUs in VC {vc}, or grow its share "
     "(paictl plan, then hived diff and hived apply)"},
    {ReasonCode::KubeUnschedulable, "KubeUnschedulable", "kube", 2, false,
     "the kube-scheduler finds no node for the pod (before HiveD is asked)",
     "{what}: compare the pod's tolerations, node selector and resources with the nodes "
     "(kubectl describe pod, kubectl describe node)"},
    {ReasonCode::BadCellsDoomed, "BadCellsDoomed", "hived", 3, false,
     "the VC's cells are doomed on bad nodes",
     "repair {nodes} (HiveD counts a node bad while it is NotReady or cordoned); VC {vc} gets its "
     "cells back when they are healthy"},
    {ReasonCode::CellSplitBySmallerGroup, "CellSplitBySmallerGroup", "hived", 4, false,
     "a smaller group sits inside a larger cell of the VC",
     "{groups} took part of {cell} though smaller cells of VC {vc} were free (HiveD's intra-VC "
     "placement); it fits when they end, or give the VC whole {type} cells only "
     "(paictl plan --vc-cells node)"},
    {ReasonCode::ChainFragmented, "ChainFragmented", "hived", 4, false,
     "free cells exist, but not in one cell of the level a pod needs",
     "it fits when one {type} cell of VC {vc} empties; pods of at most {largest} GPUs would fit "
     "now"},
    {ReasonCode::VCQuotaExhausted, "VCQuotaExhausted", "hived", 5, false,
     "the VC's guaranteed cells are bound to running groups",
     "it fits when {groups} end; or submit opportunistically (priority -1) or to a VC with free "
     "cells"},
    {ReasonCode::OpportunisticNoCapacity, "OpportunisticNoCapacity", "hived", 6, false,
     "no free cells for opportunistic work",
     "opportunistic work runs only on cells no guaranteed group uses; submit at a guaranteed "
     "priority to a VC with free cells"},
    {ReasonCode::WaitingForPreemption, "WaitingForPreemption", "hived", 7, false,
     "placed: the lower-priority groups on its cells are being deleted",
     "it starts when {victims} are deleted (seconds, unless their pods hang: paictl hived why "
     "VICTIM)"},
};

size_t reason_position(ReasonCode c) {
  for (size_t i = 0; i < kReasonTable.size(); ++i)
    if (kReasonTable[i].code == c) return i;
  return kReasonTable.size();
}

std::string reasons_trim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '.' || s.back() == '\n')) s.pop_back();
  size_t b = s.find_first_not_of(' ');
  return b == std::string::npos ? std::string() : s.substr(b);
}

std::string reasons_json_string(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

const std::vector<ReasonInfo>& reason_table() {
  return kReasonTable;
}

const ReasonInfo& reason_info(ReasonCode code) {
  return kReasonTable[std::min(reason_position(code), kReasonTable.size() - 1)];
}

std::string_view to_string(ReasonCode code) {
  return reason_info(code).name;
}

std::optional<ReasonCode> parse_reason_code(std::string_view name) {
  for (const auto& r : kReasonTable)
    if (r.name == name) return r.code;
  return std::nullopt;
}

std::string fill_hint(std::string_view tmpl, const std::map<std::string, std::string>& vars) {
  std::string out;
  out.reserve(tmpl.size() + 32);
  size_t i = 0;
  while (i < tmpl.size()) {
    size_t open = tmpl.find('{', i);
    if (open == std::string_view::npos) break;
    size_t close = tmpl.find('}', open);
    if (close == std::string_view::npos) break;
    out.append(tmpl.substr(i, open - i));
    auto it = vars.find(std::string(tmpl.substr(open + 1, close - open - 1)));
    if (it != vars.end())
      out += it->second;
    else
      out.append(tmpl.substr(open, close - open + 1));
    i = close + 1;
  }
  out.append(tmpl.substr(i));
  return out;
}

void rank_reasons(std::vector<Reason>& reasons) {
  std::stable_sort(reasons.begin(), reasons.end(), [](const Reason& a, const Reason& b) {
    return reason_position(a.code) < reason_position(b.code);
  });
  std::vector<Reason> out;
  for (auto& r : reasons) {
    bool seen = false;
    for (const auto& o : out) seen |= o.code == r.code;
    if (!seen) out.push_back(std::move(r));
  }
  reasons = std::move(out);
}

Json to_json(const Reason& r) {
  const ReasonInfo& info = reason_info(r.code);
  return {{"code", std::string(info.name)},
          {"family", std::string(info.family)},
          {"tier", info.tier},
          {"title", std::string(info.title)},
          {"detail", r.detail},
          {"hint", r.hint}};
}

std::string reason_text(const Reason& r, std::string_view indent) {
  std::string s = std::string(indent) + std::string(to_string(r.code)) + ": " + r.detail + "\n";
  if (!r.hint.empty()) s += std::string(indent) + "  hint: " + r.hint + "\n";
  return s;
}

std::string_view to_string(WouldFit::Kind k) {
  switch (k) {
    case WouldFit::Kind::Now:
      return "now";
    case WouldFit::Kind::At:
      return "at";
    case WouldFit::Kind::Never:
      return "never";
    case WouldFit::Kind::Unknown:
      return "unknown";
  }
  return "unknown";
}

Json to_json(const WouldFit& w) {
  return {{"kind", std::string(to_string(w.kind))},
          {"at",
           w.at_s ? Json(util::format_utc(static_cast<std::time_t>(*w.at_s), "%Y-%m-%dT%H:%M:%SZ"))
                  : Json(nullptr)},
          {"event", w.event},
          {"needs", w.needs},
          {"change", w.change},
          {"afterGroups", w.after_groups},
          {"text", w.text}};
}

// --- the kube-scheduler's reasons -----------------------------------------------------

std::vector<PodEvent> parse_pod_events(const nlohmann::json& j) {
  std::vector<PodEvent> out;
  const nlohmann::json* list = &j;
  if (j.is_object()) {
    auto it = j.find("data");
    if (it == j.end() || !it->is_array()) return out;
    list = &*it;
  }
  if (!list->is_array()) return out;
  for (const auto& e : *list) {
    if (!e.is_object()) continue;
    PodEvent p;
    p.type = reasons_json_string(e, "type");
    p.reason = reasons_json_string(e, "reason");
    p.message = reasons_json_string(e, "message");
    p.last_timestamp = reasons_json_string(e, "lastTimestamp");
    if (p.last_timestamp.empty()) p.last_timestamp = reasons_json_string(e, "firstTimestamp");
    p.task_role = reasons_json_string(e, "taskroleName");
    if (auto it = e.find("taskIndex"); it != e.end() && it->is_number_integer())
      p.task_index = it->get<int32_t>();
    out.push_back(std::move(p));
  }
  return out;
}

std::optional<Reason> kube_reason(const std::vector<PodEvent>& events) {
  // The latest scheduling event decides (RFC 3339 times sort as strings; the
  // order given breaks ties).
  const PodEvent* last = nullptr;
  for (const auto& e : events) {
    if (e.reason != "FailedScheduling" && e.reason != "Scheduled") continue;
    if (!last || e.last_timestamp >= last->last_timestamp) last = &e;
  }
  if (!last || last->reason != "FailedScheduling") return std::nullopt;
  // "0/4 nodes are available: 1 node(s) had untolerated taint {k: v}, 3 Insufficient
  // nvidia.com/gpu. preemption: ..." -> its parts, sorted into kinds.
  std::string msg = last->message;
  if (size_t p = msg.find(" preemption:"); p != std::string::npos) msg = msg.substr(0, p);
  std::string head, body = msg;
  if (size_t c = msg.find(": "); c != std::string::npos) {
    head = msg.substr(0, c);
    body = msg.substr(c + 2);
  }
  std::vector<std::string> taints, selectors, resources, other;
  size_t i = 0;
  while (i <= body.size()) {
    // Split on ", " outside braces (a taint is "{key: value}").
    size_t j = i;
    int depth = 0;
    while (j < body.size() && !(depth == 0 && body.compare(j, 2, ", ") == 0)) {
      if (body[j] == '{') ++depth;
      if (body[j] == '}') --depth;
      ++j;
    }
    std::string part = reasons_trim(body.substr(i, j - i));
    if (!part.empty()) {
      if (part.find("taint") != std::string::npos)
        taints.push_back(part);
      else if (part.find("affinity") != std::string::npos ||
               part.find("selector") != std::string::npos)
        selectors.push_back(part);
      else if (part.find("Insufficient") != std::string::npos)
        resources.push_back(part);
      else
        other.push_back(part);
    }
    if (j >= body.size()) break;
    i = j + 2;
  }
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  std::string what;
  auto add = [&](const char* label, const std::vector<std::string>& v) {
    if (!v.empty()) what += (what.empty() ? "" : "; ") + std::string(label) + ": " + join(v);
  };
  add("taints", taints);
  add("node selector or affinity", selectors);
  add("resources", resources);
  add("other", other);
  Reason r;
  r.code = ReasonCode::KubeUnschedulable;
  std::string pod =
      last->task_role.empty()
          ? std::string("a pod")
          : "pod " + last->task_role + "[" + std::to_string(std::max(0, last->task_index)) + "]";
  r.detail = pod + " is Unschedulable (" + reasons_trim(msg) + ")" +
             (last->last_timestamp.empty() ? std::string() : " at " + last->last_timestamp);
  r.hint =
      fill_hint(reason_info(r.code).hint, {{"what", what.empty() ? reasons_trim(head) : what}});
  return r;
}

}  // namespace pai::hived
