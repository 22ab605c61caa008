// paictl hived quarantine CLUSTER NODE... [--reason TEXT] [--drain] [--dry-run]
// and paictl hived release CLUSTER NODE... (lib/deploy/quarantine.h): bad GPUs
// taken out of HiveD's hands by a cordon and an annotation, the effect shown
// first; release undoes exactly that.

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "app.h"
#include "command.h"
#include "config/cluster_files.h"
#include "deploy/quarantine.h"
#include "exit_codes.h"
#include "flags.h"
#include "hived/cmd_hived_commands.h"
#include "hived/quarantine_print.h"
#include "install/cmd_install.h"
#include "install/install_out.h"
#include "install/install_view.h"
#include "output/output.h"
#include "util/strings.h"
#include "util/time.h"

namespace paictl {

namespace {

struct QuarantineOptions {
  InstallOptions install;
  std::vector<std::string> nodes;
  std::string reason;
  bool drain = false;
  std::string hived;
  int drain_timeout_s = 300;
  bool release = false;
};

int run_quarantine(const QuarantineOptions& qo, const Globals& g) {
  const InstallOptions& o = qo.install;
  UseCaseView view = use_case_view(o, g);
  pai::deploy::QuarantineDeps deps;
  deps.install = install_deps(o, view);
  auto cb = use_case_callbacks(view);
  pai::deploy::QuarantineRequest r;
  r.cluster_dir = o.hosts.paths[0];
  r.nodes = split_names(qo.nodes);
  r.release = qo.release;
  r.reason = qo.reason;
  r.drain = qo.drain;
  r.by = quarantine_who();
  r.at = pai::util::now_rfc3339();
  r.hived = qo.hived;
  r.dry_run = o.hosts.dry_run;
  r.drain_timeout_s = qo.drain_timeout_s;
  auto plan = pai::deploy::plan_quarantine(r, deps, cb);
  if (!plan.ok()) {
    const auto& e = plan.error();
    if (e.about == pai::deploy::UseCaseError::About::UnknownHost) {
      print_error(e.error.message +
                  (e.error.hint.empty() ? std::string() : "\n  hint: " + e.error.hint));
      return kExitUsage;
    }
    return report(e, view);
  }
  if (!view.json) out_printf("%s", quarantine_plan_text(*plan).c_str());
  auto out = pai::deploy::apply_quarantine(*plan, cb);
  int rc = kExitOk;
  using End = pai::deploy::QuarantineOutcome::End;
  const char* verb = r.release ? "released" : "quarantined";
  switch (out.end) {
    case End::Refused:
      rc = report(*out.error, view);
      break;
    case End::DryRun:
      if (!view.json) out_printf("dry run: no node was changed\n");
      rc = plan->changes() ? kExitChanges : kExitOk;
      break;
    case End::Applied:
      if (!view.json && !out.changed.empty())
        out_printf("%s %s\n", verb, pai::util::join(out.changed, ", ").c_str());
      if (!view.json && out.changed.empty()) out_printf("nothing to do: every node is as asked\n");
      if (out.error)
        rc = report(*out.error, view);
      else if (!out.changed.empty())
        rc = kExitChanges;
      break;
  }
  print_use_case_document(pai::deploy::quarantine_json(*plan, &out),
                          r.release ? "hivedRelease" : "hivedQuarantine", view);
  return exit_code_for(rc, o.detailed_exitcode);
}

void complete_quarantine(QuarantineOptions& o) {
  auto& paths = o.install.hosts.paths;
  if (paths.size() > 1) {
    o.nodes.assign(paths.begin() + 1, paths.end());
    paths.resize(1);
  }
  if (o.hived.empty() && paths.size() == 1)
    if (auto settings = pai::config::read_cluster_settings(paths[0])) o.hived = settings->hived_url;
}

void validate_quarantine(const QuarantineOptions& o, Usage& u) {
  const char* verb = o.release ? "hived release" : "hived quarantine";
  validate_install(o.install, verb, u);
  u.error_if(o.nodes.empty() && !o.install.hosts.paths.empty(),
             std::string(verb) + " needs at least one node",
             std::string("paictl ") + verb + " CLUSTER_DIR NODE...");
  if (!o.hived.empty())
    u.error_if(o.hived.rfind("http://", 0) != 0 && o.hived.rfind("https://", 0) != 0,
               "--hived " + o.hived + " is not an http:// or https:// URL",
               "HiveD's web server listens on :30096, e.g. --hived http://10.0.0.1:30096");
}

void build_quarantine_command(Flags& cmd, Globals& g, bool release) {
  auto o = std::make_shared<QuarantineOptions>();
  o->release = release;
  add_install_flags(cmd, o->install, g, false, false);
  cmd.get_option("--dry-run")
      ->description(release ? "Show what release would undo, and change nothing"
                            : "Show the effect (the VCs' doomed cells, the running groups on the "
                              "nodes), and change nothing");
  for (const char* name :
       {"--wait", "--ignore-check-errors", "--print-script", "--arm-endpoint", "--authority-host",
        "--ca-file", "--docker-data-root", "--registry", "--yes"})
    cmd.get_option(name)->group("");
  if (!release) {
    cmd.add_option("--reason", o->reason, "Why (kept in the node's annotation with who and when)")
        ->type_name("TEXT");
    cmd.add_flag("--drain", o->drain,
                 "Drain the nodes after the cordon (their running groups' pods are evicted; "
                 "without it they keep running)");
    cmd.add_option("--drain-timeout", o->drain_timeout_s, "Seconds kubectl drain may take")
        ->check(Range(1, 86400))
        ->capture_default_str();
  }
  cmd.add_option("--hived", o->hived,
                 "HiveD's inspect API (http://MASTER:30096; default: config.yaml's hived_url): "
                 "the effect on the VCs and running groups")
      ->type_name("URL");
  cmd.footer(
      release
          ? "Release undoes exactly what quarantine did: the node is uncordoned only when the "
            "quarantine\ncordoned it, and only its annotation (paictl.io/quarantine) is "
            "removed.\n\nEXIT STATUS:\n  0 released (or nothing to release), 1 refused, 2 bad "
            "usage or an unknown node, 3 the\n  master or HiveD could not be reached\n"
          : "Quarantine cordons each node (HiveD then counts its cells as bad) and annotates it\n"
            "(paictl.io/quarantine: who, when, why). A node someone else cordoned, or another "
            "user\nquarantined, is shown and left alone. Release stays manual: paictl hived "
            "release.\n\nEXIT STATUS:\n  0 quarantined (or already), 1 refused (a node cordoned "
            "or quarantined by someone else),\n  2 bad usage or an unknown node, 3 the master or "
            "HiveD could not be reached\n");
  define_command(cmd, g, o,
                 {.complete = [](QuarantineOptions& o, const Globals&) { complete_quarantine(o); },
                  .validate = validate_quarantine,
                  .run = run_quarantine});
}

}  // namespace

void build_hived_quarantine(Flags& cmd, Globals& g) {
  build_quarantine_command(cmd, g, false);
}
void build_hived_release(Flags& cmd, Globals& g) {
  build_quarantine_command(cmd, g, true);
}

}  // namespace paictl
