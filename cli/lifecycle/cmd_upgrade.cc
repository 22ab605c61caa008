// paictl upgrade CLUSTER_DIR --to 1.Y[.Z] (lib/deploy/upgrade.h): the cluster's
// Kubernetes one minor at a time, the control plane first, then the workers in
// the maintenance planner's batches around HiveD's running groups.

#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "app.h"
#include "command.h"
#include "config/cluster_files.h"
#include "data_dirs.h"
#include "deploy/upgrade.h"
#include "deploy/upgrade_json.h"
#include "exit_codes.h"
#include "flags.h"
#include "install/cmd_install.h"
#include "install/install_out.h"
#include "install/install_view.h"
#include "lifecycle/maintenance_print.h"
#include "output/output.h"
#include "util/strings.h"

namespace paictl {

namespace {

struct UpgradeOptions {
  InstallOptions install;
  std::string to;
  std::string max_unavailable = "1";
  std::string wait_for_groups = "1h";
  bool evict = false;
  std::string hived;
  bool interactive = false;
};

// "90", "90s", "30m", "2h", "1h30m" -> seconds; -1 when malformed.
double cmd_upgrade_duration(const std::string& s) {
  if (s.empty()) return -1;
  double total = 0;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    if (j == i || j - i > 9) return -1;
    double n = std::stod(s.substr(i, j - i));
    char u = j < s.size() ? s[j] : 's';
    if (u == 'h')
      n *= 3600;
    else if (u == 'm')
      n *= 60;
    else if (u != 's')
      return -1;
    total += n;
    i = j < s.size() ? j + 1 : j;
  }
  return total;
}

void print_upgrade_plan(const pai::deploy::UpgradePlan& p) {
  const auto* master = p.cluster->master();
  out_printf("upgrade %s: Kubernetes %s -> %s (config.yaml kube_version %s)\n",
             p.cluster->cluster_dir.c_str(), p.control_plane.str().c_str(), p.target.str().c_str(),
             p.config_version.c_str());
  out_printf("nodes:");
  for (const auto& n : p.nodes)
    out_printf(" %s %s%s%s", n.name.c_str(), n.kubelet.c_str(), n.master ? " (control plane)" : "",
               n.maintenance.empty() ? "" : (" (left cordoned: " + n.maintenance + ")").c_str());
  out_printf("\n");
  for (const auto& w : p.warnings) print_warning("upgrade: " + w);
  if (p.up_to_date()) {
    out_printf("nothing to do: every node runs %s\n", p.control_plane.str().c_str());
    return;
  }
  int i = 0;
  for (const auto& s : p.steps) {
    std::string v = s.to.str();
    out_printf("step %d: %s (%s, %s)\n", ++i, v.c_str(),
               s.latest ? ("the latest " + s.to.minor_str() + " patch").c_str() : "as asked",
               s.repo.c_str());
    out_printf("  control plane on %s: ", master->name.c_str());
    if (s.control_plane_done)
      out_printf("the API server runs %s already (no kubeadm upgrade apply)", v.c_str());
    else
      out_printf("kubeadm %s, kubeadm upgrade plan, kubeadm upgrade apply v%s -y", v.c_str(),
                 v.c_str());
    out_printf("; kubelet and kubectl %s%s\n", v.c_str(),
               s.master_kubelet_done ? " (the kubelet runs it already)" : "");
    for (const auto& m : s.other_masters)
      out_printf(
          "  control plane on %s: kubeadm %s, kubeadm upgrade node, kubelet and kubectl %s "
          "(one master at a time, etcd healthy before the next)\n",
          m.c_str(), v.c_str(), v.c_str());
    if (s.nodes.empty()) {
      out_printf("  workers: none behind %s\n", v.c_str());
    } else {
      out_printf("  workers:\n");
      std::string text = paictl::lifecycle::maintenance_text(s.batches);
      for (auto line : pai::util::split(text, '\n'))
        if (!line.empty()) out_printf("    %s\n", std::string(line).c_str());
    }
    out_printf("  then config.yaml: kube_version %s\n", v.c_str());
  }
}

int run_upgrade(const UpgradeOptions& uo, const Globals& g) {
  const InstallOptions& o = uo.install;
  UseCaseView view = use_case_view(o, g);
  pai::deploy::UpgradeDeps deps;
  deps.install = install_deps(o, view);
  pai::deploy::UpgradeRequest r;
  r.cluster_dir = o.hosts.paths[0];
  r.to = uo.to;
  r.max_unavailable = uo.max_unavailable;
  r.wait_for_groups_s = cmd_upgrade_duration(uo.wait_for_groups);
  r.evict = uo.evict;
  r.hived = uo.hived;
  r.dry_run = o.hosts.dry_run;
  r.limit = split_names(o.hosts.limit);
  r.parallel = static_cast<size_t>(o.hosts.parallel);
  r.node_wait_s = o.wait_s;
  r.templates_dir = find_templates();
  auto plan = pai::deploy::plan_upgrade(r, deps);
  if (!plan.ok()) return report(plan.error(), view);
  if (!view.json) print_upgrade_plan(*plan);
  if (plan->up_to_date() && !r.dry_run) {
    // Every node runs the version: what a run killed at its end left (the cluster
    // files' push, the master's install lock) is finished, as any apply ends.
    auto out = pai::deploy::apply_upgrade(*plan, nullptr);
    if (out.error) return report(*out.error, view);
    print_use_case_document(pai::deploy::upgrade_json(*plan, &out), "upgrade", view);
    return kExitOk;
  }
  if (plan->up_to_date() || r.dry_run) {
    if (!view.json && r.dry_run && !plan->up_to_date())
      out_printf("dry run: nothing was changed on any host\n");
    print_use_case_document(pai::deploy::upgrade_json(*plan, nullptr), "upgrade", view);
    return plan->up_to_date() ? kExitOk : kExitChanges;
  }
  if (!o.yes) {
    std::fprintf(stderr, "upgrade the cluster to %s? [y/N] ", plan->target.str().c_str());
    std::string answer;
    std::getline(std::cin, answer);
    if (answer != "y" && answer != "yes") {
      print_error("nothing was changed");
      return kExitFindings;
    }
  }
  std::fflush(stdout);
  std::set<std::string> waiting;  // nodes whose wait was shown
  auto out = pai::deploy::apply_upgrade(*plan, [&](const pai::deploy::UpgradeEvent& e) {
    if (g.quiet) return;
    using K = pai::deploy::UpgradeEvent::Kind;
    std::string line;
    switch (e.kind) {
      case K::Step:
        line = "step to " + e.version;
        break;
      case K::ControlPlane:
        line = "control plane on " + e.node + ": " + e.message;
        break;
      case K::Applied:
        line = "kubeadm upgrade apply v" + e.version + " done on " + e.node;
        break;
      case K::ApplySkipped:
        line = "the API server runs v" + e.version + " already";
        break;
      case K::Batch:
        line = "batch: " + e.message;
        break;
      case K::NodeStart:
        line = e.node + " cordoned";
        break;
      case K::NodeWaiting:
        if (!waiting.insert(e.node).second) return;
        line = e.node + ": " + e.message;
        break;
      case K::NodeDone:
        line = e.node + " runs " + e.version + ", schedulable";
        break;
      case K::ConfigUpdated:
        line = "config.yaml: kube_version " + e.version;
        if (!e.message.empty()) line += " (" + e.message + ")";
        break;
    }
    std::fprintf(stderr, "[%s] %s\n", e.version.c_str(), line.c_str());
  });
  int rc = kExitChanges;
  if (out.error)
    rc = report(*out.error, view);
  else if (!view.json)
    out_printf(
        "upgraded to %s: %zu node step(s), kubeadm upgrade apply for %s\n",
        out.config_version.c_str(), out.upgraded.size(),
        out.applied.empty() ? "none (already done)" : pai::util::join(out.applied, ", ").c_str());
  print_use_case_document(pai::deploy::upgrade_json(*plan, &out), "upgrade", view);
  return rc;
}

void complete_upgrade(UpgradeOptions& o) {
  auto& paths = o.install.hosts.paths;
  o.interactive = is_tty(0) && is_tty(2);
  if (o.hived.empty() && paths.size() == 1)
    if (auto settings = pai::config::read_cluster_settings(paths[0])) o.hived = settings->hived_url;
}

void validate_upgrade(const UpgradeOptions& o, Usage& u) {
  validate_install(o.install, "upgrade", u);
  u.error_if(o.install.hosts.paths.size() > 1, "upgrade takes one cluster directory",
             "paictl upgrade CLUSTER_DIR --to 1.Y[.Z]");
  if (o.to.empty())
    u.error("upgrade needs --to VERSION", "paictl upgrade CLUSTER_DIR --to 1.31");
  else if (auto v = pai::deploy::parse_kube_version(o.to); !v.ok())
    u.error("--to: " + v.error().message, v.error().hint);
  if (auto m = pai::hived::parse_max_unavailable(o.max_unavailable); !m.ok())
    u.error("--max-unavailable: " + m.error().message, m.error().hint);
  u.error_if(cmd_upgrade_duration(o.wait_for_groups) < 0,
             "--wait-for-groups " + o.wait_for_groups + " is not a duration",
             "seconds, or with a unit: 90s, 30m, 2h, 1h30m");
  if (!o.hived.empty())
    u.error_if(o.hived.rfind("http://", 0) != 0 && o.hived.rfind("https://", 0) != 0,
               "--hived " + o.hived + " is not an http:// or https:// URL",
               "HiveD's web server listens on :30096, e.g. --hived http://10.0.0.1:30096");
  u.error_if(!o.install.yes && !o.install.hosts.dry_run && !o.interactive,
             "not a terminal: pass --yes to upgrade without a confirmation",
             "or --dry-run to see the plan");
}

}  // namespace

