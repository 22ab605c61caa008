// The `labels` phase: every node labelled with its roles, SKU, GPUs and site.
#include <optional>
#include <set>

#include "deploy/phases/common.h"
#include "deploy/phases/phases.h"
#include "util/json.h"
#include "util/strings.h"

namespace pai::deploy::phases {

namespace {

using util::shell_quote;

// What paictl records on a node of the operator's labels and taints (layout.yaml):
// the keys it set, so that one removed from layout.yaml is removed from the
// node by the next run, and a label or taint set by anyone else is left alone.
constexpr const char* kManagedLabels = "paictl.io/managed-labels";
constexpr const char* kManagedTaints = "paictl.io/managed-taints";

std::string labels_taint_id(const std::string& key, const std::string& effect) {
  return key + ":" + effect;
}

std::set<std::string> labels_split_set(const std::string& s) {
  std::set<std::string> out;
  for (auto part : util::split(s, ','))
    if (!part.empty()) out.insert(std::string(part));
  return out;
}

// Node labels: roles and SKU from layout.yaml; GPU nodes are marked for the
// device plugin; the operator's own labels and taints. The master keeps
// kubeadm's NoSchedule taint: no jobs there.
class LabelsPhase : public Phase, public ReadsAhead {
 public:
  LabelsPhase()
      : Phase("labels",
              {.hosts = PhaseTraits::Hosts::Master, .cluster_scope = true, .barrier = true}) {}
  static std::map<std::string, std::string> wanted(const HostSpec& h) {
    std::map<std::string, std::string> w;
    for (const auto& [k, v] : h.operator_labels) w[k] = v;
    if (h.master) w["pai-master"] = "true";
    if (h.worker) w["pai-worker"] = "true";
    if (!h.sku.empty()) w["paictl.io/machine-type"] = h.sku;
    if (has_gpu(h)) w["paictl.io/gpu"] = "nvidia";
    for (const auto& [k, v] : h.labels) w[k] = v;
    return w;
  }
  void observation_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    out.push_back({&h, cluster_objects_script()});
  }

  // The merge patch that brings node `n` (null: not listed) to what `spec`
  // wants, with the needs it meets; null when the node is as wanted.
  static nlohmann::json patch_for(const HostSpec& spec, const nlohmann::json* n,
                                  std::vector<std::string>& needs) {
    static const nlohmann::json kEmpty = nlohmann::json::object();
    const nlohmann::json& md =
        n && n->contains("metadata") && (*n)["metadata"].is_object() ? (*n)["metadata"] : kEmpty;
    auto obj = [&](const char* k) -> const nlohmann::json& {
      return md.contains(k) && md[k].is_object() ? md[k] : kEmpty;
    };
    const nlohmann::json& labels = obj("labels");
    const nlohmann::json& annotations = obj("annotations");
    auto text = [](const nlohmann::json& o, const std::string& k) -> std::optional<std::string> {
      if (!o.contains(k) || !o[k].is_string()) return std::nullopt;
      return o[k].get<std::string>();
    };
    nlohmann::json patch = nlohmann::json::object();
    const std::string& name = spec.name;

    const auto want = wanted(spec);
    std::vector<std::string> set;
    for (const auto& [k, v] : want)
      if (text(labels, k) != v) {
        set.push_back(k + "=" + v);
        patch["metadata"]["labels"][k] = v;
      }
    if (!set.empty()) needs.push_back("label " + name + " " + util::join(set, " "));

    // Labels paictl set that layout.yaml no longer gives.
    std::set<std::string> had = labels_split_set(text(annotations, kManagedLabels).value_or(""));
    std::vector<std::string> unset;
    for (const auto& k : had)
      if (labels.contains(k) && !want.count(k)) {
        unset.push_back(k);
        patch["metadata"]["labels"][k] = nullptr;
      }
    if (!unset.empty()) needs.push_back("unlabel " + name + " " + util::join(unset, " "));

    // Taints: the node's own (kubeadm's, the node controller's, an operator's
    // kubectl taint) kept, paictl's former ones that layout.yaml dropped
    // removed, layout.yaml's set.
    std::set<std::string> had_taints =
        labels_split_set(text(annotations, kManagedTaints).value_or(""));
    std::set<std::string> want_ids;
    for (const auto& t : spec.taints) want_ids.insert(labels_taint_id(t.key, t.effect));
    nlohmann::json current = n && n->contains("spec") && (*n)["spec"].is_object() &&
                                     (*n)["spec"].contains("taints") &&
                                     (*n)["spec"]["taints"].is_array()
                                 ? (*n)["spec"]["taints"]
                                 : nlohmann::json::array();
    nlohmann::json result = nlohmann::json::array();
    std::vector<std::string> untaint, taint;
    for (const auto& t : current) {
      if (!t.is_object()) continue;
      std::string id = labels_taint_id(t.value("key", ""), t.value("effect", ""));
      if (want_ids.count(id)) continue;  // set below, with layout.yaml's value
      if (had_taints.count(id)) {
        untaint.push_back(id);
        continue;
      }
      result.push_back(t);
    }
    for (const auto& t : spec.taints) {
      nlohmann::json j = {{"key", t.key}, {"effect", t.effect}};
      if (!t.value.empty()) j["value"] = t.value;
      bool present = false;
      for (const auto& c : current)
        if (c.is_object() && c.value("key", "") == t.key && c.value("effect", "") == t.effect) {
          present = c.value("value", "") == t.value;
          if (present) j = c;  // kept as it is (its timeAdded)
        }
      if (!present)
        taint.push_back(t.key + (t.value.empty() ? "" : "=" + t.value) + ":" + t.effect);
      result.push_back(j);
    }
    if (!taint.empty()) needs.push_back("taint " + name + " " + util::join(taint, " "));
    if (!untaint.empty()) needs.push_back("untaint " + name + " " + util::join(untaint, " "));
    if (!taint.empty() || !untaint.empty()) patch["spec"]["taints"] = result;

    // What paictl manages now, recorded when it changes.
    std::vector<std::string> keys, ids;
    for (const auto& [k, v] : spec.operator_labels) keys.push_back(k);
    for (const auto& id : want_ids) ids.push_back(id);
    for (auto [key, value] : {std::pair{kManagedLabels, util::join(keys, ",")},
                              std::pair{kManagedTaints, util::join(ids, ",")}}) {
      auto have = text(annotations, key);
      if (value.empty() ? have.has_value() : have != value) {
        if (value.empty())
          patch["metadata"]["annotations"][key] = nullptr;
        else
          patch["metadata"]["annotations"][key] = value;
      }
    }
    if (patch.empty()) return nullptr;
    if (set.empty() && unset.empty() && taint.empty() && untaint.empty())
      needs.push_back("record paictl's labels and taints on " + name);
    return patch;
  }

