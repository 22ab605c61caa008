#include "install/install_print.h"

#include <cstdio>
#include <string>
#include <vector>

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
  std::fprintf(stderr, "%s%-14s %-14s %s%s\n", paint(color, c),
               e.host.empty() ? "-" : e.host.c_str(), e.phase.c_str(), what.c_str(),
               paint(color, "\x1b[0m"));
}

void print_run_plan(const pai::deploy::RunResult& plan, bool color) {
  size_t changing = 0, failing = 0;
  for (const auto& h : plan.hosts) {
    std::printf("%s%s%s\n", paint(color, "\x1b[1m"), h.host.c_str(), paint(color, "\x1b[0m"));
    if (!h.error.empty()) {
      std::printf("  %sunreachable: %s%s\n", paint(color, "\x1b[31m"), h.error.c_str(),
                  paint(color, "\x1b[0m"));
      continue;
    }
    std::vector<std::string> current;
    for (const auto& p : h.phases) {
      using S = pai::deploy::PhaseResult::State;
      if (p.state == S::UpToDate) current.push_back(p.phase);
      if (p.state == S::Planned)
        for (const auto& n : p.needs) std::printf("  %-14s %s\n", p.phase.c_str(), n.c_str());
      if (p.state == S::Failed)
        std::printf("  %-14s %sFAILED: %s%s\n", p.phase.c_str(), paint(color, "\x1b[31m"),
                    p.error.c_str(), paint(color, "\x1b[0m"));
    }
    if (h.failed()) ++failing;
    if (h.changed())
      ++changing;
    else if (!h.failed())
      std::printf("  up to date\n");
    if (h.changed() && !current.empty())
      std::printf("  %-14s %s\n", "up to date", pai::util::join(current, ", ").c_str());
  }
  size_t current = 0;
  for (const auto& h : plan.hosts) current += !h.failed() && !h.changed();
  std::printf("\n%zu host%s: %zu to change, %zu up to date", plan.hosts.size(),
              plan.hosts.size() == 1 ? "" : "s", changing, current);
  if (failing) std::printf(", %zu with errors", failing);
  std::printf("\n");
}

// The line that registers the installed cluster with paictl, through the gateway.
void print_cluster_add(const pai::deploy::PreparedCluster& p) {
  const auto& o = p.settings.openpai;
  if (!o.enabled) return;
  std::string master;
  for (const auto& h : p.specs)
    if (h.master) master = h.address;
  std::string uri =
      "http://" + master + (o.pylon_port == 80 ? "" : ":" + std::to_string(o.pylon_port));
  std::printf(
      "OpenPAI: %s (user %s; the password is rest-server.default-pai-admin-password)\n"
      "register it with:\n  paictl cluster add %s --uri %s --user %s --password-stdin\n",
      uri.c_str(), o.admin_user.c_str(), o.cluster_id.c_str(), uri.c_str(), o.admin_user.c_str());
}

void print_machines(const pai::deploy::AzureMachines& m) {
  std::printf("azure: %zu VM%s in %s%s\n", m.machines.size(), m.machines.size() == 1 ? "" : "s",
              m.layout_file.c_str(), m.layout_changed ? " (updated)" : "");
  for (const auto& x : m.machines)
    std::printf("  %-24s %-15s pool %s, machine-type %s%s\n", x.hostname.c_str(), x.ip.c_str(),
                x.pool.c_str(), x.machine_type.c_str(), x.master ? ", the master" : "");
}

void print_hived_edit(const pai::deploy::HivedEdit& h) {
  for (const auto& w : h.edit.warnings) print_warning("HiveD config: " + w);
  if (!h.services_changed()) {
    if (!h.services_before.empty()) std::printf("HiveD config: unchanged\n");
    std::fflush(stdout);
    return;
  }
  std::printf("HiveD config (%s):\n", h.services_file.c_str());
  for (const auto& c : h.edit.changes) std::printf("  %s\n", c.c_str());
  std::printf("%s", h.diff().c_str());
  std::printf(
      "  then: the new HiveD config is pushed and HiveD restarts with it (the last step; HiveD "
      "reads its config only when it starts)\n");
  std::fflush(stdout);
}

}  // namespace paictl
