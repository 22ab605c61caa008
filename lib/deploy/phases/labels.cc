// The `labels` phase: every node labelled with its roles, SKU, GPUs and site.
#include "deploy/phases/common.h"
#include "deploy/phases/phases.h"
#include "util/strings.h"

namespace pai::deploy::phases {

namespace {

using util::shell_quote;

// Node labels: roles and SKU from layout.yaml; GPU nodes are marked for the
// device plugin. The master keeps kubeadm's NoSchedule taint: no jobs there.
class LabelsPhase : public Phase, public ReadsAhead {
 public:
  LabelsPhase()
      : Phase("labels",
              {.hosts = PhaseTraits::Hosts::Master, .cluster_scope = true, .barrier = true}) {}
  static std::map<std::string, std::string> wanted(const HostSpec& h) {
    std::map<std::string, std::string> w;
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
  util::Result<void> observe(HostRun& h, std::vector<std::string>& needs) override {
    auto listed = nodes_of(h);
    if (!listed) return listed.error();
    const nlohmann::json& nodes = *listed;
    missing_.clear();
    for (auto* host : h.run().hosts) {
      const nlohmann::json* n = find_node(nodes, host->spec().name);
      std::vector<std::string> m;
      for (const auto& [k, v] : wanted(host->spec())) {
        bool ok = n && n->contains("metadata") && (*n)["metadata"].contains("labels") &&
                  (*n)["metadata"]["labels"].value(k, "") == v;
        if (!ok) m.push_back(k + "=" + v);
      }
      if (!m.empty()) {
        needs.push_back("label " + host->spec().name + " " + util::join(m, " "));
        missing_[host->spec().name] = m;
      }
    }
    return {};
  }
  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    // One write per set of labels, for all the nodes that miss it (the workers
    // of one SKU share theirs): a merge patch of each node's labels, sent by one
    // curl over one connection (api_curl). `kubectl label` of many nodes sends
    // its patches at client-go's 5 a second (50 nodes: 8 s), and a kubectl run
    // costs the master about 0.1 s of CPU. Where curl cannot (no curl, no
    // client certificate in admin.conf, no answer: code 000), the same set is
    // labelled with kubectl; a node the API server refused (any code but 200)
    // fails the step, naming the node and the code.
    std::map<std::vector<std::string>, std::vector<std::string>> by_labels;
    for (const auto& [node, labels] : missing_) by_labels[labels].push_back(node);
    std::string script = api_access_script();
    for (const auto& [labels, nodes] : by_labels) {
      nlohmann::json patch;
      patch["metadata"]["labels"] = nlohmann::json::object();
      for (const auto& l : labels) {
        size_t eq = l.find('=');
        patch["metadata"]["labels"][l.substr(0, eq)] =
            eq == std::string::npos ? "" : l.substr(eq + 1);
      }
      std::string urls;
      for (const auto& n : nodes)
        urls +=
            " -o /dev/null \"$pai_s\"" + shell_quote("/api/v1/nodes/" + n + "?fieldManager=paictl");
      std::string kubectl = std::string(kKubectl) + " label node";
      for (const auto& n : nodes) kubectl += " " + shell_quote(n);
      kubectl += " --overwrite";
      for (const auto& l : labels) kubectl += " " + shell_quote(l);
      script +=
          "pai_ok=\n"
          "if [ -n \"$pai_api\" ]; then\n"
          "pai_codes=$(" +
          api_curl("-X PATCH -H 'Content-Type: application/merge-patch+json' --data-binary " +
                   shell_quote(patch.dump()) + " -w '%{http_code}\\n'" + urls) +
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
          kubectl + " >/dev/null\n";
    }
    return run_last_step(h, "labelling nodes", script);
  }

 private:
  std::map<std::string, std::vector<std::string>> missing_;
};

}  // namespace

std::unique_ptr<Phase> make_labels_phase() {
  return std::make_unique<LabelsPhase>();
}

}  // namespace pai::deploy::phases