  util::Result<void> observe(HostRun& h, std::vector<std::string>& needs) override {
    auto listed = nodes_of(h);
    if (!listed) return listed.error();
    const nlohmann::json& nodes = *listed;
    patches_.clear();
    const auto by_name = nodes_by_name(nodes);
    for (auto* host : h.run().hosts) {
      auto it = by_name.find(host->spec().name);
      const nlohmann::json* n = it == by_name.end() ? nullptr : it->second;
      nlohmann::json p = patch_for(host->spec(), n, needs);
      if (!p.is_null()) patches_[host->spec().name] = std::move(p);
    }
    return {};
  }
  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    // One write per patch, for all the nodes that need the same (the workers
    // of one SKU share theirs): a merge patch of each node, sent by one curl
    // over one connection (api_curl). `kubectl label` of many nodes sends its
    // patches at client-go's 5 a second (50 nodes: 8 s), and a kubectl run
    // costs the master about 0.1 s of CPU. Where curl cannot (no curl, no
    // client certificate in admin.conf, no answer: code 000), the same patch
    // is sent with kubectl; a node the API server refused (any code but 200)
    // fails the step, naming the node and the code.
    std::map<std::string, std::vector<std::string>> by_patch;
    for (const auto& [node, patch] : patches_) by_patch[util::dump_json(patch)].push_back(node);
    std::string script = api_access_script();
    for (const auto& [body, nodes] : by_patch) {
      const nlohmann::json& patch = patches_[nodes.front()];
      std::string urls;
      for (const auto& n : nodes)
        urls +=
            " -o /dev/null \"$pai_s\"" + shell_quote("/api/v1/nodes/" + n + "?fieldManager=paictl");
      // Labels alone: kubectl label, all the nodes in one run; anything more: kubectl patch.
      bool labels_only = patch.size() == 1 && patch.contains("metadata") &&
                         patch["metadata"].size() == 1 && patch["metadata"].contains("labels");
      if (labels_only)
        for (const auto& [k, v] : patch["metadata"]["labels"].items()) labels_only &= v.is_string();
      std::string kubectl;
      if (labels_only) {
        kubectl = std::string(kKubectl) + " label node";
        for (const auto& n : nodes) kubectl += " " + shell_quote(n);
        kubectl += " --overwrite";
        for (const auto& [k, v] : patch["metadata"]["labels"].items())
          kubectl += " " + shell_quote(k + "=" + v.get<std::string>());
        kubectl += " >/dev/null";
      } else {
        kubectl = "{ true";
        for (const auto& n : nodes)
          kubectl += "; " + std::string(kKubectl) + " patch node " + shell_quote(n) +
                     " --type merge -p " + shell_quote(body) + " >/dev/null";
        kubectl += "; }";
      }
      script +=
          "pai_ok=\n"
          "if [ -n \"$pai_api\" ]; then\n"
          "pai_codes=$(" +
          api_curl("-X PATCH -H 'Content-Type: application/merge-patch+json' --data-binary " +
                   shell_quote(body) + " -w '%{http_code}\\n'" + urls) +
          ") || pai_codes=\n"
          "pai_ok=1; pai_n=0; pai_bad=; pai_left=" +
          shell_quote(util::join(nodes, " ") + " ") +
          "\n"
          "for c in $pai_codes; do\n"
          "  pai_n=$((pai_n + 1)); pai_node=${pai_left%% *}; pai_left=${pai_left#* }\n"
          "  case $c in 200) ;; 000) pai_ok= ;; *) pai_bad=\"$pai_bad $pai_node ($c)\" ;; esac\n"
          "done\n"
          "[ -z \"$pai_bad\" ] || { echo \"paictl: the API server refused the labels of:$pai_bad\" "
          ">&2; exit 1; }\n"
          "[ \"$pai_n\" = " +
          std::to_string(nodes.size()) +
          " ] || pai_ok=\n"
          "fi\n"
          "[ -n \"$pai_ok\" ] || " +
          kubectl + "\n";
    }
    return run_last_step(h, "labelling nodes", script);
  }

 private:
  std::map<std::string, nlohmann::json> patches_;
};

}  // namespace

std::unique_ptr<Phase> make_labels_phase() {
  return std::make_unique<LabelsPhase>();
}

}  // namespace pai::deploy::phases
