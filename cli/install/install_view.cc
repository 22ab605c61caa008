#include "install/install_view.h"

#include <cstdio>
#include <iostream>

#include "command_tree.h"
#include "diag/report.h"
#include "install/azure_step.h"
#include "install/install_out.h"
#include "install/install_print.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/strings.h"

namespace paictl {

namespace {

using pai::deploy::HostOperation;
using pai::deploy::UseCaseEvent;

const char* verb_of(HostOperation op) {
  switch (op) {
    case HostOperation::Reset:
      return "reset";
    case HostOperation::ConfigPush:
      return "config push";
    case HostOperation::HivedPush:
      return "hived";
    case HostOperation::Install:
      break;
  }
  return "install";
}

int run_failure_code(const pai::deploy::RunResult& r) {
  return pai::deploy::unreached(r) ? kExitRemote : kExitFindings;
}

bool ask_yes_no(const char* question) {
  err_printf("%s [y/N] ", question);
  std::fflush(stderr);
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes";
}

// A question only a terminal can answer: none without a terminal on stdin, no
// without one on stderr.
pai::deploy::Answer ask_on_terminal(const std::string& question) {
  if (!is_tty(0)) return pai::deploy::Answer::NoTerminal;
  if (!is_tty(2)) return pai::deploy::Answer::No;
  return ask_yes_no(question.c_str()) ? pai::deploy::Answer::Yes : pai::deploy::Answer::No;
}

pai::deploy::Answer ask_use_case(const pai::deploy::Question& q) {
  using K = pai::deploy::Question::Kind;
  using pai::deploy::Answer;
  switch (q.kind) {
    case K::ApplyHosts:
      if (!is_tty(0) || !is_tty(2)) return Answer::NoTerminal;
      return ask_yes_no(q.operation == HostOperation::Reset ? "Reset these changes?"
                                                            : "Apply these changes?")
                 ? Answer::Yes
                 : Answer::No;
    case K::ApplyAzure:
      return ask_on_terminal("Apply these Azure changes?");
    case K::GrowPool:
      return ask_on_terminal("Add " + std::to_string(q.count) + " VM" + (q.count == 1 ? "" : "s") +
                             " to " + q.subject + "?");
    case K::ResetAzure:
      return ask_on_terminal("Delete this cluster's Azure resources?");
    case K::RemoveNodes: {
      std::string question =
          "Remove " + pai::util::join(q.nodes, ", ") + " from the cluster" +
          (q.azure
               ? " and delete the VM" + std::string(q.nodes.size() == 1 ? "" : "s") + " in Azure?"
               : "?");
      return ask_yes_no(question.c_str()) ? Answer::Yes : Answer::No;
    }
  }
  return Answer::No;
}

void print_stage_end(const pai::deploy::HostStage& s, const UseCaseView& v) {
  using End = pai::deploy::HostStage::End;
  const auto& plan = *s.plan;
  const char* verb = verb_of(plan.operation);
  switch (s.end) {
    case End::Failed:
      if (!v.json)
        err_printf("%s: the hosts above must be fixed first; nothing was changed\n", verb);
      break;
    case End::UpToDate:
      if (v.json) break;
      out_printf("nothing to do\n");
      break;
    case End::DryRun:
      if (!v.json) out_printf("dry run: nothing was changed on any host\n");
      break;
    case End::NoTerminal:
      print_error(std::string("not a terminal: pass --yes to ") + verb + " without a confirmation");
      break;
    case End::Declined:
      err_printf("nothing was changed\n");
      break;
    case End::Applied:
      if (v.json) break;
      if (s.result.ok()) {
        print_recap(s.result);
        out_printf("%s: done in %.1f s (logs in %s/logs)\n", verb, s.result.ms / 1000,
                   plan.state_dir.c_str());
      } else {
        print_recap(s.result);
        out_printf("%s: FAILED after %.1f s; a re-run resumes where it stopped (logs in %s/logs)\n",
                   verb, s.result.ms / 1000, plan.state_dir.c_str());
      }
      break;
  }
}

void print_install_end(const pai::deploy::InstallPlan& p, const pai::deploy::InstallOutcome& o,
                       const UseCaseView& v) {
  using End = pai::deploy::InstallOutcome::End;
  const Globals& g = *v.g;
  switch (o.end) {
    case End::ChecksFailed:
      if (!v.json) {
        print_run_plan(*p.checks, use_color(g.no_color, 1));
        err_printf(
            "install: the hosts above must be fixed first; nothing was created or "
            "changed in Azure, nor on any host\n");
      }
      break;
    case End::AzureDeclined:
      print_error("nothing was changed");
      break;
    case End::AzureNoTerminal:
      print_error("not a terminal: pass --yes to install without a confirmation");
      break;
    case End::PendingMaster:
      if (!v.json)
        out_printf(
            "hosts: the master is the VM of Azure pool %s, not created yet; install creates it "
            "first, then plans and installs the hosts (kubeadm init on it, the others join)\n"
            "dry run: nothing was changed on any host\n",
            p.pending_master.c_str());
      break;
    case End::Failed:
      report(*o.error, v);
      break;
    case End::AzureOnly:
    case End::Hosts:
      break;
  }
  print_use_case_document(pai::deploy::install_json(p, o), "install", v);
}

// The status line's steps: a phase on a host runs from its start (observing)
// or its needs (applying) to its end.
void track_step(const pai::deploy::Event& e, bool planning) {
  using EK = pai::deploy::Event::Kind;
  switch (e.kind) {
    case EK::PhaseStart:
      status_step(e.host, e.phase, "observing");
      break;
    case EK::PhaseNeeds:
      if (planning)
        status_step_done(e.host, e.phase);
      else
        status_step(e.host, e.phase, "applying");
      break;
    case EK::PhaseUpToDate:
    case EK::PhaseApplied:
    case EK::PhaseFailed:
    case EK::PhaseSkipped:
      status_step_done(e.host, e.phase);
      break;
    default:
      break;
  }
}

void show_use_case_event(const UseCaseEvent& e, const UseCaseView& v) {
  using K = UseCaseEvent::Kind;
  const Globals& g = *v.g;
  bool progress = !g.quiet && !v.json;
  switch (e.kind) {
    case K::Observing:
      if (progress) err_printf("%s: observing %zu hosts...\n", verb_of(e.operation), e.count);
      break;
    case K::Engine:
      track_step(*e.engine, e.planning);
      if (e.planning) {
        if (e.engine->kind == pai::deploy::Event::Kind::Interrupted && !g.quiet)
          print_engine_event(*e.engine, use_color(g.no_color, 2), true);
      } else if (!g.quiet && e.engine->kind != pai::deploy::Event::Kind::Interrupted) {
        // (the plan before it showed what the journal says was interrupted)
        print_engine_event(*e.engine, use_color(g.no_color, 2), g.verbose);
      }
      break;
    case K::HostsPlanned:
      if (!v.json) print_run_plan(*e.plan, use_color(g.no_color, 1));
      break;
    case K::HostsEnded:
      status_clear();
      print_stage_end(*e.stage, v);
      break;
    case K::InstallEnded:
      print_install_end(*e.install_plan, *e.install, v);
      break;
    case K::ReadingAzure:
      if (progress) err_printf("install: reading the Azure resources...\n");
      break;
    case K::AzurePlanned:
      if (!v.json) print_azure_plan(*e.azure, use_color(g.no_color, 1));
      if (v.dry_run && !v.json) out_printf("dry run: nothing was changed in Azure\n");
      break;
    case K::ChecksBeforeAzure:
      if (progress)
        err_printf(
            "install: the pre-install checks on %zu host%s before anything is created "
            "in Azure...\n",
            e.count, e.count == 1 ? "" : "s");
      break;
    case K::AzureProgress:
      if (progress) err_printf("azure: %s\n", e.message.c_str());
      break;
    case K::AzureLog:
      if (g.verbose) err_printf("  %s\n", e.message.c_str());
      break;
    case K::AzureWaiting:
      // Waits of a few seconds between polls are the usual pace of ARM; the
      // longer ones, and every retry's, are said (-v: all of them).
      if (progress && (g.verbose || !e.planning || e.to >= 10))
        std::fprintf(stderr, "azure: %s ...\n", e.message.c_str());
      break;
    case K::AzureUpToDate:
      if (!v.json) out_printf("azure: nothing to do\n");
      break;
    case K::AzureMachines:
      if (!v.json) print_machines(*e.machines);
      break;
    case K::VmCells:
      if (v.json || g.quiet) break;
      if (e.planning) {
        out_printf(
            "HiveD cells of the %zu VM%s Azure will create (named new-POOL-N until Azure "
            "names them):\n",
            e.count, e.count == 1 ? "" : "s");
        print_hived_edit(*e.hived);
      } else if (!e.hived->services_changed()) {
        for (const auto& w : e.hived->edit.warnings) print_warning("HiveD config: " + w);
      } else {
        print_hived_edit(*e.hived);
      }
      break;
    case K::Warning:
      err_printf("paictl: warning: %s\n", e.message.c_str());
      break;
    case K::CellsPlanned:
      if (!v.json) print_hived_edit(*e.hived);
      break;
    case K::HivedLog:
      if (g.verbose) err_printf("paictl: hived: %s\n", e.message.c_str());
      break;
    case K::ScaleSet:
      if (progress)
        err_printf("azure: scale set %s: %lld -> %lld VMs\n", e.message.c_str(), e.from, e.to);
      break;
    case K::NewMachine:
      if (progress) err_printf("azure: new VM %s\n", e.message.c_str());
      break;
    case K::FilesUpdated:
      if (!progress) break;
      if (e.to >= 0)
        err_printf("azure: config.yaml (count %lld) and %s updated\n", e.to, e.message.c_str());
      else
        err_printf("azure: config.yaml and %s updated\n", e.message.c_str());
      break;
    case K::HivedPush:
      if (!g.quiet) err_printf("hived: pushing the new HiveD config; HiveD restarts with it\n");
      break;
    case K::NodeDeleted:
      if (!g.quiet)
        err_printf("%-14s %-14s %s\n", e.message.c_str(), "node",
                   e.drained ? "drained and deleted" : "deleted");
      break;
    case K::EtcdMemberRemoved:
      if (!g.quiet) err_printf("etcd: removed the member of %s\n", e.message.c_str());
      break;
    case K::NoRunningGroups:
      if (!g.quiet) err_printf("hived: no running group uses %s\n", e.message.c_str());
      break;
    case K::NodeStep:  // the node batch runner's (cli/lifecycle)
      break;
  }
}

}  // namespace

UseCaseView use_case_view(const InstallOptions& o, const Globals& g) {
  UseCaseView v;
  v.g = &g;
  v.output = o.output;
  v.json = is_structured(o.output);
  v.dry_run = o.hosts.dry_run;
  install_output_start(o.hosts.paths.empty() ? std::string() : o.hosts.paths[0],
                       is_tty(2) && !g.quiet && !v.json);
  return v;
}

pai::deploy::InstallDeps install_deps(const InstallOptions& o, UseCaseView& view) {
  pai::deploy::InstallDeps d;
  HostsOptions all = o.hosts;
  all.limit.clear();  // the master is reached even when --limit leaves it out
  d.load_hosts = [all, &view]() -> pai::util::Result<pai::deploy::ClusterHosts> {
    auto ph = prepare_hosts(all, *view.g);
    if (!ph.ok()) {
      view.hosts_failed = ph.error().code;
      return pai::util::Error{
          "the cluster's hosts could not be read", {}, pai::util::Error::Kind::Input};
    }
    return pai::deploy::ClusterHosts{std::move(ph->inventory), std::move(ph->collect),
                                     std::move(ph->ssh_password)};
  };
  return d;
}

pai::deploy::Callbacks use_case_callbacks(UseCaseView& view) {
  pai::deploy::Callbacks cb;
  cb.on_event = [&view](const UseCaseEvent& e) { show_use_case_event(e, view); };
  cb.confirm = [](const pai::deploy::Question& q) { return ask_use_case(q); };
  return cb;
}

int exit_code_of(const pai::deploy::UseCaseError& e, const UseCaseView& view) {
  if (e.about == pai::deploy::UseCaseError::About::HostsNotLoaded) return view.hosts_failed;
  return exit_code_of(e.error.kind);
}

int report(const pai::deploy::UseCaseError& e, const UseCaseView& view) {
  using About = pai::deploy::UseCaseError::About;
  const std::string& m = e.error.message;
  std::string hint = e.error.hint.empty() ? "" : "\n  hint: " + e.error.hint;
  switch (e.about) {
    case About::HostsNotLoaded:
      break;
    case About::UnknownHost:
      print_error("--limit: " + m);
      break;
    case About::HivedUnreachable:
      print_error(m + "\n  hint: check --hived URL (HiveD listens on :30096) or --cluster");
      break;
    case About::RunningGroups:
      print_error(m +
                  "\n  hint: let them finish (or stop them) first; --force removes the node "
                  "anyway");
      break;
    case About::AzureConfig:
      for (const auto& d : e.findings)
        print_error(d.file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + ": " +
                    d.message + (d.hint.empty() ? "" : " (" + d.hint + ")"));
      print_error(m);
      break;
    case About::HivedConfig: {
      pai::diag::TextOptions topt;
      topt.color = use_color(view.g->no_color, 2);
      std::string text = pai::diag::write_text(e.findings, e.files, topt);
      std::fwrite(text.data(), 1, text.size(), stderr);
      print_error(m);
      break;
    }
    case About::Other:
      print_error(m + hint);
      break;
  }
  return exit_code_of(e, view);
}

int stage_exit_code(const pai::deploy::HostStage& s, bool changed_before) {
  using End = pai::deploy::HostStage::End;
  switch (s.end) {
    case End::Failed:
      return run_failure_code(s.plan->plan);
    case End::UpToDate:
      return changed_before ? kExitChanges : kExitOk;
    case End::DryRun:
      return kExitChanges;
    case End::NoTerminal:
      return kExitUsage;
    case End::Declined:
      return kExitOk;
    case End::Applied:
      if (!s.result.ok()) return run_failure_code(s.result);
      return s.result.changed() ? kExitChanges : kExitOk;
  }
  return kExitFindings;
}

int install_exit_code(const pai::deploy::InstallPlan& p, const pai::deploy::InstallOutcome& o,
                      const UseCaseView& view) {
  using End = pai::deploy::InstallOutcome::End;
  switch (o.end) {
    case End::ChecksFailed:
      return run_failure_code(*p.checks);
    case End::AzureOnly:
      if (!o.azure) return o.azure_changed ? kExitChanges : kExitOk;
      return o.azure_changed || o.azure->machines.layout_changed ? kExitChanges : kExitOk;
    case End::AzureDeclined:
      return kExitOk;
    case End::AzureNoTerminal:
      return kExitUsage;
    case End::PendingMaster:
      return kExitChanges;
    case End::Failed:
      return exit_code_of(*o.error, view);
    case End::Hosts:
      break;
  }
  return stage_exit_code(o.hosts, o.azure_changed);
}

int push_exit_code(const std::optional<pai::deploy::PushOutcome>& push,
                   const std::string& cluster_dir, const UseCaseView& view) {
  if (!push || !push->ran) return kExitOk;
  int rc = push->error ? report(*push->error, view) : stage_exit_code(push->stage, true);
  if (!push->written) return rc;
  if (rc != kExitOk && rc != kExitChanges)
    print_error("the cluster files are updated, but pushing them failed; paictl config push " +
                cluster_dir + " retries");
  return rc;
}

void print_use_case_document(const pai::deploy::DocJson& doc, const char* kind,
                             const UseCaseView& view) {
  if (!view.json || doc.is_null()) return;
  print_document(document(kind, doc), view.output);
}

std::vector<std::string> split_names(const std::vector<std::string>& lists) {
  std::vector<std::string> out;
  for (const auto& l : lists)
    for (auto part : pai::util::split(l, ','))
      if (!pai::util::trim(part).empty()) out.emplace_back(pai::util::trim(part));
  return out;
}

}  // namespace paictl
