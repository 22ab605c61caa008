#include "sim/fidelity.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "config/context.h"
#include "config/hived.h"
#include "config/hived_model.h"
#include "util/json.h"
#include "yaml/yaml.h"

namespace pai::sim {

using nlohmann::json;
using scheduler::GroupRequest;
using scheduler::Outcome;
using scheduler::Policy;
using scheduler::ScheduleResult;

std::string fidelity_config_line(std::string_view hived_yaml) {
  json j;
  j["op"] = "config";
  j["yaml"] = std::string(hived_yaml);
  return j.dump();
}

namespace {

json request_json(const Policy& p, const GroupRequest& r, bool allow_preemption) {
  json j;
  j["op"] = "schedule";
  j["group"] = r.affinity_group;
  j["vc"] = r.virtual_cluster;
  j["priority"] = r.priority;
  if (!r.leaf_cell_type.empty()) j["leafCellType"] = r.leaf_cell_type;
  if (!r.pinned_cell_id.empty()) j["pinnedCellId"] = r.pinned_cell_id;
  if (r.lazy_preemption_enable) j["lazy"] = true;
  json members = json::array();
  for (const auto& m : r.members)
    members.push_back({{"podNumber", m.pod_number}, {"leafCellNumber", m.leaf_cell_number}});
  j["members"] = std::move(members);
  if (!allow_preemption) j["preempt"] = false;
  if (r.suggested_nodes) {
    // The shorter of the set and its complement (nonSuggestedNodes).
    const auto& all = p.cluster().nodes;
    std::vector<uint8_t> in(all.size(), 0);
    for (int32_t n : *r.suggested_nodes) in[static_cast<size_t>(n)] = 1;
    const size_t count = static_cast<size_t>(std::count(in.begin(), in.end(), 1));
    const bool complement = all.size() - count < count;
    json nodes = json::array();
    for (size_t n = 0; n < all.size(); ++n)
      if ((in[n] != 0) != complement) nodes.push_back(all[n].name);
    j[complement ? "nonSuggestedNodes" : "suggestedNodes"] = std::move(nodes);
  }
  if (!r.ignore_suggested_nodes) j["ignoreSuggestedNodes"] = false;
  return j;
}

class Recorder final : public Policy {
 public:
  Recorder(std::unique_ptr<Policy> inner, std::ostream& out)
      : inner_(std::move(inner)), out_(out) {}
  std::string_view name() const override { return inner_->name(); }
  const scheduler::ClusterShape& cluster() const override { return inner_->cluster(); }
  ScheduleResult schedule(const GroupRequest& r, bool allow_preemption) override {
    out_ << request_json(*inner_, r, allow_preemption).dump() << '\n';
    return inner_->schedule(r, allow_preemption);
  }
  ScheduleResult schedule_pod(std::string_view group, int32_t leaf_cell_number) override {
    return inner_->schedule_pod(group, leaf_cell_number);
  }
  bool release(std::string_view group) override {
    out_ << json{{"op", "release"}, {"group", std::string(group)}}.dump() << '\n';
    return inner_->release(group);
  }
  void set_node_health(int32_t node, bool healthy) override {
    out_ << json{{"op", "node"},
                 {"node", inner_->cluster().nodes[static_cast<size_t>(node)].name},
                 {"healthy", healthy}}
                .dump()
         << '\n';
    inner_->set_node_health(node, healthy);
  }
  uint64_t release_epoch() const override { return inner_->release_epoch(); }
  scheduler::UsageSummary usage() const override { return inner_->usage(); }
  bool has_group(std::string_view group) const override { return inner_->has_group(group); }
  std::string check_invariants() const override { return inner_->check_invariants(); }

