#include "deploy/upgrade_nodes.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>

#include "deploy/cluster_files.h"
#include "hived/inspect.h"
#include "http/client.h"
#include "util/json.h"
#include "util/strings.h"

namespace pai::deploy {

namespace {

constexpr const char* kNodesKubectl =
    "kubectl --kubeconfig=/etc/kubernetes/admin.conf --cache-dir=/etc/paictl/kube-cache ";

}  // namespace

util::Result<std::string> NodeRunner::kubectl(const std::string& args) {
  auto x = run_on_master(t_, master_, std::string(kNodesKubectl) + args);
  if (!x.ok()) return util::Error{x.error, x.hint, util::Error::Kind::Remote};
  if (x.exit_status != 0)
    return util::Error{"kubectl " + args.substr(0, args.find(' ')) + " on " + master_.name + ": " +
                           std::string(util::trim(x.err)),
                       {},
                       util::Error::Kind::Remote};
  return x.out;
}

util::Result<void> NodeRunner::wait_node(const NodeCheck& c) {
  double deadline = clock_.now() + node_wait_s_;
  std::string last = "not read";
  for (;;) {
    auto out = kubectl("get node " + util::shell_quote(c.node) + " -o json");
    if (out.ok()) {
      auto j = util::parse_json_or_discarded(*out);
      if (!j.is_discarded()) {
        bool ready = false;
        for (const auto& cond : j.value("/status/conditions"_json_pointer, nlohmann::json::array()))
          if (cond.value("type", "") == "Ready") ready = cond.value("status", "") == "True";
        std::string kv = j.value("/status/nodeInfo/kubeletVersion"_json_pointer, std::string());
        int gpus = std::atoi(
            j.value("/status/allocatable/nvidia.com~1gpu"_json_pointer, std::string("0")).c_str());
        if (ready && kv == "v" + c.version && gpus >= c.gpus) return {};
        last = std::string(ready ? "Ready" : "not Ready") + ", kubelet " + kv + ", " +
               std::to_string(gpus) + " GPUs allocatable";
      }
    } else {
      last = out.error().message;
    }
    if (clock_.now() >= deadline)
      return util::Error{
          c.node + " is not Ready at v" + c.version +
              (c.gpus ? " with " + std::to_string(c.gpus) + " GPUs" : std::string()) + " after " +
              std::to_string(static_cast<int>(node_wait_s_)) + " s (" + last + ")",
          "kubectl describe node " + c.node + "; journalctl -u kubelet on it",
          util::Error::Kind::Remote};
    clock_.sleep(poll_s_);
  }
}

util::Result<void> NodeRunner::run(const NodeJob& job,
                                   const std::function<void(const std::string&)>& progress) {
  std::string q = util::shell_quote(job.node);
  auto r = kubectl("annotate node " + q + " --overwrite " + kMaintenanceAnnotation + "=" +
                   util::shell_quote(job.annotation));
  if (r.ok()) r = kubectl("cordon " + q);
  if (!r.ok()) return r.error();
  if (progress) progress("");
  auto release = [&]() -> util::Result<void> {
    auto u = kubectl("uncordon " + q);
    if (u.ok()) u = kubectl("annotate node " + q + " " + kMaintenanceAnnotation + "-");
    if (!u.ok()) return u.error();
    return {};
  };
  // The node's running groups: waited for (HiveD's inspect API), or drained.
  if (job.evict && !job.groups.empty()) {
    int t = std::max(1, static_cast<int>(std::ceil(job.wait_s)));
    auto d =
        kubectl("drain " + q + " --ignore-daemonsets --delete-emptydir-data --force --timeout=" +
                std::to_string(t) + "s");
    if (!d.ok()) {
      (void)release();
      return util::Error{"draining " + job.node + " did not finish: " + d.error().message +
                             "; the node is uncordoned as it was found",
                         {},
                         util::Error::Kind::Remote};
    }
  } else if (!job.hived_url.empty()) {
    std::unique_ptr<http::Client> own;
    http::Client* h = job.hived_http;
    if (!h) {
      http::Options o;
      o.timeout_s = 30;
      o.connect_timeout_s = 10;
      own = std::make_unique<http::CurlClient>(o);
      h = own.get();
    }
    hived::Client hc(*h, job.hived_url);
    double deadline = clock_.now() + job.wait_s;
    bool told = false;
    for (;;) {
      auto gs = hc.affinity_groups();
      std::vector<std::string> on;
      if (gs.ok())
        for (const auto& g : *gs)
          if (g.physical_placement.count(job.node)) on.push_back(g.name);
      if (gs.ok() && on.empty()) break;
      if (clock_.now() >= deadline) {
        (void)release();
        return util::Error{job.node + ": " +
                               (gs.ok() ? util::join(on, ", ") + " still running"
                                        : "HiveD did not answer (" + gs.error().message + ")") +
                               " after " + std::to_string(static_cast<int>(job.wait_s)) +
                               " s; the node is uncordoned as it was found",
                           "wait longer (--wait-for-groups) or evict them (--evict)",
                           util::Error::Kind::Remote};
      }
      if (!told && progress) {
        progress(gs.ok() ? util::join(on, ", ") : std::string("HiveD"));
        told = true;
      }
      clock_.sleep(poll_s_);
    }
  }
  if (job.action) {
    auto a = job.action();
    if (!a.ok()) return a;  // left cordoned and annotated: the next run finishes it
  }
  if (auto w = wait_node(job.check); !w.ok()) return w;
  return release();
}

}  // namespace pai::deploy
