// paictl node add|remove CLUSTER_DIR HOST... (lib/deploy/node.h): hosts join
// or leave an installed cluster, their HiveD cells with them; with --azure, an
// Azure pool grows or VMs of it are deleted.

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "app.h"
#include "command.h"
#include "command_tree.h"
#include "config/cluster_files.h"
#include "data_dirs.h"
#include "deploy/node_add.h"
#include "deploy/node_json.h"
#include "deploy/node_remove.h"
#include "exit_codes.h"
#include "flags.h"
#include "install/azure_step.h"
#include "install/cmd_install.h"
#include "install/install_out.h"
#include "install/install_view.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/strings.h"

namespace paictl {

namespace {

using pai::deploy::NodeAddOutcome;
using pai::deploy::NodeRemoveOutcome;

// The hosts named after the cluster directory, and those of --limit.
std::vector<std::string> named_nodes(const NodeOptions& no) {
  std::vector<std::string> all = no.install.hosts.limit;
  all.insert(all.end(), no.nodes.begin(), no.nodes.end());
  return split_names(all);
}

pai::deploy::NodeAddRequest node_add_request(const NodeOptions& no) {
  const InstallOptions& o = no.install;
  pai::deploy::NodeAddRequest r;
  r.cluster_dir = o.hosts.paths[0];
  r.nodes = named_nodes(no);
  r.azure_pool = no.azure_pool;
  r.count = no.count == 0 ? 1 : no.count;
  r.vc = no.vc;
  r.dry_run = o.hosts.dry_run;
  r.yes = o.yes;
  r.ignore_checks = split_names(o.ignore);
  r.wait_s = o.wait_s;
  r.parallel = static_cast<size_t>(o.hosts.parallel);
  r.templates_dir = find_templates();
  r.layouts_dir = layouts_dir();
  r.azure = azure_access(o.azure);
  return r;
}

// node add DIR HOST... (hosts already in layout.yaml), or node add DIR --azure
// POOL --count N (the pool's scale set grows, its new VMs go into layout.yaml):
// then the same join, install --limit of those hosts, and the HiveD push.
int run_node_add(const NodeOptions& no, const Globals& g) {
  UseCaseView view = use_case_view(no.install, g);
  auto deps = install_deps(no.install, view);
  auto cb = use_case_callbacks(view);
  auto plan = pai::deploy::plan_node_add(node_add_request(no), deps, cb);
  if (!plan.ok()) return report(plan.error(), view);
  const std::string& dir = no.install.hosts.paths[0];
  if (!plan->grow && !view.json) print_hived_edit(plan->hived);
  if (plan->grow && !view.json) print_azure_grow(*plan->grow, dir, use_color(g.no_color, 1));
  auto out = pai::deploy::apply_node_add(*plan, cb);
  int rc = kExitOk;
  switch (out.end) {
    case NodeAddOutcome::End::DryRun:
      if (!view.json) {
        out_printf("dry run: nothing was changed in Azure or on any host\n");
        print_hived_edit(plan->hived);
      }
      rc = kExitChanges;
      break;
    case NodeAddOutcome::End::Declined:
      print_error("nothing was changed");
      break;
    case NodeAddOutcome::End::NoTerminal:
      print_error("not a terminal: pass --yes to add VMs without a confirmation");
      rc = kExitUsage;
      break;
    case NodeAddOutcome::End::AzureFailed:
    case NodeAddOutcome::End::CellsFailed:
    case NodeAddOutcome::End::JoinNotPlanned:
      rc = report(*out.error, view);
      break;
    case NodeAddOutcome::End::Joined:
      rc = install_exit_code(*out.join_plan, *out.join, view);
      break;
  }
  bool joining =
      out.end == NodeAddOutcome::End::JoinNotPlanned || out.end == NodeAddOutcome::End::Joined;
  if (plan->grow && joining && !out.join_went_on)
    print_error("node add: the new VMs are in layout.yaml; paictl node add " + dir + " " +
                pai::util::join(plan->nodes, " ") + " resumes their join");
  if (out.push) {
    int push = push_exit_code(out.push, dir, view);
    if (push != kExitOk && push != kExitChanges) rc = push;
  }
  print_use_case_document(pai::deploy::node_add_json(*plan, &out), "nodeAdd", view);
  return rc;
}

// node remove --dry-run: what runs on the master, the files' change, and the
// VMs' deletion or the reset's plan.
int show_node_removal(pai::deploy::NodeRemovePlan& p, const UseCaseView& view,
                      const pai::deploy::Callbacks& cb) {
  if (!view.json) {
    if (!p.etcd_remove.empty()) {
      out_printf("on %s (etcd):\n", p.etcd_via.c_str());
      for (const auto& m : p.etcd_remove)
        out_printf("  etcdctl member remove %s (%s, %s)\n", m.id.c_str(), m.name.c_str(),
                   m.healthy ? "healthy" : "not healthy");
    }
    out_printf("on %s:\n", p.kubectl_host()->name.c_str());
    for (const auto& n : p.nodes) {
      std::string script = p.node_script(n);
      for (auto line : pai::util::split(script, '\n'))
        if (!line.empty()) out_printf("  %s\n", std::string(line).c_str());
    }
    print_hived_edit(p.hived);
    if (p.hived.layout_changed())
      out_printf("layout.yaml: %s leave%s machine-list\n", pai::util::join(p.nodes, ", ").c_str(),
                 p.nodes.size() == 1 ? "s" : "");
  }
  if (p.azure && !view.json) {
    out_printf("Azure:\n");
    for (const auto& l : p.azure->lines()) out_printf("  %s\n", l.c_str());
    out_printf("dry run: nothing was changed in Azure or on any host\n");
  }
  if (p.azure || view.json) {
    print_use_case_document(pai::deploy::node_remove_json(p, nullptr), "nodeRemove", view);
    return kExitChanges;
  }
  for (const auto& n : p.lost)
    out_printf("%s is lost (its etcd member unhealthy, SSH unanswered): it is not reset\n",
               n.c_str());
  if (p.lost.size() == p.nodes.size()) return kExitChanges;
  std::vector<std::string> reset;
  for (const auto& n : p.nodes)
    if (std::find(p.lost.begin(), p.lost.end(), n) == p.lost.end()) reset.push_back(n);
  out_printf("then reset %s:\n", pai::util::join(reset, ", ").c_str());
  std::fflush(stdout);
  auto out = pai::deploy::apply_node_remove(p, cb);
  if (out.error) return report(*out.error, view);
  return stage_exit_code(*out.reset, false);
}

int run_node_remove(const NodeOptions& no, const Globals& g) {
  // A master of three removed leaves two until a third replaces it (L007): the
  // push of the files that say so goes on.
  InstallOptions o = no.install;
  o.hosts.accept_codes = {"L007"};
  UseCaseView view = use_case_view(o, g);
  pai::deploy::NodeRemoveDeps deps;
  deps.install = install_deps(o, view);
  auto cb = use_case_callbacks(view);
  pai::deploy::NodeRemoveRequest r;
  r.cluster_dir = o.hosts.paths[0];
  r.nodes = named_nodes(no);
  r.drain = no.drain;
  r.azure = no.azure;
  r.vc = no.vc;
  r.hived = no.hived;
  r.force = no.force;
  r.dry_run = o.hosts.dry_run;
  r.yes = o.yes;
  r.wait_s = o.wait_s;
  r.parallel = static_cast<size_t>(o.hosts.parallel);
  r.templates_dir = find_templates();
  r.azure_access = azure_access(o.azure);
  auto plan = pai::deploy::plan_node_remove(r, deps, cb);
  if (!plan.ok()) return report(plan.error(), view);
  if (plan->forced()) {
    std::vector<std::string> names;
    for (const auto& x : *plan->running_groups)
      names.push_back(x.name + " (VC " + x.vc + ", " + x.effect + ")");
    print_warning("running groups use the cells of " + pai::util::join(plan->nodes, ", ") + ": " +
                  pai::util::join(names, ", ") + "; removing anyway (--force)");
  }
  if (no.hived.empty() && plan->hived.services_changed() && !g.quiet)
    print_warning(
        "node remove: the running groups were not checked (--hived URL reads them "
        "from HiveD's inspect API)");
  if (r.dry_run) return show_node_removal(*plan, view, cb);
  auto out = pai::deploy::apply_node_remove(*plan, cb);
  int rc = kExitOk;
  if (out.error) rc = report(*out.error, view);
  if (out.end == NodeRemoveOutcome::End::Reset) rc = stage_exit_code(*out.reset, false);
  if (out.end == NodeRemoveOutcome::End::AzureDeleted) rc = kExitChanges;
  if (out.end == NodeRemoveOutcome::End::NothingToReset) rc = kExitChanges;
  if (out.push) {
    int push = push_exit_code(out.push, r.cluster_dir, view);
    if (push != kExitOk && push != kExitChanges) rc = push;
  }
  bool removed = rc == kExitOk || rc == kExitChanges;
  if (removed && !view.json && out.end == NodeRemoveOutcome::End::AzureDeleted)
    out_printf(
        "removed %s: the VM%s deleted in Azure; config.yaml, layout.yaml and the HiveD "
        "config updated and pushed\n",
        pai::util::join(plan->nodes, ", ").c_str(), plan->nodes.size() == 1 ? "" : "s");
  if (removed && !view.json &&
      (out.end == NodeRemoveOutcome::End::Reset ||
       out.end == NodeRemoveOutcome::End::NothingToReset))
    out_printf("removed %s%s; layout.yaml and the HiveD config updated and pushed\n",
               pai::util::join(plan->nodes, ", ").c_str(),
               out.etcd_removed.empty()
                   ? ""
                   : (" (etcd members: " + pai::util::join(out.etcd_removed, ", ") + ")").c_str());
  print_use_case_document(pai::deploy::node_remove_json(*plan, &out), "nodeRemove", view);
  if ((out.end == NodeRemoveOutcome::End::Reset ||
       out.end == NodeRemoveOutcome::End::NothingToReset) &&
      rc == kExitChanges && !o.detailed_exitcode)
    return kExitOk;
  return rc;
}

}  // namespace

void complete_node(NodeOptions& o) {
  auto& paths = o.install.hosts.paths;
  if (paths.size() > 1) {
    o.nodes.assign(paths.begin() + 1, paths.end());
    paths.resize(1);
  }
  o.interactive = is_tty(0) && is_tty(2);
  // HiveD's address: --hived, else the cluster directory's hived_url.
  if (o.hived.empty() && paths.size() == 1)
    if (auto settings = pai::config::read_cluster_settings(paths[0])) o.hived = settings->hived_url;
}

void validate_node_add(const NodeOptions& o, Usage& u) {
  validate_install(o.install, "node add", u);
  if (o.azure_pool.empty()) {
    u.error_if(o.count != 0, "--count goes with --azure POOL",
               "on-prem hosts are named: paictl node add CLUSTER_DIR HOST...");
    u.error_if(o.nodes.empty() && !o.install.hosts.paths.empty(),
               "node add needs at least one host",
               "paictl node add CLUSTER_DIR HOST... (hosts of layout.yaml), or --azure POOL "
               "--count N");
  } else {
    u.error_if(!o.nodes.empty(),
               "node add --azure POOL takes the cluster directory only (Azure names the new VMs)",
               "paictl node add CLUSTER_DIR --azure POOL --count N");
  }
}

void validate_node_remove(const NodeOptions& o, Usage& u) {
  validate_install(o.install, "node remove", u);
  u.error_if(o.nodes.empty() && !o.install.hosts.paths.empty(),
             "node remove needs at least one host", "paictl node remove CLUSTER_DIR HOST...");
  if (!o.hived.empty())
    u.error_if(o.hived.rfind("http://", 0) != 0 && o.hived.rfind("https://", 0) != 0,
               "--hived " + o.hived + " is not an http:// or https:// URL",
               "HiveD's web server listens on :30096, e.g. --hived http://10.0.0.1:30096");
  u.error_if(!o.install.yes && !o.install.hosts.dry_run && !o.interactive,
             "not a terminal: pass --yes to remove nodes without a confirmation",
             "or --dry-run to see what would be removed");
}

void build_node_add(Flags& cmd, Globals& g) {
  auto o = std::make_shared<NodeOptions>();
  add_install_flags(cmd, o->install, g, false, false);
  cmd.get_option("--dry-run")
      ->description(
          "Show the plan (with --azure: the scale set's new size and what follows; else "
          "what each phase would change on the hosts), and change nothing");
  cmd.add_option("--azure", o->azure_pool,
                 "Grow this Azure pool (azure.pools[].name) by --count VMs, then join them")
      ->type_name("POOL");
  cmd.add_option("--count", o->count, "With --azure: how many VMs to add (default 1)")
      ->check(Range(1, 1000));
  cmd.add_option("--vc", o->vc,
                 "Give the new nodes' HiveD cells to this virtual cluster (else they are in no VC: "
                 "jobs use them opportunistically)")
      ->type_name("VC");
  define_command(cmd, g, o,
                 {.complete = [](NodeOptions& o, const Globals&) { complete_node(o); },
                  .validate = validate_node_add,
                  .run = run_node_add});
}

void build_node_remove(Flags& cmd, Globals& g) {
  auto o = std::make_shared<NodeOptions>();
  add_install_flags(cmd, o->install, g, true, false);
  cmd.get_option("--dry-run")
      ->description(
          "Show what would be drained, deleted and reset (with --azure: the VMs "
          "deleted and the files' changes), and change nothing");
  cmd.add_flag("--drain", o->drain,
               "Evict the node's pods first (kubectl drain, bounded by --wait), then delete it");
  cmd.add_flag("--azure", o->azure,
               "The nodes are VMs of Azure pools: delete them (with their NICs and OS disks) "
               "through ARM instead of resetting them, and lower their pools' count in "
               "config.yaml");
  cmd.add_option("--vc", o->vc,
                 "The virtual cluster that gives up HiveD cells when the VCs' cells no longer fit "
                 "(needed when several VCs hold cells of the nodes' type)")
      ->type_name("VC");
  cmd.add_option("--hived", o->hived,
                 "HiveD's inspect API (http://MASTER:30096): refuse when running groups use the "
                 "nodes' cells")
      ->type_name("URL");
  cmd.add_flag("--force", o->force, "Remove the nodes even when running groups use their cells");
  define_command(cmd, g, o,
                 {.complete = [](NodeOptions& o, const Globals&) { complete_node(o); },
                  .validate = validate_node_remove,
                  .run = run_node_remove});
}

}  // namespace paictl