void build_upgrade(Flags& cmd, Globals& g) {
  auto o = std::make_shared<UpgradeOptions>();
  add_install_flags(cmd, o->install, g, false, false);
  cmd.get_option("--dry-run")
      ->description(
          "Show the plan (the minor steps, the control plane, the workers' batches), "
          "and change nothing on any host");
  cmd.get_option("--limit")->description("Upgrade only these workers (the control plane always)");
  cmd.add_option("--to", o->to, "The Kubernetes version: 1.Y (its latest patch) or 1.Y.Z")
      ->type_name("VERSION");
  cmd.add_option("--max-unavailable", o->max_unavailable,
                 "Workers out of service at once: N nodes, or P% of the cluster's nodes (and of "
                 "each VC's guaranteed cells)")
      ->type_name("N|P%")
      ->capture_default_str();
  cmd.add_option("--wait-for-groups", o->wait_for_groups,
                 "How long a running group may be waited for before its node is taken")
      ->type_name("DURATION")
      ->capture_default_str();
  cmd.add_flag("--evict", o->evict,
               "Evict (drain) the running groups that cannot be waited for, instead of refusing");
  cmd.add_option("--hived", o->hived,
                 "HiveD's inspect API (default: config.yaml's hived_url): the running groups")
      ->type_name("URL");
  define_command(cmd, g, o,
                 {.complete = [](UpgradeOptions& o, const Globals&) { complete_upgrade(o); },
                  .validate = validate_upgrade,
                  .run = run_upgrade});
}

}  // namespace paictl
