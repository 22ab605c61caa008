#include "install/install_print.h"

#include <cstdio>
#include <string>
#include <vector>

#include "install/install_out.h"
#include "output/output.h"
#include "util/strings.h"

namespace paictl {

namespace {

const char* paint(bool color, const char* code) {
  return color ? code : "";
}

}  // namespace

// One line per event on stderr.
void print_engine_event(const pai::deploy::Event& e, bool color, bool verbose) {
  using K = pai::deploy::Event::Kind;
  const char* c = "";
  std::string what;
  switch (e.kind) {
    case K::PhaseStart:
      if (!verbose) return;
      what = "observing";
      break;
    case K::PhaseUpToDate:
      if (!verbose) return;
      what = "up to date";
      break;
    case K::PhaseNeeds:
      c = "\x1b[33m";
      what = e.message + ": " + pai::util::join(e.needs, "; ");
      break;
    case K::PhaseApplied: {
      c = "\x1b[32m";
      char buf[32];
      std::snprintf(buf, sizeof buf, " (%.1f s)", e.elapsed_ms / 1000);
      what = "done" + std::string(buf);
      break;
    }
    case K::PhaseFailed:
      c = "\x1b[1;31m";
      what = "FAILED: " + e.message + (e.hint.empty() ? "" : "\n    hint: " + e.hint);
      break;
    case K::PhaseSkipped:
      if (!verbose) return;
      what = e.message;
      break;
    case K::HostConnected:
    case K::HostLocked:
      if (!verbose) return;
      what = e.message;
      break;
    case K::CleanupStart:
      if (!verbose) return;
      what = "cleaning up";
      break;
    case K::CleanupDone:
      what = "cleaned up";
      break;
    case K::Interrupted:
      c = "\x1b[33m";
      what = "interrupted earlier: " + e.message;
      break;
    case K::Note:
      what = e.message;
      break;
  }
  err_printf("%s%-14s %-14s %s%s\n", paint(color, c), e.host.empty() ? "-" : e.host.c_str(),
             e.phase.c_str(), what.c_str(), paint(color, "\x1b[0m"));
}

void print_run_plan(const pai::deploy::RunResult& plan, bool color) {
  size_t changing = 0, failing = 0;
  for (const auto& h : plan.hosts) {
    out_printf("%s%s%s\n", paint(color, "\x1b[1m"), h.host.c_str(), paint(color, "\x1b[0m"));
    if (!h.error.empty()) {
      out_printf("  %sunreachable: %s%s\n", paint(color, "\x1b[31m"), h.error.c_str(),
                 paint(color, "\x1b[0m"));
      continue;
    }
    std::vector<std::string> current;
    for (const auto& p : h.phases) {
      using S = pai::deploy::PhaseResult::State;
      if (p.state == S::UpToDate) current.push_back(p.phase);
      if (p.state == S::Planned)
        for (const auto& n : p.needs) out_printf("  %-14s %s\n", p.phase.c_str(), n.c_str());
      if (p.state == S::Failed)
        out_printf("  %-14s %sFAILED: %s%s\n", p.phase.c_str(), paint(color, "\x1b[31m"),
                   p.error.c_str(), paint(color, "\x1b[0m"));
    }
    if (h.failed()) ++failing;
    if (h.changed())
      ++changing;
    else if (!h.failed())
      out_printf("  up to date\n");
    if (h.changed() && !current.empty())
      out_printf("  %-14s %s\n", "up to date", pai::util::join(current, ", ").c_str());
  }
  size_t current = 0;
  for (const auto& h : plan.hosts) current += !h.failed() && !h.changed();
  out_printf("\n%zu host%s: %zu to change, %zu up to date", plan.hosts.size(),
             plan.hosts.size() == 1 ? "" : "s", changing, current);
  if (failing) out_printf(", %zu with errors", failing);
  out_printf("\n");
}

void print_recap(const pai::deploy::RunResult& r) {
  using S = pai::deploy::PhaseResult::State;
  out_printf("\nRECAP\n");
  for (const auto& h : r.hosts) {
    int ok = 0, changed = 0, failed = h.error.empty() ? 0 : 1, skipped = 0;
    for (const auto& p : h.phases) {
      ok += p.state == S::UpToDate;
      changed += p.state == S::Changed;
      failed += p.state == S::Failed;
      skipped += p.state == S::Skipped;
    }
    out_printf("%-24s ok=%-3d changed=%-3d failed=%-3d skipped=%d\n", h.host.c_str(), ok, changed,
               failed, skipped);
  }
}

void print_cluster_access(const AccessShown& a) {
  const auto& c = a.access;
  out_printf("OpenPAI: %s (user %s)\n", c.gateway.c_str(), c.user.c_str());
  if (!c.hived.empty()) out_printf("HiveD:   %s\n", c.hived.c_str());
  if (a.has_password)
    out_printf("admin password: rest-server.default-pai-admin-password in %s%s\n",
               c.services_file.c_str(), a.password_made ? " (made by this install)" : "");
  else
    out_printf(
        "admin password: none in %s; the cluster keeps its own in the Secret pai-secrets "
        "(admin-password)\n",
        c.services_file.c_str());
  if (a.shown_password)
    out_printf("  %s (shown once; it stays in that file)\n", a.shown_password->reveal().c_str());
  if (!a.register_hint) return;
  out_printf("register it with paictl:\n  paictl install %s --register %s\n", a.cluster_dir.c_str(),
             c.name.c_str());
  if (a.has_password)
    out_printf("  (or: %s, the password on stdin)\n",
               pai::deploy::cluster_add_command(c.name, c).c_str());
}

void print_machines(const pai::deploy::AzureMachines& m) {
  out_printf("azure: %zu VM%s in %s%s\n", m.machines.size(), m.machines.size() == 1 ? "" : "s",
             m.layout_file.c_str(), m.layout_changed ? " (updated)" : "");
  for (const auto& x : m.machines)
    out_printf("  %-24s %-15s pool %s, machine-type %s%s\n", x.hostname.c_str(), x.ip.c_str(),
               x.pool.c_str(), x.machine_type.c_str(), x.master ? ", the master" : "");
}

void print_hived_edit(const pai::deploy::HivedEdit& h) {
  for (const auto& w : h.edit.warnings) print_warning("HiveD config: " + w);
  if (!h.services_changed()) {
    if (!h.services_before.empty()) out_printf("HiveD config: unchanged\n");
    std::fflush(stdout);
    return;
  }
  out_printf("HiveD config (%s):\n", h.services_file.c_str());
  for (const auto& c : h.edit.changes) out_printf("  %s\n", c.c_str());
  out_printf("%s", h.diff().c_str());
  out_printf(
      "  then: the new HiveD config is pushed and HiveD restarts with it (the last step; HiveD "
      "reads its config only when it starts)\n");
  std::fflush(stdout);
}

}  // namespace paictl
