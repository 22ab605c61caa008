// paictl node maintain CLUSTER_DIR HOST... (--driver VERSION | --packages PKG=VER... |
// --reboot) (lib/deploy/maintain.h): the nodes changed in the maintenance
// planner's batches, around HiveD's running groups: cordon, wait or drain,
// change, reboot, verify, uncordon.

#include <cctype>
#include <climits>
#include <cstdio>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "app.h"
#include "command.h"
#include "config/cluster_files.h"
#include "deploy/maintain.h"
#include "deploy/maintain_json.h"
#include "exit_codes.h"
#include "flags.h"
#include "hived/maintenance.h"
#include "install/cmd_install.h"
#include "install/install_out.h"
#include "install/install_view.h"
#include "lifecycle/maintenance_print.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/strings.h"

namespace paictl {

namespace {

struct MaintainOptions {
  InstallOptions install;
  std::vector<std::string> nodes;
  std::string driver;
  std::vector<std::string> packages;
  bool reboot = false;
  std::string max_unavailable = "1";
  std::string wait_for_groups = "0";
  double wait_s = 0;  // complete: --wait-for-groups in seconds (-1: not a duration)
  bool evict = false;
  std::string hived;
  int drain_timeout_s = 300;
  int verify_timeout_s = 300;
  bool interactive = false;
};

// "90", "90s", "10m", "2h", "1h30m" -> seconds; -1 when it is none of these.
double maintain_duration(const std::string& text) {
  if (text.empty()) return -1;
  double total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = i;
    while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.'))
      ++j;
    if (j == i) return -1;
    double v = 0;
    try {
      v = std::stod(text.substr(i, j - i));
    } catch (...) {
      return -1;
    }
    double unit = 1;
    if (j < text.size()) {
      char c = text[j++];
      if (c == 'h')
        unit = 3600;
      else if (c == 'm')
        unit = 60;
      else if (c != 's')
        return -1;
    } else if (i != 0) {
      return -1;  // "1h30": the unit of the last part is missing
    }
    total += v * unit;
    i = j;
  }
  return total;
}

void print_maintain_plan(const pai::deploy::MaintainPlan& p) {
  const auto& r = p.request;
  std::string what = !r.driver.empty()     ? "driver " + r.driver
                     : !r.packages.empty() ? "packages " + pai::util::join(r.packages, " ")
                                           : "a reboot";
  out_printf("node maintain: %zu host%s, %s; running groups from %s\n", p.hosts.size(),
             p.hosts.size() == 1 ? "" : "s", what.c_str(), p.hived_source.c_str());
  out_printf("%-14s %-14s %-12s %s\n", "HOST", "OS", "DRIVER", "CHANGE");
  for (const auto& h : p.hosts) {
    std::vector<std::string> parts;
    for (const auto& c : h.packages) {
      std::string s = c.name + " " + (c.from.empty() ? "(none)" : c.from) + " -> " + c.to;
      if (!c.removes.empty()) s += " (replaces " + pai::util::join(c.removes, ", ") + ")";
      if (c.held) s += " (held)";
      if (c.from == c.to && c.removes.empty()) s = c.name + " " + c.to + " (installed)";
      parts.push_back(s);
    }
    if (h.reboot) parts.push_back("reboot");
    if (!h.changes()) parts.push_back("nothing to change");
    out_printf("%-14s %-14s %-12s %s\n", h.host.c_str(), h.os.c_str(),
               h.driver_now.empty() ? "-" : h.driver_now.c_str(),
               pai::util::join(parts, ", ").c_str());
  }
  if (!p.maintenance.batches.empty() || !p.maintenance.blocked.empty())
    out_printf("\n%s", lifecycle::maintenance_text(p.maintenance).c_str());
}

void show_node_step(const pai::deploy::UseCaseEvent& e, const UseCaseView& v) {
  using pai::deploy::NodeStepEvent;
  if (e.kind != pai::deploy::UseCaseEvent::Kind::NodeStep || !e.node_step) return;
  if (v.g->quiet || v.json) return;
  const NodeStepEvent& s = *e.node_step;
  const char* state = s.state == NodeStepEvent::State::Started  ? "..."
                      : s.state == NodeStepEvent::State::Done   ? "done"
                      : s.state == NodeStepEvent::State::Failed ? "FAILED"
                                                                : "skipped";
  std::string batch = s.batch == SIZE_MAX ? "resume" : "batch " + std::to_string(s.batch + 1);
  err_printf("%-8s %-14s %-9s %s%s%s\n", batch.c_str(), s.node.c_str(),
             pai::deploy::to_string(s.step), state, s.message.empty() ? "" : "  ",
             s.message.c_str());
}

int run_node_maintain(const MaintainOptions& mo, const Globals& g) {
  const InstallOptions& o = mo.install;
  UseCaseView view = use_case_view(o, g);
  pai::deploy::MaintainDeps deps;
  deps.install = install_deps(o, view);
  auto cb = use_case_callbacks(view);
  auto show = cb.on_event;
  auto mu = std::make_shared<std::mutex>();
  cb.on_event = [show, &view, mu](const pai::deploy::UseCaseEvent& e) {
    std::lock_guard lock(*mu);
    if (e.kind == pai::deploy::UseCaseEvent::Kind::NodeStep)
      show_node_step(e, view);
    else if (show)
      show(e);
  };
  pai::deploy::MaintainRequest r;
  r.cluster_dir = o.hosts.paths[0];
  r.hosts = split_names(mo.nodes);
  r.driver = mo.driver;
  r.packages = mo.packages;
  r.reboot = mo.reboot;
  r.max_unavailable = mo.max_unavailable;
  r.wait_for_groups_s = mo.wait_s;
  r.evict = mo.evict;
  r.hived = mo.hived;
  r.dry_run = o.hosts.dry_run;
  r.yes = o.yes;
  r.drain_timeout_s = mo.drain_timeout_s;
  r.verify_timeout_s = mo.verify_timeout_s;
  auto plan = pai::deploy::plan_maintain(r, deps, cb);
  if (!plan.ok()) return report(plan.error(), view);
  if (!view.json) print_maintain_plan(*plan);
  auto out = pai::deploy::apply_maintain(*plan, cb);
  int rc = kExitOk;
  using End = pai::deploy::MaintainOutcome::End;
  switch (out.end) {
    case End::DryRun:
      if (!view.json) out_printf("dry run: nothing was changed on any host\n");
      rc = plan->blocked() ? kExitFindings : plan->changes() ? kExitChanges : kExitOk;
      break;
    case End::Blocked:
    case End::Busy:
      rc = report(*out.error, view);
      break;
    case End::UpToDate:
      if (!view.json) out_printf("nothing to do: every host has what was asked\n");
      break;
    case End::Declined:
      print_error("nothing was changed");
      rc = is_tty(0) ? kExitFindings : kExitUsage;
      break;
    case End::Applied:
      if (out.error) {
        rc = report(*out.error, view);
      } else {
        rc = kExitChanges;
        if (!view.json)
          out_printf("maintained %s (run %s); every node uncordoned\n",
                     pai::util::join(r.hosts, ", ").c_str(), out.run->run_id.c_str());
      }
      break;
  }
  print_use_case_document(pai::deploy::maintain_json(*plan, &out), "nodeMaintain", view);
  return exit_code_for(rc, o.detailed_exitcode);
}

void complete_node_maintain(MaintainOptions& o) {
  auto& paths = o.install.hosts.paths;
  if (paths.size() > 1) {
    o.nodes.assign(paths.begin() + 1, paths.end());
    paths.resize(1);
  }
  o.interactive = is_tty(0) && is_tty(2);
  o.wait_s = maintain_duration(o.wait_for_groups);
  if (o.hived.empty() && paths.size() == 1)
    if (auto settings = pai::config::read_cluster_settings(paths[0])) o.hived = settings->hived_url;
}

void validate_node_maintain(const MaintainOptions& o, Usage& u) {
  validate_install(o.install, "node maintain", u);
  std::string usage =
      "paictl node maintain CLUSTER_DIR HOST... (--driver VERSION | --packages PKG=VER... | "
      "--reboot)";
  u.error_if(o.nodes.empty() && !o.install.hosts.paths.empty(),
             "node maintain needs at least one host", usage);
  int asked = (o.driver.empty() ? 0 : 1) + (o.packages.empty() ? 0 : 1);
  u.error_if(asked == 0 && !o.reboot, "node maintain needs a change", usage);
  u.error_if(asked == 2, "--driver and --packages go in separate runs", usage);
  if (!o.driver.empty()) {
    bool ok = std::isdigit(static_cast<unsigned char>(o.driver[0]));
    for (char c : o.driver) ok = ok && (std::isdigit(static_cast<unsigned char>(c)) || c == '.');
    u.error_if(!ok, "--driver " + o.driver + ": expected a driver version",
               "a branch (550) or a version (550.127.05)");
  }
  for (const auto& p : o.packages) {
    auto eq = p.find('=');
    u.error_if(eq == std::string::npos || eq == 0 || eq + 1 == p.size(),
               "--packages " + p + ": expected PKG=VERSION",
               "e.g. --packages nvidia-container-toolkit=1.17.3-1");
  }
  if (auto m = pai::hived::parse_max_unavailable(o.max_unavailable); !m.ok())
    u.error("--max-unavailable: " + m.error().message, m.error().hint);
  u.error_if(o.wait_s < 0, "--wait-for-groups " + o.wait_for_groups + ": expected a duration",
             "seconds (90), or with a unit: 90s, 10m, 2h, 1h30m");
  if (!o.hived.empty())
    u.error_if(o.hived.rfind("http://", 0) != 0 && o.hived.rfind("https://", 0) != 0,
               "--hived " + o.hived + " is not an http:// or https:// URL",
               "HiveD's web server listens on :30096, e.g. --hived http://10.0.0.1:30096");
  u.error_if(!o.install.yes && !o.install.hosts.dry_run && !o.interactive,
             "not a terminal: pass --yes to maintain nodes without a confirmation",
             "or --dry-run to see the plan");
}

}  // namespace