 private:
  std::unique_ptr<Policy> inner_;
  std::ostream& out_;
};

std::vector<std::string> names(const std::vector<scheduler::Victim>& v) {
  std::vector<std::string> out;
  for (const auto& x : v) out.push_back(x.group);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The policy's decision in the form of the recorded ones.
json decision_json(const Policy& p, const ScheduleResult& r) {
  json d;
  d["outcome"] = std::string(to_string(r.outcome));
  if (r.outcome == Outcome::Bound || r.outcome == Outcome::Preempting) {
    d["chain"] = r.cell_chain;
    json pods = json::array();
    for (const auto& pod : r.pods)
      pods.push_back(json::array(
          {pod.node >= 0 ? p.cluster().nodes[static_cast<size_t>(pod.node)].name : std::string(),
           pod.physical_leaf_cell_indices}));
    d["pods"] = std::move(pods);
  }
  if (r.outcome == Outcome::Preempting) d["victims"] = names(r.victims);
  if (!r.downgraded.empty()) d["downgraded"] = names(r.downgraded);
  return d;
}

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// What differs between two decisions (empty when identical). Reasons are not compared.
std::string compare(const json& hived, const json& ours) {
  const std::string ho = str(hived, "outcome"), oo = str(ours, "outcome");
  if (ho != oo) return "HiveD " + ho + ", policy " + oo;
  for (const char* key : {"chain", "pods", "victims", "downgraded"}) {
    json h = hived.contains(key) ? hived[key] : json();
    json o = ours.contains(key) ? ours[key] : json();
    if (h.is_null() && o.is_array() && o.empty()) continue;
    if (o.is_null() && h.is_array() && h.empty()) continue;
    if (h != o) return std::string(key) + ": HiveD " + h.dump() + ", policy " + o.dump();
  }
  return {};
}

bool build_model(const std::string& text, config::HivedModel& model, std::string& error) {
  yaml::Stream s = yaml::load(text);
  diag::List dl;
  config::Context ctx("fidelity-config.yaml", dl);
  const yaml::Node* root = config::single_document(s, ctx, "hivedscheduler.yaml");
  if (root) {
    config::HivedConfig cfg = config::load_hived_config(root, ctx);
    model = config::build_hived_model(cfg, ctx);
  }
  for (const auto& d : dl.items())
    if (d.severity == diag::Severity::Error) {
      error = "the config has errors: " + std::to_string(d.line) + ":" + std::to_string(d.column) +
              ": " + d.message;
      return false;
    }
  if (!root) error = "the config line holds no YAML document";
  return root != nullptr;
}

}  // namespace

std::unique_ptr<Policy> make_recording_policy(std::unique_ptr<Policy> inner, std::ostream& out) {
  return std::make_unique<Recorder>(std::move(inner), out);
}

namespace {

// replay_fidelity's reading: false with what is wrong in `error`.
bool replay_into(std::string_view text, FidelityReplay& out, std::string& error,
                 const PolicyFactory& make) {
  out = FidelityReplay();
  config::HivedModel model;
  std::unique_ptr<Policy> policy;
  int64_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    json j = util::parse_json_or_discarded(line);
    const std::string where = "line " + std::to_string(line_no) + ": ";
    if (j.is_discarded() || !j.is_object()) {
      error = where + "not a JSON object";
      return false;
    }
    const std::string op = str(j, "op");
    if (op == "config") {
      if (!build_model(str(j, "yaml"), model, error)) {
        error = where + error;
        return false;
      }
      auto made = make ? make(model) : scheduler::make_policy("hived", model);
      if (!made.ok()) {
        error = where + "cannot build the policy: " + made.error().message;
        return false;
      }
      policy = std::move(*made);
      continue;
    }
    if (!policy) {
      error = where + "a request before the config line";
      return false;
    }
    if (!j.contains("hived") || !j["hived"].is_object()) {
      error = where + "no recorded decision (\"hived\")";
      return false;
    }
    const json& hived = j["hived"];
    ++out.lines;
    json ours;
    if (op == "schedule") {
      GroupRequest r;
      r.affinity_group = str(j, "group");
      r.virtual_cluster = str(j, "vc");
      r.priority = j.value("priority", 0);
      r.leaf_cell_type = str(j, "leafCellType");
      r.pinned_cell_id = str(j, "pinnedCellId");
      r.lazy_preemption_enable = j.value("lazy", false);
      if (j.contains("members") && j["members"].is_array())
        for (const auto& m : j["members"])
          r.members.push_back({m.value("podNumber", 0), m.value("leafCellNumber", 0)});
      for (const char* key : {"suggestedNodes", "nonSuggestedNodes"}) {
        auto it = j.find(key);
        if (it == j.end()) continue;
        if (!it->is_array() || r.suggested_nodes) {
          error = where + key + " is not a list of node names, or comes with the other list";
          return false;
        }
        const size_t total = policy->cluster().nodes.size();
        std::vector<uint8_t> in(total, 0);
        for (const auto& n : *it) {
          const int32_t id = n.is_string() ? policy->cluster().find_node(n.get<std::string>()) : -1;
          if (id < 0) {
            error = where + "unknown node " + n.dump() + " in " + key;
            return false;
          }
          in[static_cast<size_t>(id)] = 1;
        }
        const bool complement = key[0] == 'n';
        r.suggested_nodes.emplace();
        for (size_t n = 0; n < total; ++n)
          if ((in[n] != 0) != complement) r.suggested_nodes->push_back(static_cast<int32_t>(n));
      }
      r.ignore_suggested_nodes = j.value("ignoreSuggestedNodes", true);
      const bool preempt = j.value("preempt", true);
      ScheduleResult res = policy->schedule(r, preempt);
      ours = decision_json(*policy, res);
      ++out.decisions;
      if (str(hived, "outcome") == "preempting") {
        ++out.hived_preemptions;
        out.hived_victims += static_cast<int64_t>(hived.value("victims", json::array()).size());
      }
      if (res.outcome == Outcome::Preempting) {
        ++out.policy_preemptions;
        out.policy_victims += static_cast<int64_t>(names(res.victims).size());
      }
    } else if (op == "release") {
      bool released = policy->release(str(j, "group"));
      ours = json{{"outcome", "released"}, {"released", released}};
    } else if (op == "node") {
      int32_t n = policy->cluster().find_node(str(j, "node"));
      if (n < 0) {
        error = where + "unknown node " + str(j, "node");
        return false;
      }
      policy->set_node_health(n, j.value("healthy", true));
      ours = json{{"outcome", "ok"}};
    } else {
      error = where + "unknown op \"" + op + "\"";
      return false;
    }
    if (str(hived, "outcome") == "crash") {
      ++out.hived_crashes;
      continue;
    }
    std::string diff = op == "release"
                           ? (hived.value("released", false) == ours.value("released", false)
                                  ? std::string()
                                  : std::string("released: HiveD ") +
                                        (hived.value("released", false) ? "true" : "false"))
                           : compare(hived, ours);
    if (diff.empty()) {
      ++out.matched;
    } else if (out.first_divergence < 0) {
      out.first_divergence = line_no;
      out.divergence = op + " " + str(j, "group") + ": " + diff;
    }
  }
  if (!policy) {
    error = "no config line";
    return false;
  }
  return true;
}

}  // namespace

util::Result<void> replay_fidelity(std::string_view text, FidelityReplay& out,
                                   const PolicyFactory& make) {
  std::string error;
  if (!replay_into(text, out, error, make)) return util::Error{error, {}};
  return {};
}

}  // namespace pai::sim
