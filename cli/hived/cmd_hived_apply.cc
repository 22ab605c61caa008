// paictl hived apply NEW: the safe way to change HiveD's config. HiveD reads
// its config only when it starts (and OpenPAI's pod copies it from the
// ConfigMap at start), so a change is: diff against the live state, refuse
// when running guaranteed groups would be preempted, confirm, push the config,
// restart the scheduler, wait until HiveD runs the new config with every node
// healthy again, and report what changed.

#include <cstdio>
#include <iostream>
#include <optional>

#include "app.h"
#include "command.h"
#include "data_dirs.h"
#include "exit_codes.h"
#include "flags.h"
#include "hived/apply.h"
#include "hived/apply_json.h"
#include "hived/cmd_hived_commands.h"
#include "hived/cmd_hived_common.h"
#include "hived/cmd_hived_diff.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/clock.h"
#include "util/process.h"

namespace paictl {

namespace {

using namespace hivedcli;

struct ApplyOptions {
  HivedOptions h;
  std::string new_path;
  std::string current;
  bool yes = false;
  bool allow_preemption = false;
  bool dry_run = false;
  std::string kubectl = "kubectl";
  std::string ns = "openpai";
  std::string push_command, restart_command;
  double wait_s = 300;
  double poll_s = 2;
};

bool confirm(const std::string& question) {
  std::fprintf(stderr, "%s [y/N] ", question.c_str());
  std::fflush(stderr);
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes";
}

// The message of a failed apply step and its hint; the exit code.
int report_apply_error(const pai::hived::ApplyError& e, const HivedConnection& h,
                       const Globals& g) {
  using Kind = pai::hived::ApplyError::Kind;
  switch (e.kind) {
    case Kind::ConfigErrors:
      print_config_errors(*e.config, g);
      return kExitFindings;
    case Kind::HiveD:
      return report(h, e.hived->doing, *e.hived);
    default:
      break;
  }
  for (const auto& w : e.warnings) print_warning(w);
  print_error(e.message);
  if (e.kind == Kind::CurrentConfig)
    std::fprintf(stderr,
                 "  hint: give it with --current PATH, or point --kubectl at the master "
                 "(--kubectl 'ssh master kubectl')\n");
  if (e.kind == Kind::Timeout)
    std::fprintf(stderr,
                 "  hint: paictl hived status shows what it runs; kubectl logs "
                 "hivedscheduler-hs-0 shows why it does not start\n");
  return e.kind == Kind::Input                                  ? kExitUsage
         : e.kind == Kind::ConfigErrors || e.kind == Kind::Diff ? kExitFindings
                                                                : kExitRemote;
}

// What happened to the groups against the plan, and what HiveD runs now.
std::string outcome_text(const ApplyOptions& o, const pai::hived::ApplyOutcome& r) {
  Table t({{"GROUP"}, {"PLANNED"}, {"NOW"}});
  for (const auto& gr : r.groups)
    if (gr.notable)
      t.add({gr.name, gr.planned, gr.now + (gr.as_planned ? "" : " (not as planned)")});
  std::string out = "\n";
  if (!t.rows.empty()) out += render_table(t) + "\n";
  out += "HiveD runs " + o.new_path + " after " +
         std::to_string(static_cast<int>(r.waited_s + 0.5)) + " s: " + std::to_string(r.nodes) +
         " nodes, " + std::to_string(r.bad_nodes.size()) + " bad (as before); " +
         std::to_string(r.live_groups) + " affinity groups" +
         (r.not_as_planned ? ", " + std::to_string(r.not_as_planned) + " not as planned"
                           : std::string()) +
         ".\n";
  return out;
}

void apply_say(const Globals& g, const std::string& s) {
  if (!g.quiet) std::fprintf(stderr, "%s\n", s.c_str());
}

// Where the command ends before anything changes: nothing to apply, refused,
// no ConfigMap, a dry run, not confirmed. `document`: -o json prints the plan.
struct ApplyStop {
  int code;
  bool document = true;
};

std::optional<ApplyStop> stop_before_apply(const ApplyOptions& o, const Globals& g,
                                           const pai::hived::ApplyPlan& plan) {
  if (!plan.changes()) {
    apply_say(g, "Nothing to apply.");
    return ApplyStop{kExitOk};
  }
  if (plan.refused) {
    print_error("refusing: " + std::to_string(plan.refused_groups.size()) +
                " running guaranteed group(s) would be lazily preempted: " +
                pai::hived::join_names(plan.refused_groups));
    std::fprintf(stderr,
                 "  hint: move their VC's cells back, wait until they end, or accept it with "
                 "--allow-preemption\n");
    return ApplyStop{kExitFindings};
  }
  if (plan.push_error) {
    print_error(plan.push_error->message);
    return ApplyStop{kExitUsage, false};
  }
  if (o.dry_run) {
    apply_say(g, "Dry run: would push the config with: " + plan.push_command);
    apply_say(g, "          restart HiveD with:        " + plan.restart_command);
    apply_say(g, "          and wait up to " + std::to_string(static_cast<int>(o.wait_s)) +
                     " s for every node of the new config to be healthy.");
    if (!plan.manifest.empty() && o.h.output == "wide")
      std::fwrite(plan.manifest.data(), 1, plan.manifest.size(), stdout);
    return ApplyStop{kExitChanges};
  }
  if (o.yes) return std::nullopt;
  if (!is_tty(0) || !is_tty(2)) {
    print_error("not on a terminal: give --yes to apply without a question");
    return ApplyStop{kExitUsage};
  }
  if (!confirm("Push the new config and restart HiveD?")) {
    apply_say(g, "Not applied.");
    return ApplyStop{kExitFindings};
  }
  return std::nullopt;
}

void print_apply_event(const Globals& g, const pai::hived::ApplyEvent& e) {
  using Kind = pai::hived::ApplyEvent::Kind;
  if (e.kind == Kind::Output) std::fwrite(e.text.data(), 1, e.text.size(), stderr);
  if (e.kind == Kind::Pushing) apply_say(g, "pushing the config: " + e.text);
  if (e.kind == Kind::Restarting) apply_say(g, "restarting HiveD: " + e.text);
  if (e.kind == Kind::Waiting && g.verbose) apply_say(g, "waiting: " + e.text);
}

int run_apply(const ApplyOptions& o, const Globals& g) {
  const bool structured = is_structured(o.h.output);
  pai::hived::ApplyRequest req{.new_path = o.new_path,
                               .current_path = o.current,
                               .ns = o.ns,
                               .kubectl = o.kubectl,
                               .push_command = o.push_command,
                               .restart_command = o.restart_command,
                               .templates_dir = o.push_command.empty() ? find_templates() : "",
                               .hived_name = "",
                               .allow_preemption = o.allow_preemption,
                               .wait_s = o.wait_s,
                               .poll_s = o.poll_s};
  auto& runner = pai::util::ProcessRunner::real();
  auto configs = pai::hived::load_apply_configs(req, runner);
  if (!configs) return report_apply_error(configs.error(), {}, g);
  auto h = connect_hived(o.h, g);
  if (!h) return kExitUsage;
  req.hived_name = h->where;
  auto plan = pai::hived::plan_hived_apply(req, std::move(configs).value(), *h->client);
  if (!plan) return report_apply_error(plan.error(), *h, g);
  for (const auto& w : plan->warnings) print_warning(w);
  Json doc = document("hivedApply", pai::hived::apply_json(*plan));
  auto finish = [&](int code) {
    if (structured) print_document(doc, o.h.output);
    return code;
  };
  if (!structured) {
    std::string text = diff_text(plan->input, plan->diff, o.h.output == "wide");
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }
  if (auto stop = stop_before_apply(o, g, *plan))
    return stop->document ? finish(stop->code) : stop->code;
  auto done = pai::hived::apply_hived_apply(
      *plan, *h->client, runner, pai::util::Clock::real(),
      [&](const pai::hived::ApplyEvent& e) { print_apply_event(g, e); });
  if (!done) {
    doc = document("hivedApply", pai::hived::apply_json(*plan, done.error().so_far));
    return finish(report_apply_error(done.error().error, *h, g));
  }
  doc = document("hivedApply", pai::hived::apply_json(*plan, *done));
  if (!structured) {
    std::string out = outcome_text(o, *done);
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return finish(kExitOk);
}

}  // namespace

void build_hived_apply(Flags& cmd, Globals& g) {
  auto o = std::make_shared<ApplyOptions>();
  cmd.add_option("NEW", o->new_path, "The new HiveD config (cluster directory or file)")
      ->required();
  add_hived_flags(&cmd, o->h, g);
  cmd.add_option("--current", o->current,
                 "The config HiveD runs now (default: read from its ConfigMap with --kubectl)")
      ->type_name("PATH");
  cmd.add_flag("--yes,-y", o->yes, "Apply without asking (required when not on a terminal)");
  cmd.add_flag("--allow-preemption", o->allow_preemption,
               "Apply even when running guaranteed groups would be lazily preempted");
  cmd.add_flag("--dry-run", o->dry_run, "Show the diff and the steps; change nothing");
  cmd.add_option("--kubectl", o->kubectl,
                 "kubectl to reach the cluster, as a shell command (e.g. 'ssh master kubectl "
                 "--kubeconfig=/etc/kubernetes/admin.conf')")
      ->capture_default_str();
  cmd.add_option("--namespace", o->ns,
                 "HiveD's namespace (paictl install: openpai; OpenPAI's own installer: default)")
      ->capture_default_str();
  cmd.add_option("--push-command", o->push_command,
                 "Push the config with this shell command instead (the HiveD config on stdin "
                 "and in $PAICTL_HIVED_CONFIG)")
      ->type_name("CMD");
  cmd.add_option("--restart-command", o->restart_command,
                 "Restart HiveD with this shell command instead of kubectl rollout restart")
      ->type_name("CMD");
  cmd.add_option("--wait", o->wait_s,
                 "Seconds to wait for HiveD to run the new config with its nodes healthy")
      ->check(Range(1.0, 86400.0))
      ->capture_default_str();
  cmd.add_option("--poll-interval", o->poll_s, "Seconds between two looks at HiveD")
      ->check(Range(0.05, 600.0))
      ->capture_default_str();
  cmd.footer(
      "The safe procedure: the diff of hived diff --live against the config HiveD runs; a\n"
      "refusal when running guaranteed groups would be lazily preempted (unless\n"
      "--allow-preemption); a question on a terminal (--yes otherwise); the config pushed\n"
      "(by default kubectl apply of the ConfigMap hivedscheduler-config, key\n"
      "hivedscheduler.yaml, as paictl install renders it); HiveD restarted\n"
      "(kubectl rollout restart statefulset/hivedscheduler-hs: it copies its config only at\n"
      "start); a wait until the inspect API shows the new config's nodes and VC cells with\n"
      "every node healthy (nodes bad before may stay bad); and what happened to each group\n"
      "against the plan.\n\n"
      "EXIT STATUS:\n  0 applied (or nothing to apply), 1 a config has errors, refused or not "
      "confirmed,\n  2 bad usage, 3 HiveD, the push or the restart failed or the wait timed "
      "out\n");
  define_command(cmd, g, o,
                 {.validate = [](const ApplyOptions& o, Usage& u) { validate_hived_flags(o.h, u); },
                  .run = [](const auto& o, Globals& g) { return run_apply(o, g); }});
}

}  // namespace paictl