void build_node_maintain(Flags& cmd, Globals& g) {
  auto o = std::make_shared<MaintainOptions>();
  add_install_flags(cmd, o->install, g, false, false);
  cmd.get_option("--dry-run")
      ->description(
          "Show the plan (each host's change, the batches, the groups waited for, evicted or "
          "blocking), and change nothing");
  // The install flags node maintain has no use for.
  for (const char* name : {"--wait", "--ignore-check-errors", "--print-script", "--arm-endpoint",
                           "--authority-host", "--ca-file", "--docker-data-root", "--registry"})
    cmd.get_option(name)->group("");
  cmd.add_option("--driver", o->driver,
                 "Change the NVIDIA driver to this branch (550: the newest apt offers) or version "
                 "(550.127.05); the host reboots")
      ->type_name("VERSION");
  cmd.add_option("--packages", o->packages, "Install these package versions (apt)")
      ->type_name("PKG=VER");
  cmd.add_flag("--reboot", o->reboot, "Reboot each node (also after --packages)");
  cmd.add_option("--max-unavailable", o->max_unavailable,
                 "At most N nodes, or P% of the cluster's nodes (and of each VC's guaranteed "
                 "cells), out of service at once")
      ->type_name("N|P%")
      ->capture_default_str();
  cmd.add_option("--wait-for-groups", o->wait_for_groups,
                 "Wait this long for the running groups on a node before its change (90s, 10m, "
                 "2h); 0: running groups block their nodes unless --evict")
      ->type_name("DURATION")
      ->capture_default_str();
  cmd.add_flag("--evict", o->evict,
               "Drain the nodes whose running groups cannot be waited for (their pods are "
               "evicted)");
  cmd.add_option("--hived", o->hived,
                 "HiveD's inspect API (http://MASTER:30096; default: config.yaml's hived_url): "
                 "plan around the running groups")
      ->type_name("URL");
  cmd.add_option("--drain-timeout", o->drain_timeout_s, "Seconds kubectl drain may take")
      ->check(Range(1, 86400))
      ->capture_default_str();
  cmd.add_option("--verify-timeout", o->verify_timeout_s,
                 "Seconds a node may take to come back verified (Ready, driver, GPUs)")
      ->check(Range(1, 86400))
      ->capture_default_str();
  define_command(cmd, g, o,
                 {.complete = [](MaintainOptions& o, const Globals&) { complete_node_maintain(o); },
                  .validate = validate_node_maintain,
                  .run = run_node_maintain});
}

}  // namespace paictl
